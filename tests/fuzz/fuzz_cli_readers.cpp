// libFuzzer harness: the CLI's line and document readers (src/cli/line_reader.*,
// document_reader.*) on arbitrary file bytes, in every unit mode and with small chunk sizes.
// Lines must account for every input byte; units must come out in input order.
#include <string>
#include <vector>

#include "cli/document_reader.h"
#include "cli/line_reader.h"
#include "fuzz_util.h"
#include "ordo/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = ordo::fuzz::write_file("input.txt", data, size);
  const size_t chunk = size > 0 ? 1 + data[0] % 7 : 1;
  try {
    ordo::cli::LineReader reader(path);
    std::vector<std::string> lines;
    while (reader.read(chunk, lines)) {
    }
    size_t newlines = 0;
    for (size_t i = 0; i < size; ++i) newlines += data[i] == '\n';
    const size_t expected = newlines + (size > 0 && data[size - 1] != '\n' ? 1 : 0);
    if (lines.size() != expected || reader.lines_read() != expected)
      ordo::fuzz::fail("read " + std::to_string(lines.size()) + " lines, the input has " + std::to_string(expected));
    if (reader.bytes_read() < size || reader.bytes_read() > size + 1)
      ordo::fuzz::fail("bytes_read " + std::to_string(reader.bytes_read()) + " for " + std::to_string(size) + " bytes");
    (void)reader.where(reader.lines_read());
  } catch (const ordo::Error&) {
  }
  for (auto unit : {ordo::cli::InputUnit::kLine, ordo::cli::InputUnit::kParagraph, ordo::cli::InputUnit::kDocument}) {
    try {
      ordo::cli::DocumentReader reader(path, unit);
      std::vector<ordo::cli::Unit> units;
      while (reader.read(chunk, units)) {
      }
      uint64_t previous = 0;
      for (const ordo::cli::Unit& u : units) {
        if (u.first_line < 1 || u.first_line < previous || u.first_line > reader.lines().lines_read() + 1)
          ordo::fuzz::fail("unit starts at line " + std::to_string(u.first_line) + " after line " +
                           std::to_string(previous));
        previous = u.first_line;
      }
      if (reader.read(chunk, units)) ordo::fuzz::fail("read() returned data after the end");
    } catch (const ordo::Error&) {
    }
  }
  return 0;
}
