// Glossaries (ordo/glossary.h) and DecodeOptions::force_words (pipeline/force_words.h): terms
// found with ICU (case folding, word boundaries), phrases encoded by the target tokenizer.
// Free of the engine, so that the server's request parsing (and its fuzz harness) can read
// glossaries without it.
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
  entries_.push_back({text::icu_text::to_utf8(folded(source)), target});
  first_entry_.emplace(entries_.back().source, entries_.size() - 1);
  longest_source_ = std::max(longest_source_, entries_.back().source.size());
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

std::vector<Glossary::Match> Glossary::matches(const std::string& sentence) const {
  std::vector<Match> out;
  if (entries_.empty()) return out;
  const icu::UnicodeString text = text::icu_text::from_utf8(sentence);
  UErrorCode status = U_ZERO_ERROR;
  std::unique_ptr<icu::BreakIterator> words(icu::BreakIterator::createWordInstance(icu::Locale::getRoot(), status));
  if (U_FAILURE(status))
    throw Error("glossary: ICU word boundaries are unavailable: " + std::string(u_errorName(status)));
  words->setText(text);
  std::vector<int32_t> bounds;
  for (int32_t at = words->first(); at != icu::BreakIterator::DONE; at = words->next()) bounds.push_back(at);
  // Every span between two boundaries whose case folding is a source term: folding may change
  // a span's length ("STRASSE" folds like "straße"), so spans are compared, not positions.
  struct Found {
    int32_t begin, end;
    size_t entry;
  };
  std::vector<Found> found;
  for (size_t i = 0; i < bounds.size(); ++i) {
    for (size_t j = i + 1; j < bounds.size(); ++j) {
      icu::UnicodeString span = text.tempSubStringBetween(bounds[i], bounds[j]);
      span.foldCase(U_FOLD_CASE_DEFAULT);
      const std::string key = text::icu_text::to_utf8(span);
      if (key.size() > longest_source_) break;
      const auto entry = first_entry_.find(key);
      if (entry != first_entry_.end()) found.push_back({bounds[i], bounds[j], entry->second});
    }
  }
  // Longest first (then the one listed first, then the earlier), each kept unless it overlaps
  // one kept before it.
  std::stable_sort(found.begin(), found.end(), [](const Found& a, const Found& b) {
    if (a.end - a.begin != b.end - b.begin) return a.end - a.begin > b.end - b.begin;
    return a.entry < b.entry;
  });
  std::vector<Found> kept;
  for (const Found& f : found)
    if (std::none_of(kept.begin(), kept.end(), [&](const Found& k) { return f.begin < k.end && k.begin < f.end; }))
      kept.push_back(f);
  std::sort(kept.begin(), kept.end(), [](const Found& a, const Found& b) { return a.begin < b.begin; });
  const auto bytes = [&](int32_t at) { return text::icu_text::to_utf8(text.tempSubString(0, at)).size(); };
  for (const Found& k : kept) out.push_back({bytes(k.begin), bytes(k.end), entries_[k.entry].target});
  return out;
}

std::vector<std::string> Glossary::targets_in(const std::string& sentence) const {
  std::vector<std::string> out;
  for (const Match& m : matches(sentence))
    if (std::find(out.begin(), out.end(), m.target) == out.end()) out.push_back(m.target);
  return out;
}

std::vector<Glossary::Group> Glossary::groups(const std::vector<std::string>& sentences) const {
  std::vector<Group> out;
  for (size_t i = 0; i < sentences.size(); ++i) {
    const bool terms = !matches(sentences[i]).empty();
    const auto found = std::find_if(out.begin(), out.end(), [&](const Group& g) { return g.terms == terms; });
    if (found == out.end())
      out.push_back({terms, {i}});
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
