// The shape Pegasus, M2M100, NLLB, mBART and T5 tokenizers share in Hugging Face:
// SentencePiece pieces, a family-specific piece <-> id mapping, optional language code
// (before the pieces, or after </s> for mbart-large-cc25), </s> appended, special ids skipped
// when decoding. Subclasses supply the mapping and the specials.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "text/hf_rules.h"
#include "text/sentencepiece.h"
#include "text/tokenizer.h"

namespace ordo::text {

class SpmTokenizer : public Tokenizer {
 public:
  std::vector<std::string> tokenize(const std::string& text) const override;
  using Tokenizer::encode;
  std::vector<int64_t> encode(const std::string& text) const override { return encode(text, default_source_lang_); }
  std::vector<int64_t> encode(const std::string& text, const std::string& source_lang) const override;
  std::vector<std::string> id_to_pieces(const std::vector<int64_t>& ids) const override;
  std::string decode(const std::vector<int64_t>& ids) const override;
  std::optional<int64_t> language_id(const std::string& lang) const override;
  std::string source_piece(int64_t id) const override { return id_to_piece(id); }
  std::string target_piece(int64_t id) const override { return id_to_piece(id); }
  std::vector<std::string> languages() const override;
  Framing framing() const override {
    if (language_ids_.empty()) return {};
    return language_after_eos_ ? Framing{0, 2} : Framing{1, 1};
  }

 protected:
  SpmTokenizer(const std::string& dir, const std::string& spm_file, const std::string& why);

  virtual int64_t piece_to_id(const std::string& piece) const = 0;
  virtual std::string id_to_piece(int64_t id) const = 0;
  // The language token for a code as users write it ("de" -> "__de__"); "" if unknown.
  virtual std::string language_token(const std::string& lang) const { return lang; }

  std::string dir_;
  SentencePiece spm_;
  SpecialTokens specials_;
  std::map<std::string, int64_t> language_ids_;  // language token -> id
  std::string default_source_lang_;              // "" = no language code
  bool language_after_eos_ = false;              // mbart-large-cc25: pieces </s> [code]
  int64_t eos_id_ = 0;
  bool clean_up_spaces_ = true;
};

}  // namespace ordo::text
