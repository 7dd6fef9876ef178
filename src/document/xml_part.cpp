// XML parts within FileLimits (xml_part.h). A linear scan refuses entity declarations and
// nesting past max_xml_depth before pugixml builds anything; the parse then keeps every node
// that writing back needs to give the same document: the declaration, the doctype, comments,
// processing instructions, CDATA and white-space-only text (the space of a Word run that holds
// only a space is such a text, and so is the indentation between elements). Line ends and
// attribute white space are normalised as XML says a parser must, which changes no document's
// meaning. Parts are written as UTF-8 (a declaration naming another encoding is corrected).
#include "document/xml_part.h"

#include <strings.h>

#include <algorithm>
#include <cstring>

#include "ordo/error.h"

namespace ordo::document {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

bool at(const std::string& text, size_t i, const char* what) { return text.compare(i, std::strlen(what), what) == 0; }

// Where the construct that starts at `i` ends (one past its closing `close`), or the end.
size_t skip_to(const std::string& text, size_t i, const char* close) {
  const size_t end = text.find(close, i);
  return end == std::string::npos ? text.size() : end + std::strlen(close);
}

// One past the '>' that closes a tag or declaration starting at `i`, quoted values and a
// DOCTYPE's bracketed internal subset skipped.
size_t tag_end(const std::string& text, size_t i) {
  char quote = 0;
  int brackets = 0;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '[') {
      ++brackets;
    } else if (c == ']') {
      --brackets;
    } else if (c == '>' && brackets <= 0) {
      return i + 1;
    }
  }
  return text.size();
}

void scan(const std::string& text, const FileLimits& limits, const std::string& part) {
  size_t depth = 0;
  for (size_t i = text.find('<'); i != std::string::npos && i < text.size(); i = text.find('<', i)) {
    if (at(text, i, "<!--")) {
      i = skip_to(text, i + 4, "-->");
    } else if (at(text, i, "<![CDATA[")) {
      i = skip_to(text, i + 9, "]]>");
    } else if (at(text, i, "<?")) {
      i = skip_to(text, i + 2, "?>");
    } else if (at(text, i, "<!")) {
      const size_t end = tag_end(text, i + 2);
      const size_t entity = text.find("<!ENTITY", i);
      if (entity != std::string::npos && entity < end)
        throw Error(part + ": declares entities (<!ENTITY in its DOCTYPE), which are refused");
      i = end;
    } else if (at(text, i, "</")) {
      if (depth > 0) --depth;
      i = tag_end(text, i + 2);
    } else {
      const size_t end = tag_end(text, i + 1);
      if (!(end >= 2 && text[end - 1] == '>' && text[end - 2] == '/') && ++depth > limits.max_xml_depth)
        throw Error(part + ": elements nested deeper than " + std::to_string(limits.max_xml_depth) +
                    " (limit max_xml_depth)");
      i = end;
    }
  }
}

struct StringWriter : pugi::xml_writer {
  std::string out;
  void write(const void* data, size_t size) override { out.append(static_cast<const char*>(data), size); }
};

}  // namespace

void parse_xml(pugi::xml_document& doc, const std::string& text, const FileLimits& limits, const std::string& part) {
  scan(text, limits, part);
  const unsigned flags = pugi::parse_default | pugi::parse_declaration | pugi::parse_doctype | pugi::parse_comments |
                         pugi::parse_pi | pugi::parse_ws_pcdata;
  const pugi::xml_parse_result result = doc.load_buffer(text.data(), text.size(), flags, pugi::encoding_auto);
  if (!result) {
    size_t line = 1;
    const size_t end = result.offset > 0 ? std::min(static_cast<size_t>(result.offset), text.size()) : 0;
    for (size_t i = 0; i < end; ++i) line += text[i] == '\n';
    throw Error(part + ": malformed XML at line " + std::to_string(line) + " (" + result.description() + ")");
  }
  if (!doc.document_element()) throw Error(part + ": malformed XML (no root element)");
  for (pugi::xml_node node = doc.first_child(); node; node = node.next_sibling()) {
    if (node.type() != pugi::node_declaration) continue;
    pugi::xml_attribute encoding = node.attribute("encoding");
    if (encoding && strcasecmp(encoding.value(), "UTF-8") != 0) encoding.set_value("UTF-8");
    // The line end after the declaration (pugixml keeps no text outside the root element), when
    // the declaration opens the part (after a byte order mark) as XML says it must; one further
    // in is left as pugixml wrote it, so that a part written back reads back the same.
    const size_t start = text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
    const size_t declaration_end =
        node == doc.first_child() && text.compare(start, 5, "<?xml") == 0 ? text.find("?>", start) : std::string::npos;
    size_t space = declaration_end == std::string::npos ? 0 : declaration_end + 2;
    while (space < text.size() && is_space(text[space])) ++space;
    if (declaration_end != std::string::npos && space > declaration_end + 2)
      doc.insert_child_after(pugi::node_pcdata, node)
          .set_value(text.substr(declaration_end + 2, space - declaration_end - 2).c_str());
    break;
  }
  size_t trailing = text.size();
  while (trailing > 0 && is_space(text[trailing - 1])) --trailing;
  if (trailing < text.size() && trailing > 0 && text[trailing - 1] == '>')
    doc.append_child(pugi::node_pcdata).set_value(text.substr(trailing).c_str());
}

std::string write_xml(const pugi::xml_document& doc) {
  StringWriter writer;
  doc.save(writer, "", pugi::format_raw | pugi::format_no_declaration, pugi::encoding_utf8);
  return std::move(writer.out);
}

}  // namespace ordo::document
