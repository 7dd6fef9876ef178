// The fairseq-born multilingual tokenizers, as Hugging Face 4.31 has them (slow). The target
// language token is forced as the first generated token (by the pipeline).
//   M2M100Tokenizer: vocab.json (fairseq dictionary order) maps pieces of
//     sentencepiece.bpe.model; language tokens "__de__" follow the vocabulary;
//     input = [source language token] + pieces + [</s>].
//   NllbTokenizer (legacy_behaviour=False), MBart50Tokenizer and MBartTokenizer (mbart-large-cc25)
//     share fairseq's id layout: <s> <pad> </s> <unk> = 0..3, then the spm pieces shifted by one
//     (spm id 0, its <unk>, maps to <unk>), then the language codes, then <mask>.
//     NLLB ("deu_Latn") and mBART-50 ("de_DE"): input = [source code] + pieces + [</s>];
//     mbart-large-cc25 (its 25 codes): input = pieces + [</s>, source code], and its decoding
//     joins the pieces and turns "▁" into spaces instead of asking SentencePiece.
#include <algorithm>
#include <memory>

#include "ordo/error.h"
#include "text/icu_text.h"
#include "text/spm_tokenizer.h"
#include "text/vocab.h"

namespace ordo::text {
namespace {

// The language tokens, in id order: tokenizer_config.json / special_tokens_map.json
// additional_special_tokens (save_pretrained writes HF's FAIRSEQ_LANGUAGE_CODES there).
std::vector<std::string> language_tokens(const std::string& dir, bool (*is_language)(const std::string&)) {
  std::vector<std::string> out;
  for (const std::string& token : tokenizer_list(dir, "additional_special_tokens"))
    if (is_language(token)) out.push_back(token);
  if (out.empty())
    throw Error(dir +
                "/tokenizer_config.json: no language codes found in 'additional_special_tokens' "
                "(nor in special_tokens_map.json)");
  return out;
}

bool is_m2m_language(const std::string& t) {
  return t.size() > 4 && t.rfind("__", 0) == 0 && t.substr(t.size() - 2) == "__";
}
bool is_nllb_language(const std::string& t) { return t.size() >= 8 && t[3] == '_' && t.find('_') == 3; }

class M2M100Tokenizer : public SpmTokenizer {
 public:
  explicit M2M100Tokenizer(const std::string& dir)
      : SpmTokenizer(dir, "sentencepiece.bpe.model", kNeeds),
        vocab_(Vocab::load(require_file(dir + "/vocab.json", kNeeds))) {
    const std::vector<std::string> langs = language_tokens(dir, is_m2m_language);
    for (size_t i = 0; i < langs.size(); ++i) {
      language_ids_[langs[i]] = vocab_.size() + static_cast<int64_t>(i);
      id_to_language_[vocab_.size() + static_cast<int64_t>(i)] = langs[i];
      specials_.tokens.insert(langs[i]);
    }
    for (const char* s : {"<s>", "</s>", "<pad>", "<unk>"}) specials_.tokens.insert(s);
    eos_id_ = vocab_.require("</s>");
    unk_id_ = vocab_.require("<unk>");
    default_source_lang_ = tokenizer_string(dir, "src_lang", "en");
  }

 protected:
  static constexpr const char* kNeeds = "M2M100 models need sentencepiece.bpe.model and vocab.json";

  std::string language_token(const std::string& lang) const override { return "__" + lang + "__"; }
  IdRange source_id_range() const override {
    int64_t limit = vocab_.size();
    for (const auto& [token, id] : language_ids_) limit = std::max(limit, id + 1);
    return {limit, vocab_.path() + " and its language tokens"};
  }
  int64_t piece_to_id(const std::string& piece) const override {
    const auto lang = language_ids_.find(piece);
    if (lang != language_ids_.end()) return lang->second;
    return vocab_.find(piece).value_or(unk_id_);
  }
  std::string id_to_piece(int64_t id) const override {
    const auto lang = id_to_language_.find(id);
    if (lang != id_to_language_.end()) return lang->second;
    const std::string& piece = vocab_.piece(id);
    return piece.empty() ? "<unk>" : piece;
  }

 private:
  Vocab vocab_;
  std::map<int64_t, std::string> id_to_language_;
  int64_t unk_id_ = 3;
};

// mBART's FAIRSEQ_LANGUAGE_CODES (tokenization_mbart50.py); mbart-large-cc25 has the first 25.
// HF builds the ids from this list whatever tokenizer_config.json says.
const std::vector<std::string> kMBart50Codes = {
    "ar_AR", "cs_CZ", "de_DE", "en_XX", "es_XX", "et_EE", "fi_FI", "fr_XX", "gu_IN", "hi_IN", "it_IT",
    "ja_XX", "kk_KZ", "ko_KR", "lt_LT", "lv_LV", "my_MM", "ne_NP", "nl_XX", "ro_RO", "ru_RU", "si_LK",
    "tr_TR", "vi_VN", "zh_CN", "af_ZA", "az_AZ", "bn_IN", "fa_IR", "he_IL", "hr_HR", "id_ID", "ka_GE",
    "km_KH", "mk_MK", "ml_IN", "mn_MN", "mr_IN", "pl_PL", "ps_AF", "pt_XX", "sv_SE", "sw_KE", "ta_IN",
    "te_IN", "th_TH", "tl_XX", "uk_UA", "ur_PK", "xh_ZA", "gl_ES", "sl_SI"};
constexpr size_t kMBartCc25Codes = 25;

// fairseq's layout: <s> <pad> </s> <unk>, spm pieces + 1, `langs`, <mask>.
class FairseqLayoutTokenizer : public SpmTokenizer {
 public:
  FairseqLayoutTokenizer(const std::string& dir, const char* needs, const std::vector<std::string>& langs,
                         const std::string& default_source_lang)
      : SpmTokenizer(dir, "sentencepiece.bpe.model", needs) {
    fixed_ = {{"<s>", 0}, {"<pad>", 1}, {"</s>", 2}, {"<unk>", 3}};
    const int64_t first_language = spm_.size() + kOffset;
    for (size_t i = 0; i < langs.size(); ++i) {
      language_ids_[langs[i]] = first_language + static_cast<int64_t>(i);
      fixed_[langs[i]] = first_language + static_cast<int64_t>(i);
    }
    fixed_["<mask>"] = first_language + static_cast<int64_t>(langs.size());
    for (const auto& [token, id] : fixed_) {
      fixed_pieces_[id] = token;
      specials_.tokens.insert(token);
    }
    specials_.left_strip_only.insert("<mask>");  // AddedToken(lstrip=True)
    eos_id_ = 2;
    default_source_lang_ = tokenizer_string(dir, "src_lang", default_source_lang);
  }

 protected:
  static constexpr int64_t kOffset = 1;  // fairseq_offset

  IdRange source_id_range() const override {
    int64_t limit = spm_.size() + kOffset;
    for (const auto& [token, id] : fixed_) limit = std::max(limit, id + 1);
    return {limit, spm_.path() + " and its language tokens"};
  }
  int64_t piece_to_id(const std::string& piece) const override {
    const auto it = fixed_.find(piece);
    if (it != fixed_.end()) return it->second;
    const int spm_id = spm_.piece_to_id(piece);
    return spm_id ? spm_id + kOffset : 3;  // spm's id 0 is its unknown piece
  }
  std::string id_to_piece(int64_t id) const override {
    const auto it = fixed_pieces_.find(id);
    if (it != fixed_pieces_.end()) return it->second;
    if (id - kOffset < 0 || id - kOffset >= spm_.size()) return "<unk>";
    return spm_.id_to_piece(static_cast<int>(id - kOffset));
  }

 private:
  std::map<std::string, int64_t> fixed_;
  std::map<int64_t, std::string> fixed_pieces_;
};

// MBartTokenizer (mbart-large-cc25): the source code after </s>; decoding joins the pieces.
class MBartCc25Tokenizer : public FairseqLayoutTokenizer {
 public:
  explicit MBartCc25Tokenizer(const std::string& dir)
      : FairseqLayoutTokenizer(dir, kNeeds,
                               std::vector<std::string>(kMBart50Codes.begin(), kMBart50Codes.begin() + kMBartCc25Codes),
                               "en_XX") {
    language_after_eos_ = true;
  }
  // convert_tokens_to_string: "".join(tokens).replace("▁", " ").strip().
  std::string decode(const std::vector<int64_t>& ids) const override {
    std::string text;
    for (const std::string& piece : id_to_pieces(ids)) text += piece;
    for (size_t pos = 0; (pos = text.find("\xe2\x96\x81", pos)) != std::string::npos;) text.replace(pos, 3, " ");
    const std::string stripped = icu_text::to_utf8(icu_text::python_strip(icu_text::from_utf8(text)));
    return clean_up_spaces_ ? clean_up_tokenization(stripped) : stripped;
  }

 private:
  static constexpr const char* kNeeds = "mBART models need sentencepiece.bpe.model";
};

}  // namespace

std::unique_ptr<Tokenizer> load_m2m100_tokenizer(const std::string& model_dir) {
  return std::make_unique<M2M100Tokenizer>(model_dir);
}

std::unique_ptr<Tokenizer> load_nllb_tokenizer(const std::string& model_dir) {
  return std::make_unique<FairseqLayoutTokenizer>(model_dir, "NLLB models need sentencepiece.bpe.model",
                                                  language_tokens(model_dir, is_nllb_language), "eng_Latn");
}

std::unique_ptr<Tokenizer> load_mbart50_tokenizer(const std::string& model_dir) {
  return std::make_unique<FairseqLayoutTokenizer>(model_dir, "mBART-50 models need sentencepiece.bpe.model",
                                                  kMBart50Codes, "en_XX");
}

std::unique_ptr<Tokenizer> load_mbart_tokenizer(const std::string& model_dir) {
  return std::make_unique<MBartCc25Tokenizer>(model_dir);
}

}  // namespace ordo::text
