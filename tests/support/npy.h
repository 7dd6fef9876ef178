// numpy's .npy files (numpy.save) in tests: the goldens' features and arrays. Little-endian
// float32, C order, format version 1 or 2.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/file.h"

namespace ordo::testing {

// The array's values, flattened.
inline std::vector<float> read_npy_float32(const std::string& path) {
  const std::string bytes = io::read_regular_file(path);
  if (bytes.size() < 12 || bytes.compare(0, 6, "\x93NUMPY") != 0) throw std::runtime_error(path + ": not .npy");
  size_t header_len = 0, at = 0;
  if (static_cast<unsigned char>(bytes[6]) == 1) {
    header_len = static_cast<size_t>(static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8);
    at = 10;
  } else {
    uint32_t length;
    std::memcpy(&length, bytes.data() + 8, 4);
    header_len = length;
    at = 12;
  }
  const std::string header = bytes.substr(at, header_len);
  if (header.find("'descr': '<f4'") == std::string::npos || header.find("'fortran_order': False") == std::string::npos)
    throw std::runtime_error(path + ": not a C-order float32 array: " + header);
  std::vector<float> values((bytes.size() - at - header_len) / 4);
  std::memcpy(values.data(), bytes.data() + at + header_len, values.size() * 4);
  return values;
}

}  // namespace ordo::testing
