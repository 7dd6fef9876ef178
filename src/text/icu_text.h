// Small helpers for rules written as Python `re` substitutions (sacremoses, Hugging Face
// tokenizers) and run with ICU's regex engine, which implements the same leftmost,
// non-overlapping re.sub semantics on code points. Python's notion of whitespace (\s,
// str.split, str.strip) is ICU's White_Space plus U+001C..U+001F, which Python also counts.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <unicode/regex.h>
#include <unicode/uniset.h>
#include <unicode/unistr.h>

namespace ordo::text::icu_text {

// The inside of an ICU set matching what Python 3's `\s` matches (str.isspace()).
inline constexpr const char* kPythonSpace = R"(\p{White_Space}\x{1c}-\x{1f})";

bool is_python_space(UChar32 c);

icu::UnicodeString from_utf8(const std::string& text);
std::string to_utf8(const icu::UnicodeString& text);

// A compiled `pattern` -> `replacement` substitution applied to every match (re.sub). The
// replacement uses ICU syntax ($1 for a group); `literal` takes the pattern as plain text.
// Only \n ends a line for `$` and `.`, as in Python (UREGEX_UNIX_LINES).
class RegexRule {
 public:
  RegexRule(const std::string& pattern, const std::string& replacement, bool literal = false);
  void apply(icu::UnicodeString& text) const;
  bool found_in(const icu::UnicodeString& text) const;
  // Every match, left to right (re.findall of a pattern without groups).
  std::vector<icu::UnicodeString> find_all(const icu::UnicodeString& text) const;

 private:
  std::shared_ptr<const icu::RegexPattern> pattern_;
  icu::UnicodeString replacement_;
  std::string source_;  // for error messages
};

// A set from the inside of an ICU set pattern ("\x{41}-\x{5a}...").
icu::UnicodeSet make_set(const std::string& body);

// str.split() and str.strip() of Python 3.
std::vector<icu::UnicodeString> python_split(const icu::UnicodeString& text);
icu::UnicodeString python_strip(const icu::UnicodeString& text);

// The code point before `end` (text.char32At of the last code point); -1 if empty.
UChar32 last_code_point(const icu::UnicodeString& text);

}  // namespace ordo::text::icu_text
