// The file of the packed weights cache (models/packed_cache.h says what the cache is for):
// what a packed model is made of, plain tensors and packed GEMMs, in an io::VerifiedFile,
// written and read back without LibTorch (the fuzz harness reads it as ordo does).
//
// Reading checks everything that can be checked without the model: the size and checksum
// (VerifiedFile), the format and compute type, every part inside the data, byte counts that
// match shapes and dtypes, and every float finite (NaN in a cache file must not give garbage
// any more than NaN in a checkpoint does). Whether it fits the model (names, shapes, oneDNN's
// layouts) is the loader's check.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "io/safetensors.h"

namespace ordo::io {

// Part of the cache's key (models/packed_cache.cpp): a new format never reads an old file.
// 3: a gated feed-forward's fc1 and gate are one GEMM (fc1_gate); 2: an io::VerifiedFile
// (checksum, read into owned memory); 1 was mapped, unchecked.
constexpr int kPackedWeightsFormat = 3;

struct PackedTensor {
  std::string name;
  DType dtype = DType::F32;  // F32 or BF16
  std::vector<int64_t> shape;
  const void* data = nullptr;
  size_t bytes = 0;
};

struct PackedGemmData {
  std::string name;
  bool empty = false;  // a GEMM without weights (its parameters are then absent too)
  int type = 0;        // nn::GemmType, as a number
  int64_t in = 0, out = 0;
  int activation = -1;  // nn::Activation, as a number; -1: none
  bool fused_activation = false;
  bool rows_readable = false;
  std::vector<uint8_t> layout;  // oneDNN's memory descriptor of the packed weights
  const void* weights = nullptr;
  size_t weight_bytes = 0;
  std::vector<float> scales;  // int8: per output channel
  std::vector<float> bias;    // empty: none
};

struct PackedWeights {
  std::string compute_type;  // "float32", "bfloat16" or "int8": the dtype of the packed weights
  std::vector<PackedTensor> tensors;
  std::vector<std::string> absent;  // parameters the packed model does not have
  std::vector<PackedGemmData> gemms;
  std::string encoder_embedding, decoder_embedding;  // "table" or "packed" (the output rows)
  std::shared_ptr<const void> owner;                 // read: keeps every `data` and `weights` alive
};

// Writes `weights` to `path` (io::VerifiedFile: temporary name, checksum last, rename).
// Throws ordo::Error naming the file.
void write_packed_weights(const std::string& path, const PackedWeights& weights);

// Reads `path`, which must hold weights packed for `compute_type`; files over `max_bytes` are
// refused unread. Throws ordo::Error naming the file and the problem. `threads`: how many read
// the file and scan its floats at once (io::read_verified_file).
PackedWeights read_packed_weights(const std::string& path, const std::string& compute_type, size_t max_bytes,
                                  int threads = 1);

}  // namespace ordo::io
