// libFuzzer harness: files (ordo::FileDocument over every format of ordo/files.h: the zip
// archives and XML parts of Office Open XML, OpenDocument and EPUB, subtitles, gettext, XLIFF,
// JSON, text and HTML). The first byte picks the format (modulo their number), the rest is the
// file, read with small limits; what reads is rebuilt from the sentences as they are, from
// reversed word alignments and from no translations at all. Anything but a result or an
// ordo::Error is a finding, and so is an archive format's rebuild that is no zip archive.
#include <string>
#include <vector>

#include "document/zip_archive.h"
#include "fuzz_util.h"
#include "ordo/error.h"
#include "ordo/files.h"

namespace {

ordo::FileOptions small_limits() {
  ordo::FileOptions options;
  options.source_language = "en";
  options.target_language = "de";
  ordo::FileLimits& limits = options.limits;
  limits.max_file_bytes = 1 << 20;
  limits.max_entries = 64;
  limits.max_part_bytes = 1 << 20;
  limits.max_unpacked_bytes = 4 << 20;
  limits.max_compression_ratio = 100;
  limits.max_xml_depth = 64;
  limits.max_texts = 2000;
  limits.html.max_bytes = 1 << 20;
  limits.html.max_depth = 64;
  limits.html.max_memory = 16 << 20;
  return options;
}

ordo::AlignedTranslation reversed(const std::string& sentence) {
  ordo::AlignedTranslation out{sentence, {}, 0, 0};
  int64_t words = 1;
  for (char c : sentence) words += c == ' ';
  for (int64_t w = 0; w < words; ++w) out.words.push_back({w, words - 1 - w});
  out.source_words = out.target_words = words;
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::vector<ordo::FileFormatInfo>& formats = ordo::file_formats();
  const ordo::FileFormatInfo& info = formats[data[0] % formats.size()];
  const std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  const ordo::FileOptions options = small_limits();
  std::vector<std::string> outputs;
  try {
    const ordo::FileDocument document(bytes, info.format, options);
    std::vector<ordo::AlignedTranslation> plain, reverse;
    for (const std::string& sentence : document.sentences()) {
      plain.push_back({sentence + " <&>", {}, 0, 0});
      reverse.push_back(reversed(sentence));
    }
    outputs.push_back(document.rebuild(plain));
    outputs.push_back(document.rebuild(reverse));
    outputs.push_back(document.rebuild({}));
  } catch (const ordo::Error&) {
    return 0;
  }
  if (info.archive) {
    for (const std::string& out : outputs) {
      try {
        ordo::document::ZipArchive zip(out, {}, "rebuilt " + info.name);
      } catch (const ordo::Error& e) {
        ordo::fuzz::fail(std::string("a rebuilt archive that does not open: ") + e.what());
      }
    }
  }
  return 0;
}
