// EPUB 2 and 3 books. META-INF/container.xml names the package document (the OPF); its spine
// lists the chapters, XHTML pages that go whole through the HTML layout (a page unit: its tags
// and entities are copied as written, text escaped, so a well-formed chapter stays well-formed
// XML), followed by the EPUB 3 navigation document when the spine leaves it out. The OPF's
// dc:title and dc:description and the NCX table of contents' labels are plain text units;
// dc:language becomes the target language when one is given. Left as they are: the chapters'
// own lang / xml:lang attributes, the NCX's other text, and every other part (images, styles,
// fonts), copied byte for byte with the mimetype entry first and stored. A path in the package
// that leaves the archive's root, or names a part the archive lacks or encrypts, is an error.
#include <pugixml.hpp>

#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "document/file_content.h"
#include "document/xml_part.h"
#include "document/zip_archive.h"
#include "ordo/error.h"

namespace ordo::document {
namespace {

const char* const kWhat = "EPUB file";
const char* const kDublinCore = "http://purl.org/dc/elements/1.1/";

std::string trimmed(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(" \t\r\n") + 1 - begin);
}

std::string local_name(const pugi::xml_node& node) {
  const char* name = node.name();
  const char* colon = std::strchr(name, ':');
  return colon ? colon + 1 : name;
}

// The namespace of an element: its prefix's declaration on it or an ancestor.
std::string namespace_of(const pugi::xml_node& node) {
  const char* name = node.name();
  const char* colon = std::strchr(name, ':');
  const std::string declaration = colon ? "xmlns:" + std::string(name, colon) : "xmlns";
  for (pugi::xml_node at = node; at.type() == pugi::node_element; at = at.parent())
    if (pugi::xml_attribute attribute = at.attribute(declaration.c_str())) return attribute.value();
  return "";
}

// The elements under `root` named `local` (any prefix), in document order. The walk needs no
// stack: parse_xml() bounds the depth.
std::vector<pugi::xml_node> elements(const pugi::xml_node& root, const char* local) {
  std::vector<pugi::xml_node> found;
  for (pugi::xml_node node = root.first_child(); node;) {
    if (node.type() == pugi::node_element && local_name(node) == local) found.push_back(node);
    if (node.first_child()) {
      node = node.first_child();
      continue;
    }
    while (node != root && !node.next_sibling()) node = node.parent();
    node = node == root ? pugi::xml_node() : node.next_sibling();
  }
  return found;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The archive path of `href` (a URL relative to the part `base`): fragment dropped, %XX
// decoded, "." and ".." resolved. Throws when it leaves the archive's root or is absolute.
std::string resolve(const std::string& base, const std::string& href, const std::string& where) {
  std::string path = href.substr(0, href.find('#'));
  std::string decoded;
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '%' && i + 2 < path.size() && hex_digit(path[i + 1]) >= 0 && hex_digit(path[i + 2]) >= 0) {
      decoded += static_cast<char>(hex_digit(path[i + 1]) * 16 + hex_digit(path[i + 2]));
      i += 2;
    } else {
      decoded += path[i];
    }
  }
  if (decoded.empty() || decoded[0] == '/' || decoded.find('\\') != std::string::npos ||
      decoded.find('\0') != std::string::npos)
    throw Error(std::string(kWhat) + ": " + where + ": path '" + href + "' is not a path inside the book");
  std::vector<std::string> parts;
  const size_t slash = base.rfind('/');
  std::string joined = (slash == std::string::npos ? "" : base.substr(0, slash + 1)) + decoded;
  size_t at = 0;
  while (at <= joined.size()) {
    size_t end = joined.find('/', at);
    if (end == std::string::npos) end = joined.size();
    const std::string part = joined.substr(at, end - at);
    if (part == "..") {
      if (parts.empty())
        throw Error(std::string(kWhat) + ": " + where + ": path '" + href + "' leaves the book's root");
      parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    at = end + 1;
  }
  std::string out;
  for (const std::string& part : parts) out += (out.empty() ? "" : "/") + part;
  return out;
}

struct XmlPart {
  std::string name;
  std::string xml;
};

// The OPF's elements that are translated, and its dc:language.
void opf_texts(const pugi::xml_document& doc, std::vector<pugi::xml_node>& texts, pugi::xml_node& language) {
  const std::vector<pugi::xml_node> metadata_elements = elements(doc, "metadata");
  if (metadata_elements.empty()) return;
  const pugi::xml_node metadata = metadata_elements[0];
  for (const pugi::xml_node& node : elements(metadata, "title"))
    if (namespace_of(node) == kDublinCore) texts.push_back(node);
  for (const pugi::xml_node& node : elements(metadata, "description"))
    if (namespace_of(node) == kDublinCore) texts.push_back(node);
  for (const pugi::xml_node& node : elements(metadata, "language"))
    if (namespace_of(node) == kDublinCore && !language) language = node;
}

// The NCX's label texts: docTitle and every navLabel.
std::vector<pugi::xml_node> ncx_texts(const pugi::xml_document& doc) {
  std::vector<pugi::xml_node> texts;
  for (const pugi::xml_node& node : elements(doc, "text")) {
    const std::string parent = local_name(node.parent());
    if (parent == "navLabel" || parent == "docTitle") texts.push_back(node);
  }
  return texts;
}

std::string text_of(const pugi::xml_node& node) { return node.child_value(); }

class EpubContent : public FileContent {
 public:
  std::string rebuild(const std::vector<std::string>& translated) const override {
    const auto unit = [&](size_t i) -> const std::string* { return i < translated.size() ? &translated[i] : nullptr; };
    size_t next = 0;
    // The OPF.
    {
      pugi::xml_document doc;
      parse_xml(doc, opf_.xml, limits_, opf_.name);
      std::vector<pugi::xml_node> texts;
      pugi::xml_node language;
      opf_texts(doc, texts, language);
      for (const pugi::xml_node& node : texts) {
        if (trimmed(text_of(node)).empty()) continue;
        if (const std::string* text = unit(next)) set_text(node, *text);
        ++next;
      }
      if (language && !target_language_.empty()) set_text(language, target_language_);
      zip_->replace(opf_.name, write_xml(doc));
    }
    for (const std::string& chapter : chapters_) {
      if (const std::string* text = unit(next)) zip_->replace(chapter, *text);
      ++next;
    }
    if (!ncx_.name.empty()) {
      pugi::xml_document doc;
      parse_xml(doc, ncx_.xml, limits_, ncx_.name);
      for (const pugi::xml_node& node : ncx_texts(doc)) {
        if (trimmed(text_of(node)).empty()) continue;
        if (const std::string* text = unit(next)) set_text(node, *text);
        ++next;
      }
      zip_->replace(ncx_.name, write_xml(doc));
    }
    return zip_->write();
  }

  static void set_text(pugi::xml_node node, const std::string& text) {
    node.remove_children();
    node.append_child(pugi::node_pcdata).set_value(text.c_str());
  }

  std::unique_ptr<ZipArchive> zip_;
  XmlPart opf_, ncx_;
  std::vector<std::string> chapters_;
  std::string target_language_;
  FileLimits limits_;
};

void add_unit(FileContent& content, const FileLimits& limits, const std::string& text, bool page,
              const std::string& part) {
  if (content.units.size() >= limits.max_texts)
    throw Error(std::string(kWhat) + ": " + part + ": more than " + std::to_string(limits.max_texts) +
                " texts (limit max_texts)");
  Unit unit;
  unit.text = text;
  unit.page = page;
  content.units.push_back(std::move(unit));
}

}  // namespace

std::unique_ptr<FileContent> read_epub(const std::string& bytes, const FileOptions& options) {
  const FileLimits& limits = options.limits;
  auto content = std::make_unique<EpubContent>();
  content->limits_ = limits;
  content->target_language_ = options.target_language;
  content->zip_ = std::make_unique<ZipArchive>(bytes, limits, kWhat);
  ZipArchive& zip = *content->zip_;
  if (!zip.has("mimetype")) throw Error(std::string(kWhat) + ": no mimetype part: not an EPUB");
  const std::string mimetype = trimmed(zip.read("mimetype"));
  if (mimetype != "application/epub+zip")
    throw Error(std::string(kWhat) + ": mimetype is '" + mimetype.substr(0, 100) + "': not an EPUB");

  // The container names the package document.
  const std::string container_name = "META-INF/container.xml";
  if (!zip.has(container_name)) throw Error(std::string(kWhat) + ": no " + container_name + " part");
  std::string opf_name;
  {
    pugi::xml_document container;
    parse_xml(container, zip.read(container_name), limits, container_name);
    for (const pugi::xml_node& rootfile : elements(container, "rootfile")) {
      const std::string type = rootfile.attribute("media-type").value();
      if (!type.empty() && type != "application/oebps-package+xml") continue;
      opf_name = resolve("", rootfile.attribute("full-path").value(), container_name + ": rootfile full-path");
      break;
    }
  }
  if (opf_name.empty()) throw Error(std::string(kWhat) + ": " + container_name + ": no rootfile of the package");
  if (!zip.has(opf_name)) throw Error(std::string(kWhat) + ": the package document " + opf_name + " is missing");
  content->opf_.name = opf_name;
  content->opf_.xml = zip.read(opf_name);
  pugi::xml_document opf;
  parse_xml(opf, content->opf_.xml, limits, opf_name);

  // Parts the book encrypts (DRM) cannot be read; obfuscated fonts are no matter.
  std::set<std::string> encrypted;
  if (zip.has("META-INF/encryption.xml")) {
    pugi::xml_document encryption;
    parse_xml(encryption, zip.read("META-INF/encryption.xml"), limits, "META-INF/encryption.xml");
    for (const pugi::xml_node& reference : elements(encryption, "CipherReference")) {
      try {
        encrypted.insert(resolve("", reference.attribute("URI").value(), "META-INF/encryption.xml"));
      } catch (const Error&) {
      }
    }
  }

  // Manifest and spine.
  struct Item {
    std::string id, path, type, properties;
  };
  std::vector<Item> items;
  for (const pugi::xml_node& node : elements(opf, "item")) {
    if (local_name(node.parent()) != "manifest") continue;
    Item item;
    item.id = node.attribute("id").value();
    item.type = node.attribute("media-type").value();
    item.properties = node.attribute("properties").value();
    const std::string href = node.attribute("href").value();
    if (href.find(':') != std::string::npos && href.find('/') > href.find(':')) continue;  // a remote resource
    // Only the parts read are resolved: an odd name of an image is no matter.
    if (item.type == "application/xhtml+xml" || item.type == "application/x-dtbncx+xml")
      item.path = resolve(opf_name, href, opf_name + ": manifest item '" + item.id + "'");
    items.push_back(std::move(item));
  }
  std::map<std::string, size_t> by_id;
  for (size_t i = 0; i < items.size(); ++i) by_id.emplace(items[i].id, i);
  const auto item_of = [&](const std::string& id) -> const Item* {
    const auto found = by_id.find(id);
    return found == by_id.end() ? nullptr : &items[found->second];
  };
  const auto is_page = [](const Item& item) { return item.type == "application/xhtml+xml"; };
  std::vector<const Item*> pages;
  std::set<std::string> taken;
  std::string ncx_id;
  for (const pugi::xml_node& spine : elements(opf, "spine")) {
    ncx_id = spine.attribute("toc").value();
    for (const pugi::xml_node& ref : elements(spine, "itemref")) {
      const Item* item = item_of(ref.attribute("idref").value());
      if (item == nullptr)
        throw Error(std::string(kWhat) + ": " + opf_name + ": spine itemref '" + ref.attribute("idref").value() +
                    "' is not in the manifest");
      if (is_page(*item) && taken.insert(item->path).second) pages.push_back(item);
    }
    break;
  }
  for (const Item& item : items) {
    const bool nav = (" " + item.properties + " ").find(" nav ") != std::string::npos;
    if (nav && is_page(item) && taken.insert(item.path).second) pages.push_back(&item);
  }
  const Item* ncx = ncx_id.empty() ? nullptr : item_of(ncx_id);
  if (ncx == nullptr)
    for (const Item& item : items)
      if (item.type == "application/x-dtbncx+xml") ncx = &item;

  // Units: the OPF's texts, the chapters, the NCX's labels (rebuild() walks them in this order).
  {
    std::vector<pugi::xml_node> texts;
    pugi::xml_node language;
    opf_texts(opf, texts, language);
    for (const pugi::xml_node& node : texts) {
      const std::string text = trimmed(text_of(node));
      if (!text.empty()) add_unit(*content, limits, text, false, opf_name);
    }
  }
  for (const Item* page : pages) {
    if (!zip.has(page->path))
      throw Error(std::string(kWhat) + ": chapter " + page->path + " (manifest item '" + page->id + "') is missing");
    if (encrypted.count(page->path))
      throw Error(std::string(kWhat) + ": chapter " + page->path + " is encrypted (DRM): it cannot be translated");
    add_unit(*content, limits, zip.read(page->path), true, page->path);
    content->chapters_.push_back(page->path);
  }
  if (ncx != nullptr && zip.has(ncx->path) && !encrypted.count(ncx->path)) {
    content->ncx_.name = ncx->path;
    content->ncx_.xml = zip.read(ncx->path);
    pugi::xml_document doc;
    parse_xml(doc, content->ncx_.xml, limits, ncx->path);
    for (const pugi::xml_node& node : ncx_texts(doc)) {
      const std::string text = trimmed(text_of(node));
      if (!text.empty()) add_unit(*content, limits, text, false, ncx->path);
    }
  }
  return content;
}

}  // namespace ordo::document
