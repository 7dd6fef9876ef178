#include "text/icu_text.h"

#include <unicode/uchar.h>

#include "ordo/error.h"

namespace ordo::text::icu_text {

bool is_python_space(UChar32 c) { return (c >= 0x1c && c <= 0x1f) || u_isUWhiteSpace(c); }

icu::UnicodeString from_utf8(const std::string& text) { return icu::UnicodeString::fromUTF8(text); }

std::string to_utf8(const icu::UnicodeString& text) {
  std::string out;
  text.toUTF8String(out);
  return out;
}

RegexRule::RegexRule(const std::string& pattern, const std::string& replacement, bool literal)
    : replacement_(from_utf8(replacement)), source_(pattern.size() > 60 ? pattern.substr(0, 60) + "..." : pattern) {
  UErrorCode status = U_ZERO_ERROR;
  UParseError where;
  pattern_.reset(
      icu::RegexPattern::compile(from_utf8(pattern), literal ? UREGEX_LITERAL : UREGEX_UNIX_LINES, where, status));
  if (U_FAILURE(status) || !pattern_)
    throw Error("internal error: the text rule /" + source_ + "/ does not compile (" + u_errorName(status) +
                " at offset " + std::to_string(where.offset) + ")");
}

void RegexRule::apply(icu::UnicodeString& text) const {
  UErrorCode status = U_ZERO_ERROR;
  std::unique_ptr<icu::RegexMatcher> matcher(pattern_->matcher(text, status));
  icu::UnicodeString result = U_SUCCESS(status) ? matcher->replaceAll(replacement_, status) : icu::UnicodeString();
  if (U_FAILURE(status))
    throw Error("internal error: the text rule /" + source_ + "/ failed (" + u_errorName(status) + ")");
  text = std::move(result);
}

bool RegexRule::found_in(const icu::UnicodeString& text) const {
  UErrorCode status = U_ZERO_ERROR;
  std::unique_ptr<icu::RegexMatcher> matcher(pattern_->matcher(text, status));
  const bool found = U_SUCCESS(status) && matcher->find(status);
  if (U_FAILURE(status))
    throw Error("internal error: the text rule /" + source_ + "/ failed (" + u_errorName(status) + ")");
  return found;
}

std::vector<icu::UnicodeString> RegexRule::find_all(const icu::UnicodeString& text) const {
  UErrorCode status = U_ZERO_ERROR;
  std::unique_ptr<icu::RegexMatcher> matcher(pattern_->matcher(text, status));
  std::vector<icu::UnicodeString> matches;
  while (U_SUCCESS(status) && matcher->find(status)) {
    const int32_t begin = matcher->start(status), end = matcher->end(status);
    if (U_SUCCESS(status)) matches.emplace_back(text, begin, end - begin);
  }
  if (U_FAILURE(status))
    throw Error("internal error: the text rule /" + source_ + "/ failed (" + u_errorName(status) + ")");
  return matches;
}

icu::UnicodeSet make_set(const std::string& body) {
  UErrorCode status = U_ZERO_ERROR;
  icu::UnicodeSet set(from_utf8("[" + body + "]"), status);
  if (U_FAILURE(status))
    throw Error(std::string("internal error: a character set does not compile (") + u_errorName(status) + ")");
  set.freeze();
  return set;
}

std::vector<icu::UnicodeString> python_split(const icu::UnicodeString& text) {
  std::vector<icu::UnicodeString> parts;
  int32_t start = -1;
  for (int32_t i = 0; i < text.length();) {
    const UChar32 c = text.char32At(i);
    const int32_t next = text.moveIndex32(i, 1);
    if (is_python_space(c)) {
      if (start >= 0) parts.push_back(icu::UnicodeString(text, start, i - start));
      start = -1;
    } else if (start < 0) {
      start = i;
    }
    i = next;
  }
  if (start >= 0) parts.push_back(icu::UnicodeString(text, start));
  return parts;
}

icu::UnicodeString python_strip(const icu::UnicodeString& text) {
  int32_t begin = 0, end = text.length();
  while (begin < end && is_python_space(text.char32At(begin))) begin = text.moveIndex32(begin, 1);
  while (end > begin && is_python_space(text.char32At(end - 1))) end = text.moveIndex32(end, -1);
  return icu::UnicodeString(text, begin, end - begin);
}

UChar32 last_code_point(const icu::UnicodeString& text) {
  return text.isEmpty() ? -1 : text.char32At(text.length() - 1);
}

}  // namespace ordo::text::icu_text
