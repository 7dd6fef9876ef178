// ordo::FileDocument (ordo/files.h): the formats' table, and the one path every format takes.
// A format's reader (file_content.h) gives the units; each unit is cut into sentences as its
// kind says (plain text: SentenceLayout; a markup fragment or a page: HtmlDocument, whose inline
// machinery puts spans and points back), and rebuild() hands each unit's translation to the
// reader's rebuild. No LibTorch and no Translator here (the fuzzers link this file);
// translate_file.cpp runs the model.
#include <algorithm>
#include <cctype>
#include <variant>

#include "document/file_content.h"
#include "ordo/error.h"
#include "ordo/files.h"
#include "ordo/text.h"

namespace ordo {
namespace document {
namespace {

// A text file: its paragraphs, sentence by sentence (a single line break is a soft wrap, as
// `ordo translate --document`), every other byte kept. A byte order mark stays.
class TextFile : public FileContent {
 public:
  explicit TextFile(std::string bom) : bom_(std::move(bom)) {}
  std::string rebuild(const std::vector<std::string>& translated) const override {
    return bom_ + (translated.empty() ? std::string() : translated[0]);
  }

 private:
  std::string bom_;
};

// An HTML page as one unit: HtmlDocument keeps everything but the text.
class HtmlFile : public FileContent {
 public:
  std::string rebuild(const std::vector<std::string>& translated) const override {
    return translated.empty() ? std::string() : translated[0];
  }
};

// Bytes that no text file has: NUL and the C0 controls other than tab, line feed, form feed and
// carriage return (a zip, a PDF or an image read as text).
bool looks_binary(const std::string& bytes) {
  const size_t n = std::min<size_t>(bytes.size(), 64 * 1024);
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(bytes[i]);
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f') return true;
  }
  return false;
}

}  // namespace

std::unique_ptr<FileContent> read_text_file(const std::string& bytes, const FileOptions& options) {
  if (looks_binary(bytes)) throw Error("TXT file: binary data (control bytes): not a text file");
  std::string text = bytes;
  const bool bom = drop_byte_order_mark(text);
  check_utf8(text, "TXT file");
  auto file = std::make_unique<TextFile>(bom ? "\xEF\xBB\xBF" : "");
  file->units.push_back(Unit{std::move(text)});
  return file;
}

std::unique_ptr<FileContent> read_html_file(const std::string& bytes, const FileOptions& options) {
  if (looks_binary(bytes)) throw Error("HTML file: binary data (control bytes): not an HTML page");
  check_utf8(bytes, "HTML file");
  auto file = std::make_unique<HtmlFile>();
  Unit unit{bytes};
  unit.page = true;
  file->units.push_back(std::move(unit));
  return file;
}

}  // namespace document

const std::vector<FileFormatInfo>& file_formats() {
  static const std::vector<FileFormatInfo> formats = {
      {FileFormat::kText, "txt", {".txt"}, "text/plain; charset=utf-8", false},
      {FileFormat::kHtml, "html", {".html", ".htm", ".xhtml"}, "text/html; charset=utf-8", false},
      {FileFormat::kDocx,
       "docx",
       {".docx"},
       "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
       true},
      {FileFormat::kPptx,
       "pptx",
       {".pptx"},
       "application/vnd.openxmlformats-officedocument.presentationml.presentation",
       true},
      {FileFormat::kXlsx, "xlsx", {".xlsx"}, "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", true},
      {FileFormat::kOdt, "odt", {".odt"}, "application/vnd.oasis.opendocument.text", true},
      {FileFormat::kOdp, "odp", {".odp"}, "application/vnd.oasis.opendocument.presentation", true},
      {FileFormat::kOds, "ods", {".ods"}, "application/vnd.oasis.opendocument.spreadsheet", true},
      {FileFormat::kEpub, "epub", {".epub"}, "application/epub+zip", true},
      {FileFormat::kSrt, "srt", {".srt"}, "application/x-subrip; charset=utf-8", false},
      {FileFormat::kVtt, "vtt", {".vtt"}, "text/vtt; charset=utf-8", false},
      {FileFormat::kPo, "po", {".po", ".pot"}, "text/x-gettext-translation; charset=utf-8", false},
      {FileFormat::kXliff, "xliff", {".xlf", ".xliff"}, "application/xliff+xml", false},
      {FileFormat::kJson, "json", {".json"}, "application/json", false},
  };
  return formats;
}

const FileFormatInfo& file_format_info(FileFormat format) {
  for (const FileFormatInfo& info : file_formats())
    if (info.format == format) return info;
  throw Error("unknown file format");
}

namespace {

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

FileFormat parse_file_format(const std::string& name, const std::string& field) {
  std::string key = lower(name);
  if (!key.empty() && key[0] == '.') key.erase(0, 1);
  std::string names;
  for (const FileFormatInfo& info : file_formats()) {
    if (key == info.name) return info.format;
    for (const std::string& extension : info.extensions)
      if ("." + key == extension) return info.format;
    names += (names.empty() ? "" : ", ") + info.name;
  }
  throw Error(field + ": unknown file format '" + name + "' (formats: " + names + ")");
}

std::optional<FileFormat> file_format_of(const std::string& file_name) {
  const std::string name = lower(file_name);
  for (const FileFormatInfo& info : file_formats())
    for (const std::string& extension : info.extensions)
      if (name.size() > extension.size() &&
          name.compare(name.size() - extension.size(), extension.size(), extension) == 0)
        return info.format;
  return std::nullopt;
}

struct FileDocument::Impl {
  std::unique_ptr<document::FileContent> content;
  // Per unit: its sentences' layout.
  std::vector<std::variant<SentenceLayout, HtmlDocument>> layouts;
  std::vector<size_t> first;  // per unit, its first sentence; one more at the end
  std::vector<std::string> sentences;
  bool alignment = false;
};

namespace {

std::unique_ptr<document::FileContent> read_content(const std::string& bytes, FileFormat format,
                                                    const FileOptions& options) {
  switch (format) {
    case FileFormat::kText: return document::read_text_file(bytes, options);
    case FileFormat::kHtml: return document::read_html_file(bytes, options);
    case FileFormat::kDocx:
    case FileFormat::kPptx:
    case FileFormat::kXlsx: return document::read_office_open_xml(bytes, format, options);
    case FileFormat::kOdt:
    case FileFormat::kOdp:
    case FileFormat::kOds: return document::read_open_document(bytes, format, options);
    case FileFormat::kEpub: return document::read_epub(bytes, options);
    case FileFormat::kSrt:
    case FileFormat::kVtt: return document::read_subtitles(bytes, format, options);
    case FileFormat::kPo: return document::read_po(bytes, options);
    case FileFormat::kXliff: return document::read_xliff(bytes, options);
    case FileFormat::kJson: return document::read_json_strings(bytes, options);
  }
  throw Error("unknown file format");
}

std::string upper_name(FileFormat format) {
  std::string name = file_format_info(format).name;
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

}  // namespace

FileDocument::FileDocument(const std::string& bytes, FileFormat format, const FileOptions& options)
    : impl_(std::make_unique<Impl>()) {
  const FileLimits& limits = options.limits;
  if (bytes.size() > limits.max_file_bytes)
    throw Error(upper_name(format) + " file: " + std::to_string(bytes.size()) + " bytes (limit max_file_bytes " +
                std::to_string(limits.max_file_bytes) + ")");
  if (bytes.empty()) throw Error(upper_name(format) + " file: empty");
  impl_->content = read_content(bytes, format, options);
  const std::vector<document::Unit>& units = impl_->content->units;
  if (units.size() > limits.max_texts)
    throw Error(upper_name(format) + " file: " + std::to_string(units.size()) +
                " texts to translate (limit max_texts " + std::to_string(limits.max_texts) + ")");
  impl_->layouts.reserve(units.size());
  for (const document::Unit& unit : units) {
    impl_->first.push_back(impl_->sentences.size());
    const std::vector<std::string>* sentences;
    if (unit.markup || unit.page) {
      impl_->layouts.emplace_back(std::in_place_type<HtmlDocument>, unit.text, options.source_language, limits.html);
      const HtmlDocument& html = std::get<HtmlDocument>(impl_->layouts.back());
      impl_->alignment = impl_->alignment || html.needs_alignment();
      sentences = &html.sentences();
    } else {
      impl_->layouts.emplace_back(std::in_place_type<SentenceLayout>, unit.text, options.source_language,
                                  unit.end_lines ? LineBreaks::kEndLine : LineBreaks::kSoftWrap);
      sentences = &std::get<SentenceLayout>(impl_->layouts.back()).sentences();
    }
    impl_->sentences.insert(impl_->sentences.end(), sentences->begin(), sentences->end());
    if (impl_->sentences.size() > limits.max_texts * 8)
      throw Error(upper_name(format) + " file: more than " + std::to_string(limits.max_texts * 8) +
                  " sentences (limit max_texts x 8)");
  }
  impl_->first.push_back(impl_->sentences.size());
}

FileDocument::~FileDocument() = default;
FileDocument::FileDocument(FileDocument&&) noexcept = default;
FileDocument& FileDocument::operator=(FileDocument&&) noexcept = default;

const std::vector<std::string>& FileDocument::sentences() const { return impl_->sentences; }
bool FileDocument::needs_alignment() const { return impl_->alignment; }

size_t FileDocument::characters() const {
  size_t n = 0;
  for (const std::string& sentence : impl_->sentences)
    for (char c : sentence)
      if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  return n;
}

std::string FileDocument::rebuild(const std::vector<AlignedTranslation>& translations) const {
  std::vector<std::string> translated;
  translated.reserve(impl_->layouts.size());
  for (size_t u = 0; u < impl_->layouts.size(); ++u) {
    const size_t begin = impl_->first[u], end = impl_->first[u + 1];
    const auto slice = [&](auto take) {
      std::vector<decltype(take(translations[0]))> out;
      for (size_t s = begin; s < end; ++s)
        out.push_back(s < translations.size() ? take(translations[s]) : decltype(take(translations[0])){});
      return out;
    };
    if (const auto* html = std::get_if<HtmlDocument>(&impl_->layouts[u])) {
      translated.push_back(html->rebuild(slice([](const AlignedTranslation& t) { return t; })));
    } else {
      const auto& layout = std::get<SentenceLayout>(impl_->layouts[u]);
      translated.push_back(layout.rebuild(slice([](const AlignedTranslation& t) { return t.text; })));
    }
  }
  return impl_->content->rebuild(translated);
}

}  // namespace ordo
