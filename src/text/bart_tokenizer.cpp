// BART (and RoBERTa's vocabulary), as Hugging Face's BartTokenizer (slow, 4.31): GPT-2's
// byte-level BPE.
//   encode: special tokens written in the text are kept whole (what is stripped next to them
//           follows their AddedToken lstrip/rstrip: nothing for <s> </s> <pad> <unk>, the
//           text before <mask>); add_prefix_space puts a space before text that does not
//           start with one; every other chunk is split by GPT-2's pattern, each part's UTF-8
//           bytes become characters by bytes_to_unicode, BPE by merges.txt rank, vocab.json ids
//           (unknown -> <unk>); input = <s> pieces </s> (cls_token, sep_token).
//   decode: special ids skipped, the pieces' characters back to bytes, UTF-8 with "replace",
//           then clean_up_tokenization (tokenizer_config.json's clean_up_tokenization_spaces).
//           Nothing is stripped: a text keeps the space of its first piece ("Ġword").
#include <algorithm>
#include <memory>
#include <set>

#include "io/json_file.h"
#include "ordo/error.h"
#include "text/byte_level_bpe.h"
#include "text/hf_rules.h"
#include "text/icu_text.h"
#include "text/tokenizer.h"
#include "text/vocab.h"

namespace ordo::text {
namespace {

constexpr const char* kNeeds = "BART models need vocab.json and merges.txt (GPT-2 byte-level BPE)";

class BartTokenizer : public Tokenizer {
 public:
  explicit BartTokenizer(const std::string& dir)
      : vocab_(Vocab::load(require_file(dir + "/vocab.json", kNeeds))),
        bpe_(require_file(dir + "/merges.txt", kNeeds)),
        clean_up_spaces_(clean_up_spaces(dir)) {
    const std::string path = dir + "/tokenizer_config.json";
    const nlohmann::json config = read_json_object(path);
    add_prefix_space_ = io::JsonFields(config, path).optional_bool("add_prefix_space").value_or(false);
    // BartTokenizer.__init__ makes every special token given as a string (tokenizer_config.json
    // or the default) an AddedToken with lstrip=False, rstrip=False, except <mask>
    // (lstrip=True); then from_pretrained sets special_tokens_map.json's values as they are
    // (a string there stays a plain string, stripped on both sides).
    const std::string map_path = dir + "/special_tokens_map.json";
    const nlohmann::json map = read_json_object(map_path);
    const auto special = [&](const char* key, const char* fallback, bool lstrip) {
      std::optional<ConfigToken> token = config_token(map, map_path, key);
      if (!token) {
        token = config_token(config, path, key).value_or(ConfigToken{fallback});
        if (!token->added_token) token->added_token = true, token->lstrip = lstrip, token->rstrip = false;
      }
      add_special(*token);
      return token->content;
    };
    special("bos_token", "<s>", false);
    special("eos_token", "</s>", false);
    special("pad_token", "<pad>", false);
    const std::string unk = special("unk_token", "<unk>", false);
    const std::string cls = special("cls_token", "<s>", false), sep = special("sep_token", "</s>", false);
    mask_ = special("mask_token", "<mask>", true);
    // Additional special tokens are plain strings (stripped on both sides); only those the
    // vocabulary has can be used (HF would append the others after it).
    for (const std::string& token : tokenizer_list(dir, "additional_special_tokens"))
      if (vocab_.find(token)) add_special(ConfigToken{token});
    unk_id_ = vocab_.require(unk);
    cls_id_ = vocab_.require(cls);
    sep_id_ = vocab_.require(sep);
    for (const std::string& token : specials_.tokens)
      if (const auto id = vocab_.find(token)) special_ids_.insert(*id);
  }

  std::vector<std::string> tokenize(const std::string& text) const override {
    check_utf8(text, "input text");
    std::string input = text;
    // prepare_for_tokenization: a space before text that does not start with one.
    if (add_prefix_space_ && !input.empty() && !icu_text::is_python_space(icu_text::from_utf8(input).char32At(0)))
      input = " " + input;
    std::vector<std::string> tokens;
    for (const std::string& chunk : split_on_special_tokens(input, specials_)) {
      if (specials_.contains(chunk)) {
        tokens.push_back(chunk);
        continue;
      }
      for (std::string& piece : bpe_.pieces(chunk)) tokens.push_back(std::move(piece));
    }
    return tokens;
  }

  using Tokenizer::encode;
  std::vector<int64_t> encode(const std::string& text) const override {
    std::vector<int64_t> ids{cls_id_};
    for (const std::string& piece : tokenize(text)) ids.push_back(vocab_.find(piece).value_or(unk_id_));
    ids.push_back(sep_id_);
    return ids;
  }

  // convert_ids_to_tokens(skip_special_tokens=True); ids vocab.json does not have are dropped.
  std::vector<std::string> id_to_pieces(const std::vector<int64_t>& ids) const override {
    std::vector<std::string> pieces;
    for (int64_t id : ids) {
      if (special_ids_.count(id)) continue;
      const std::string& piece = vocab_.piece(id);
      if (!piece.empty()) pieces.push_back(piece);
    }
    return pieces;
  }

  std::string decode(const std::vector<int64_t>& ids) const override {
    std::string bytes;
    for (const std::string& piece : id_to_pieces(ids)) bpe_.append_bytes(piece, bytes);
    const std::string text = decode_utf8_replacing(bytes);
    return clean_up_spaces_ ? clean_up_tokenization(text) : text;
  }

  // vocab.json's ids except <mask>'s: bart-large-cnn's config.json has vocab_size 50264, one
  // row short of <mask> = 50264 (a "<mask>" in its input is refused per input instead).
  IdRange source_id_range() const override {
    int64_t limit = 0;
    for (int64_t id = vocab_.size() - 1; id >= 0 && limit == 0; --id)
      if (!vocab_.piece(id).empty() && vocab_.piece(id) != mask_) limit = id + 1;
    return {limit, vocab_.path()};
  }
  Framing framing() const override { return {1, 1}; }  // <s> pieces </s>
  std::string source_piece(int64_t id) const override { return vocab_.piece(id); }
  std::string target_piece(int64_t id) const override { return vocab_.piece(id); }

 private:
  void add_special(const ConfigToken& token) {
    specials_.tokens.insert(token.content);
    if (!token.added_token) return;  // a plain string: stripped on both sides
    if (!token.lstrip && !token.rstrip) specials_.unstripped.insert(token.content);
    if (token.lstrip && !token.rstrip) specials_.left_strip_only.insert(token.content);
    if (!token.lstrip && token.rstrip) specials_.right_strip_only.insert(token.content);
  }

  Vocab vocab_;
  ByteLevelBpe bpe_;
  SpecialTokens specials_;
  std::set<int64_t> special_ids_;
  std::string mask_;
  bool add_prefix_space_ = false;
  bool clean_up_spaces_ = true;
  int64_t unk_id_ = 3, cls_id_ = 0, sep_id_ = 2;
};

}  // namespace

std::unique_ptr<Tokenizer> load_bart_tokenizer(const std::string& model_dir) {
  return std::make_unique<BartTokenizer>(model_dir);
}

}  // namespace ordo::text
