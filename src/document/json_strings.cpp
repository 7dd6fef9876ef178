// JSON string files of web and mobile apps (i18next, vue-i18n, Chrome's messages.json, flat
// key/value files): every string value that reads as text is translated, in objects and arrays
// at any depth, and the keys, numbers, booleans and the order of the keys stay. Placeholders
// ({name}, {{count}}, %s, ${x}, <0>...</0>, ICU plurals) go to the model as points and come back
// unchanged; values that are only placeholders, numbers, URLs, paths or identifiers are left
// alone. The file is written again byte for byte but for the translated strings (escaped as
// JSON needs, non-ASCII characters as they are): indentation, key order, numbers as written.
#include <unicode/uchar.h>

#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "document/file_content.h"
#include "document/markup_fragment.h"
#include "ordo/error.h"

namespace ordo::document {
namespace {

using Json = nlohmann::ordered_json;

const char* const kWhat = "JSON file";

bool blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Line and column (1-based, in bytes) of byte `at`.
std::string where(const std::string& text, size_t at) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < at && i < text.size(); ++i) {
    if (text[i] == '\n')
      ++line, column = 1;
    else
      ++column;
  }
  return "line " + std::to_string(line) + " column " + std::to_string(column);
}

// Whether a value is text to translate: a letter outside its placeholders, and not a URL, an
// e-mail address, a path or an identifier (one word with '/', '_', '@' or a dot inside).
bool is_text(const std::vector<std::string>& placeholders, const std::string& core) {
  if (core.empty()) return false;
  bool has_space = false;
  for (char c : core) has_space |= blank(c);
  if (!has_space) {
    if (core.find("://") != std::string::npos || core.rfind("www.", 0) == 0 || core.rfind("mailto:", 0) == 0)
      return false;
    for (size_t i = 0; i < core.size(); ++i) {
      const char c = core[i];
      if (c == '/' || c == '\\' || c == '_' || c == '@') return false;
      if (c == '.' && i + 1 < core.size() && std::isalnum(static_cast<unsigned char>(core[i + 1]))) return false;
    }
  }
  // A letter outside the placeholders.
  std::string rest = core;
  for (const std::string& p : placeholders) {
    const size_t at = rest.find(p);
    if (at != std::string::npos) rest.erase(at, p.size());
  }
  for (size_t i = 0; i < rest.size();) {
    const unsigned char c = static_cast<unsigned char>(rest[i]);
    const size_t n = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    uint32_t cp = n == 1 ? c : c & (0x7F >> n);
    for (size_t k = 1; k < n && i + k < rest.size(); ++k) cp = (cp << 6) | (rest[i + k] & 0x3F);
    if (u_isalpha(static_cast<UChar32>(cp))) return true;
    i += n;
  }
  return false;
}

// A syntax check: every event accepted, the first fault an ordo::Error with its line and column.
struct Checker : nlohmann::json_sax<Json> {
  explicit Checker(const std::string& text) : text(text) {}
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
    std::string message = e.what();
    size_t at = message.find(": ", message.find("parse error"));
    if (at == std::string::npos) at = message.find("] ");  // a number past double's range
    if (at != std::string::npos) message = message.substr(at + 2);
    throw Error(std::string(kWhat) + ": " + where(text, position == 0 ? 0 : position - 1) + ": " + message);
  }
  const std::string& text;
};

struct StringSource {
  size_t begin = 0, end = 0;  // the string token in the source, quotes included
  std::vector<std::string> placeholders;
  std::string prefix, suffix;  // white space around the text
};

class JsonContent : public FileContent {
 public:
  JsonContent(const std::string& bytes, const FileOptions& options) : source_(bytes) {
    check_depth(bytes, options.limits.max_xml_depth);
    // Checked whole first (the scan below trusts the syntax), without building a tree.
    Checker checker(bytes);
    Json::sax_parse(bytes, &checker);
    // No JSON text holds a NUL byte (not even in a string: it is written \u0000), and the
    // syntax check above took one for the end of the input, leaving what follows it unchecked
    // for the scan.
    if (const size_t nul = bytes.find('\0'); nul != std::string::npos)
      throw Error(std::string(kWhat) + ": " + where(bytes, nul) + ": a NUL byte: not a JSON text file");
    // The string tokens; a key is one followed by ':'.
    for (size_t i = 0; i < bytes.size(); ++i) {
      if (bytes[i] != '"') continue;
      size_t end = i + 1;
      while (end < bytes.size() && bytes[end] != '"') end += bytes[end] == '\\' ? 2 : 1;
      if (end >= bytes.size()) break;
      ++end;
      size_t next = end;
      while (next < bytes.size() && blank(bytes[next])) ++next;
      const bool key = next < bytes.size() && bytes[next] == ':';
      if (!key) add(i, end);
      i = end - 1;
    }
    if (units.size() > options.limits.max_texts)
      throw Error(std::string(kWhat) + ": more than " + std::to_string(options.limits.max_texts) +
                  " strings (limit max_texts)");
  }

  std::string rebuild(const std::vector<std::string>& translated) const override {
    std::string out;
    size_t copied = 0;
    for (size_t u = 0; u < sources_.size(); ++u) {
      const StringSource& source = sources_[u];
      std::string text = u < translated.size() ? translated[u] : std::string();
      if (units[u].markup) text = text_with_placeholders(read_fragment(text), source.placeholders);
      size_t b = 0, e = text.size();
      while (b < e && blank(text[b])) ++b;
      while (e > b && blank(text[e - 1])) --e;
      if (b == e) continue;  // nothing came back: the source stays
      out.append(source_, copied, source.begin - copied);
      out += Json(source.prefix + text.substr(b, e - b) + source.suffix)
                 .dump(-1, ' ', false, Json::error_handler_t::replace);
      copied = source.end;
    }
    out.append(source_, copied, std::string::npos);
    return out;
  }

 private:
  // Nesting is bounded before the parse.
  static void check_depth(const std::string& bytes, size_t limit) {
    size_t depth = 0;
    bool in_string = false;
    for (size_t i = 0; i < bytes.size(); ++i) {
      const char c = bytes[i];
      if (in_string) {
        if (c == '\\')
          ++i;
        else if (c == '"')
          in_string = false;
      } else if (c == '"') {
        in_string = true;
      } else if (c == '[' || c == '{') {
        if (++depth > limit)
          throw Error(std::string(kWhat) + ": " + where(bytes, i) + ": nested deeper than " + std::to_string(limit) +
                      " (limit max_xml_depth)");
      } else if ((c == ']' || c == '}') && depth > 0) {
        --depth;
      }
    }
  }

  // The string value at bytes [begin, end) of the source, a unit when it reads as text.
  void add(size_t begin, size_t end) {
    const std::string value = Json::parse(source_.substr(begin, end - begin)).get<std::string>();
    StringSource source;
    source.begin = begin;
    source.end = end;
    size_t b = 0, e = value.size();
    while (b < e && blank(value[b])) ++b;
    while (e > b && blank(value[e - 1])) --e;
    source.prefix = value.substr(0, b);
    source.suffix = value.substr(e);
    const std::string core = value.substr(b, e - b);
    Unit unit = unit_with_placeholders(core, source.placeholders);
    if (!is_text(source.placeholders, core)) return;
    units.push_back(std::move(unit));
    sources_.push_back(std::move(source));
  }

  std::string source_;
  std::vector<StringSource> sources_;
};

}  // namespace

std::unique_ptr<FileContent> read_json_strings(const std::string& bytes, const FileOptions& options) {
  return std::make_unique<JsonContent>(bytes, options);
}

}  // namespace ordo::document
