// Reading a file whole and replacing one only once its new bytes are whole (ordo/files.h): the
// command line, the C ABI and Python write translated files through this one function.
#include <cstdio>
#include <fstream>

#include "ordo/error.h"
#include "ordo/files.h"

namespace ordo {

std::string read_file_bytes(const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open the input file");
  std::string bytes;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    bytes.append(buffer, static_cast<size_t>(in.gcount()));
    if (bytes.size() > max_bytes)
      throw Error(path + ": more than " + std::to_string(max_bytes) + " bytes (limit max_file_bytes " +
                  std::to_string(max_bytes) + ")");
  }
  if (in.bad()) throw Error(path + ": read error");
  return bytes;
}

void write_file_whole(const std::string& path, const std::string& bytes) {
  const std::string temporary = path + ".ordo-partial";
  std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
  if (!out) throw Error(path + ": cannot create the output file");
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out || std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    throw Error(path + ": write error");
  }
}

}  // namespace ordo
