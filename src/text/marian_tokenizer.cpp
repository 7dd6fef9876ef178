// Marian (opus-mt) tokenization, reproducing Hugging Face's MarianTokenizer (slow, 4.31):
//   encode: split off special tokens written in the text, strip a leading ">>lang<<" code,
//           SentencePiece (source.spm) -> pieces -> vocab.json ids (unknown -> <unk>), + </s>
//   decode: ids -> pieces (target vocab), specials skipped, target.spm detokenizes,
//           then HF's clean_up_tokenization when tokenizer_config.json asks for it (default).
#include <sys/stat.h>

#include <algorithm>
#include <memory>

#include "io/json_file.h"
#include "ordo/error.h"
#include "text/sentencepiece.h"
#include "text/tokenizer.h"
#include "text/vocab.h"

namespace ordo::text {
namespace {

const std::vector<std::string> kSpecialTokens = {"</s>", "<unk>", "<pad>"};

bool is_special(const std::string& token) {
  for (const std::string& s : kSpecialTokens)
    if (token == s) return true;
  return false;
}

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

std::string rstrip(std::string s) {
  while (!s.empty() && is_space(s.back())) s.pop_back();
  return s;
}
std::string lstrip(const std::string& s) {
  size_t i = 0;
  while (i < s.size() && is_space(s[i])) ++i;
  return s.substr(i);
}
std::string strip(const std::string& s) { return lstrip(rstrip(s)); }

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size()))
    s.replace(pos, from.size(), to);
}

// HF PreTrainedTokenizer.tokenize: the text is split on special tokens, which are kept whole,
// and the whitespace next to them is stripped.
std::vector<std::string> split_on_special_tokens(const std::string& text) {
  std::vector<std::string> chunks;
  size_t start = 0, pos = 0;
  while (pos < text.size()) {
    const std::string* found = nullptr;
    for (const std::string& s : kSpecialTokens)
      if (text.compare(pos, s.size(), s) == 0) found = &s;
    if (!found) {
      ++pos;
      continue;
    }
    chunks.push_back(text.substr(start, pos - start));
    chunks.push_back(*found);
    pos += found->size();
    start = pos;
  }
  chunks.push_back(text.substr(start));
  for (size_t i = 0; i < chunks.size(); ++i) {
    if (!is_special(chunks[i])) continue;
    if (i + 1 < chunks.size()) chunks[i + 1] = lstrip(chunks[i + 1]);
    if (i > 0) chunks[i - 1] = rstrip(chunks[i - 1]);
  }
  return chunks;
}

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

// transformers' clean_up_tokenization.
std::string clean_up_tokenization(std::string s) {
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"}, {" n't", "n't"},
           {" 'm", "'m"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}})
    replace_all(s, from, to);
  return s;
}

class MarianTokenizer : public Tokenizer {
 public:
  MarianTokenizer(const std::string& dir, bool separate_vocabs)
      : source_spm_(require_file(dir + "/source.spm")),
        target_spm_(require_file(dir + "/target.spm")),
        source_vocab_(Vocab::load(require_file(dir + "/vocab.json"))) {
    if (separate_vocabs) target_vocab_ = std::make_unique<Vocab>(Vocab::load(require_file(dir + "/target_vocab.json")));
    eos_id_ = source_vocab_.require("</s>");
    unk_id_ = source_vocab_.require("<unk>");
    // HF computes all_special_ids with the source vocabulary, also for separate vocabs.
    for (const std::string& s : kSpecialTokens)
      if (auto id = source_vocab_.find(s)) special_ids_.push_back(*id);
    const std::string config = dir + "/tokenizer_config.json";
    if (exists(config)) {
      const io::JsonFields fields(io::read_json_file(config), config);
      clean_up_spaces_ = fields.optional_bool("clean_up_tokenization_spaces").value_or(true);
    }
  }

  std::vector<std::string> tokenize(const std::string& text) const override {
    check_utf8(text, "input text");
    std::vector<std::string> tokens;
    for (const std::string& chunk : split_on_special_tokens(text)) {
      if (chunk.empty()) continue;
      if (is_special(chunk)) {
        tokens.push_back(chunk);
        continue;
      }
      auto [code, rest] = remove_language_code(chunk);
      if (!code.empty()) tokens.push_back(code);
      for (std::string& piece : source_spm_.encode(rest)) tokens.push_back(std::move(piece));
    }
    return tokens;
  }

  std::vector<int64_t> encode(const std::string& text) const override {
    std::vector<int64_t> ids;
    for (const std::string& piece : tokenize(text)) ids.push_back(source_vocab_.find(piece).value_or(unk_id_));
    ids.push_back(eos_id_);
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

  std::string decode(const std::vector<int64_t>& ids) const override {
    // MarianTokenizer.convert_tokens_to_string: special tokens pass through verbatim.
    std::string out;
    std::vector<std::string> run;
    for (const std::string& piece : id_to_pieces(ids)) {
      if (is_special(piece)) {
        out += target_spm_.decode(run) + piece + " ";
        run.clear();
      } else {
        run.push_back(piece);
      }
    }
    out = strip(out + target_spm_.decode(run));
    return clean_up_spaces_ ? clean_up_tokenization(out) : out;
  }

 private:
  static std::string require_file(const std::string& path) {
    if (!exists(path)) throw Error(path + ": file not found (Marian models need source.spm, target.spm, vocab.json)");
    return path;
  }

  SentencePiece source_spm_, target_spm_;
  Vocab source_vocab_;
  std::unique_ptr<Vocab> target_vocab_;
  int64_t eos_id_ = 0, unk_id_ = 0;
  std::vector<int64_t> special_ids_;
  bool clean_up_spaces_ = true;
};

}  // namespace

std::unique_ptr<Tokenizer> load_marian_tokenizer(const std::string& model_dir, bool separate_vocabs) {
  return std::make_unique<MarianTokenizer>(model_dir, separate_vocabs);
}

}  // namespace ordo::text
