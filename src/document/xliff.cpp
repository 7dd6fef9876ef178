// XLIFF, the exchange format of translation tools: 1.2 (trans-unit with source and target) and
// 2.0/2.1 (unit, segment, source, target). The source of each unit (1.2) or segment (2.x)
// still without a target is a unit; its inline codes go to the layout as they mean: <g>, <mrk>
// and <pc> are spans around words, <x/>, <bx/>, <ex/>, <ph>, <bpt>, <ept>, <it>, <sc/>, <ec/>
// are points, so the target gets the same codes (copied from the source with their ids) around
// or before the words they align to. The target is created after the source where there is
// none, marked state="translated", and the file's target-language (1.2) or trgLang (2.x) is set
// to the target language when one is given (source-language / srcLang to the source language
// where the file has none). Units marked translate="no" are skipped, and all the rest of the
// document is written back as it was read (xml_part.h).
#include <cstring>
#include <string>
#include <vector>

#include "document/file_content.h"
#include "document/markup_fragment.h"
#include "document/xml_part.h"
#include "ordo/error.h"

namespace ordo::document {
namespace {

const char* const kWhat = "XLIFF file";

// The name without its namespace prefix.
const char* local(const pugi::xml_node& node) {
  const char* name = node.name();
  const char* colon = std::strrchr(name, ':');
  return colon ? colon + 1 : name;
}

bool is(const pugi::xml_node& node, const char* name) {
  return node.type() == pugi::node_element && std::strcmp(local(node), name) == 0;
}

pugi::xml_node child(const pugi::xml_node& node, const char* name) {
  for (pugi::xml_node c = node.first_child(); c; c = c.next_sibling())
    if (is(c, name)) return c;
  return {};
}

// The element's name with `name` in place of its local part (the same prefix).
std::string sibling_name(const pugi::xml_node& node, const char* name) {
  const std::string full = node.name();
  const size_t colon = full.rfind(':');
  return colon == std::string::npos ? std::string(name) : full.substr(0, colon + 1) + name;
}

bool has_content(const pugi::xml_node& node) {
  for (pugi::xml_node c = node.first_child(); c; c = c.next_sibling()) {
    if (c.type() == pugi::node_element) return true;
    if (c.type() == pugi::node_pcdata || c.type() == pugi::node_cdata) {
      for (const char* p = c.value(); *p; ++p)
        if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') return true;
    }
  }
  return false;
}

bool no_translate(const pugi::xml_node& node) { return std::strcmp(node.attribute("translate").value(), "no") == 0; }

// Where a unit's text is: the source, the target (if any) and what carries the state.
struct Place {
  pugi::xml_node source, target, state;  // state: 1.2 the target (made when written), 2.x the segment
  pugi::xml_node parent;                 // 1.2 trans-unit, 2.x segment: where a target is made
};

class XliffContent : public FileContent {
 public:
  XliffContent(const std::string& bytes, const FileOptions& options) : options_(options) {
    parse_xml(doc_, bytes, options.limits, kWhat);
    const pugi::xml_node root = doc_.document_element();
    if (!is(root, "xliff"))
      throw Error(std::string(kWhat) + ": the root element is <" + root.name() + ">, not <xliff>: not an XLIFF file");
    const std::string version = root.attribute("version").value();
    const std::string ns = root.attribute("xmlns").value();
    v2_ = version.rfind("2.", 0) == 0 || ns.find("xliff:document:2.") != std::string::npos;
    if (!v2_ && !version.empty() && version.rfind("1.", 0) != 0)
      throw Error(std::string(kWhat) + ": version " + version + " is not supported (1.2 or 2.x)");
    for (const Place& place : places(doc_)) {
      Unit unit;
      std::vector<pugi::xml_node> codes;
      std::vector<std::string> placeholders;
      FragmentWriter writer;
      write_inline(place.source, writer, codes, placeholders);
      if (codes.empty() && placeholders.empty()) {
        for (pugi::xml_node c = place.source.first_child(); c; c = c.next_sibling())
          if (c.type() == pugi::node_pcdata || c.type() == pugi::node_cdata) unit.text += c.value();
      } else {
        unit.text = writer.str();
        unit.markup = true;
      }
      units.push_back(std::move(unit));
    }
    if (units.size() > options.limits.max_texts)
      throw Error(std::string(kWhat) + ": more than " + std::to_string(options.limits.max_texts) +
                  " units (limit max_texts)");
  }

  std::string rebuild(const std::vector<std::string>& translated) const override {
    pugi::xml_document out;
    out.reset(doc_);
    const pugi::xml_node root = out.document_element();
    // The languages: the target's when given, the source's where the file has none.
    const auto languages = [&](pugi::xml_node node, const char* source, const char* target) {
      if (!options_.target_language.empty()) set(node, target, options_.target_language);
      if (!options_.source_language.empty() && !*node.attribute(source).value())
        set(node, source, options_.source_language);
    };
    if (v2_) {
      languages(root, "srcLang", "trgLang");
    } else {
      for (pugi::xml_node file = root.first_child(); file; file = file.next_sibling())
        if (is(file, "file")) languages(file, "source-language", "target-language");
    }
    size_t u = 0;
    for (Place place : places(out)) {
      const size_t index = u++;
      if (index >= translated.size()) break;
      pugi::xml_node target = place.target;
      if (!target) {
        // After the source, with the white space that comes before the source.
        pugi::xml_node after = place.source;
        const pugi::xml_node space = place.source.previous_sibling();
        if (space.type() == pugi::node_pcdata && !has_content_text(space.value()))
          after = place.parent.insert_copy_after(space, place.source);
        target = place.parent.insert_child_after(sibling_name(place.source, "target").c_str(), after);
      } else {
        while (target.first_child()) target.remove_child(target.first_child());
      }
      if (units[index].markup) {
        std::vector<pugi::xml_node> codes;
        std::vector<std::string> placeholders;
        FragmentWriter unused;
        write_inline(place.source, unused, codes, placeholders);
        std::vector<pugi::xml_node> open{target};
        for (const FragmentPiece& piece : read_fragment(translated[index])) {
          switch (piece.kind) {
            case FragmentPiece::kText: append_text(open.back(), piece.text); break;
            case FragmentPiece::kBreak: append_text(open.back(), "\n"); break;
            case FragmentPiece::kOpen: {
              if (piece.id < 0 || static_cast<size_t>(piece.id) >= codes.size()) {
                open.push_back(open.back());  // an unknown span: its words without it
                break;
              }
              const pugi::xml_node code = codes[static_cast<size_t>(piece.id)];
              pugi::xml_node copy = open.back().append_child(code.name());
              for (pugi::xml_attribute a = code.first_attribute(); a; a = a.next_attribute())
                copy.append_attribute(a.name()).set_value(a.value());
              open.push_back(copy);
              break;
            }
            case FragmentPiece::kClose:
              if (open.size() > 1) open.pop_back();
              break;
            case FragmentPiece::kPoint:
              if (piece.id >= kPlaceholderIds && static_cast<size_t>(piece.id - kPlaceholderIds) < placeholders.size())
                append_text(open.back(), placeholders[static_cast<size_t>(piece.id - kPlaceholderIds)]);
              else if (piece.id >= 0 && static_cast<size_t>(piece.id) < codes.size())
                open.back().append_copy(codes[static_cast<size_t>(piece.id)]);
              break;
          }
        }
      } else {
        append_text(target, translated[index]);
      }
      if (v2_) {
        set(place.state, "state", "translated");
      } else {
        set(target, "state", "translated");
        if (!options_.target_language.empty() && target.attribute("xml:lang"))
          set(target, "xml:lang", options_.target_language);
      }
    }
    return write_xml(out);
  }

 private:
  static bool has_content_text(const char* text) {
    for (const char* p = text; *p; ++p)
      if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') return true;
    return false;
  }

  static void set(pugi::xml_node node, const char* name, const std::string& value) {
    pugi::xml_attribute a = node.attribute(name);
    if (!a) a = node.append_attribute(name);
    a.set_value(value.c_str());
  }

  static void append_text(pugi::xml_node node, const std::string& text) {
    if (text.empty()) return;
    pugi::xml_node last = node.last_child();
    if (last.type() == pugi::node_pcdata)
      last.set_value((std::string(last.value()) + text).c_str());
    else
      node.append_child(pugi::node_pcdata).set_value(text.c_str());
  }

  // The units to translate, in document order (the same walk for reading and writing).
  std::vector<Place> places(const pugi::xml_document& doc) const {
    std::vector<Place> out;
    walk(doc.document_element(), out, false);
    return out;
  }

  void walk(const pugi::xml_node& node, std::vector<Place>& out, bool skipped) const {
    for (pugi::xml_node c = node.first_child(); c; c = c.next_sibling()) {
      if (c.type() != pugi::node_element) continue;
      const bool skip = skipped || no_translate(c);
      if (!v2_ && is(c, "trans-unit")) {
        if (skip) continue;
        const pugi::xml_node source = child(c, "source");
        if (!source) continue;
        const pugi::xml_node target = child(c, "target");
        const bool needs = std::strcmp(target.attribute("state").value(), "needs-translation") == 0;
        if (target && has_content(target) && !needs && !options_.retranslate) continue;
        if (!has_content(source)) continue;
        out.push_back({source, target, target, c});
        continue;
      }
      if (v2_ && is(c, "unit")) {
        if (skip) continue;
        for (pugi::xml_node segment = c.first_child(); segment; segment = segment.next_sibling()) {
          if (!is(segment, "segment")) continue;
          const pugi::xml_node source = child(segment, "source");
          if (!source || !has_content(source)) continue;
          const pugi::xml_node target = child(segment, "target");
          if (target && has_content(target) && !options_.retranslate) continue;
          out.push_back({source, target, segment, segment});
        }
        continue;
      }
      if (is(c, "file") || is(c, "body") || is(c, "group")) walk(c, out, skip);
    }
  }

  // Ids of the points that stand for placeholders in the text (%s, {name}: software strings
  // are what XLIFF carries), apart from the ids of the inline elements.
  static constexpr int kPlaceholderIds = 1 << 24;

  // The source's inline content as a fragment: spans for <g>, <mrk>, <pc>, points for every
  // other element and for placeholders; `codes` gets each element by id, `placeholders` each
  // placeholder by id - kPlaceholderIds.
  void write_inline(const pugi::xml_node& node, FragmentWriter& out, std::vector<pugi::xml_node>& codes,
                    std::vector<std::string>& placeholders) const {
    for (pugi::xml_node c = node.first_child(); c; c = c.next_sibling()) {
      if (c.type() == pugi::node_pcdata || c.type() == pugi::node_cdata) {
        write_with_placeholders(c.value(), out, placeholders, kPlaceholderIds);
        continue;
      }
      if (c.type() != pugi::node_element) continue;
      const int id = static_cast<int>(codes.size());
      codes.push_back(c);
      if (is(c, "g") || is(c, "mrk") || is(c, "pc")) {
        out.open(id);
        write_inline(c, out, codes, placeholders);
        out.close();
      } else {
        out.point(id);
      }
    }
  }

  pugi::xml_document doc_;
  FileOptions options_;
  bool v2_ = false;
};

}  // namespace

std::unique_ptr<FileContent> read_xliff(const std::string& bytes, const FileOptions& options) {
  return std::make_unique<XliffContent>(bytes, options);
}

}  // namespace ordo::document
