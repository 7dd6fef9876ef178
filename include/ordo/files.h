// ordo — files as people have them: an office document, a slide deck, a spreadsheet, an
// e-book, subtitles, a gettext catalogue, an XLIFF or JSON string file. Each is read into the
// texts it holds (a paragraph with its bold and linked words, a cell, a cue, a msgid), those
// are translated with the machinery of HTML pages (ordo/document.h: sentence by sentence,
// inline markup put back around the words it aligns to, placeholders such as {name} or %s
// kept as points), and the file is written again with everything else as it was: the other
// parts of an archive are copied byte for byte, the XML around the texts is kept, cue
// timings, msgids, keys and comments stay. Files are untrusted (a server's clients send them):
// archives and XML are read within FileLimits, and a file past one, or not what its format
// says, throws ordo::Error naming the file part and the limit.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ordo/document.h"
#include "ordo/export.h"
#include "ordo/options.h"
#include "ordo/translator.h"

namespace ordo {

enum class FileFormat {
  kText,   // .txt: paragraphs, sentence by sentence, line structure kept
  kHtml,   // .html/.htm: translate_html()
  kDocx,   // Office Open XML: Word
  kPptx,   // Office Open XML: PowerPoint
  kXlsx,   // Office Open XML: Excel (shared and inline strings; formulas and numbers kept)
  kOdt,    // OpenDocument text
  kOdp,    // OpenDocument presentation
  kOds,    // OpenDocument spreadsheet
  kEpub,   // EPUB 2/3: the XHTML chapters
  kSrt,    // SubRip subtitles
  kVtt,    // WebVTT subtitles
  kPo,     // gettext .po/.pot
  kXliff,  // XLIFF 1.2 and 2.0
  kJson,   // JSON i18n string files (values translated, keys kept)
};

// The one table of formats: the CLI's --format, the server's file routes and the page read it.
struct FileFormatInfo {
  FileFormat format;
  std::string name;                     // "docx" (--format)
  std::vector<std::string> extensions;  // ".docx" (lower case, first = the one written)
  std::string media_type;               // "application/vnd.openxmlformats-officedocument..."
  bool archive = false;                 // a zip archive
};
ORDO_API const std::vector<FileFormatInfo>& file_formats();
ORDO_API const FileFormatInfo& file_format_info(FileFormat format);
// "docx", "DOCX" or ".docx" -> kDocx; throws ordo::Error naming `field` and listing the names.
ORDO_API FileFormat parse_file_format(const std::string& name, const std::string& field);
// The format of a file name by its extension (case-insensitive), none for others.
ORDO_API std::optional<FileFormat> file_format_of(const std::string& file_name);

// Bounds on the work one file may cause. The defaults pass real documents with a wide margin.
struct FileLimits {
  size_t max_file_bytes = 64u << 20;       // the file as given
  size_t max_entries = 10000;              // parts of an archive
  size_t max_part_bytes = 128u << 20;      // one part, unpacked (counted while inflating)
  size_t max_unpacked_bytes = 512u << 20;  // all the parts read, unpacked
  size_t max_compression_ratio = 1000;     // unpacked / packed bytes of one part above 1 MiB
  size_t max_xml_depth = 256;              // elements open at once in an XML part
  size_t max_texts = 200000;               // texts to translate (paragraphs, cells, cues, ...)
  HtmlLimits html;                         // the HTML of .html files and EPUB chapters
};

// A file's parts that are not translated stay as they were; these say what to do where a
// format leaves a choice.
struct FileOptions {
  // Source language: the sentence rules ("" = ICU's root rules; a model's code such as
  // "deu_Latn" is understood). Target language, as files write it ("de", "pt-BR"; "" = leave
  // the file's): written where the format names it (a .po header's Language and Plural-Forms,
  // XLIFF's target-language / trgLang, an EPUB's dc:language). translate_file() fills both
  // from the options' or the model folder's languages when empty.
  std::string source_language, target_language;
  bool translate_fuzzy = false;  // .po: translate fuzzy entries too (they stay marked fuzzy)
  bool retranslate = false;      // .po/XLIFF: translate entries that have a translation already
  FileLimits limits;
  // Called after each slice of sentences is translated (translate_file()).
  std::function<void(size_t done, size_t total)> on_progress;
};

// A file cut into the sentences to translate; rebuild() writes the file with the translations
// in place (the same shape as HtmlDocument, so that a server batches the sentences of many
// requests itself). Throws ordo::Error naming the part and the limit or the fault when the
// file is past a limit of `options.limits` or is not a `format` file.
class ORDO_API FileDocument {
 public:
  FileDocument(const std::string& bytes, FileFormat format, const FileOptions& options = {});
  ~FileDocument();
  FileDocument(FileDocument&&) noexcept;
  FileDocument& operator=(FileDocument&&) noexcept;

  // The sentences to translate, in file order.
  const std::vector<std::string>& sentences() const;
  // Whether some sentence has inline markup or placeholders (then translate with
  // DecodeOptions::return_attention: the alignments place them).
  bool needs_alignment() const;
  // Characters (code points) of the sentences: what a server's per-key limits count.
  size_t characters() const;
  // The file with sentence i replaced by translations[i].
  std::string rebuild(const std::vector<AlignedTranslation>& translations) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Translates a file as above through `translate` (as summarize_documents' TranslateCall: a
// server passes its batcher) or the translator with `batching`. options.source_lang, else the
// model folder's language, gives the sentence rules when file_options.source_language is empty.
ORDO_API std::string translate_file(const Translator& translator, const std::string& bytes, FileFormat format,
                                    const DecodeOptions& options = {}, const FileOptions& file_options = {},
                                    const BatchOptions& batching = {});
ORDO_API std::string translate_file(const Translator& translator, const std::string& bytes, FileFormat format,
                                    const DecodeOptions& options, const FileOptions& file_options,
                                    const TranslateCall& translate);

// A file's bytes, read whole; throws ordo::Error naming `path` when it cannot be read or has
// more than `max_bytes` (naming the limit FileLimits::max_file_bytes).
ORDO_API std::string read_file_bytes(const std::string& path, size_t max_bytes = FileLimits().max_file_bytes);
// Writes `bytes` beside `path` and renames that over `path` once whole: a failed write leaves
// the file as it was (the input, when the output names it). Throws ordo::Error naming `path`.
ORDO_API void write_file_whole(const std::string& path, const std::string& bytes);

}  // namespace ordo
