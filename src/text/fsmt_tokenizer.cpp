// FSMT (facebook/wmt19-*) tokenization, reproducing Hugging Face's FSMTTokenizer (slow, 4.31):
//   encode: special tokens written in the text are kept whole (and the spaces around them
//           stripped); every other chunk goes through
//             replace_unicode_punct (HF's port of Moses' replace-unicode-punctuation.perl)
//             -> sacremoses MosesPunctNormalizer(src_lang).normalize
//             -> remove_non_printing_char (drops Unicode categories C*: controls, tabs and
//                newlines included, format characters, unassigned code points)
//             -> sacremoses MosesTokenizer(src_lang).tokenize(aggressive_dash_splits=True, escape=True)
//             -> BPE of each token with merges.txt, "</w>" marking the end of a word
//           -> vocab-src.json ids (unknown -> <unk>), then </s>. No <s>: fairseq uses none.
//   decode: ids -> vocab-tgt.json pieces (special ids skipped, unknown ids -> "<unk>"),
//           "</w>" -> " ", MosesDetokenizer(tgt_lang), then clean_up_tokenization.
// The languages are tokenizer_config.json's (else config.json's) "langs": [source, target].
#include <unicode/locid.h>
#include <unicode/uchar.h>

#include <algorithm>
#include <memory>

#include "io/file.h"
#include "io/json_file.h"
#include "ordo/error.h"
#include "text/bpe.h"
#include "text/hf_rules.h"
#include "text/icu_text.h"
#include "text/moses.h"
#include "text/tokenizer.h"
#include "text/vocab.h"

namespace ordo::text {
namespace {

using icu_text::from_utf8;
using icu_text::RegexRule;
using icu_text::to_utf8;

constexpr const char* kNeeds = "FSMT models need vocab-src.json, vocab-tgt.json and merges.txt";
const SpecialTokens kSpecials{{"<s>", "<pad>", "</s>", "<unk>"}, {}, {}, {}};

// tokenization_fsmt.replace_unicode_punct, in its order.
std::vector<RegexRule> unicode_punct_rules() {
  const std::string space = icu_text::kPythonSpace;
  std::vector<RegexRule> rules;
  const auto literal = [&](const char* from, const char* to) { rules.emplace_back(from, to, true); };
  literal("，", ",");
  rules.emplace_back("。[" + space + "]*", ". ");
  literal("、", ",");
  literal("”", "\"");
  literal("“", "\"");
  literal("∶", ":");
  literal("：", ":");
  literal("？", "?");
  literal("《", "\"");
  literal("》", "\"");
  literal("）", ")");
  literal("！", "!");
  literal("（", "(");
  literal("；", ";");
  literal("１", "1");
  literal("」", "\"");
  literal("「", "\"");
  literal("０", "0");
  literal("３", "3");
  literal("２", "2");
  literal("５", "5");
  literal("６", "6");
  literal("９", "9");
  literal("７", "7");
  literal("８", "8");
  literal("４", "4");
  rules.emplace_back("．[" + space + "]*", ". ");
  literal("～", "~");
  literal("’", "'");
  literal("…", "...");
  literal("━", "-");
  literal("〈", "<");
  literal("〉", ">");
  literal("【", "[");
  literal("】", "]");
  literal("％", "%");
  return rules;
}

// tokenization_fsmt.remove_non_printing_char: unicodedata.category(c).startswith("C").
std::string remove_non_printing(const std::string& text) {
  const icu::UnicodeString u = from_utf8(text);
  icu::UnicodeString out;
  for (int32_t i = 0; i < u.length(); i = u.moveIndex32(i, 1)) {
    const UChar32 c = u.char32At(i);
    switch (u_charType(c)) {
      case U_CONTROL_CHAR:
      case U_FORMAT_CHAR:
      case U_SURROGATE:
      case U_PRIVATE_USE_CHAR:
      case U_UNASSIGNED: continue;
      default: out.append(c);
    }
  }
  return to_utf8(out);
}

std::vector<std::string> languages_of(const std::string& dir) {
  for (const char* file : {"/tokenizer_config.json", "/config.json"}) {
    const std::string path = dir + file;
    if (!io::path_exists(path)) continue;
    const nlohmann::json json = io::read_json_file(path);
    if (!json.is_object()) continue;
    const io::JsonFields fields(json, path);
    if (const auto langs = fields.optional_strings("langs")) {
      if (langs->size() != 2)
        fields.fail("langs", "must list two languages, the source and the target (e.g. [\"en\", \"de\"])");
      return *langs;
    }
  }
  throw Error(dir +
              "/tokenizer_config.json: field 'langs' is missing (FSMT needs [source, target], e.g. [\"en\", \"de\"])");
}

class FsmtTokenizer : public Tokenizer {
 public:
  explicit FsmtTokenizer(const std::string& dir)
      : langs_(languages_of(dir)),
        source_vocab_(Vocab::load(require_file(dir + "/vocab-src.json", kNeeds))),
        target_vocab_(Vocab::load(require_file(dir + "/vocab-tgt.json", kNeeds))),
        bpe_(require_file(dir + "/merges.txt", kNeeds), {false, false, "</w>"}),
        unicode_punct_(unicode_punct_rules()),
        normalizer_(langs_[0]),
        moses_(langs_[0]),
        detokenizer_(langs_[1]),
        clean_up_spaces_(clean_up_spaces(dir)) {
    const std::string config = dir + "/tokenizer_config.json";
    if (io::path_exists(config)) {
      const nlohmann::json json = io::read_json_file(config);
      if (json.is_object()) lower_case_ = io::JsonFields(json, config).optional_bool("do_lower_case").value_or(false);
    }
    eos_id_ = source_vocab_.require("</s>");
    unk_id_ = source_vocab_.require("<unk>");
    // HF computes all_special_ids with the source vocabulary (convert_tokens_to_ids).
    for (const std::string& s : kSpecials.tokens)
      if (auto id = source_vocab_.find(s)) special_ids_.push_back(*id);
  }

  std::vector<std::string> tokenize(const std::string& text) const override {
    check_utf8(text, "input text");
    std::string input = text;
    if (lower_case_) input = lower_outside_specials(input);
    std::vector<std::string> pieces;
    for (const std::string& chunk : split_on_special_tokens(input, kSpecials)) {
      if (kSpecials.contains(chunk)) {
        pieces.push_back(chunk);
        continue;
      }
      for (const std::string& token : moses_.tokenize(moses_pipeline(chunk), true, true))
        for (std::string& piece : bpe_.apply(token)) pieces.push_back(std::move(piece));
    }
    return pieces;
  }

  using Tokenizer::encode;
  std::vector<int64_t> encode(const std::string& text) const override {
    std::vector<int64_t> ids;
    for (const std::string& piece : tokenize(text)) ids.push_back(source_vocab_.find(piece).value_or(unk_id_));
    ids.push_back(eos_id_);
    return ids;
  }

  // FSMTTokenizer has no target side (text_target would be tokenized as source text, with
  // the source vocabulary): refused rather than guessed.
  std::vector<int64_t> encode_target(const std::string&) const override {
    throw Error(
        "FSMT models take no target text (a target prefix or a target to score): their tokenizer has "
        "no target-side tokenization");
  }

  std::vector<std::string> id_to_pieces(const std::vector<int64_t>& ids) const override {
    std::vector<std::string> pieces;
    for (int64_t id : ids) {
      if (std::find(special_ids_.begin(), special_ids_.end(), id) != special_ids_.end()) continue;
      const std::string& piece = target_vocab_.piece(id);
      pieces.push_back(piece.empty() ? "<unk>" : piece);
    }
    return pieces;
  }

  std::string decode(const std::vector<int64_t>& ids) const override {
    // convert_tokens_to_string: drop spaces inside pieces, "</w>" ends a word, then Moses.
    std::string joined;
    for (const std::string& piece : id_to_pieces(ids)) {
      std::string p;
      for (char c : piece)
        if (c != ' ') p += c;
      for (size_t pos; (pos = p.find("</w>")) != std::string::npos;) p.replace(pos, 4, " ");
      joined += p;
    }
    std::vector<std::string> words;
    for (const icu::UnicodeString& word : icu_text::python_split(from_utf8(joined))) words.push_back(to_utf8(word));
    const std::string text = detokenizer_.detokenize(words);
    return clean_up_spaces_ ? clean_up_tokenization(text) : text;
  }

  IdRange source_id_range() const override { return {source_vocab_.size(), source_vocab_.path()}; }
  std::string source_piece(int64_t id) const override { return source_vocab_.piece(id); }
  std::string target_piece(int64_t id) const override { return target_vocab_.piece(id); }

 private:
  std::string moses_pipeline(const std::string& text) const {
    icu::UnicodeString u = from_utf8(text);
    for (const RegexRule& rule : unicode_punct_) rule.apply(u);
    return remove_non_printing(normalizer_.normalize(to_utf8(u)));
  }

  // do_lower_case: PreTrainedTokenizer.tokenize lowercases all but the special tokens
  // (str.lower(): full Unicode case mapping, final sigma included, as ICU's root locale does).
  std::string lower_outside_specials(const std::string& text) const {
    std::string out;
    size_t pos = 0;
    while (pos < text.size()) {
      size_t next = std::string::npos;
      const std::string* found = nullptr;
      for (const std::string& s : kSpecials.tokens) {
        const size_t at = text.find(s, pos);
        if (at != std::string::npos && (at < next || (at == next && s.size() > found->size()))) next = at, found = &s;
      }
      const size_t end = found ? next : text.size();
      out += to_utf8(from_utf8(text.substr(pos, end - pos)).toLower(icu::Locale::getRoot()));
      if (!found) break;
      out += *found;
      pos = next + found->size();
    }
    return out;
  }

  std::vector<std::string> langs_;
  Vocab source_vocab_, target_vocab_;
  BpeMerges bpe_;
  std::vector<RegexRule> unicode_punct_;
  MosesPunctNormalizer normalizer_;
  MosesTokenizer moses_;
  MosesDetokenizer detokenizer_;
  bool clean_up_spaces_ = true;
  bool lower_case_ = false;
  int64_t eos_id_ = 2, unk_id_ = 3;
  std::vector<int64_t> special_ids_;
};

}  // namespace

std::unique_ptr<Tokenizer> load_fsmt_tokenizer(const std::string& model_dir) {
  return std::make_unique<FsmtTokenizer>(model_dir);
}

}  // namespace ordo::text
