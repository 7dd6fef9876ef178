// Reads input lines (stdin or a file) in chunks, numbering them for error messages.
#pragma once

#include <cstdint>
#include <fstream>
#include <istream>
#include <memory>
#include <string>
#include <vector>

namespace ordo::cli {

class LineReader {
 public:
  // `path` empty or "-" reads stdin. Throws ordo::Error if the file cannot be opened.
  // `keep_cr`: keep the '\r' of a CR LF line end (for output that keeps the input's breaks).
  explicit LineReader(const std::string& path, bool keep_cr = false);

  // Appends up to `max_lines` lines to `lines` (without the newline; a trailing '\r' of CRLF
  // files is dropped unless keep_cr; a byte order mark before the first line is dropped).
  // Returns false at end of input with nothing read.
  bool read(size_t max_lines, std::vector<std::string>& lines);

  // "stdin line 12" or "input.txt line 12", for the n-th line (1-based) read so far.
  std::string where(uint64_t line_number) const;
  uint64_t lines_read() const { return lines_read_; }
  // Progress: bytes consumed and total size (0 when unknown, e.g. a pipe).
  uint64_t bytes_read() const { return bytes_read_; }
  uint64_t total_bytes() const { return total_bytes_; }

 private:
  std::string name_;
  std::unique_ptr<std::ifstream> file_;
  std::istream* in_;
  bool keep_cr_ = false;
  uint64_t lines_read_ = 0;
  uint64_t bytes_read_ = 0;
  uint64_t total_bytes_ = 0;
};

}  // namespace ordo::cli
