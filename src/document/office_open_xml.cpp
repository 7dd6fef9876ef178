// Office Open XML files (.docx, .pptx, .xlsx): Word, PowerPoint and Excel's format. The texts
// are paragraphs of runs in all three: a run (w:r, a:r, r) is text with its character
// properties (w:rPr, a:rPr, rPr). Each paragraph with words is one markup unit:
//   - the runs of the paragraph's most common properties are bare text, every other run's words
//     a span (adjacent runs with the same properties one span), rebuilt as runs that copy the
//     properties of the run the span stands for, so a bold word stays bold wherever the
//     translation puts it;
//   - Word's hyperlinks, smart tags, custom XML and bidi runs (w:hyperlink, w:smartTag,
//     w:customXml, w:dir, w:bdo) are spans around their runs, their start tags copied back;
//   - tabs (w:tab, w:ptab) are points (a space before them keeps the words apart in the
//     fragment and is taken out again), line breaks (w:br, w:cr, a:br) are line breaks, and a
//     line break inside an Excel run's text is one too;
//   - everything else in a run or a paragraph (pictures, drawings and text boxes, symbols,
//     footnote references, bookmarks, comment marks, math, a:fld and w:fldSimple fields, and a
//     complex field from its w:fldChar begin to its end, instruction and shown result together)
//     is a point: the nodes are copied back as they were, a run's child inside a run of its own
//     with that run's properties. Proofing marks (w:proofErr) and rendering hints
//     (w:lastRenderedPageBreak) are dropped: Word recomputes them.
// What comes before a paragraph's first run (w:pPr, a:pPr, a bookmark) and after its last
// (a:endParaRPr) is kept in place. Paragraphs of a text box are paragraphs of their own (they
// are translated first, so the drawing that holds them is copied back translated); the second
// copy of a drawing that mc:Fallback keeps for old readers is left as it was.
// Left as they are: paragraphs with tracked changes (w:ins, w:del, w:moveFrom, w:moveTo: the
// revision marks would no longer say what changed), paragraphs with inline content controls
// (w:sdt), paragraphs where a complex field begins or ends but does not do both (a table of
// contents: its entries in between are translated); comments (word/comments.xml), charts,
// styles (their w:lang, so the document language stays the source's), slide layouts and
// masters; strings that are only numbers, dates or symbols; Excel cells' numbers and formulas
// (only shared strings and inline strings are text). Excel's phonetic guides (rPh) of a
// translated string are dropped (they index the source's characters).
// Read: docx word/document.xml, headers, footers, footnotes, endnotes; pptx slides, notes and
// SmartArt text (ppt/diagrams data and drawing parts); xlsx xl/sharedStrings.xml and the inline
// strings of the worksheets. The main part is the one _rels/.rels names. Every other part is
// copied as it was (ZipArchive::write).
#include <unicode/uchar.h>
#include <unicode/utf8.h>
#include <pugixml.hpp>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "document/file_content.h"
#include "document/markup_fragment.h"
#include "document/xml_part.h"
#include "document/zip_archive.h"
#include "ordo/error.h"

namespace ordo::document {
namespace {

enum class Vocabulary { kWord, kDrawing, kSheet };

const std::vector<std::string> kWordNamespaces = {"http://schemas.openxmlformats.org/wordprocessingml/2006/main",
                                                  "http://purl.oclc.org/ooxml/wordprocessingml/main"};
const std::vector<std::string> kDrawingNamespaces = {"http://schemas.openxmlformats.org/drawingml/2006/main",
                                                     "http://purl.oclc.org/ooxml/drawingml/main"};
const std::vector<std::string> kSheetNamespaces = {"http://schemas.openxmlformats.org/spreadsheetml/2006/main",
                                                   "http://purl.oclc.org/ooxml/spreadsheetml/main"};
const std::vector<std::string> kCompatibilityNamespaces = {
    "http://schemas.openxmlformats.org/markup-compatibility/2006"};

// The prefix ("w:", or "" for the default namespace) that `root` binds one of `uris` to.
std::optional<std::string> prefix_of(pugi::xml_node root, const std::vector<std::string>& uris) {
  for (pugi::xml_attribute attribute : root.attributes()) {
    const std::string name = attribute.name();
    if (std::find(uris.begin(), uris.end(), attribute.value()) == uris.end()) continue;
    if (name == "xmlns") return std::string();
    if (name.compare(0, 6, "xmlns:") == 0) return name.substr(6) + ":";
  }
  return std::nullopt;
}

// What a child of a paragraph (or of a span-like element inside it) is.
enum class Role { kRun, kContainer, kBreak, kRefuse, kDrop, kPoint };

// The qualified names of one part's vocabulary.
struct Names {
  Vocabulary vocabulary = Vocabulary::kWord;
  std::string fallback;  // mc:Fallback
  std::string paragraph, inline_string, run, props, text, tab, ptab, br, cr, drop_in_run;
  std::string field_char, field_char_type, phonetic_run;
  std::vector<std::string> containers, refused, dropped, breaks;

  Names(Vocabulary v, const std::string& p, const std::string& mc) : vocabulary(v), fallback(mc + "Fallback") {
    switch (v) {
      case Vocabulary::kWord:
        paragraph = p + "p", run = p + "r", props = p + "rPr", text = p + "t", tab = p + "tab", ptab = p + "ptab";
        br = p + "br", cr = p + "cr", drop_in_run = p + "lastRenderedPageBreak";
        field_char = p + "fldChar", field_char_type = p + "fldCharType";
        containers = {p + "hyperlink", p + "smartTag", p + "customXml", p + "dir", p + "bdo"};
        refused = {p + "ins", p + "del", p + "moveFrom", p + "moveTo", p + "sdt"};
        dropped = {p + "proofErr"};
        break;
      case Vocabulary::kDrawing:
        paragraph = p + "p", run = p + "r", props = p + "rPr", text = p + "t";
        breaks = {p + "br"};
        break;
      case Vocabulary::kSheet:
        paragraph = p + "si", inline_string = p + "is", run = p + "r", props = p + "rPr", text = p + "t";
        phonetic_run = p + "rPh";
        break;
    }
  }

  bool is_paragraph(const char* name) const {
    return paragraph == name || (!inline_string.empty() && inline_string == name);
  }
  Role role(pugi::xml_node node) const {
    const char* name = node.name();
    if (run == name) return Role::kRun;
    for (const std::string& c : containers)
      if (c == name) return Role::kContainer;
    for (const std::string& b : breaks)
      if (b == name) return Role::kBreak;
    for (const std::string& r : refused)
      if (r == name) return Role::kRefuse;
    for (const std::string& d : dropped)
      if (d == name) return Role::kDrop;
    return Role::kPoint;
  }
};

// How a span or point of a fragment is written back.
struct Entry {
  enum Kind { kStyle, kContainer, kPoint, kBreak } kind = kPoint;
  std::vector<pugi::xml_node> nodes;  // kContainer: the element; kPoint, kBreak: the nodes copied back
  pugi::xml_node props;               // kStyle and points in a run: the run's properties (none: no rPr)
  bool in_run = false;                // a run's child: copied into a run of its own with `props`
  bool tab = false;                   // written after a space that keeps the words apart
  bool newline = false;               // a line break inside an Excel run's text: "\n" in a run
};

// One text to translate: a paragraph read into a fragment, or an Excel string without runs.
struct Paragraph {
  pugi::xml_node element;
  bool markup = true;
  pugi::xml_node plain_text;           // !markup: the t element
  std::vector<pugi::xml_node> middle;  // the children rebuilt from the translation
  pugi::xml_node anchor;               // the first child kept after them (none: the end)
  pugi::xml_node plain;                // the properties of bare text
  std::vector<Entry> entries;          // by fragment id
  std::string fragment;                // markup: what is translated
  std::string text;                    // the words, for the letter check (and the unit when !markup)
};

struct StringWriter : pugi::xml_writer {
  std::string out;
  void write(const void* data, size_t size) override { out.append(static_cast<const char*>(data), size); }
};

std::string key_of(pugi::xml_node props) {
  if (!props) return std::string();
  StringWriter writer;
  props.print(writer, "", pugi::format_raw);
  return writer.out;
}

std::string text_of(pugi::xml_node node) {
  std::string out;
  for (pugi::xml_node child : node.children())
    if (child.type() == pugi::node_pcdata || child.type() == pugi::node_cdata) out += child.value();
  return out;
}

// Whether a text has a letter (a string of digits, a date or an amount is not translated).
bool has_letter(const std::string& text) {
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  const int32_t n = static_cast<int32_t>(std::min<size_t>(text.size(), INT32_MAX));
  for (int32_t i = 0; i < n;) {
    UChar32 c;
    U8_NEXT(s, i, n, c);
    if (c >= 0 && u_isalpha(c)) return true;
  }
  return false;
}

// A translation's text as XML 1.0 can hold it (no C0 controls but tab and line ends).
std::string xml_text(std::string text) {
  text.erase(std::remove_if(
                 text.begin(), text.end(),
                 [](char c) { return static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r'; }),
             text.end());
  return text;
}

// Reads one paragraph's children into a fragment.
class Reader {
 public:
  Reader(const Names& names, Paragraph& out, std::string plain_key)
      : n_(names), out_(out), plain_key_(std::move(plain_key)) {}

  // False when the paragraph is to stay as it is.
  bool walk(const std::vector<pugi::xml_node>& children) {
    for (size_t i = 0; i < children.size(); ++i) {
      const pugi::xml_node child = children[i];
      if (child.type() != pugi::node_element) continue;
      switch (n_.role(child)) {
        case Role::kRun: {
          if (!n_.field_char.empty() && field_begins(child)) {
            const size_t end = field_end(children, i);
            if (end == children.size()) return false;
            Entry entry;
            entry.nodes.assign(children.begin() + static_cast<long>(i), children.begin() + static_cast<long>(end) + 1);
            writer.point(add(std::move(entry)));
            i = end;
          } else if (field_ends(child)) {
            return false;  // a field begun in an earlier paragraph
          } else {
            run(child);
          }
          break;
        }
        case Role::kContainer: {
          if (!has_text(child)) {
            point(child);
            break;
          }
          end_style();
          Entry entry;
          entry.kind = Entry::kContainer;
          entry.nodes = {child};
          writer.open(add(std::move(entry)));
          std::vector<pugi::xml_node> inside;
          for (pugi::xml_node c : child.children())
            if (!is_properties(c)) inside.push_back(c);
          if (!walk(inside)) return false;
          end_style();
          writer.close();
          break;
        }
        case Role::kBreak: {
          Entry entry;
          entry.kind = Entry::kBreak;
          entry.nodes = {child};
          writer.line_break(add(std::move(entry)));
          text += '\n';
          break;
        }
        case Role::kRefuse: return false;
        case Role::kDrop: break;
        case Role::kPoint: point(child); break;
      }
    }
    return true;
  }

  FragmentWriter writer;
  std::string text;

 private:
  int add(Entry entry) {
    out_.entries.push_back(std::move(entry));
    return static_cast<int>(out_.entries.size() - 1);
  }
  void point(pugi::xml_node node) {
    Entry entry;
    entry.nodes = {node};
    writer.point(add(std::move(entry)));
  }
  static bool is_properties(pugi::xml_node node) {
    const std::string name = node.name();
    return name.size() > 2 && name.compare(name.size() - 2, 2, "Pr") == 0;
  }
  bool has_text(pugi::xml_node node) const {
    // Any text element among its runs (the runs may be inside further containers).
    std::vector<pugi::xml_node> stack{node};
    while (!stack.empty()) {
      const pugi::xml_node top = stack.back();
      stack.pop_back();
      for (pugi::xml_node c : top.children()) {
        if (c.type() != pugi::node_element) continue;
        if (n_.text == c.name() && !text_of(c).empty()) return true;
        const Role role = n_.role(c);
        if (role == Role::kRun || role == Role::kContainer) stack.push_back(c);
      }
    }
    return false;
  }
  // Word's complex fields: fldChar begin ... separate ... end, across sibling runs.
  int field_chars(pugi::xml_node run, const char* type) const {
    int count = 0;
    for (pugi::xml_node c : run.children())
      if (n_.field_char == c.name() && std::string(c.attribute(n_.field_char_type.c_str()).value()) == type) ++count;
    return count;
  }
  bool field_begins(pugi::xml_node run) const { return field_chars(run, "begin") > 0; }
  bool field_ends(pugi::xml_node run) const { return !n_.field_char.empty() && field_chars(run, "end") > 0; }
  size_t field_end(const std::vector<pugi::xml_node>& children, size_t begin) const {
    int depth = 0;
    for (size_t i = begin; i < children.size(); ++i) {
      if (n_.role(children[i]) != Role::kRun) continue;
      for (pugi::xml_node c : children[i].children()) {
        if (n_.field_char != c.name()) continue;
        const std::string type = c.attribute(n_.field_char_type.c_str()).value();
        if (type == "begin") ++depth;
        if (type == "end" && --depth == 0) return i;
      }
    }
    return children.size();
  }

  // Opens the span of a run's properties unless it is open already or they are the plain ones.
  void style(pugi::xml_node props) {
    const std::string key = key_of(props);
    if (open_style_ && *open_style_ == key) return;
    if (!open_style_ && key == plain_key_) return;
    end_style();
    if (key == plain_key_) return;
    Entry entry;
    entry.kind = Entry::kStyle;
    entry.props = props;
    writer.open(add(std::move(entry)));
    open_style_ = key;
  }
  void end_style() {
    if (!open_style_) return;
    writer.close();
    open_style_.reset();
  }

  void run(pugi::xml_node r) {
    const pugi::xml_node props = r.child(n_.props.c_str());
    for (pugi::xml_node c : r.children()) {
      if (c.type() != pugi::node_element || c == props) continue;
      const char* name = c.name();
      Entry entry;
      entry.props = props;
      entry.in_run = true;
      entry.nodes = {c};
      if (n_.text == name) {
        const std::string t = text_of(c);
        if (t.empty()) continue;
        style(props);
        size_t from = 0;
        for (size_t nl = t.find('\n'); n_.vocabulary == Vocabulary::kSheet && nl != std::string::npos;
             nl = t.find('\n', from)) {
          writer.text(std::string_view(t).substr(from, nl - from));
          Entry line;
          line.kind = Entry::kBreak;
          line.props = props;
          line.newline = true;
          writer.line_break(add(std::move(line)));
          from = nl + 1;
        }
        writer.text(std::string_view(t).substr(from));
        text += t;
      } else if (n_.drop_in_run == name) {
        continue;
      } else if (n_.tab == name || n_.ptab == name) {
        style(props);
        writer.text(" ");
        entry.tab = true;
        writer.point(add(std::move(entry)));
        text += ' ';
      } else if (n_.br == name || n_.cr == name) {
        style(props);
        entry.kind = Entry::kBreak;
        writer.line_break(add(std::move(entry)));
        text += '\n';
      } else {
        style(props);
        writer.point(add(std::move(entry)));
      }
    }
  }

  const Names& n_;
  Paragraph& out_;
  std::string plain_key_;
  std::optional<std::string> open_style_;
};

// The properties most of a paragraph's text has (by characters), and a run that has them.
std::pair<std::string, pugi::xml_node> plain_properties(const Names& n, const std::vector<pugi::xml_node>& children) {
  std::map<std::string, std::pair<size_t, pugi::xml_node>> counts;
  std::vector<std::string> order;
  std::vector<pugi::xml_node> stack(children.rbegin(), children.rend());
  while (!stack.empty()) {
    const pugi::xml_node node = stack.back();
    stack.pop_back();
    if (node.type() != pugi::node_element) continue;
    const Role role = n.role(node);
    if (role == Role::kContainer) {
      for (pugi::xml_node c = node.last_child(); c; c = c.previous_sibling()) stack.push_back(c);
    } else if (role == Role::kRun) {
      size_t length = 0;
      for (pugi::xml_node t : node.children(n.text.c_str())) length += text_of(t).size();
      if (length == 0) continue;
      const pugi::xml_node props = node.child(n.props.c_str());
      const std::string key = key_of(props);
      auto [it, added] = counts.emplace(key, std::make_pair(size_t{0}, props));
      if (added) order.push_back(key);
      it->second.first += length;
    }
  }
  std::string best;
  size_t most = 0;
  for (const std::string& key : order)
    if (counts[key].first > most) most = counts[key].first, best = key;
  if (order.empty()) return {std::string(), pugi::xml_node()};
  return {best, counts[best].second};
}

// Reads paragraph `element`; false when it has nothing to translate or is to stay as it is.
bool read_paragraph(const Names& n, pugi::xml_node element, Paragraph& out) {
  out.element = element;
  std::vector<pugi::xml_node> children;
  for (pugi::xml_node c : element.children()) children.push_back(c);
  if (n.vocabulary == Vocabulary::kSheet && !element.child(n.run.c_str())) {
    out.markup = false;
    out.plain_text = element.child(n.text.c_str());
    if (!out.plain_text) return false;
    out.text = text_of(out.plain_text);
    return has_letter(out.text);
  }
  size_t first = children.size(), last = 0;
  for (size_t i = 0; i < children.size(); ++i) {
    if (children[i].type() != pugi::node_element) continue;
    const Role role = n.role(children[i]);
    if (role == Role::kRun || role == Role::kContainer || role == Role::kBreak || role == Role::kRefuse) {
      first = std::min(first, i);
      last = i;
    }
  }
  if (first == children.size()) return false;
  out.middle.assign(children.begin() + static_cast<long>(first), children.begin() + static_cast<long>(last) + 1);
  out.anchor = last + 1 < children.size() ? children[last + 1] : pugi::xml_node();
  auto [plain_key, plain] = plain_properties(n, out.middle);
  out.plain = plain;
  Reader reader(n, out, plain_key);
  if (!reader.walk(out.middle)) return false;
  if (!reader.writer.has_text() || !has_letter(reader.text)) return false;
  out.fragment = reader.writer.str();
  out.text = std::move(reader.text);
  return true;
}

// The paragraphs of a part with something to translate, in document order (outer paragraphs
// before the text boxes inside them).
std::vector<Paragraph> read_paragraphs(const Names& n, pugi::xml_document& doc, size_t max_texts,
                                       const std::string& part) {
  std::vector<Paragraph> out;
  pugi::xml_node node = doc.first_child();
  while (node) {
    bool descend = true;
    if (node.type() == pugi::node_element) {
      if (n.fallback == node.name()) {
        descend = false;
      } else if (n.is_paragraph(node.name())) {
        Paragraph paragraph;
        if (read_paragraph(n, node, paragraph)) {
          out.push_back(std::move(paragraph));
          if (out.size() > max_texts)
            throw Error(part + ": more than " + std::to_string(max_texts) + " texts to translate (limit max_texts)");
        }
        descend = n.vocabulary != Vocabulary::kSheet;
      }
    } else {
      descend = false;
    }
    if (descend && node.first_child()) {
      node = node.first_child();
      continue;
    }
    while (node && !node.next_sibling()) node = node.parent();
    if (node) node = node.next_sibling();
  }
  return out;
}

// Writes a paragraph's translation back (the pieces of read_fragment for markup).
void write_paragraph(const Names& n, const Paragraph& p, const std::string& translated) {
  if (!p.markup) {
    pugi::xml_node t = p.plain_text;
    const std::string text = xml_text(translated);
    while (t.first_child()) t.remove_child(t.first_child());
    t.append_child(pugi::node_pcdata).set_value(text.c_str());
    const bool spaces = !text.empty() &&
                        (std::isspace(static_cast<unsigned char>(text.front())) ||
                         std::isspace(static_cast<unsigned char>(text.back())) || text.find('\n') != std::string::npos);
    if (spaces && !t.attribute("xml:space")) t.append_attribute("xml:space").set_value("preserve");
    pugi::xml_node element = p.element;
    while (pugi::xml_node phonetic = element.child(n.phonetic_run.c_str())) element.remove_child(phonetic);
    return;
  }
  const std::vector<FragmentPiece> pieces = read_fragment(translated);
  const std::vector<Entry>& entries = p.entries;
  const auto entry_of = [&](int id) -> const Entry* {
    return id >= 0 && static_cast<size_t>(id) < entries.size() ? &entries[static_cast<size_t>(id)] : nullptr;
  };
  std::vector<pugi::xml_node> containers{p.element};
  std::vector<pugi::xml_node> styles;
  std::vector<int> opened;  // per open span: 0 a container, 1 a style, 2 neither
  std::vector<bool> used(entries.size(), false);

  const auto add_child = [&](const char* name) {
    pugi::xml_node parent = containers.back();
    if (parent == p.element && p.anchor) return parent.insert_child_before(name, p.anchor);
    return parent.append_child(name);
  };
  const auto add_copy = [&](pugi::xml_node node) {
    pugi::xml_node parent = containers.back();
    if (parent == p.element && p.anchor) return parent.insert_copy_before(node, p.anchor);
    return parent.append_copy(node);
  };
  const auto new_run = [&](pugi::xml_node props) {
    pugi::xml_node r = add_child(n.run.c_str());
    if (props) r.append_copy(props);
    return r;
  };
  const auto add_text = [&](pugi::xml_node props, const std::string& text) {
    if (text.empty()) return;
    pugi::xml_node t = new_run(props).append_child(n.text.c_str());
    if (n.vocabulary != Vocabulary::kDrawing) t.append_attribute("xml:space").set_value("preserve");
    t.append_child(pugi::node_pcdata).set_value(text.c_str());
  };
  const auto put_back = [&](const Entry& entry) {
    if (entry.newline) {
      add_text(entry.props, "\n");
    } else if (entry.in_run) {
      pugi::xml_node r = new_run(entry.props);
      for (pugi::xml_node node : entry.nodes) r.append_copy(node);
    } else {
      for (pugi::xml_node node : entry.nodes) add_copy(node);
    }
  };
  const auto is_tab = [&](size_t i) {
    if (i >= pieces.size() || pieces[i].kind != FragmentPiece::kPoint) return false;
    const Entry* entry = entry_of(pieces[i].id);
    return entry && entry->tab;
  };

  for (size_t i = 0; i < pieces.size(); ++i) {
    const FragmentPiece& piece = pieces[i];
    const Entry* entry = entry_of(piece.id);
    switch (piece.kind) {
      case FragmentPiece::kText: {
        std::string text = xml_text(piece.text);
        if (is_tab(i + 1) && !text.empty() && text.back() == ' ') text.pop_back();
        if (i > 0 && is_tab(i - 1) && !text.empty() && text.front() == ' ') text.erase(0, 1);
        add_text(styles.empty() ? p.plain : styles.back(), text);
        break;
      }
      case FragmentPiece::kOpen:
        if (entry && entry->kind == Entry::kContainer) {
          const pugi::xml_node source = entry->nodes[0];
          pugi::xml_node element = add_child(source.name());
          for (pugi::xml_attribute a : source.attributes()) element.append_attribute(a.name()).set_value(a.value());
          for (pugi::xml_node c : source.children()) {
            const std::string name = c.name();
            if (name.size() > 2 && name.compare(name.size() - 2, 2, "Pr") == 0) element.append_copy(c);
          }
          containers.push_back(element);
          opened.push_back(0);
        } else if (entry && entry->kind == Entry::kStyle) {
          styles.push_back(entry->props);
          opened.push_back(1);
        } else {
          opened.push_back(2);
        }
        break;
      case FragmentPiece::kClose:
        if (opened.empty()) break;
        if (opened.back() == 0) containers.pop_back();
        if (opened.back() == 1) styles.pop_back();
        opened.pop_back();
        break;
      case FragmentPiece::kPoint:
      case FragmentPiece::kBreak:
        if (entry && (entry->kind == Entry::kPoint || entry->kind == Entry::kBreak) && !used[piece.id]) {
          used[piece.id] = true;
          put_back(*entry);
        }
        break;
    }
  }
  // A point the translation lost still holds something of the file (a picture, a field).
  containers.resize(1);
  for (size_t id = 0; id < entries.size(); ++id)
    if (!used[id] && (entries[id].kind == Entry::kPoint || entries[id].kind == Entry::kBreak)) put_back(entries[id]);
  pugi::xml_node element = p.element;
  for (pugi::xml_node node : p.middle) element.remove_child(node);
}

// One XML part with texts.
struct Part {
  std::string name;
  Vocabulary vocabulary = Vocabulary::kWord;
  pugi::xml_document doc;  // as read
  size_t first = 0, count = 0;
};

std::optional<Names> names_of(Vocabulary vocabulary, const pugi::xml_document& doc) {
  const pugi::xml_node root = doc.document_element();
  const std::vector<std::string>& uris = vocabulary == Vocabulary::kWord      ? kWordNamespaces
                                         : vocabulary == Vocabulary::kDrawing ? kDrawingNamespaces
                                                                              : kSheetNamespaces;
  const std::optional<std::string> prefix = prefix_of(root, uris);
  if (!prefix) return std::nullopt;
  return Names(vocabulary, *prefix, prefix_of(root, kCompatibilityNamespaces).value_or("mc:"));
}

class OfficeFile : public FileContent {
 public:
  OfficeFile(const std::string& bytes, const FileLimits& limits, std::string what)
      : bytes_(bytes), limits_(limits), what_(std::move(what)) {}

  void add(ZipArchive& zip, const std::string& name, Vocabulary vocabulary) {
    const std::string text = zip.read(name);
    if (name.find("worksheets/") != std::string::npos && text.find("inlineStr") == std::string::npos) return;
    auto part = std::make_unique<Part>();
    part->name = name;
    part->vocabulary = vocabulary;
    parse_xml(part->doc, text, limits_, what_ + ": " + name);
    const std::optional<Names> names = names_of(vocabulary, part->doc);
    if (!names) return;
    std::vector<Paragraph> paragraphs = read_paragraphs(*names, part->doc, limits_.max_texts, what_ + ": " + name);
    if (paragraphs.empty()) return;
    part->first = units.size();
    part->count = paragraphs.size();
    for (Paragraph& paragraph : paragraphs) {
      Unit unit;
      unit.markup = paragraph.markup;
      unit.end_lines = !paragraph.markup;
      unit.text = paragraph.markup ? std::move(paragraph.fragment) : std::move(paragraph.text);
      units.push_back(std::move(unit));
    }
    if (units.size() > limits_.max_texts)
      throw Error(what_ + ": more than " + std::to_string(limits_.max_texts) + " texts to translate (limit max_texts)");
    parts_.push_back(std::move(part));
  }

  std::string rebuild(const std::vector<std::string>& translated) const override {
    ZipArchive zip(bytes_, limits_, what_);
    for (const auto& part : parts_) {
      pugi::xml_document doc;
      doc.reset(part->doc);
      const Names names = *names_of(part->vocabulary, doc);
      const std::vector<Paragraph> paragraphs =
          read_paragraphs(names, doc, limits_.max_texts, what_ + ": " + part->name);
      if (paragraphs.size() != part->count)
        throw Error(what_ + ": " + part->name + ": the part reads differently the second time");
      // Last first: a text box's paragraphs are written before the paragraph holding them is.
      for (size_t i = paragraphs.size(); i-- > 0;)
        if (part->first + i < translated.size()) write_paragraph(names, paragraphs[i], translated[part->first + i]);
      zip.replace(part->name, write_xml(doc));
    }
    return zip.write();
  }

 private:
  std::string bytes_;
  FileLimits limits_;
  std::string what_;
  std::vector<std::unique_ptr<Part>> parts_;
};

// The number in a part name ("slide12.xml" -> 12), for slide order rather than text order.
size_t number_in(const std::string& name) {
  size_t end = name.rfind('.');
  if (end == std::string::npos) end = name.size();
  size_t begin = end;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(name[begin - 1]))) --begin;
  if (begin == end || end - begin > 9) return 0;
  return std::strtoul(name.substr(begin, end - begin).c_str(), nullptr, 10);
}

// The parts named `prefix`*`suffix` (no folder in between), in number order.
std::vector<std::string> parts_like(const ZipArchive& zip, const std::string& prefix, const std::string& suffix) {
  std::vector<std::string> out;
  for (const std::string& name : zip.names()) {
    if (name.size() < prefix.size() + suffix.size() || name.compare(0, prefix.size(), prefix) != 0 ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    if (name.find('/', prefix.size()) != std::string::npos) continue;
    out.push_back(name);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const std::string& a, const std::string& b) { return number_in(a) < number_in(b); });
  return out;
}

// The part _rels/.rels names as the office document, if the archive has it.
std::optional<std::string> main_part(ZipArchive& zip, const FileLimits& limits, const std::string& what) {
  if (!zip.has("_rels/.rels")) return std::nullopt;
  pugi::xml_document rels;
  parse_xml(rels, zip.read("_rels/.rels"), limits, what + ": _rels/.rels");
  for (pugi::xml_node r : rels.document_element().children()) {
    const std::string type = r.attribute("Type").value();
    const std::string suffix = "/officeDocument";
    if (type.size() < suffix.size() || type.compare(type.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    std::string target = r.attribute("Target").value();
    while (!target.empty() && target[0] == '/') target.erase(0, 1);
    if (zip.has(target)) return target;
  }
  return std::nullopt;
}

}  // namespace

std::unique_ptr<FileContent> read_office_open_xml(const std::string& bytes, FileFormat format,
                                                  const FileOptions& options) {
  std::string what, conventional, kind;
  Vocabulary vocabulary;
  switch (format) {
    case FileFormat::kDocx:
      what = "DOCX file", conventional = "word/document.xml", kind = "a Word document";
      vocabulary = Vocabulary::kWord;
      break;
    case FileFormat::kPptx:
      what = "PPTX file", conventional = "ppt/presentation.xml", kind = "a PowerPoint presentation";
      vocabulary = Vocabulary::kDrawing;
      break;
    case FileFormat::kXlsx:
      what = "XLSX file", conventional = "xl/workbook.xml", kind = "an Excel workbook";
      vocabulary = Vocabulary::kSheet;
      break;
    default: throw Error("read_office_open_xml: not an Office Open XML format");
  }
  ZipArchive zip(bytes, options.limits, what);
  std::string main = main_part(zip, options.limits, what).value_or(conventional);
  const std::string folder = main.substr(0, main.rfind('/') + 1);
  if (!zip.has(main)) throw Error(what + ": no " + conventional + ": not " + kind);
  {
    // The main part's root element says which of the three the file is.
    const std::string root = format == FileFormat::kDocx   ? "document"
                             : format == FileFormat::kPptx ? "presentation"
                                                           : "workbook";
    pugi::xml_document doc;
    parse_xml(doc, zip.read(main), options.limits, what + ": " + main);
    std::string name = doc.document_element().name();
    name = name.substr(name.find(':') + 1);
    if (name != root)
      throw Error(what + ": " + main + " holds <" + doc.document_element().name() + ">, not <" + root + ">: not " +
                  kind);
  }

  auto file = std::make_unique<OfficeFile>(bytes, options.limits, what);
  std::vector<std::string> names;
  switch (format) {
    case FileFormat::kDocx:
      names.push_back(main);
      for (const char* prefix : {"header", "footer"})
        for (const std::string& name : parts_like(zip, folder + prefix, ".xml")) names.push_back(name);
      for (const char* name : {"footnotes.xml", "endnotes.xml"})
        if (zip.has(folder + name)) names.push_back(folder + name);
      break;
    case FileFormat::kPptx:
      for (const char* prefix : {"slides/slide", "notesSlides/notesSlide", "diagrams/data", "diagrams/drawing"})
        for (const std::string& name : parts_like(zip, folder + prefix, ".xml")) names.push_back(name);
      break;
    default:
      if (zip.has(folder + "sharedStrings.xml")) names.push_back(folder + "sharedStrings.xml");
      for (const std::string& name : parts_like(zip, folder + "worksheets/", ".xml")) names.push_back(name);
      break;
  }
  for (const std::string& name : names) file->add(zip, name, vocabulary);
  return file;
}

}  // namespace ordo::document
