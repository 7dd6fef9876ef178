// Rules that Hugging Face's slow tokenizers (transformers 4.31) share, used by every family's
// tokenizer here: splitting special tokens out of the text, turning pieces back into text
// around special tokens, and clean_up_tokenization.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "text/sentencepiece.h"

namespace ordo::text {

// Special tokens written in the input text are kept whole (PreTrainedTokenizer.tokenize), and
// the whitespace next to them is stripped; `left_strip_only` tokens (AddedToken lstrip=True,
// rstrip=False, e.g. NLLB's <mask>) strip only the text before them, `right_strip_only` ones
// only the text after them, and `unstripped` ones (AddedToken lstrip=False, rstrip=False,
// e.g. BART's <s> and </s>) strip nothing.
struct SpecialTokens {
  std::set<std::string> tokens;
  std::set<std::string> left_strip_only;
  std::set<std::string> unstripped;
  std::set<std::string> right_strip_only;
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

// A list of tokens from tokenizer_config.json, or else special_tokens_map.json (e.g.
// "additional_special_tokens"; strings or AddedToken objects, their "content"); empty when
// neither has it.
std::vector<std::string> tokenizer_list(const std::string& model_dir, const std::string& key);
// A string from tokenizer_config.json (e.g. "src_lang"); `fallback` when absent.
std::string tokenizer_string(const std::string& model_dir, const std::string& key, const std::string& fallback);

// A token of tokenizer_config.json (`config`, read from `path`): a string, or an AddedToken
// object ({"content": ..., "lstrip": ..., "rstrip": ...}); std::nullopt when null or absent.
struct ConfigToken {
  std::string content;
  bool added_token = false;  // an object: its lstrip/rstrip decide what tokenize() strips
  bool lstrip = false, rstrip = false;
};
std::optional<ConfigToken> config_token(const nlohmann::json& config, const std::string& path, const std::string& key);
// A tokenizer JSON file (tokenizer_config.json, special_tokens_map.json) as an object: {} when
// absent or not an object; ordo::Error naming it when it is not valid JSON.
nlohmann::json read_json_object(const std::string& path);

// bytes.decode("utf-8", errors="replace"): each maximal invalid subsequence becomes U+FFFD,
// as Python does (byte-level BPE decoding can end inside a character).
std::string decode_utf8_replacing(const std::string& bytes);

bool file_exists(const std::string& path);
// Throws ordo::Error "<path>: file not found (<why>)" when absent.
std::string require_file(const std::string& path, const std::string& why);

}  // namespace ordo::text
