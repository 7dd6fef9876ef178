// The arrays the references' goldens are made of, read in tests: numpy's .npy files
// (numpy.save: features, logits; little-endian float32, C order, format version 1 or 2) and the
// 16-bit PCM WAVs the Whisper goldens read as int16 / 32768.
#pragma once

#include <cstdint>
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/file.h"

namespace ordo::testing {

struct NpyArray {
  std::vector<int64_t> shape;
  std::vector<float> values;  // flattened, C order
};

inline NpyArray read_npy(const std::string& path) {
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
  NpyArray array;
  int64_t count = 1;
  for (size_t i = header.find('(', header.find("'shape'")) + 1; i < header.size() && header[i] != ')';) {
    size_t used = 0;
    array.shape.push_back(std::stoll(header.substr(i), &used));
    count *= array.shape.back();
    i += used;
    while (i < header.size() && (header[i] == ',' || header[i] == ' ')) ++i;
  }
  if (bytes.size() - at - header_len != static_cast<size_t>(count) * 4) throw std::runtime_error(path + ": truncated");
  array.values.resize(static_cast<size_t>(count));
  std::memcpy(array.values.data(), bytes.data() + at + header_len, array.values.size() * 4);
  return array;
}

inline std::vector<float> read_npy_float32(const std::string& path) { return read_npy(path).values; }

// The samples of a mono 16-bit PCM WAV's data chunk (its bytes), / 32768; a data chunk cut
// short gives the samples it holds.
inline std::vector<float> pcm16_wav_samples(const std::string& bytes) {
  size_t at = 12;
  while (at + 8 <= bytes.size()) {
    uint32_t size;
    std::memcpy(&size, bytes.data() + at + 4, 4);
    if (bytes.compare(at, 4, "data") == 0) {
      std::vector<float> samples(std::min<size_t>(size, bytes.size() - at - 8) / 2);
      for (size_t i = 0; i < samples.size(); ++i) {
        int16_t v;
        std::memcpy(&v, bytes.data() + at + 8 + 2 * i, 2);
        samples[i] = static_cast<float>(v) / 32768.0f;
      }
      return samples;
    }
    at += 8 + size + (size & 1);
  }
  return {};
}

}  // namespace ordo::testing
