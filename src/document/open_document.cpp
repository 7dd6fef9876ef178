// OpenDocument files (.odt, .odp, .ods): LibreOffice's and the ISO standard's format. Each
// paragraph (text:p, text:h) with text is one markup unit, wherever it is: the body, a table
// cell, a slide's text box, speaker notes, a footnote's body, a text box inside a paragraph, the
// page headers and footers of styles.xml. Inside a paragraph, text:span and text:a (and
// text:meta) become spans around their words, whose start tags (style, link) are copied back;
// text:line-break is a line break; text:s is the spaces it stands for (at most kMaxSpaces);
// everything else (tabs, notes, bookmarks, frames, fields, soft page breaks, comments) is a
// point: the element itself is moved to its new place, so a footnote or text box keeps its
// own (separately translated) paragraphs. Left as they are: cells holding a number, date or
// other value, or a formula (their text is the value's display); paragraphs with tracked
// changes (text:change marks: rewriting them would detach the change records) and the change
// records themselves; comments (office:annotation); the language of the styles (fo:language)
// and meta.xml. Every part but content.xml and styles.xml is copied as it was (the mimetype
// entry first and stored, as the format requires).
#include <pugixml.hpp>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "document/file_content.h"
#include "document/markup_fragment.h"
#include "document/xml_part.h"
#include "document/zip_archive.h"
#include "ordo/error.h"

namespace ordo::document {
namespace {

// Spaces one text:s may stand for in a fragment (a document cannot grow a fragment past its own
// bytes many times over with text:c="1000000000").
constexpr long kMaxSpaces = 100;

struct Kind {
  const char* what;        // "ODT file"
  const char* media_type;  // the mimetype part
  const char* name;        // "OpenDocument text"
};

Kind kind_of(FileFormat format) {
  switch (format) {
    case FileFormat::kOdt: return {"ODT file", "application/vnd.oasis.opendocument.text", "OpenDocument text"};
    case FileFormat::kOdp:
      return {"ODP file", "application/vnd.oasis.opendocument.presentation", "OpenDocument presentation"};
    case FileFormat::kOds:
      return {"ODS file", "application/vnd.oasis.opendocument.spreadsheet", "OpenDocument spreadsheet"};
    default: throw Error("read_open_document: not an OpenDocument format");
  }
}

// The qualified names of the elements read, with the prefixes the part's root element declares
// for the OpenDocument namespaces (the standard ones when it declares none).
struct Names {
  std::string p, h, span, a, meta, s, c, tab, line_break, change, change_start, change_end, tracked_changes;
  std::string annotation, cell, covered_cell, value_type, formula, master_styles;
  std::vector<std::string> headers;  // style:header, style:footer and their -left / -first forms

  explicit Names(const pugi::xml_node& root) {
    const auto prefix = [&](const char* uri, const char* standard) {
      for (const pugi::xml_attribute& attribute : root.attributes()) {
        const std::string name = attribute.name();
        if (name.compare(0, 6, "xmlns:") == 0 && std::string(attribute.value()) == uri) return name.substr(6) + ":";
      }
      return std::string(standard) + ":";
    };
    const std::string text = prefix("urn:oasis:names:tc:opendocument:xmlns:text:1.0", "text");
    const std::string table = prefix("urn:oasis:names:tc:opendocument:xmlns:table:1.0", "table");
    const std::string office = prefix("urn:oasis:names:tc:opendocument:xmlns:office:1.0", "office");
    const std::string style = prefix("urn:oasis:names:tc:opendocument:xmlns:style:1.0", "style");
    p = text + "p", h = text + "h", span = text + "span", a = text + "a", meta = text + "meta";
    s = text + "s", c = text + "c", tab = text + "tab", line_break = text + "line-break";
    change = text + "change", change_start = text + "change-start", change_end = text + "change-end";
    tracked_changes = text + "tracked-changes";
    annotation = office + "annotation", cell = table + "table-cell", covered_cell = table + "covered-table-cell";
    value_type = office + "value-type", formula = table + "formula", master_styles = office + "master-styles";
    for (const char* name : {"header", "footer", "header-left", "footer-left", "header-first", "footer-first"})
      headers.push_back(style + name);
  }
};

bool named(const pugi::xml_node& node, const std::string& name) { return name == node.name(); }

// The node after `node` in document order within `root`, its children skipped unless `descend`.
pugi::xml_node next_node(pugi::xml_node node, const pugi::xml_node& root, bool descend) {
  if (descend && node.first_child()) return node.first_child();
  while (node != root && !node.next_sibling()) node = node.parent();
  return node == root ? pugi::xml_node() : node.next_sibling();
}

// A paragraph as a fragment: objects[id] is the span element (its start tag copied back) or the
// point / line break node (moved back) of fragment id `id`.
struct Paragraph {
  pugi::xml_node node;
  std::vector<pugi::xml_node> objects;
  std::vector<bool> is_span;
  std::vector<bool> spaced;  // a tab the fragment put a space before
  std::string fragment;
  bool unit = false;  // has text and no tracked change
};

class FragmentReader {
 public:
  FragmentReader(const Names& names, Paragraph& paragraph) : names_(names), paragraph_(paragraph) {}

  void read() {
    children(paragraph_.node);
    paragraph_.fragment = writer_.str();
    paragraph_.unit = writer_.has_text() && !changed_;
  }

 private:
  int add(const pugi::xml_node& node, bool span) {
    paragraph_.objects.push_back(node);
    paragraph_.is_span.push_back(span);
    paragraph_.spaced.push_back(false);
    return static_cast<int>(paragraph_.objects.size()) - 1;
  }

  // Recursion is bounded by FileLimits::max_xml_depth (parse_xml() checks it first).
  void children(const pugi::xml_node& parent) {
    for (pugi::xml_node node = parent.first_child(); node; node = node.next_sibling()) {
      if (node.type() == pugi::node_pcdata || node.type() == pugi::node_cdata) {
        text(node.value());
      } else if (node.type() != pugi::node_element) {
        writer_.point(add(node, false));  // a comment or processing instruction
      } else if (named(node, names_.span) || named(node, names_.a) || named(node, names_.meta)) {
        writer_.open(add(node, true));
        children(node);
        writer_.close();
      } else if (named(node, names_.s)) {
        const long count =
            std::clamp(std::strtol(node.attribute(names_.c.c_str()).as_string("1"), nullptr, 10), 1L, kMaxSpaces);
        text(std::string(static_cast<size_t>(count), ' '));
      } else if (named(node, names_.line_break)) {
        writer_.line_break(add(node, false));
        after_space_ = true;
      } else if (named(node, names_.tab)) {
        // A tab parts words as a space does; the point alone would join them into one.
        const bool spaced = !after_space_;
        if (spaced) writer_.text(" ");
        writer_.point(add(node, false));
        paragraph_.spaced.back() = spaced;
        after_space_ = true;
      } else {
        if (named(node, names_.change) || named(node, names_.change_start) || named(node, names_.change_end))
          changed_ = true;
        writer_.point(add(node, false));
      }
    }
  }

  void text(const std::string& text) {
    writer_.text(text);
    if (!text.empty()) after_space_ = text.back() == ' ' || text.back() == '\t' || text.back() == '\n';
  }

  const Names& names_;
  Paragraph& paragraph_;
  FragmentWriter writer_;
  bool changed_ = false;
  bool after_space_ = true;
};

// Whether the paragraphs under `node` are left as they are (the walk does not go in).
bool left_whole(const pugi::xml_node& node, const Names& names) {
  if (named(node, names.tracked_changes) || named(node, names.annotation)) return true;
  if (named(node, names.cell) || named(node, names.covered_cell)) {
    if (node.attribute(names.formula.c_str())) return true;
    const pugi::xml_attribute type = node.attribute(names.value_type.c_str());
    return type && std::string(type.value()) != "string";
  }
  return false;
}

// The paragraphs under `root` in document order (nested ones after the paragraph they are in).
void collect_under(const pugi::xml_node& root, const Names& names, std::vector<Paragraph>& out) {
  for (pugi::xml_node node = root.first_child(); node;) {
    bool descend = node.type() == pugi::node_element && !left_whole(node, names);
    if (descend && (named(node, names.p) || named(node, names.h))) {
      out.emplace_back();
      out.back().node = node;
      FragmentReader(names, out.back()).read();
    }
    node = next_node(node, root, descend);
  }
}

// The paragraphs of a part: all of content.xml; the page headers and footers of styles.xml.
std::vector<Paragraph> collect(const pugi::xml_document& doc, bool styles) {
  const pugi::xml_node root = doc.document_element();
  const Names names(root);
  std::vector<Paragraph> paragraphs;
  if (!styles) {
    collect_under(root, names, paragraphs);
    return paragraphs;
  }
  const pugi::xml_node masters = root.child(names.master_styles.c_str());
  for (pugi::xml_node node = masters.first_child(); node;) {
    const bool header = std::find(names.headers.begin(), names.headers.end(), node.name()) != names.headers.end();
    if (header) collect_under(node, names, paragraphs);
    node = next_node(node, masters, !header && node.type() == pugi::node_element);
  }
  return paragraphs;
}

// Appends text to `parent` as OpenDocument keeps white space: the first of a run of spaces as a
// character, the others (and any at the start of the paragraph or a line) as text:s.
class TextOut {
 public:
  explicit TextOut(const Names& names) : names_(names) {}

  void text(pugi::xml_node parent, const std::string& text) {
    std::string run;
    long spaces = 0;
    for (char ch : text) {
      if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') {
        if (after_space_) {
          ++spaces;
        } else {
          run += ' ';
          after_space_ = true;
        }
        continue;
      }
      if (spaces > 0) flush(parent, run, spaces);
      run += ch;
      after_space_ = false;
    }
    flush(parent, run, spaces);
  }
  void line_start() { after_space_ = true; }
  void not_space() { after_space_ = false; }

 private:
  void flush(pugi::xml_node parent, std::string& run, long& spaces) {
    if (!run.empty()) parent.append_child(pugi::node_pcdata).set_value(run.c_str());
    run.clear();
    if (spaces == 0) return;
    pugi::xml_node s = parent.append_child(names_.s.c_str());
    if (spaces > 1) s.append_attribute(names_.c.c_str()) = std::to_string(spaces).c_str();
    spaces = 0;
  }

  const Names& names_;
  bool after_space_ = true;
};

// The space the fragment put before a tab (FragmentReader) comes out again: the one before it,
// else the one after it.
void drop_space_around(const pugi::xml_node& tab, const Names& names) {
  const auto drop = [](pugi::xml_node text_node, bool last) {
    std::string text = text_node.value();
    if (text.empty() || (last ? text.back() : text.front()) != ' ') return false;
    text.erase(last ? text.size() - 1 : 0, 1);
    if (text.empty()) {
      text_node.parent().remove_child(text_node);
    } else {
      text_node.set_value(text.c_str());
    }
    return true;
  };
  pugi::xml_node before = tab.previous_sibling();
  if (before.type() == pugi::node_pcdata) {
    // Else the space is after the tab: the translation put the tab before it.
    if (!drop(before, true) && tab.next_sibling().type() == pugi::node_pcdata) drop(tab.next_sibling(), false);
  } else if (named(before, names.s)) {
    const long count = before.attribute(names.c.c_str()).as_int(1);
    if (count <= 1) {
      before.parent().remove_child(before);
    } else if (count == 2) {
      before.remove_attribute(names.c.c_str());
    } else {
      before.attribute(names.c.c_str()) = std::to_string(count - 1).c_str();
    }
  } else if (tab.next_sibling().type() == pugi::node_pcdata) {
    drop(tab.next_sibling(), false);
  }
}

// Rewrites a paragraph's children from the pieces of its translated fragment; its own element
// and attributes stay. Points and line breaks the pieces lost are put at the end.
void rebuild_paragraph(const Paragraph& paragraph, const std::vector<FragmentPiece>& pieces, const Names& names) {
  pugi::xml_node holder = paragraph.node.parent().insert_child_after(pugi::node_element, paragraph.node);
  holder.set_name("ordo-pieces");
  std::vector<pugi::xml_node> open = {holder};
  std::vector<bool> placed(paragraph.objects.size(), false);
  TextOut out(names);
  const auto object = [&](int id, bool span) {
    return id >= 0 && static_cast<size_t>(id) < paragraph.objects.size() && paragraph.is_span[id] == span;
  };
  for (const FragmentPiece& piece : pieces) {
    switch (piece.kind) {
      case FragmentPiece::kText: out.text(open.back(), piece.text); break;
      case FragmentPiece::kOpen:
        if (object(piece.id, true)) {
          const pugi::xml_node source = paragraph.objects[piece.id];
          pugi::xml_node span = open.back().append_child(source.name());
          for (const pugi::xml_attribute& attribute : source.attributes())
            span.append_attribute(attribute.name()) = attribute.value();
          open.push_back(span);
        } else {
          open.push_back(open.back());
        }
        break;
      case FragmentPiece::kClose:
        if (open.size() > 1) open.pop_back();
        break;
      case FragmentPiece::kPoint:
      case FragmentPiece::kBreak:
        if (object(piece.id, false) && !placed[piece.id]) {
          open.back().append_move(paragraph.objects[piece.id]);
          placed[piece.id] = true;
          if (named(paragraph.objects[piece.id], names.line_break)) {
            out.line_start();
          } else {
            out.not_space();
          }
        }
        break;
    }
  }
  for (size_t id = 0; id < paragraph.objects.size(); ++id) {
    if (paragraph.is_span[id]) continue;
    if (!placed[id]) holder.append_move(paragraph.objects[id]);
    if (paragraph.spaced[id]) drop_space_around(paragraph.objects[id], names);
  }
  pugi::xml_node node = paragraph.node;
  node.remove_children();
  while (holder.first_child()) node.append_move(holder.first_child());
  node.parent().remove_child(holder);
}

struct Part {
  std::string name;  // "content.xml"
  std::string xml;   // as read
  bool styles = false;
  size_t first_unit = 0;
};

class OpenDocumentContent : public FileContent {
 public:
  std::string rebuild(const std::vector<std::string>& translated) const override {
    for (const Part& part : parts_) {
      pugi::xml_document doc;
      parse_xml(doc, part.xml, limits_, part.name);
      const Names names(doc.document_element());
      const std::vector<Paragraph> paragraphs = collect(doc, part.styles);
      size_t unit = part.first_unit;
      for (const Paragraph& paragraph : paragraphs) {
        if (!paragraph.unit) continue;
        if (unit < translated.size()) rebuild_paragraph(paragraph, read_fragment(translated[unit]), names);
        ++unit;
      }
      zip_->replace(part.name, write_xml(doc));
    }
    return zip_->write();
  }

  std::unique_ptr<ZipArchive> zip_;
  std::vector<Part> parts_;
  FileLimits limits_;
};

std::string trimmed(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(" \t\r\n") + 1 - begin);
}

}  // namespace

std::unique_ptr<FileContent> read_open_document(const std::string& bytes, FileFormat format,
                                                const FileOptions& options) {
  const Kind kind = kind_of(format);
  auto content = std::make_unique<OpenDocumentContent>();
  content->limits_ = options.limits;
  content->zip_ = std::make_unique<ZipArchive>(bytes, options.limits, kind.what);
  ZipArchive& zip = *content->zip_;
  if (!zip.has("mimetype")) throw Error(std::string(kind.what) + ": no mimetype part: not an " + kind.name);
  const std::string mimetype = trimmed(zip.read("mimetype"));
  if (mimetype != kind.media_type)
    throw Error(std::string(kind.what) + ": mimetype is '" + mimetype.substr(0, 100) + "': not an " + kind.name);
  if (!zip.has("content.xml")) throw Error(std::string(kind.what) + ": no content.xml part");
  for (const char* name : {"content.xml", "styles.xml"}) {
    if (!zip.has(name)) continue;
    Part part;
    part.name = name;
    part.styles = part.name == "styles.xml";
    part.xml = zip.read(name);
    part.first_unit = content->units.size();
    pugi::xml_document doc;
    parse_xml(doc, part.xml, options.limits, part.name);
    for (const Paragraph& paragraph : collect(doc, part.styles)) {
      if (!paragraph.unit) continue;
      if (content->units.size() >= options.limits.max_texts)
        throw Error(std::string(kind.what) + ": " + part.name + ": more than " +
                    std::to_string(options.limits.max_texts) + " paragraphs (limit max_texts)");
      Unit unit;
      unit.text = paragraph.fragment;
      unit.markup = true;
      content->units.push_back(std::move(unit));
    }
    content->parts_.push_back(std::move(part));
  }
  return content;
}

}  // namespace ordo::document
