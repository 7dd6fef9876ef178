// Markup fragments (markup_fragment.h): written by the formats, read back after the HTML layout
// moved their tags. read_fragment() reads only the tags FragmentWriter writes; HtmlDocument
// copies tags as written and escapes text, so anything else is a fault of ours, not of a file.
#include "document/markup_fragment.h"

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "document/file_content.h"
#include "ordo/error.h"

namespace ordo::document {
namespace {

void append_utf8(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// The text of an escaped run: &amp; &lt; &gt; &quot; &apos; &nbsp; and numeric references.
std::string unescape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (text[i] != '&') {
      out += text[i++];
      continue;
    }
    const size_t semi = text.find(';', i);
    if (semi == std::string_view::npos || semi - i > 10) {
      out += text[i++];
      continue;
    }
    const std::string_view name = text.substr(i + 1, semi - i - 1);
    if (name == "amp")
      out += '&';
    else if (name == "lt")
      out += '<';
    else if (name == "gt")
      out += '>';
    else if (name == "quot")
      out += '"';
    else if (name == "apos")
      out += '\'';
    else if (name == "nbsp")
      out += "\xC2\xA0";
    else if (name.size() > 1 && name[0] == '#') {
      const bool hex = name[1] == 'x' || name[1] == 'X';
      const std::string digits(name.substr(hex ? 2 : 1));
      char* end = nullptr;
      const unsigned long cp = std::strtoul(digits.c_str(), &end, hex ? 16 : 10);
      if (digits.empty() || *end || cp == 0 || cp > 0x10FFFF) {
        out.append(text.substr(i, semi - i + 1));
      } else {
        append_utf8(static_cast<uint32_t>(cp), out);
      }
    } else {
      out.append(text.substr(i, semi - i + 1));
    }
    i = semi + 1;
  }
  return out;
}

// The id of a tag FragmentWriter wrote ("<span data-o=\"7\">"); -1 when it has none.
int tag_id(std::string_view tag) {
  const size_t at = tag.find("data-o=\"");
  if (at == std::string_view::npos) return -1;
  size_t i = at + 8;
  int id = 0;
  bool digits = false;
  while (i < tag.size() && std::isdigit(static_cast<unsigned char>(tag[i])) && id < 100000000) {
    id = id * 10 + (tag[i++] - '0');
    digits = true;
  }
  return digits ? id : -1;
}

}  // namespace

void FragmentWriter::text(std::string_view text) {
  for (char c : text) {
    switch (c) {
      case '&': out_ += "&amp;"; break;
      case '<': out_ += "&lt;"; break;
      case '>': out_ += "&gt;"; break;
      case '\n':
      case '\r':
      case '\t': out_ += ' '; break;
      default:
        out_ += c;
        if (c != ' ') has_text_ = true;
    }
  }
}

void FragmentWriter::open(int id) {
  out_ += "<span data-o=\"" + std::to_string(id) + "\">";
  ++open_;
}

void FragmentWriter::close() {
  if (open_ == 0) return;
  out_ += "</span>";
  --open_;
}

void FragmentWriter::point(int id) { out_ += "<img data-o=\"" + std::to_string(id) + "\">"; }

void FragmentWriter::line_break(int id) { out_ += "<br data-o=\"" + std::to_string(id) + "\">"; }

std::string FragmentWriter::str() const {
  std::string out = out_;
  for (int i = 0; i < open_; ++i) out += "</span>";
  return out;
}

std::vector<FragmentPiece> read_fragment(const std::string& fragment) {
  std::vector<FragmentPiece> pieces;
  std::vector<int> open;
  size_t i = 0;
  const auto add_text = [&](std::string_view raw) {
    if (raw.empty()) return;
    std::string text = unescape(raw);
    if (!pieces.empty() && pieces.back().kind == FragmentPiece::kText) {
      pieces.back().text += text;
    } else {
      FragmentPiece piece;
      piece.text = std::move(text);
      pieces.push_back(std::move(piece));
    }
  };
  while (i < fragment.size()) {
    const size_t lt = fragment.find('<', i);
    add_text(std::string_view(fragment).substr(i, (lt == std::string::npos ? fragment.size() : lt) - i));
    if (lt == std::string::npos) break;
    const size_t gt = fragment.find('>', lt);
    if (gt == std::string::npos) throw Error("markup fragment: unterminated tag at byte " + std::to_string(lt));
    const std::string_view tag = std::string_view(fragment).substr(lt, gt - lt + 1);
    FragmentPiece piece;
    if (tag.rfind("</span", 0) == 0) {
      if (open.empty()) throw Error("markup fragment: </span> without <span> at byte " + std::to_string(lt));
      piece.kind = FragmentPiece::kClose;
      piece.id = open.back();
      open.pop_back();
    } else if (tag.rfind("<span", 0) == 0) {
      piece.kind = FragmentPiece::kOpen;
      piece.id = tag_id(tag);
      open.push_back(piece.id);
    } else if (tag.rfind("<img", 0) == 0) {
      piece.kind = FragmentPiece::kPoint;
      piece.id = tag_id(tag);
    } else if (tag.rfind("<br", 0) == 0) {
      piece.kind = FragmentPiece::kBreak;
      piece.id = tag_id(tag);
    } else {
      throw Error("markup fragment: unexpected tag " + std::string(tag.substr(0, 40)));
    }
    if (piece.id < 0 && piece.kind != FragmentPiece::kClose)
      throw Error("markup fragment: a tag without its id: " + std::string(tag.substr(0, 40)));
    pieces.push_back(std::move(piece));
    i = gt + 1;
  }
  while (!open.empty()) {  // a span left open closes at the end
    FragmentPiece piece;
    piece.kind = FragmentPiece::kClose;
    piece.id = open.back();
    open.pop_back();
    pieces.push_back(std::move(piece));
  }
  return pieces;
}

namespace {

bool is_printf_flag(char c) { return c == '-' || c == '+' || c == '#' || c == '0' || c == '\''; }
bool is_printf_conversion(char c) { return std::strchr("diouxXeEfFgGaAcspn@", c) != nullptr && c != '\0'; }

// The length of a placeholder starting at text[i], 0 if none starts there.
size_t placeholder_at(std::string_view text, size_t i) {
  const char c = text[i];
  const size_t n = text.size();
  if (c == '%') {
    if (i + 1 >= n) return 0;
    if (text[i + 1] == '%') return 2;
    size_t j = i + 1;
    if (text[j] == '(') {  // Python: %(name)s
      const size_t close = text.find(')', j);
      if (close == std::string_view::npos || close - j > 64) return 0;
      j = close + 1;
    } else {  // printf: %[n$][flags][width][.precision][length]conversion
      size_t k = j;
      while (k < n && std::isdigit(static_cast<unsigned char>(text[k]))) ++k;
      if (k < n && k > j && text[k] == '$') j = k + 1;
    }
    while (j < n && is_printf_flag(text[j])) ++j;
    while (j < n && (std::isdigit(static_cast<unsigned char>(text[j])) || text[j] == '*')) ++j;
    if (j < n && text[j] == '.') {
      ++j;
      while (j < n && (std::isdigit(static_cast<unsigned char>(text[j])) || text[j] == '*')) ++j;
    }
    while (j < n && std::strchr("hlLqjzt", text[j]) && text[j] != '\0') ++j;
    if (j < n && is_printf_conversion(text[j])) return j + 1 - i;
    return 0;
  }
  if (c == '{' || (c == '$' && i + 1 < n && text[i + 1] == '{')) {  // {0} {name} {{count}} ${x} ICU {n, plural, ...}
    size_t j = c == '$' ? i + 1 : i;
    int depth = 0;
    for (; j < n && j - i < 2000; ++j) {
      if (text[j] == '{') ++depth;
      if (text[j] == '}' && --depth == 0) break;
    }
    if (j >= n || depth != 0) return 0;
    const std::string_view inside = text.substr(i, j + 1 - i);
    // "{ }" or a brace around a sentence is not a placeholder: no spaces unless ICU's "{x, ...}".
    if (inside.find(' ') != std::string_view::npos && inside.find(',') == std::string_view::npos) return 0;
    if (j + 1 - i <= 2) return 0;
    return j + 1 - i;
  }
  if (c == '<') {  // <0>, </0>, <br/>, <strong>: string catalogues' own tags
    size_t j = i + 1;
    if (j < n && text[j] == '/') ++j;
    const size_t name = j;
    while (j < n && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '-' || text[j] == '_')) ++j;
    if (j == name || j - name > 32) return 0;
    if (j < n && text[j] == '/') ++j;
    if (j < n && text[j] == '>') return j + 1 - i;
    return 0;
  }
  return 0;
}

}  // namespace

void write_with_placeholders(std::string_view text, FragmentWriter& out, std::vector<std::string>& placeholders,
                             int first_id) {
  size_t from = 0;
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '\n') {  // a line break of the string: a hard boundary, back as '\n'
      out.text(text.substr(from, i - from));
      out.line_break(0);
      from = ++i;
      continue;
    }
    const size_t length = placeholder_at(text, i);
    if (length == 0) {
      ++i;
      continue;
    }
    out.text(text.substr(from, i - from));
    out.point(first_id + static_cast<int>(placeholders.size()));
    placeholders.emplace_back(text.substr(i, length));
    i += length;
    from = i;
  }
  out.text(text.substr(from));
}

Unit unit_with_placeholders(std::string_view core, std::vector<std::string>& placeholders) {
  const size_t known = placeholders.size();
  FragmentWriter writer;
  write_with_placeholders(core, writer, placeholders);
  Unit unit;
  if (placeholders.size() == known && core.find('\n') == std::string_view::npos) {
    unit.text = std::string(core);
  } else {
    unit.text = writer.str();
    unit.markup = true;
  }
  return unit;
}

namespace {

bool is_word_byte(char c) { return std::isalnum(static_cast<unsigned char>(c)) || (c & 0x80); }
bool is_blank(char c) { return c == ' ' || c == '\n' || c == '\t'; }

}  // namespace

std::string text_with_placeholders(const std::vector<FragmentPiece>& pieces,
                                   const std::vector<std::string>& placeholders) {
  std::string out;
  // A placeholder stands for a word of its own where the layout put it: one glued to a word on
  // one side while it stands free on the other ("Kinder, {name}von" when its point went before
  // the word "von") gets a space on the glued side. Tags (<0>, <b>) wrap words: left as placed.
  bool glued_after = false;  // the last thing written is a free-standing placeholder
  for (const FragmentPiece& piece : pieces) {
    if (piece.kind == FragmentPiece::kText && glued_after && !piece.text.empty() && is_word_byte(piece.text[0]))
      out += ' ';
    if (piece.kind == FragmentPiece::kText || piece.kind == FragmentPiece::kBreak) glued_after = false;
    switch (piece.kind) {
      case FragmentPiece::kText: out += piece.text; break;
      case FragmentPiece::kPoint:
        if (piece.id >= 0 && static_cast<size_t>(piece.id) < placeholders.size()) {
          const std::string& placeholder = placeholders[piece.id];
          const bool free_before = out.empty() || is_blank(out.back());
          out += placeholder;
          glued_after = free_before && placeholder[0] != '<';  // <0>word</0> wraps its words
        }
        break;
      case FragmentPiece::kBreak: out += '\n'; break;
      default: break;
    }
  }
  return out;
}

}  // namespace ordo::document
