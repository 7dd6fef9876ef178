// gettext catalogues (.po, .pot). The msgids of the entries still to translate are the units
// (with msgid_plural a second one), each written with its placeholders (%s, %1$d, %(name)s,
// {name}) as points so they come back unchanged wherever the translation puts them; the
// translation is written into msgstr (msgstr[0] from the msgid, the other plural forms from
// msgid_plural) with the msgid's leading and trailing line breaks, which msgfmt requires to
// match. An entry of a c-format or python-format string whose translation lost or doubled a
// placeholder keeps the translation but is marked fuzzy, so the catalogue passes
// `msgfmt --check` and a person sees what to look at. Everything else (comments, references,
// flags, contexts, obsolete #~ entries, entries already translated, the line breaks) stays
// byte for byte; the header gets the target language's Language and Plural-Forms (gettext's
// own table) and a charset where a template left CHARSET.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "document/file_content.h"
#include "document/markup_fragment.h"
#include "ordo/error.h"

namespace ordo::document {
namespace {

const char* const kWhat = "PO file";

[[noreturn]] void fail(size_t line, const std::string& message) {
  throw Error(std::string(kWhat) + ": line " + std::to_string(line + 1) + ": " + message);
}

bool valid_utf8(const std::string& s, size_t begin, size_t end) {
  for (size_t i = begin; i < end;) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > end) return false;
    uint32_t cp = n == 1 ? c : c & (0x7F >> n);
    for (size_t k = 1; k < n; ++k) {
      const unsigned char d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      return false;
    i += n;
  }
  return true;
}

struct Line {
  size_t begin = 0, end = 0, next = 0;  // content [begin, end), line ending [end, next)
};

// A keyword with its string: msgctxt, msgid, msgid_plural, msgstr, msgstr[N].
struct Field {
  std::string keyword;
  int index = -1;              // msgstr[N]
  size_t first = 0, last = 0;  // its lines [first, last)
  std::string value;           // unescaped
};

struct Entry {
  size_t flags_line = SIZE_MAX;     // the "#," line
  size_t previous_line = SIZE_MAX;  // the first "#|" line
  size_t keyword_line = SIZE_MAX;   // the first keyword line
  std::vector<std::string> flags;
  std::vector<Field> fields;
  const Field* find(const std::string& keyword) const {
    for (const Field& f : fields)
      if (f.keyword == keyword) return &f;
    return nullptr;
  }
  bool flag(const std::string& name) const { return std::find(flags.begin(), flags.end(), name) != flags.end(); }
};

// One unit of an entry: which string, its placeholders and the line breaks around it.
struct UnitSource {
  size_t entry = 0;
  bool plural = false;  // msgid_plural
  std::vector<std::string> placeholders;
  std::string prefix, suffix;  // white space the msgid starts and ends with (as "\n")
};

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

// ---------------------------------------------------------------- strings

// The string of a line from `at` (at the opening quote), unescaped into `out`; false when it
// is not a well-formed string.
bool read_string(const std::string& s, size_t at, size_t end, std::string& out) {
  if (at >= end || s[at] != '"') return false;
  size_t i = at + 1;
  for (; i < end && s[i] != '"'; ++i) {
    if (s[i] != '\\') {
      out += s[i];
      continue;
    }
    if (++i >= end) return false;
    switch (s[i]) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'v': out += '\v'; break;
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      default:
        if (s[i] >= '0' && s[i] <= '7') {
          int value = 0;
          for (int k = 0; k < 3 && i < end && s[i] >= '0' && s[i] <= '7'; ++k, ++i) value = value * 8 + (s[i] - '0');
          --i;
          out += static_cast<char>(value);
        } else {
          return false;
        }
    }
  }
  if (i >= end) return false;
  for (++i; i < end; ++i)
    if (!std::isspace(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          const char digits[] = {'\\', static_cast<char>('0' + ((c >> 6) & 7)), static_cast<char>('0' + ((c >> 3) & 7)),
                                 static_cast<char>('0' + (c & 7)), 0};
          out += digits;
        } else {
          out += c;
        }
    }
  }
  return out;
}

// `keyword "value"` as gettext writes it: one line when it fits and holds no line break
// before its end, else `keyword ""` and continuation lines of at most 79 columns, each line
// break ending one.
std::string write_field(const std::string& keyword, const std::string& value, const std::string& eol) {
  const std::string escaped = escape(value);
  const size_t newline = value.find('\n');
  if (keyword.size() + escaped.size() + 3 <= 79 && (newline == std::string::npos || newline + 1 == value.size()))
    return keyword + " \"" + escaped + "\"";
  // Pieces: split after each "\n", then wrapped at spaces.
  std::vector<std::string> pieces;
  std::string current;
  for (size_t i = 0; i < value.size(); ++i) {
    current += value[i];
    if (value[i] == '\n') pieces.push_back(std::move(current)), current.clear();
  }
  if (!current.empty()) pieces.push_back(std::move(current));
  std::string out = keyword + " \"\"";
  for (const std::string& piece : pieces) {
    std::string line;  // escaped
    size_t width = 0;  // code points
    std::string word;
    const auto flush_word = [&]() {
      const std::string w = escape(word);
      size_t cps = 0;
      for (char c : w) cps += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
      if (!line.empty() && width + cps + 2 > 79) {
        out += eol + "\"" + line + "\"";
        line.clear();
        width = 0;
      }
      line += w;
      width += cps;
      word.clear();
    };
    for (char c : piece) {
      word += c;
      if (c == ' ') flush_word();
    }
    if (!word.empty()) flush_word();
    if (!line.empty()) out += eol + "\"" + line + "\"";
  }
  return out;
}

// ---------------------------------------------------------------- the header

struct PluralRule {
  const char* language;
  const char* forms;
};

// gettext's plural table (gettext-tools/src/plural-table.c), and a few more languages by CLDR.
const PluralRule kPlurals[] = {
    {"ja", "nplurals=1; plural=0;"},
    {"vi", "nplurals=1; plural=0;"},
    {"ko", "nplurals=1; plural=0;"},
    {"zh", "nplurals=1; plural=0;"},
    {"th", "nplurals=1; plural=0;"},
    {"id", "nplurals=1; plural=0;"},
    {"ms", "nplurals=1; plural=0;"},
    {"lo", "nplurals=1; plural=0;"},
    {"km", "nplurals=1; plural=0;"},
    {"my", "nplurals=1; plural=0;"},
    {"fr", "nplurals=2; plural=(n > 1);"},
    {"pt_BR", "nplurals=2; plural=(n > 1);"},
    {"mg", "nplurals=2; plural=(n > 1);"},
    {"tr", "nplurals=2; plural=(n != 1);"},
    {"lv", "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n != 0 ? 1 : 2);"},
    {"ga", "nplurals=3; plural=n==1 ? 0 : n==2 ? 1 : 2;"},
    {"ro", "nplurals=3; plural=n==1 ? 0 : (n==0 || (n%100 > 0 && n%100 < 20)) ? 1 : 2;"},
    {"lt", "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && (n%100<10 || n%100>=20) ? 1 : 2);"},
    {"ru", "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);"},
    {"uk", "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);"},
    {"be", "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);"},
    {"sr", "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);"},
    {"hr", "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);"},
    {"bs", "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);"},
    {"cs", "nplurals=3; plural=(n==1) ? 0 : (n>=2 && n<=4) ? 1 : 2;"},
    {"sk", "nplurals=3; plural=(n==1) ? 0 : (n>=2 && n<=4) ? 1 : 2;"},
    {"pl", "nplurals=3; plural=(n==1 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);"},
    {"sl", "nplurals=4; plural=(n%100==1 ? 0 : n%100==2 ? 1 : n%100==3 || n%100==4 ? 2 : 3);"},
    {"ar", "nplurals=6; plural=n==0 ? 0 : n==1 ? 1 : n==2 ? 2 : n%100>=3 && n%100<=10 ? 3 : n%100>=11 ? 4 : 5;"},
};
// Germanic, Romance (but French), Greek, Finno-Ugric, Hebrew, ...: one and other.
const char* const kTwoForms = "nplurals=2; plural=(n != 1);";

// ISO 639-3 codes of models ("deu", "deu_Latn", "__de__") as gettext's two-letter ones.
std::string gettext_language(const std::string& code) {
  static const std::map<std::string, std::string> kThree = {
      {"ara", "ar"}, {"bel", "be"}, {"ben", "bn"}, {"bos", "bs"}, {"bul", "bg"}, {"cat", "ca"}, {"ces", "cs"},
      {"dan", "da"}, {"deu", "de"}, {"ell", "el"}, {"eng", "en"}, {"est", "et"}, {"eus", "eu"}, {"fin", "fi"},
      {"fra", "fr"}, {"gle", "ga"}, {"glg", "gl"}, {"heb", "he"}, {"hin", "hi"}, {"hrv", "hr"}, {"hun", "hu"},
      {"ind", "id"}, {"isl", "is"}, {"ita", "it"}, {"jpn", "ja"}, {"kor", "ko"}, {"lav", "lv"}, {"lit", "lt"},
      {"mlg", "mg"}, {"msa", "ms"}, {"nld", "nl"}, {"nob", "nb"}, {"pol", "pl"}, {"por", "pt"}, {"ron", "ro"},
      {"rus", "ru"}, {"slk", "sk"}, {"slv", "sl"}, {"spa", "es"}, {"srp", "sr"}, {"swe", "sv"}, {"tha", "th"},
      {"tur", "tr"}, {"ukr", "uk"}, {"vie", "vi"}, {"zho", "zh"}, {"cmn", "zh"}};
  std::vector<std::string> parts;
  std::string part;
  for (char c : code) {
    if (c == '_' || c == '-') {
      if (!part.empty()) parts.push_back(part), part.clear();
    } else if (std::isalnum(static_cast<unsigned char>(c))) {
      part += c;
    }
  }
  if (!part.empty()) parts.push_back(part);
  if (parts.empty()) return "";
  std::string language = parts[0];
  for (char& c : language) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (const auto it = kThree.find(language); it != kThree.end()) language = it->second;
  if (parts.size() > 1 && parts[1].size() == 2) {  // a region; a script (Latn) is left out
    std::string region = parts[1];
    for (char& c : region) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    language += "_" + region;
  }
  return language;
}

std::string plural_forms(const std::string& language) {
  const std::string base = language.substr(0, language.find('_'));
  for (const PluralRule& rule : kPlurals)
    if (language == rule.language) return rule.forms;
  for (const PluralRule& rule : kPlurals)
    if (base == rule.language) return rule.forms;
  return kTwoForms;
}

// The header's "Name: value\n" fields with `name` set to `value` (added when missing).
void set_header_field(std::string& header, const std::string& name, const std::string& value) {
  size_t at = 0;
  while (at < header.size()) {
    const size_t end = header.find('\n', at);
    const size_t stop = end == std::string::npos ? header.size() : end;
    if (header.compare(at, name.size() + 1, name + ":") == 0) {
      header.replace(at, stop - at, name + ": " + value);
      return;
    }
    at = stop + 1;
  }
  if (!header.empty() && header.back() != '\n') header += '\n';
  header += name + ": " + value + "\n";
}

std::string header_field(const std::string& header, const std::string& name) {
  size_t at = 0;
  while (at < header.size()) {
    const size_t end = header.find('\n', at);
    const size_t stop = end == std::string::npos ? header.size() : end;
    if (header.compare(at, name.size() + 1, name + ":") == 0)
      return trim(header.substr(at + name.size() + 1, stop - at - name.size() - 1));
    at = stop + 1;
  }
  return "";
}

// The placeholders of a string, sorted (what a format check compares).
std::vector<std::string> placeholders_of(const std::string& text) {
  FragmentWriter writer;
  std::vector<std::string> out;
  write_with_placeholders(text, writer, out);
  std::sort(out.begin(), out.end());
  return out;
}

// ---------------------------------------------------------------- the catalogue

class PoContent : public FileContent {
 public:
  PoContent(const std::string& bytes, const FileOptions& options) : source_(bytes) {
    split_lines();
    read_entries();
    // The header and the number of plural forms the target language has.
    for (size_t e = 0; e < entries_.size(); ++e) {
      const Field* id = entries_[e].find("msgid");
      if (id && id->value.empty() && !entries_[e].find("msgctxt") && entries_[e].find("msgstr")) {
        header_ = e;
        break;
      }
    }
    if (header_ != SIZE_MAX) {
      header_text_ = entries_[header_].find("msgstr")->value;
      std::string filled = header_text_;
      if (!options.target_language.empty()) {
        const std::string language = gettext_language(options.target_language);
        if (!language.empty()) {
          set_header_field(filled, "Language", language);
          set_header_field(filled, "Plural-Forms", plural_forms(language));
        }
      }
      // A template's placeholders msgfmt --check refuses.
      if (header_field(filled, "Plural-Forms").find("INTEGER") != std::string::npos)
        set_header_field(filled, "Plural-Forms", kTwoForms);
      const std::string type = header_field(filled, "Content-Type");
      if (type.find("charset=CHARSET") != std::string::npos)
        set_header_field(filled, "Content-Type", "text/plain; charset=UTF-8");
      if (filled != header_text_) filled_header_ = filled;
      const std::string forms = header_field(filled, "Plural-Forms");
      const size_t at = forms.find("nplurals=");
      if (at != std::string::npos) {
        const int n = std::atoi(forms.c_str() + at + 9);
        if (n >= 1 && n <= 20) nplurals_ = static_cast<size_t>(n);
      }
      const std::string type_now = header_field(filled, "Content-Type");
      const size_t charset = type_now.find("charset=");
      if (charset != std::string::npos) {
        std::string name = trim(type_now.substr(charset + 8));
        for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        if (name != "UTF-8" && name != "UTF8" && name != "ASCII" && name != "US-ASCII" && name != "CHARSET")
          throw Error(std::string(kWhat) + ": the header's charset is " + name +
                      ", not UTF-8 (convert the catalogue with msgconv --to-code=UTF-8)");
      }
    }
    // The units.
    for (size_t e = 0; e < entries_.size(); ++e) {
      if (e == header_) continue;
      const Entry& entry = entries_[e];
      const Field* id = entry.find("msgid");
      if (!id || id->value.empty()) continue;
      bool translated = false;
      for (const Field& f : entry.fields)
        if (f.keyword == "msgstr" && !f.value.empty()) translated = true;
      if (entry.flag("fuzzy") ? !options.translate_fuzzy && !options.retranslate : translated && !options.retranslate)
        continue;
      add_unit(e, false, id->value);
      if (const Field* plural = entry.find("msgid_plural")) add_unit(e, true, plural->value);
    }
    if (units.size() > options.limits.max_texts)
      throw Error(std::string(kWhat) + ": more than " + std::to_string(options.limits.max_texts) +
                  " strings (limit max_texts)");
  }

  std::string rebuild(const std::vector<std::string>& translated) const override;

 private:
  void split_lines() {
    size_t i = source_.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
    while (i < source_.size()) {
      Line line;
      line.begin = i;
      const size_t nl = source_.find('\n', i);
      i = nl == std::string::npos ? source_.size() : nl;
      line.end = i > line.begin && source_[i - 1] == '\r' ? i - 1 : i;
      if (i < source_.size()) ++i;
      line.next = i;
      if (!valid_utf8(source_, line.begin, line.end)) fail(lines_.size(), "not UTF-8 text");
      lines_.push_back(line);
    }
  }

  std::string text(size_t line) const {
    return source_.substr(lines_[line].begin, lines_[line].end - lines_[line].begin);
  }

  void read_entries() {
    Entry entry;
    bool has_msgstr = false;
    const auto finish = [&](size_t line) {
      if (entry.fields.empty()) return;
      if (!entry.find("msgid")) fail(entry.keyword_line, "an entry without msgid");
      if (!has_msgstr) fail(line == 0 ? 0 : line - 1, "msgid without msgstr (a truncated catalogue?)");
      entries_.push_back(std::move(entry));
      entry = Entry();
      has_msgstr = false;
    };
    for (size_t l = 0; l < lines_.size(); ++l) {
      const std::string t = text(l);
      size_t b = 0;
      while (b < t.size() && (t[b] == ' ' || t[b] == '\t')) ++b;
      if (b == t.size()) continue;  // blank
      if (t[b] == '#') {
        if (has_msgstr) finish(l);
        if (entry.fields.empty()) {
          if (t.compare(b, 2, "#~") == 0) {  // an obsolete entry: the comments before it are its own
            entry = Entry();
            continue;
          }
          if (t.compare(b, 2, "#,") == 0) {
            entry.flags_line = l;
            std::string flag;
            for (size_t i = b + 2; i <= t.size(); ++i) {
              if (i == t.size() || t[i] == ',') {
                if (!trim(flag).empty()) entry.flags.push_back(trim(flag));
                flag.clear();
              } else {
                flag += t[i];
              }
            }
          } else if (t.compare(b, 2, "#|") == 0 && entry.previous_line == SIZE_MAX) {
            entry.previous_line = l;
          }
        }
        continue;  // comments inside an entry's keywords: kept as they are
      }
      if (t[b] == '"') {
        if (entry.fields.empty()) fail(l, "a string outside any msgid or msgstr");
        Field& field = entry.fields.back();
        if (!read_string(t, b, t.size(), field.value)) fail(l, "a malformed string");
        field.last = l + 1;
        continue;
      }
      size_t k = b;
      while (k < t.size() && (std::isalnum(static_cast<unsigned char>(t[k])) || t[k] == '_')) ++k;
      Field field;
      field.keyword = t.substr(b, k - b);
      if (k < t.size() && t[k] == '[') {
        const size_t close = t.find(']', k);
        if (close == std::string::npos || close - k > 4 || field.keyword != "msgstr") fail(l, "a malformed keyword");
        field.index = std::atoi(t.c_str() + k + 1);
        k = close + 1;
      }
      if (field.keyword != "msgctxt" && field.keyword != "msgid" && field.keyword != "msgid_plural" &&
          field.keyword != "msgstr")
        fail(l, "expected msgctxt, msgid, msgid_plural, msgstr or a comment: not a gettext catalogue");
      while (k < t.size() && (t[k] == ' ' || t[k] == '\t')) ++k;
      if (!read_string(t, k, t.size(), field.value)) fail(l, "a malformed string after " + field.keyword);
      if ((field.keyword == "msgctxt" || field.keyword == "msgid") && has_msgstr) finish(l);
      if (!has_msgstr && field.keyword != "msgstr" && entry.find(field.keyword))
        fail(l, field.keyword + " twice in one entry (a msgstr missing before it?)");
      if (!has_msgstr && field.keyword == "msgctxt" && entry.find("msgid")) fail(l, "msgctxt after msgid");
      if (field.keyword == "msgstr") has_msgstr = true;
      if (entry.keyword_line == SIZE_MAX) entry.keyword_line = l;
      field.first = l;
      field.last = l + 1;
      entry.fields.push_back(std::move(field));
    }
    finish(lines_.size());
    if (entries_.empty()) throw Error(std::string(kWhat) + ": no msgid found: not a gettext catalogue");
  }

  void add_unit(size_t entry, bool plural, const std::string& msgid) {
    UnitSource source;
    source.entry = entry;
    source.plural = plural;
    size_t b = 0, e = msgid.size();
    while (b < e && std::isspace(static_cast<unsigned char>(msgid[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(msgid[e - 1]))) --e;
    source.prefix = msgid.substr(0, b);
    source.suffix = msgid.substr(e);
    units.push_back(unit_with_placeholders(std::string_view(msgid).substr(b, e - b), source.placeholders));
    sources_.push_back(std::move(source));
  }

  std::string eol(size_t line) const {
    const Line& l = lines_[line];
    return l.next > l.end ? source_.substr(l.end, l.next - l.end) : std::string("\n");
  }

  std::string source_;
  std::vector<Line> lines_;
  std::vector<Entry> entries_;
  std::vector<UnitSource> sources_;
  size_t header_ = SIZE_MAX;
  std::string header_text_, filled_header_;
  size_t nplurals_ = 0;
};

std::string PoContent::rebuild(const std::vector<std::string>& translated) const {
  // Edits by line: [first, last) replaced by text (each line with its own line ending).
  struct Edit {
    size_t first, last;
    std::string text;
  };
  std::vector<Edit> edits;
  const auto replace_msgstr = [&](const Entry& entry, const std::vector<std::string>& values, bool plural) {
    size_t first = SIZE_MAX, last = 0;
    for (const Field& f : entry.fields)
      if (f.keyword == "msgstr") first = std::min(first, f.first), last = std::max(last, f.last);
    const std::string end = eol(first);
    std::string text;
    for (size_t i = 0; i < values.size(); ++i)
      text += write_field(plural ? "msgstr[" + std::to_string(i) + "]" : "msgstr", values[i], end) + end;
    // The last line keeps the line ending the source had (none at the end of a file).
    const Line& last_line = lines_[last - 1];
    text.resize(text.size() - end.size());
    text += source_.substr(last_line.end, last_line.next - last_line.end);
    edits.push_back({first, last, text});
  };
  if (!filled_header_.empty()) replace_msgstr(entries_[header_], {filled_header_}, false);

  // Translations per entry.
  std::map<size_t, std::pair<std::string, std::string>> done;  // entry -> (singular, plural)
  std::map<size_t, bool> lost;                                 // entry -> a placeholder was lost
  for (size_t u = 0; u < units.size(); ++u) {
    const UnitSource& source = sources_[u];
    std::string text = u < translated.size() ? translated[u] : std::string();
    if (units[u].markup) text = text_with_placeholders(read_fragment(text), source.placeholders);
    text = source.prefix + trim(text) + source.suffix;
    const Entry& entry = entries_[source.entry];
    const Field* id = entry.find(source.plural ? "msgid_plural" : "msgid");
    bool checked = false;
    for (const std::string& flag : entry.flags)
      if (flag.size() > 7 && flag.compare(flag.size() - 7, 7, "-format") == 0 && flag.compare(0, 3, "no-") != 0)
        checked = true;
    if (checked && placeholders_of(text) != placeholders_of(id->value)) lost[source.entry] = true;
    auto& slot = done[source.entry];
    (source.plural ? slot.second : slot.first) = text;
  }
  for (const auto& [e, texts] : done) {
    const Entry& entry = entries_[e];
    if (entry.find("msgid_plural")) {
      size_t forms = nplurals_;
      if (forms == 0)
        for (const Field& f : entry.fields)
          if (f.keyword == "msgstr") forms = std::max(forms, static_cast<size_t>(std::max(f.index, 0)) + 1);
      forms = std::min<size_t>(std::max<size_t>(forms, 1), 20);
      std::vector<std::string> values(forms, texts.second);
      values[0] = texts.first;
      replace_msgstr(entry, values, true);
    } else {
      replace_msgstr(entry, {texts.first}, false);
    }
    if (lost.count(e) && !entry.flag("fuzzy")) {
      if (entry.flags_line != SIZE_MAX) {
        const Line& l = lines_[entry.flags_line];
        const std::string t = source_.substr(l.begin, l.end - l.begin);
        const size_t at = t.find("#,") + 2;
        edits.push_back({entry.flags_line, entry.flags_line + 1,
                         t.substr(0, at) + " fuzzy," + t.substr(at) + source_.substr(l.end, l.next - l.end)});
      } else {
        const size_t before = entry.previous_line != SIZE_MAX ? entry.previous_line : entry.keyword_line;
        edits.push_back({before, before, "#, fuzzy" + eol(before)});
      }
    }
  }
  std::sort(edits.begin(), edits.end(),
            [](const Edit& a, const Edit& b) { return a.first != b.first ? a.first < b.first : a.last < b.last; });
  std::string out;
  size_t line = 0;
  const size_t start = lines_.empty() ? source_.size() : lines_[0].begin;
  out.append(source_, 0, start);  // the byte order mark
  const auto copy_to = [&](size_t stop) {
    for (; line < stop; ++line) out.append(source_, lines_[line].begin, lines_[line].next - lines_[line].begin);
  };
  for (const Edit& edit : edits) {
    copy_to(edit.first);
    out += edit.text;
    line = std::max(line, edit.last);
  }
  copy_to(lines_.size());
  return out;
}

}  // namespace

std::unique_ptr<FileContent> read_po(const std::string& bytes, const FileOptions& options) {
  return std::make_unique<PoContent>(bytes, options);
}

}  // namespace ordo::document
