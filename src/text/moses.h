// Moses punctuation normalization, tokenization and detokenization exactly as sacremoses 0.1.1
// (https://github.com/hplt-project/sacremoses, the Python port of Moses' Perl scripts that
// Hugging Face's FSMTTokenizer calls) does them:
//   MosesPunctNormalizer(lang).normalize(text)   penn=True, norm_quote_commas=True,
//                                                 norm_numbers=True, perl_parity=False
//   MosesTokenizer(lang).tokenize(text, aggressive_dash_splits, escape)   no protected patterns
//   MosesDetokenizer(lang).detokenize(tokens, unescape)
// Every rule of those code paths is reproduced in sacremoses' order, as the same regular
// expressions run by ICU's regex engine; the character classes (\p{IsAlnum}, \p{IsN}, ...) are
// sacremoses' own character lists (moses_tables.h), not Unicode properties, because they differ
// (they leave out Han ideographs, for one). Not reproduced: penn_tokenize, protected patterns,
// and the rules of languages whose data is not built in (fr/it apostrophes, cs/fi/ko
// detokenization, zh/ja/ko tokenization): constructing any of these classes for a language
// other than moses_languages() throws ordo::Error.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace ordo::text {

// The languages whose Moses data (nonbreaking prefixes) is built in: de, en, ru.
std::vector<std::string> moses_languages();

class MosesPunctNormalizer {
 public:
  explicit MosesPunctNormalizer(const std::string& lang);
  std::string normalize(const std::string& text) const;

  struct Rules;

 private:
  std::shared_ptr<const Rules> rules_;
};

class MosesTokenizer {
 public:
  explicit MosesTokenizer(const std::string& lang);
  // Tokens of `text`; `escape` writes & | < > ' " [ ] as XML entities (&amp; ... &#93;).
  std::vector<std::string> tokenize(const std::string& text, bool aggressive_dash_splits = false,
                                    bool escape = true) const;

  struct Rules;

 private:
  std::shared_ptr<const Rules> rules_;
};

class MosesDetokenizer {
 public:
  explicit MosesDetokenizer(const std::string& lang);
  std::string detokenize(const std::vector<std::string>& tokens, bool unescape = true) const;

  struct Rules;

 private:
  std::shared_ptr<const Rules> rules_;
};

}  // namespace ordo::text
