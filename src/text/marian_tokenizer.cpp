// Marian (opus-mt) tokenization, reproducing Hugging Face's MarianTokenizer (slow, 4.31):
//   encode: split off special tokens written in the text, strip a leading ">>lang<<" code,
//           SentencePiece (source.spm) -> pieces -> vocab.json ids (unknown -> <unk>), + </s>
//   decode: ids -> pieces (target vocab), specials skipped, target.spm detokenizes,
//           then HF's clean_up_tokenization when tokenizer_config.json asks for it (default).
#include <algorithm>
#include <memory>

#include "ordo/error.h"
#include "text/hf_rules.h"
#include "text/sentencepiece.h"
#include "text/tokenizer.h"
#include "text/vocab.h"

namespace ordo::text {
namespace {

const SpecialTokens kSpecials{{"</s>", "<unk>", "<pad>"}, {}, {}, {}};
constexpr const char* kNeeds = "Marian models need source.spm, target.spm, vocab.json";

// HF: language_code_re = re.compile(">>.+<<"); the code is kept as a token only when the text
// starts with it (re.match), but every match is removed from the text (re.sub). `.` does not
// match a newline and `.+` is greedy.
std::pair<std::string, std::string> remove_language_code(const std::string& text) {
  std::string code, rest;
  size_t pos = 0;
  bool first = true;
  while (pos < text.size()) {
    const size_t open = text.find(">>", pos);
    if (open == std::string::npos) break;
    const size_t line_end = std::min(text.find('\n', open), text.size());
    const size_t close = text.rfind("<<", line_end == 0 ? 0 : line_end - 1);
    if (close == std::string::npos || close < open + 3 || close + 2 > line_end) {
      rest += text.substr(pos, open + 1 - pos);
      pos = open + 1;
      first = false;
      continue;
    }
    if (first && open == 0) code = text.substr(0, close + 2);
    rest += text.substr(pos, open - pos);
    pos = close + 2;
    first = false;
  }
  rest += text.substr(std::min(pos, text.size()));
  return {code, rest};
}

class MarianTokenizer : public Tokenizer {
 public:
  MarianTokenizer(const std::string& dir, bool separate_vocabs)
      : source_spm_(require_file(dir + "/source.spm", kNeeds)),
        target_spm_(require_file(dir + "/target.spm", kNeeds)),
        source_vocab_(Vocab::load(require_file(dir + "/vocab.json", kNeeds))),
        clean_up_spaces_(clean_up_spaces(dir)) {
    if (separate_vocabs)
      target_vocab_ = std::make_unique<Vocab>(Vocab::load(require_file(dir + "/target_vocab.json", kNeeds)));
    eos_id_ = source_vocab_.require("</s>");
    unk_id_ = source_vocab_.require("<unk>");
    // HF computes all_special_ids with the source vocabulary, also for separate vocabs.
    for (const std::string& s : kSpecials.tokens)
      if (auto id = source_vocab_.find(s)) special_ids_.push_back(*id);
  }

  std::vector<std::string> tokenize(const std::string& text) const override {
    check_utf8(text, "input text");
    std::vector<std::string> tokens;
    for (const std::string& chunk : split_on_special_tokens(text, kSpecials)) {
      if (kSpecials.contains(chunk)) {
        tokens.push_back(chunk);
        continue;
      }
      auto [code, rest] = remove_language_code(chunk);
      if (!code.empty()) tokens.push_back(code);
      for (std::string& piece : source_spm_.encode(rest)) tokens.push_back(std::move(piece));
    }
    return tokens;
  }

  using Tokenizer::encode;
  std::vector<int64_t> encode(const std::string& text) const override {
    std::vector<int64_t> ids;
    for (const std::string& piece : tokenize(text)) ids.push_back(source_vocab_.find(piece).value_or(unk_id_));
    ids.push_back(eos_id_);
    return ids;
  }

  // HF's target mode: target.spm, and target_vocab.json when the vocabularies are separate.
  std::vector<int64_t> encode_target(const std::string& text) const override {
    check_utf8(text, "target text");
    const Vocab& vocab = target_vocab_ ? *target_vocab_ : source_vocab_;
    const int64_t unk = vocab.find("<unk>").value_or(unk_id_);
    std::vector<int64_t> ids;
    for (const std::string& chunk : split_on_special_tokens(text, kSpecials)) {
      if (kSpecials.contains(chunk)) {
        ids.push_back(vocab.find(chunk).value_or(unk));
        continue;
      }
      auto [code, rest] = remove_language_code(chunk);
      if (!code.empty()) ids.push_back(vocab.find(code).value_or(unk));
      for (const std::string& piece : target_spm_.encode(rest)) ids.push_back(vocab.find(piece).value_or(unk));
    }
    return ids;
  }

  std::vector<std::string> id_to_pieces(const std::vector<int64_t>& ids) const override {
    const Vocab& vocab = target_vocab_ ? *target_vocab_ : source_vocab_;
    std::vector<std::string> pieces;
    for (int64_t id : ids) {
      if (std::find(special_ids_.begin(), special_ids_.end(), id) != special_ids_.end()) continue;
      const std::string& piece = vocab.piece(id);
      pieces.push_back(piece.empty() ? "<unk>" : piece);
    }
    return pieces;
  }

  IdRange source_id_range() const override { return {source_vocab_.size(), source_vocab_.path()}; }
  std::string source_piece(int64_t id) const override { return source_vocab_.piece(id); }
  std::string target_piece(int64_t id) const override {
    return (target_vocab_ ? *target_vocab_ : source_vocab_).piece(id);
  }

  std::string decode(const std::vector<int64_t>& ids) const override {
    // MarianTokenizer.convert_tokens_to_string: special tokens pass through, then a space.
    const std::string text = pieces_to_text(id_to_pieces(ids), kSpecials, target_spm_, " ");
    return clean_up_spaces_ ? clean_up_tokenization(text) : text;
  }

 private:
  SentencePiece source_spm_, target_spm_;
  Vocab source_vocab_;
  std::unique_ptr<Vocab> target_vocab_;
  bool clean_up_spaces_;
  int64_t eos_id_ = 0, unk_id_ = 0;
  std::vector<int64_t> special_ids_;
};

}  // namespace

std::unique_ptr<Tokenizer> load_marian_tokenizer(const std::string& model_dir, bool separate_vocabs) {
  return std::make_unique<MarianTokenizer>(model_dir, separate_vocabs);
}

}  // namespace ordo::text
