// Sentence boundaries with ICU (libicu): its BreakIterator implements Unicode's sentence rules
// (UAX #29: decimals, ellipses, quotes and closing brackets after a full stop, CJK full
// stops), and the locale keyword "ss=standard" adds CLDR's abbreviation suppressions per
// language. Writing these rules by hand (or with regular expressions) is how splitters get
// "Dr." and "3.5" wrong.
#include <unicode/brkiter.h>
#include <unicode/locid.h>
#include <unicode/uloc.h>
#include <unicode/utext.h>

#include <cctype>
#include <map>
#include <memory>
#include <mutex>

#include "document/languages.h"
#include "ordo/document.h"
#include "ordo/error.h"
#include "ordo/text.h"

namespace ordo {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

}  // namespace

std::string document::icu_language(const std::string& code) {
  std::string lang;
  for (char c : code) {
    if (std::isalpha(static_cast<unsigned char>(c))) {
      lang.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    } else if (!lang.empty()) {
      break;  // "eng_Latn", "de-DE": the language part only
    }
  }
  if (lang.size() != 3) return lang.size() == 2 ? lang : "";
  // ISO 639-3 codes (NLLB's "deu") to the two-letter ones ICU's rules are keyed by.
  static const std::map<std::string, std::string> two_letter = [] {
    std::map<std::string, std::string> map;
    for (const char* const* l = uloc_getISOLanguages(); *l; ++l) {
      const std::string two = *l;
      const char* three = uloc_getISO3Language(two.c_str());
      if (three && *three) map.emplace(three, two);
    }
    return map;
  }();
  const auto it = two_letter.find(lang);
  return it == two_letter.end() ? lang : it->second;
}

namespace {

// ICU's sentence iterator for `lang`, made once per thread and language: making one (with the
// abbreviation suppressions) costs far more than splitting a short block, so making one per
// block would dominate pages of many short blocks.
icu::BreakIterator* sentence_breaks(const std::string& lang) {
  thread_local std::map<std::string, std::unique_ptr<icu::BreakIterator>> made;
  auto it = made.find(lang);
  if (it != made.end()) return it->second.get();
  UErrorCode status = U_ZERO_ERROR;
  const icu::Locale locale((lang.empty() ? std::string("root") : lang + "@ss=standard").c_str());
  std::unique_ptr<icu::BreakIterator> breaks(icu::BreakIterator::createSentenceInstance(locale, status));
  if (U_FAILURE(status)) throw Error(std::string("ICU cannot make a sentence splitter: ") + u_errorName(status));
  if (made.size() >= 64) made.clear();  // languages are few; a bound all the same
  return made.emplace(lang, std::move(breaks)).first->second.get();
}

}  // namespace

std::vector<SentenceSpan> split_sentences(const std::string& text, const std::string& language) {
  check_utf8(text, "text to split into sentences");
  // Single line breaks are soft wraps: seen as spaces (same byte length, so offsets hold).
  std::string view = text;
  for (size_t i = 0; i < view.size(); ++i) {
    if (view[i] != '\n') continue;
    size_t next = i + 1;
    while (next < view.size() && (view[next] == ' ' || view[next] == '\t' || view[next] == '\r')) ++next;
    size_t previous = i;
    while (previous > 0 && (view[previous - 1] == ' ' || view[previous - 1] == '\t' || view[previous - 1] == '\r'))
      --previous;
    const bool blank_line = (next < view.size() && view[next] == '\n') || (previous > 0 && text[previous - 1] == '\n');
    if (!blank_line) {
      view[i] = ' ';
      if (i > 0 && view[i - 1] == '\r') view[i - 1] = ' ';
    }
  }

  UErrorCode status = U_ZERO_ERROR;
  icu::BreakIterator* breaks = sentence_breaks(document::icu_language(language));
  UText* utext = utext_openUTF8(nullptr, view.data(), static_cast<int64_t>(view.size()), &status);
  if (U_FAILURE(status)) throw Error(std::string("ICU cannot read the text: ") + u_errorName(status));
  breaks->setText(utext, status);
  std::vector<SentenceSpan> spans;
  if (U_SUCCESS(status)) {
    // Native indexes of a UTF-8 UText are byte offsets.
    for (int32_t start = breaks->first(), end = breaks->next(); end != icu::BreakIterator::DONE;
         start = end, end = breaks->next()) {
      size_t b = static_cast<size_t>(start), e = static_cast<size_t>(end);
      while (b < e && is_space(text[b])) ++b;
      while (e > b && is_space(text[e - 1])) --e;
      if (b < e) spans.push_back({b, e});
    }
  }
  utext_close(utext);
  if (U_FAILURE(status)) throw Error(std::string("ICU cannot split the text: ") + u_errorName(status));
  return spans;
}

}  // namespace ordo
