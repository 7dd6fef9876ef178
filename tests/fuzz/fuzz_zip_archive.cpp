// libFuzzer harness: the zip archive reader and writer of files (src/document/zip_archive.h)
// alone, with small limits: every part read, the first replaced, the archive written and read
// again. Anything but an ordo::Error from the reading is a finding, and so is a written archive
// that does not open or does not give the replaced part back.
#include <string>

#include "document/zip_archive.h"
#include "fuzz_util.h"
#include "ordo/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ordo::FileLimits limits;
  limits.max_file_bytes = 1 << 20;
  limits.max_entries = 64;
  limits.max_part_bytes = 1 << 20;
  limits.max_unpacked_bytes = 4 << 20;
  limits.max_compression_ratio = 100;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  std::string written, first;
  try {
    ordo::document::ZipArchive zip(bytes, limits, "ZIP file");
    for (const std::string& name : zip.names()) zip.read(name);
    if (zip.names().empty()) return 0;
    first = zip.names().front();
    zip.replace(first, "<replaced/>");
    written = zip.write();
  } catch (const ordo::Error&) {
    return 0;
  }
  try {
    ordo::document::ZipArchive again(written, {}, "written ZIP file");
    if (again.read(first) != "<replaced/>") ordo::fuzz::fail("the written archive lost the replaced part");
  } catch (const ordo::Error& e) {
    ordo::fuzz::fail(std::string("a written archive that does not open: ") + e.what());
  }
  return 0;
}
