// Rules that Hugging Face's slow tokenizers (transformers 4.31) share, used by every family's
// tokenizer here: splitting special tokens out of the text, turning pieces back into text
// around special tokens, and clean_up_tokenization.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "text/sentencepiece.h"

namespace ordo::text {

// Special tokens written in the input text are kept whole (PreTrainedTokenizer.tokenize), and
// the whitespace next to them is stripped; `left_strip_only` tokens (AddedToken lstrip=True,
// rstrip=False, e.g. NLLB's <mask>) strip only the text before them.
struct SpecialTokens {
  std::set<std::string> tokens;
  std::set<std::string> left_strip_only;
  bool contains(const std::string& t) const { return tokens.count(t) != 0; }
};

// Alternating plain chunks and special tokens, in order; empty chunks dropped.
std::vector<std::string> split_on_special_tokens(const std::string& text, const SpecialTokens& specials);

// convert_tokens_to_string: runs of ordinary pieces are detokenized by `spm`; special tokens
// are copied verbatim followed by `after_special` (" " for Marian, "" for the others); the
// result is stripped.
std::string pieces_to_text(const std::vector<std::string>& pieces, const SpecialTokens& specials,
                           const SentencePiece& spm, const std::string& after_special);

// transformers' clean_up_tokenization (" ." -> "." and the like).
std::string clean_up_tokenization(std::string text);

// tokenizer_config.json's clean_up_tokenization_spaces (HF 4.31 default: true).
bool clean_up_spaces(const std::string& model_dir);

// A list of strings from tokenizer_config.json, or else special_tokens_map.json (e.g.
// "additional_special_tokens"); empty when neither has it.
std::vector<std::string> tokenizer_list(const std::string& model_dir, const std::string& key);
// A string from tokenizer_config.json (e.g. "src_lang"); `fallback` when absent.
std::string tokenizer_string(const std::string& model_dir, const std::string& key, const std::string& fallback);

bool file_exists(const std::string& path);
// Throws ordo::Error "<path>: file not found (<why>)" when absent.
std::string require_file(const std::string& path, const std::string& why);

}  // namespace ordo::text
