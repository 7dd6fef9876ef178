#include "cli/line_reader.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "ordo/error.h"
#include "ordo/text.h"

namespace ordo::cli {

LineReader::LineReader(const std::string& path, bool keep_cr) : keep_cr_(keep_cr) {
  if (path.empty() || path == "-") {
    name_ = "stdin";
    in_ = &std::cin;
    return;
  }
  name_ = path;
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) throw Error(path + ": is a directory, not a text file");
  file_ = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (!*file_) throw Error(path + ": cannot open input file (" + std::strerror(errno) + ")");
  if (S_ISREG(st.st_mode)) total_bytes_ = static_cast<uint64_t>(st.st_size);
  in_ = file_.get();
}

bool LineReader::read(size_t max_lines, std::vector<std::string>& lines) {
  size_t count = 0;
  std::string line;
  while (count < max_lines && std::getline(*in_, line)) {
    bytes_read_ += line.size() + 1;
    if (lines_read_ == 0) drop_byte_order_mark(line);
    if (!keep_cr_ && !line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    ++lines_read_;
    ++count;
  }
  if (in_->bad()) throw Error(name_ + ": read error after line " + std::to_string(lines_read_));
  return count > 0;
}

std::string LineReader::where(uint64_t line_number) const { return name_ + " line " + std::to_string(line_number); }

}  // namespace ordo::cli
