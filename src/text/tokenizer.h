// Text <-> ids for a model folder. One interface for every family; the family-specific rules
// (which files, special tokens, id offsets, language codes) live in the implementations.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ordo::text {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  // Source text to encoder ids, including the special tokens the model expects (</s> for
  // Marian). Throws ordo::Error on invalid UTF-8.
  virtual std::vector<int64_t> encode(const std::string& text) const = 0;
  // The source pieces (without special tokens), as Hugging Face's tokenizer.tokenize().
  virtual std::vector<std::string> tokenize(const std::string& text) const = 0;
  // Target ids to pieces, special tokens (pad, eos, unk as HF skips them) removed.
  virtual std::vector<std::string> id_to_pieces(const std::vector<int64_t>& ids) const = 0;
  // Target ids to detokenized text, as HF batch_decode(skip_special_tokens=True).
  virtual std::string decode(const std::vector<int64_t>& ids) const = 0;
  // Target text to decoder ids, as Hugging Face's tokenizer(text_target=...) gives them but
  // without the special tokens around the pieces (no </s>, no language code): a target prefix
  // to continue, or a target to score. The default serves families with one vocabulary and
  // one tokenization both ways: the source encoding without its framing.
  virtual std::vector<int64_t> encode_target(const std::string& text) const {
    std::vector<int64_t> ids = encode(text);
    const Framing f = framing();
    const size_t before = static_cast<size_t>(f.before), after = static_cast<size_t>(f.after);
    if (ids.size() < before + after) return {};
    return std::vector<int64_t>(ids.begin() + static_cast<std::ptrdiff_t>(before),
                                ids.end() - static_cast<std::ptrdiff_t>(after));
  }
  // The piece of one source / target id, special tokens included ("</s>", "__de__"): labels
  // for attention weights and alignments.
  virtual std::string source_piece(int64_t id) const = 0;
  virtual std::string target_piece(int64_t id) const = 0;

  // Multilingual models (M2M100, NLLB, mBART): source text in an explicit source language, the id
  // of a language code ("de" / "__de__", "deu_Latn", "de_DE"), and the known codes. Other tokenizers
  // ignore the language and know none.
  virtual std::vector<int64_t> encode(const std::string& text, const std::string& source_lang) const {
    return encode(text);
  }
  virtual std::optional<int64_t> language_id(const std::string& lang) const { return std::nullopt; }

  // One past the largest id encode() can produce, and the file that defines the ids. Checked
  // at load against config.json's vocab_size: a vocabulary larger than the embedding table
  // would otherwise load and fail later, on the sentences that use the extra ids.
  struct IdRange {
    int64_t limit = 0;
    std::string source;
  };
  virtual IdRange source_id_range() const = 0;

  // How many special ids encode() puts before and after the text's pieces: {0, 1} for
  // "pieces </s>", {1, 1} for "[code] pieces </s>" (M2M100, NLLB, mBART-50) and BART's
  // "<s> pieces </s>", {0, 2} for mbart-large-cc25's "pieces </s> [code]". Truncation keeps
  // them; alignments leave them out.
  struct Framing {
    int before = 0;
    int after = 1;
  };
  virtual Framing framing() const { return {}; }
  virtual std::vector<std::string> languages() const { return {}; }

  // "de, en, fr, ..." (the first `limit` known codes), for error messages.
  std::string language_list(size_t limit = 12) const {
    const std::vector<std::string> known = languages();
    std::string list;
    for (size_t i = 0; i < known.size() && i < limit; ++i) list += (i ? ", " : "") + known[i];
    return known.size() > limit ? list + ", ..." : list;
  }
};

// Marian: source.spm + vocab.json (+ target_vocab.json when the vocabularies are separate),
// target.spm for detokenizing. Throws ordo::Error naming the missing or malformed file.
std::unique_ptr<Tokenizer> load_marian_tokenizer(const std::string& model_dir, bool separate_vocabs);

// Pegasus: spiece.model with HF's id offset (103) and mask/unk_N special tokens.
std::unique_ptr<Tokenizer> load_pegasus_tokenizer(const std::string& model_dir);

// M2M100: sentencepiece.bpe.model + vocab.json (fairseq order) + __xx__ language tokens.
std::unique_ptr<Tokenizer> load_m2m100_tokenizer(const std::string& model_dir);

// NLLB: sentencepiece.bpe.model with the fairseq offset + xxx_Latn language tokens.
std::unique_ptr<Tokenizer> load_nllb_tokenizer(const std::string& model_dir);

// mBART-50 (MBart50Tokenizer): sentencepiece.bpe.model in fairseq's layout + the 52 codes
// "ar_AR" .. "sl_SI"; input = [source code] pieces </s>.
std::unique_ptr<Tokenizer> load_mbart50_tokenizer(const std::string& model_dir);

// mbart-large-cc25 (MBartTokenizer): the same layout with the first 25 codes; input =
// pieces </s> [source code].
std::unique_ptr<Tokenizer> load_mbart_tokenizer(const std::string& model_dir);

// BART (BartTokenizer): GPT-2 byte-level BPE, vocab.json + merges.txt; input = <s> pieces </s>.
std::unique_ptr<Tokenizer> load_bart_tokenizer(const std::string& model_dir);

// T5 (T5Tokenizer): spiece.model + <extra_id_N> tokens after the pieces (<extra_id_0> last);
// no BOS; input = pieces </s>.
std::unique_ptr<Tokenizer> load_t5_tokenizer(const std::string& model_dir);

// FSMT (facebook/wmt19-*): Moses normalization and tokenization (sacremoses 0.1.1) + BPE with
// merges.txt, vocab-src.json / vocab-tgt.json, Moses detokenization; "langs" from
// tokenizer_config.json.
std::unique_ptr<Tokenizer> load_fsmt_tokenizer(const std::string& model_dir);

// Throws ordo::Error naming `where` (e.g. "stdin line 3") if `text` is not valid UTF-8.
void check_utf8(const std::string& text, const std::string& where);

// Whether `text` has anything to translate (ordo::has_text, include/ordo/text.h).
bool has_text(const std::string& text);

}  // namespace ordo::text
