// The seam between ordo::FileDocument (file_document.cpp) and the formats: each format reads a
// file into units, the texts to translate in file order, and writes the file back from their
// translations. A unit is plain text (a cue, a msgid, a JSON value) or a markup fragment
// (markup_fragment.h: text with spans around formatted words and points for what stays in
// place); FileDocument cuts every unit into sentences (SentenceLayout or HtmlDocument),
// translates all of them as one stream and hands each unit's translation to rebuild(). A format
// file holds only its own reading and writing: archives through zip_archive.h, XML through
// xml_part.h, never a parser of its own.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ordo/files.h"

namespace ordo::document {

struct Unit {
  std::string text;
  bool markup = false;  // a markup fragment (markup_fragment.h) rather than plain text
  bool page = false;    // a whole HTML/XHTML page, through HtmlDocument as it is (an EPUB chapter)
  // Plain text only: each line is cut on its own (LineBreaks::kEndLine) rather than a single
  // line break being a soft wrap.
  bool end_lines = false;
};

// A software string's core (a msgid, a JSON value without its outer spaces) as a unit: plain
// text, or a markup fragment when it has placeholders or line breaks (write_with_placeholders(),
// markup_fragment.h), its points the placeholders appended to `placeholders` (markup_fragment.cpp).
Unit unit_with_placeholders(std::string_view core, std::vector<std::string>& placeholders);

class FileContent {
 public:
  virtual ~FileContent() = default;
  // The texts to translate, in file order.
  std::vector<Unit> units;
  // The file with unit i replaced by translated[i] (of the same kind: a fragment for a
  // fragment, with the span and point ids of its unit; a text for a text).
  virtual std::string rebuild(const std::vector<std::string>& translated) const = 0;
};

// One reader per format (the file that implements it in brackets). Each throws ordo::Error
// naming the part ("word/document.xml: ...") and the limit or fault.
std::unique_ptr<FileContent> read_text_file(const std::string& bytes, const FileOptions& options);  // file_document.cpp
std::unique_ptr<FileContent> read_html_file(const std::string& bytes, const FileOptions& options);  // file_document.cpp
std::unique_ptr<FileContent> read_office_open_xml(const std::string& bytes, FileFormat format,
                                                  const FileOptions& options);  // office_open_xml.cpp
std::unique_ptr<FileContent> read_open_document(const std::string& bytes, FileFormat format,
                                                const FileOptions& options);                   // open_document.cpp
std::unique_ptr<FileContent> read_epub(const std::string& bytes, const FileOptions& options);  // epub.cpp
std::unique_ptr<FileContent> read_subtitles(const std::string& bytes, FileFormat format,
                                            const FileOptions& options);                        // subtitles.cpp
std::unique_ptr<FileContent> read_po(const std::string& bytes, const FileOptions& options);     // gettext_po.cpp
std::unique_ptr<FileContent> read_xliff(const std::string& bytes, const FileOptions& options);  // xliff.cpp
std::unique_ptr<FileContent> read_json_strings(const std::string& bytes,
                                               const FileOptions& options);  // json_strings.cpp

}  // namespace ordo::document
