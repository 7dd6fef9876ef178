// T5 / Flan-T5 / mT5, as Hugging Face's T5Tokenizer (slow, 4.31): spiece.model's pieces keep
// their ids (<pad>=0, </s>=1, <unk>=2), then `extra_ids` (100) sentinels counted down from the
// end: <extra_id_0> = vocab_size - 1 ... <extra_id_99> = spm size. No BOS; </s> appended unless
// the text already ends with it.
// tokenizer_config.json's `legacy` (4.31's default: true, what the hub's T5 folders have):
// false puts "▁" before the text (every "▁" in it becomes a space) and takes the word-start
// mark off the first piece of a chunk that follows a special token without a space.
// The checkpoints' embedding tables are larger (32128 rows for 32100 ids): an id past the last
// sentinel has no token, and HF names it "<extra_id_-N>" (N = id - (vocab_size - 1)), which
// is no special token, so decoding keeps it as text. It is never EOS.
#include <memory>

#include "io/json_file.h"
#include "ordo/error.h"
#include "text/spm_tokenizer.h"

namespace ordo::text {
namespace {

constexpr const char* kNeeds = "T5 models need spiece.model";
constexpr int64_t kMaxExtraIds = 1 << 16;
constexpr const char* kSentinel = "<extra_id_";
constexpr const char* kUnderline = "\xe2\x96\x81";  // U+2581, SentencePiece's word start

class T5Tokenizer : public SpmTokenizer {
 public:
  explicit T5Tokenizer(const std::string& dir) : SpmTokenizer(dir, "spiece.model", kNeeds) {
    const std::string path = dir + "/tokenizer_config.json";
    const nlohmann::json config = read_json_object(path);
    const io::JsonFields fields(config, path);
    extra_ids_ = fields.optional_int("extra_ids").value_or(100);
    if (extra_ids_ < 0 || extra_ids_ > kMaxExtraIds)
      fields.fail("extra_ids",
                  "is " + std::to_string(extra_ids_) + ", outside [0, " + std::to_string(kMaxExtraIds) + "]");
    vocab_size_ = spm_.size() + extra_ids_;
    legacy_ = fields.optional_bool("legacy").value_or(true);
    const auto text_of = [&](const char* key, const char* fallback) {
      const std::optional<ConfigToken> token = config_token(config, path, key);
      return token ? token->content : std::string(fallback);
    };
    const std::string eos = text_of("eos_token", "</s>");
    for (const std::string& token : {eos, text_of("unk_token", "<unk>"), text_of("pad_token", "<pad>")})
      specials_.tokens.insert(token);
    // T5Tokenizer.__init__: without additional_special_tokens, the sentinels are.
    std::vector<std::string> additional = tokenizer_list(dir, "additional_special_tokens");
    if (additional.empty())
      for (int64_t i = 0; i < extra_ids_; ++i) additional.push_back(kSentinel + std::to_string(i) + ">");
    for (const std::string& token : additional) specials_.tokens.insert(token);
    eos_id_ = piece_to_id(eos);
  }

  // T5Tokenizer.tokenize / _tokenize with legacy=False (legacy: SentencePiece's pieces).
  std::vector<std::string> tokenize(const std::string& text) const override {
    if (legacy_) return SpmTokenizer::tokenize(text);
    check_utf8(text, "input text");
    std::string input = text;
    for (size_t pos = 0; (pos = input.find(kUnderline, pos)) != std::string::npos;) input.replace(pos, 3, " ");
    input = kUnderline + input;
    std::vector<std::string> tokens;
    for (std::string chunk : split_on_special_tokens(input, specials_)) {
      if (specials_.contains(chunk)) {
        tokens.push_back(chunk);
        continue;
      }
      const bool is_first = chunk.rfind(kUnderline, 0) == 0;
      if (is_first) chunk.erase(0, 3);
      std::vector<std::string> pieces = spm_.encode(chunk);
      if (!is_first && chunk.rfind(' ', 0) != 0 && !pieces.empty() && pieces[0].rfind(kUnderline, 0) == 0) {
        if (pieces[0].size() > 3) {
          pieces[0].erase(0, 3);
        } else {
          pieces.erase(pieces.begin());
        }
      }
      for (std::string& piece : pieces) tokens.push_back(std::move(piece));
    }
    return tokens;
  }

  using SpmTokenizer::encode;
  // build_inputs_with_special_tokens: pieces + </s>, unless they end with </s> already.
  std::vector<int64_t> encode(const std::string& text, const std::string&) const override {
    std::vector<int64_t> ids;
    for (const std::string& piece : tokenize(text)) ids.push_back(piece_to_id(piece));
    if (ids.empty() || ids.back() != eos_id_) ids.push_back(eos_id_);
    return ids;
  }

 protected:
  IdRange source_id_range() const override {
    return {vocab_size_, spm_.path() + " and its " + std::to_string(extra_ids_) + " <extra_id_N> tokens"};
  }
  int64_t piece_to_id(const std::string& piece) const override {
    // <extra_id_N> (re.match: digits then ">", anything after ignored) -> vocab_size - N - 1.
    if (piece.rfind(kSentinel, 0) == 0) {
      const size_t digits = piece.find_first_not_of("0123456789", 10);
      if (digits != std::string::npos && digits > 10 && digits - 10 <= 9 && piece[digits] == '>')
        return vocab_size_ - std::stoll(piece.substr(10, digits - 10)) - 1;
    }
    return spm_.piece_to_id(piece);
  }
  std::string id_to_piece(int64_t id) const override {
    if (id >= 0 && id < spm_.size()) return spm_.id_to_piece(static_cast<int>(id));
    if (id < 0) return "<unk>";
    return kSentinel + std::to_string(vocab_size_ - 1 - id) + ">";
  }

 private:
  int64_t extra_ids_ = 100;
  int64_t vocab_size_ = 0;
  bool legacy_ = true;
};

}  // namespace

std::unique_ptr<Tokenizer> load_t5_tokenizer(const std::string& model_dir) {
  return std::make_unique<T5Tokenizer>(model_dir);
}

}  // namespace ordo::text
