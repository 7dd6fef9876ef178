// sacremoses 0.1.1's MosesPunctNormalizer, MosesTokenizer and MosesDetokenizer, rule for rule
// (see moses.h). The comments name sacremoses' rule constants so each line can be checked
// against normalize.py and tokenize.py of that release. Python patterns become ICU patterns
// unchanged but for: `\1` -> `$1` in replacements, `\s` -> Python's whitespace set, and the
// character-class strings -> the same characters written as \x{..} ranges.
#include "text/moses.h"

#include <algorithm>
#include <map>
#include <unordered_set>

#include "ordo/error.h"
#include "text/icu_text.h"
#include "text/moses_tables.h"

namespace ordo::text {

using icu_text::from_utf8;
using icu_text::RegexRule;
using icu_text::to_utf8;

namespace {

constexpr bool kLiteral = true;

const moses_tables::PrefixList& prefix_list(const std::string& lang, const char* what) {
  for (size_t i = 0; i < moses_tables::kPrefixListCount; ++i)
    if (lang == moses_tables::kPrefixLists[i].lang) return moses_tables::kPrefixLists[i];
  std::string known;
  for (const std::string& l : moses_languages()) known += (known.empty() ? "" : ", ") + l;
  throw Error(std::string("Moses ") + what + ": language '" + lang + "' is not built in (built in: " + known +
              "; sacremoses' rules for other languages differ and are not reproduced)");
}

std::string space() { return icu_text::kPythonSpace; }

void apply_all(const std::vector<RegexRule>& rules, icu::UnicodeString& text) {
  for (const RegexRule& rule : rules) rule.apply(text);
}

}  // namespace

std::vector<std::string> moses_languages() {
  std::vector<std::string> out;
  for (size_t i = 0; i < moses_tables::kPrefixListCount; ++i) out.push_back(moses_tables::kPrefixLists[i].lang);
  return out;
}

// ------------------------------------------------------------------ MosesPunctNormalizer

struct MosesPunctNormalizer::Rules {
  std::vector<RegexRule> substitutions;
};

MosesPunctNormalizer::MosesPunctNormalizer(const std::string& lang) {
  prefix_list(lang, "punctuation normalization");
  auto rules = std::make_shared<Rules>();
  auto& s = rules->substitutions;
  const auto add = [&](const std::string& pattern, const std::string& replacement, bool literal = false) {
    s.emplace_back(pattern, replacement, literal);
  };
  // EXTRA_WHITESPACE
  add(R"(\r)", "");
  add(R"(\()", " (");
  add(R"(\))", ") ");
  add(R"( +)", " ");
  add(R"(\) ([.!:?;,]))", ")$1");
  add(R"(\( )", "(");
  add(R"( \))", ")");
  add(R"((\d) %)", "$1%");
  add(R"( :)", ":");
  add(R"( ;)", ";");
  // NORMALIZE_UNICODE_IF_NOT_PENN (inserted because penn=True)
  add("`", "'", kLiteral);
  add("''", " \" ", kLiteral);
  // NORMALIZE_UNICODE
  add("„", "\"", kLiteral);
  add("“", "\"", kLiteral);
  add("”", "\"", kLiteral);
  add("–", "-", kLiteral);
  add("—", " - ", kLiteral);
  add(R"( +)", " ");
  add("´", "'", kLiteral);
  add("([a-zA-Z])‘([a-zA-Z])", "$1'$2");
  add("([a-zA-Z])’([a-zA-Z])", "$1'$2");
  add("‘", "'", kLiteral);
  add("‚", "'", kLiteral);
  add("’", "'", kLiteral);
  add("''", "\"", kLiteral);
  add("´´", "\"", kLiteral);
  add("…", "...", kLiteral);
  // FRENCH_QUOTES
  add("\u00A0«\u00A0", "\"", kLiteral);
  add("«\u00A0", "\"", kLiteral);
  add("«", "\"", kLiteral);
  add("\u00A0»\u00A0", "\"", kLiteral);
  add("\u00A0»", "\"", kLiteral);
  add("»", "\"", kLiteral);
  // HANDLE_PSEUDO_SPACES
  add("\u00A0%", "%", kLiteral);
  add("nº\u00A0", "nº ", kLiteral);
  add("\u00A0:", ":", kLiteral);
  add("\u00A0ºC", " ºC", kLiteral);
  add("\u00A0cm", " cm", kLiteral);
  add("\u00A0?", "?", kLiteral);
  add("\u00A0!", "!", kLiteral);
  add("\u00A0;", ";", kLiteral);
  add(",\u00A0", ", ", kLiteral);
  add(R"( +)", " ");
  // norm_quote_commas
  if (lang == "en") {
    add(R"re("([,.]+))re", "$1\"");  // EN_QUOTATION_FOLLOWED_BY_COMMA
  } else if (lang == "de" || lang == "es" || lang == "fr") {
    add(",\"", "\",", kLiteral);  // DE_ES_FR_QUOTATION_FOLLOWED_BY_COMMA
    add(R"re((\.+)"([)re" + space() + R"re(]*[^<]))re", "\"$1$2");
  }
  // norm_numbers: DE_ES_CZ_CS_FR or OTHER
  const bool comma = lang == "de" || lang == "es" || lang == "cz" || lang == "cs" || lang == "fr";
  add("(\\d)\u00A0(\\d)", comma ? "$1,$2" : "$1.$2");
  rules_ = std::move(rules);
}

std::string MosesPunctNormalizer::normalize(const std::string& text) const {
  icu::UnicodeString u = from_utf8(text);
  apply_all(rules_->substitutions, u);
  return to_utf8(icu_text::python_strip(u));
}

// ------------------------------------------------------------------ MosesTokenizer

struct MosesTokenizer::Rules {
  bool english = false;
  RegexRule deduplicate_space{"[" + space() + "]+", " "};  // DEDUPLICATE_SPACE
  RegexRule ascii_junk{R"([\x{0}-\x{1f}])", ""};           // ASCII_JUNK
  RegexRule pad_not_isalnum{std::string("([^") + moses_tables::kTokenizerIsAlnum + space() + R"re(\.\'\`\,\-]))re",
                            " $1 "};  // PAD_NOT_ISALNUM
  RegexRule aggressive_hyphen_split{
      std::string("([") + moses_tables::kTokenizerIsAlnum + R"(])\-(?=[)" + moses_tables::kTokenizerIsAlnum + "])",
      "$1 @-@ "};  // AGGRESSIVE_HYPHEN_SPLIT
  // replace_multidots / restore_multidots
  RegexRule dots{R"(\.([\.]+))", " DOTMULTI$1"};
  RegexRule dotmulti_dot{"DOTMULTI.", "DOTDOTMULTI", kLiteral};
  RegexRule dotmulti_dot_other{R"(DOTMULTI\.([^\.]))", "DOTDOTMULTI $1"};
  RegexRule dotdotmulti{"DOTDOTMULTI", "DOTMULTI.", kLiteral};
  RegexRule dotmulti{"DOTMULTI", ".", kLiteral};
  std::vector<RegexRule> comma_separate{
      {std::string("([^") + moses_tables::kTokenizerIsN + "])[,]", "$1 , "},   // COMMA_SEPARATE_1
      {std::string("[,]([^") + moses_tables::kTokenizerIsN + "])", " , $1"},   // COMMA_SEPARATE_2
      {std::string("([") + moses_tables::kTokenizerIsN + "])[,]$", "$1 , "}};  // COMMA_SEPARATE_3
  std::vector<RegexRule> apostrophe;
  RegexRule trailing_dot_apostrophe{R"(\.' ?$)", " . ' "};  // TRAILING_DOT_APOSTROPHE
  std::vector<RegexRule> escape_xml{{"&", "&amp;", kLiteral}, {"|", "&#124;", kLiteral}, {"<", "&lt;", kLiteral},
                                    {">", "&gt;", kLiteral},  {"'", "&apos;", kLiteral}, {"\"", "&quot;", kLiteral},
                                    {"[", "&#91;", kLiteral}, {"]", "&#93;", kLiteral}};
  icu::UnicodeSet is_alpha = icu_text::make_set(moses_tables::kTokenizerIsAlpha);
  icu::UnicodeSet is_lower = icu_text::make_set(moses_tables::kTokenizerIsLower);
  std::unordered_set<std::string> prefixes, numeric_only;

  icu::UnicodeString replace_multidots(icu::UnicodeString text) const;
  icu::UnicodeString restore_multidots(icu::UnicodeString text) const;
  icu::UnicodeString handle_nonbreaking_prefixes(const icu::UnicodeString& text) const;
};

MosesTokenizer::MosesTokenizer(const std::string& lang) {
  const moses_tables::PrefixList& list = prefix_list(lang, "tokenization");
  auto rules = std::make_shared<Rules>();
  rules->english = lang == "en";
  rules->prefixes.insert(list.prefixes, list.prefixes + list.prefix_count);
  rules->numeric_only.insert(list.numeric_only, list.numeric_only + list.numeric_only_count);
  const std::string alpha = moses_tables::kTokenizerIsAlpha, isn = moses_tables::kTokenizerIsN;
  if (rules->english) {
    rules->apostrophe = {{"([^" + alpha + "])[']([^" + alpha + "])", "$1 ' $2"},       // EN_SPECIFIC_1
                         {"([^" + alpha + isn + "])[']([" + alpha + "])", "$1 ' $2"},  // EN_SPECIFIC_2
                         {"([" + alpha + "])[']([^" + alpha + "])", "$1 ' $2"},        // EN_SPECIFIC_3
                         {"([" + alpha + "])[']([" + alpha + "])", "$1 '$2"},          // EN_SPECIFIC_4
                         {"([" + isn + "])[']([s])", "$1 '$2"}};                       // EN_SPECIFIC_5
  } else {
    rules->apostrophe = {{"'", " ' ", kLiteral}};  // NON_SPECIFIC_APOSTROPHE
  }
  rules_ = std::move(rules);
}

icu::UnicodeString MosesTokenizer::Rules::replace_multidots(icu::UnicodeString text) const {
  dots.apply(text);
  while (text.indexOf(u"DOTMULTI.") >= 0) {
    dotmulti_dot_other.apply(text);
    dotmulti_dot.apply(text);
  }
  return text;
}

icu::UnicodeString MosesTokenizer::Rules::restore_multidots(icu::UnicodeString text) const {
  while (text.indexOf(u"DOTDOTMULTI") >= 0) dotdotmulti.apply(text);
  dotmulti.apply(text);
  return text;
}

icu::UnicodeString MosesTokenizer::Rules::handle_nonbreaking_prefixes(const icu::UnicodeString& text) const {
  std::vector<icu::UnicodeString> tokens = icu_text::python_split(text);
  const size_t n = tokens.size();
  for (size_t i = 0; i < n; ++i) {
    const icu::UnicodeString& token = tokens[i];
    // ^(\S+)\.$ : a token ending in a period with something before it.
    if (token.length() < 2 || token[token.length() - 1] != u'.') continue;
    const icu::UnicodeString prefix(token, 0, token.length() - 1);
    const std::string prefix8 = to_utf8(prefix);
    const bool dotted_alpha = prefix.indexOf(u'.') >= 0 && is_alpha.containsSome(prefix);
    const bool nonbreaking = prefixes.count(prefix8) && !numeric_only.count(prefix8);
    const bool lower_next = i + 1 != n && is_lower.contains(tokens[i + 1].char32At(0));
    if (dotted_alpha || nonbreaking || lower_next) continue;
    if (numeric_only.count(prefix8) && i + 1 < n && tokens[i + 1][0] >= u'0' && tokens[i + 1][0] <= u'9') continue;
    tokens[i] = prefix + u" .";
  }
  icu::UnicodeString joined;
  for (size_t i = 0; i < n; ++i) {
    if (i) joined += u' ';
    joined += tokens[i];
  }
  return joined;
}

std::vector<std::string> MosesTokenizer::tokenize(const std::string& input, bool aggressive_dash_splits,
                                                  bool escape) const {
  const Rules& r = *rules_;
  icu::UnicodeString text = from_utf8(input);
  r.deduplicate_space.apply(text);
  r.ascii_junk.apply(text);
  text = icu_text::python_strip(text);
  r.pad_not_isalnum.apply(text);
  if (aggressive_dash_splits) r.aggressive_hyphen_split.apply(text);
  text = r.replace_multidots(text);
  apply_all(r.comma_separate, text);
  apply_all(r.apostrophe, text);
  text = r.handle_nonbreaking_prefixes(text);
  r.deduplicate_space.apply(text);
  text = icu_text::python_strip(text);
  r.trailing_dot_apostrophe.apply(text);
  text = r.restore_multidots(text);
  if (escape) apply_all(r.escape_xml, text);
  std::vector<std::string> tokens;
  for (const icu::UnicodeString& token : icu_text::python_split(text)) tokens.push_back(to_utf8(token));
  return tokens;
}

// ------------------------------------------------------------------ MosesDetokenizer

struct MosesDetokenizer::Rules {
  std::string lang;
  RegexRule aggressive_hyphen_split{" @-@ ", "-", kLiteral};
  // MOSES_UNESCAPE_XML_REGEXES, in sacremoses' order.
  std::vector<RegexRule> unescape_xml{{"&bar;", "|", kLiteral},   {"&#124;", "|", kLiteral}, {"&lt;", "<", kLiteral},
                                      {"&gt;", ">", kLiteral},    {"&bra;", "[", kLiteral},  {"&ket;", "]", kLiteral},
                                      {"&quot;", "\"", kLiteral}, {"&apos;", "'", kLiteral}, {"&#91;", "[", kLiteral},
                                      {"&#93;", "]", kLiteral},   {"&amp;", "&", kLiteral}};
  RegexRule one_space{" {2,}", " "};
  icu::UnicodeSet is_alpha = icu_text::make_set(moses_tables::kDetokenizerIsAlpha);
  icu::UnicodeSet currency = icu_text::make_set(std::string(moses_tables::kDetokenizerIsSc) + R"(\(\[\{¿¡)");
  icu::UnicodeSet punct = icu_text::make_set(R"(\,\.\?\!\:\;\\\%\}\]\))");
  icu::UnicodeSet open_quote = icu_text::make_set(R"(\'\"„“\`)");
  icu::UnicodeSet double_quotes = icu_text::make_set("„“”");
};

namespace {

// sacremoses.util.is_cjk: the first range whose end is above c decides, ends excluded.
bool is_cjk(UChar32 c) {
  for (size_t i = 0; i < moses_tables::kCjkRangeCount; ++i)
    if (static_cast<uint32_t>(c) < moses_tables::kCjkRanges[i].end)
      return static_cast<uint32_t>(c) > moses_tables::kCjkRanges[i].start;
  return false;
}

// ^[set]+$ on a non-empty token.
bool all_in(const icu::UnicodeSet& set, const icu::UnicodeString& token) {
  return !token.isEmpty() && set.containsAll(token);
}

}  // namespace

MosesDetokenizer::MosesDetokenizer(const std::string& lang) {
  prefix_list(lang, "detokenization");
  auto rules = std::make_shared<Rules>();
  rules->lang = lang;
  rules_ = std::move(rules);
}

std::string MosesDetokenizer::detokenize(const std::vector<std::string>& input, bool unescape) const {
  const Rules& r = *rules_;
  std::string joined = " ";
  for (size_t i = 0; i < input.size(); ++i) joined += (i ? " " : "") + input[i];
  icu::UnicodeString text = from_utf8(joined + " ");
  r.aggressive_hyphen_split.apply(text);
  if (unescape) apply_all(r.unescape_xml, text);

  std::map<icu::UnicodeString, int> quote_counts;
  icu::UnicodeString prepend_space = u" ", out;
  const std::vector<icu::UnicodeString> tokens = icu_text::python_split(text);
  const bool english = r.lang == "en";
  for (size_t i = 0; i < tokens.size(); ++i) {
    const icu::UnicodeString& token = tokens[i];
    if (is_cjk(token.char32At(0)) && r.lang != "ko") {
      // A CJK word right after another is attached to it.
      if (i > 0 && is_cjk(icu_text::last_code_point(tokens[i - 1])))
        out += token;
      else
        out += prepend_space + token;
      prepend_space = u" ";
    } else if (all_in(r.currency, token)) {  // IS_CURRENCY_SYMBOL: attach to what follows
      out += prepend_space + token;
      prepend_space = u"";
    } else if (all_in(r.punct, token)) {  // IS_PUNCT: attach to what precedes
      out += token;
      prepend_space = u" ";
    } else if (english && i > 0 && token.length() >= 2 && token[0] == u'\'' &&
               r.is_alpha.contains(token.char32At(1))) {  // IS_ENGLISH_CONTRACTION
      out += token;
      prepend_space = u" ";
    } else if (all_in(r.open_quote, token)) {  // IS_OPEN_QUOTE: alternate right and left shifts
      const icu::UnicodeString quote = all_in(r.double_quotes, token) ? icu::UnicodeString(u"\"") : token;
      int& count = quote_counts[quote];
      if (count % 2 == 0) {
        if (english && token == u"'" && i > 0 && icu_text::last_code_point(tokens[i - 1]) == u's') {
          out += token;  // possessive of a word in -s: "The Jones' house"
          prepend_space = u" ";
        } else {
          out += prepend_space + token;
          prepend_space = u"";
          ++count;
        }
      } else {
        out += token;
        prepend_space = u" ";
        ++count;
      }
    } else {
      out += prepend_space + token;
      prepend_space = u" ";
    }
  }
  r.one_space.apply(out);
  return to_utf8(icu_text::python_strip(out));
}

}  // namespace ordo::text
