// Glossaries (ordo/glossary.h) and DecodeOptions::force_words (pipeline/force_words.h): terms
// found with ICU (case folding, word boundaries), phrases encoded by the target tokenizer.
#include "ordo/glossary.h"

#include <algorithm>
#include <map>
#include <memory>

#include <unicode/brkiter.h>
#include <unicode/unistr.h>

#include "io/file.h"
#include "ordo/option_table.h"
#include "ordo/text.h"
#include "pipeline/force_words.h"
#include "pipeline/glossary_translate.h"
#include "text/icu_text.h"

namespace ordo {

namespace {

std::string trimmed(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(" \t\r") - begin + 1);
}

icu::UnicodeString folded(const std::string& text) {
  icu::UnicodeString u = text::icu_text::from_utf8(text);
  u.foldCase(U_FOLD_CASE_DEFAULT);
  return u;
}

}  // namespace

std::vector<std::string> split_force_words(const std::string& text, const std::string& where) {
  std::vector<std::string> phrases;
  size_t start = 0;
  while (true) {
    const size_t bar = text.find('|', start);
    const std::string phrase = trimmed(text.substr(start, bar == std::string::npos ? std::string::npos : bar - start));
    if (phrase.empty())
      throw Error(where + ": phrase " + std::to_string(phrases.size() + 1) +
                  " is empty (phrases are separated by '|', e.g. \"contract|railway station\")");
    phrases.push_back(phrase);
    if (bar == std::string::npos) return phrases;
    start = bar + 1;
  }
}

void Glossary::add(const std::string& source_term, const std::string& target_term, const std::string& where) {
  check_utf8(source_term, where);
  check_utf8(target_term, where);
  // A NUL is no text (has_text): a term holding one comes from a broken file, not a person.
  if (source_term.find('\0') != std::string::npos) throw Error(where + ": the source term contains a NUL byte");
  if (target_term.find('\0') != std::string::npos)
    throw Error(where + ": the target term of '" + trimmed(source_term) + "' contains a NUL byte");
  const std::string source = trimmed(source_term), target = trimmed(target_term);
  if (source.empty()) throw Error(where + ": the source term is empty");
  if (target.empty()) throw Error(where + ": the target term of '" + source + "' is empty");
  if (target.find('|') != std::string::npos)
    throw Error(where + ": the target term '" + target + "' contains '|', which separates forced phrases");
  entries_.push_back({text::icu_text::to_utf8(folded(source)), target});
}

Glossary Glossary::read_tsv(const std::string& path) {
  std::string content = io::read_regular_file(path);
  drop_byte_order_mark(content);
  Glossary glossary;
  size_t start = 0, line = 0;
  while (start < content.size()) {
    size_t end = content.find('\n', start);
    if (end == std::string::npos) end = content.size();
    std::string text = content.substr(start, end - start);
    start = end + 1;
    ++line;
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (trimmed(text).empty()) continue;
    const std::string where = path + ":" + std::to_string(line);
    const size_t tab = text.find('\t');
    if (tab == std::string::npos) throw Error(where + ": expected 'source term<TAB>target term', found no tab");
    if (text.find('\t', tab + 1) != std::string::npos)
      throw Error(where + ": expected 'source term<TAB>target term', found more than one tab");
    glossary.add(text.substr(0, tab), text.substr(tab + 1), where);
  }
  return glossary;
}

std::vector<std::string> Glossary::targets_in(const std::string& sentence) const {
  std::vector<std::string> out;
  if (entries_.empty()) return out;
  const icu::UnicodeString text = folded(sentence);
  UErrorCode status = U_ZERO_ERROR;
  std::unique_ptr<icu::BreakIterator> words(icu::BreakIterator::createWordInstance(icu::Locale::getRoot(), status));
  if (U_FAILURE(status))
    throw Error("glossary: ICU word boundaries are unavailable: " + std::string(u_errorName(status)));
  words->setText(text);
  for (const Entry& e : entries_) {
    const icu::UnicodeString term = text::icu_text::from_utf8(e.source);
    bool found = false;
    for (int32_t at = text.indexOf(term); at >= 0 && !found; at = text.indexOf(term, at + 1))
      found = words->isBoundary(at) && words->isBoundary(at + term.length());
    if (found && std::find(out.begin(), out.end(), e.target) == out.end()) out.push_back(e.target);
  }
  return out;
}

std::optional<std::string> Glossary::force_words_for(const std::string& sentence,
                                                     const std::optional<std::string>& base) const {
  std::optional<std::string> out = base;
  for (const std::string& target : targets_in(sentence)) out = out ? *out + "|" + target : target;
  return out;
}

std::vector<Glossary::Group> Glossary::groups(const std::vector<std::string>& sentences,
                                              const std::optional<std::string>& base) const {
  std::vector<Group> out;
  for (size_t i = 0; i < sentences.size(); ++i) {
    const std::optional<std::string> key = force_words_for(sentences[i], base);
    const auto found = std::find_if(out.begin(), out.end(), [&](const Group& g) { return g.force_words == key; });
    if (found == out.end())
      out.push_back({key, {i}});
    else
      found->inputs.push_back(i);
  }
  return out;
}

namespace pipeline {

std::vector<std::vector<int64_t>> force_words_ids(const text::Tokenizer& tokenizer, const std::string& force_words,
                                                  int64_t vocab_size) {
  std::vector<std::vector<int64_t>> out;
  const std::string name = decode_option_spec(&DecodeOptions::force_words).name;
  for (const std::string& phrase : split_force_words(force_words)) {
    check_utf8(phrase, name);
    std::vector<int64_t> ids = tokenizer.encode_target(phrase);
    if (ids.empty()) throw Error(name + ": the phrase '" + phrase + "' has no target tokens");
    for (int64_t id : ids)
      if (id < 0 || id >= vocab_size)
        throw Error(name + ": the phrase '" + phrase + "' has token id " + std::to_string(id) +
                    ", outside the target vocabulary");
    out.push_back(std::move(ids));
  }
  return out;
}

}  // namespace pipeline

}  // namespace ordo
