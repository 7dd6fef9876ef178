// Reader for the safetensors format: an 8-byte little-endian header length, a JSON header
// {name: {dtype, shape, data_offsets}, "__metadata__": {...}}, then the raw tensor bytes.
// The file is memory-mapped; tensors are views into the mapping (no copy). Everything is
// validated at open time so that later code can trust shapes and offsets. A mapping cannot
// survive its file shrinking (touching a page past the new end is SIGBUS): the model loader
// copies tensors out with read() instead (SafetensorsFile::read), which turns a file cut
// short while it is read into an ordo::Error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ordo::io {

enum class DType { F32, F16, BF16, F64, I64, I32, I16, I8, U8, BOOL };

const char* dtype_name(DType dtype);  // "F32", "F16", ...
size_t dtype_size(DType dtype);       // bytes per element

struct TensorView {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  const void* data;  // points into the mapped file; valid while the SafetensorsFile lives
  size_t nbytes;
  size_t offset = 0;  // of the data in the file
  int64_t numel() const;
};

class SafetensorsFile {
 public:
  // Maps and validates `path`. Throws ordo::Error naming the file (and tensor/field) when the
  // file is missing, truncated, its header is not valid JSON, a dtype is unknown, a shape does
  // not match its byte range, or ranges overlap or fall outside the file.
  explicit SafetensorsFile(const std::string& path);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& path() const { return path_; }
  bool contains(const std::string& name) const;
  // Throws ordo::Error "<file>: tensor '<name>' is missing" when absent.
  const TensorView& get(const std::string& name) const;
  // Like get(), and also checks the shape: "<file>: tensor '<name>' has shape [a, b], expected [c, d]".
  const TensorView& get(const std::string& name, const std::vector<int64_t>& expected_shape) const;
  std::vector<std::string> names() const;  // sorted
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // Copies bytes [begin, begin + bytes) of `tensor`'s data to `out` with pread(), not through
  // the mapping: throws ordo::Error naming the file if it has shrunk since it was opened.
  void read(const TensorView& tensor, size_t begin, size_t bytes, void* out) const;

 private:
  std::string path_;
  int fd_ = -1;
  void* mapping_ = nullptr;
  size_t mapping_size_ = 0;
  std::map<std::string, TensorView> tensors_;
  std::map<std::string, std::string> metadata_;
};

// F32, F16, BF16 or F64: what to_float32 reads.
bool is_float(DType dtype);

// Converts any float tensor (F32, F16, BF16, F64) to float32 values (into `out`, room for
// numel() of them).
std::vector<float> to_float32(const TensorView& tensor);
void to_float32(const TensorView& tensor, float* out);

// The index of the first NaN or infinity among `count` values of float type `dtype` (F32, F16,
// BF16, F64) at `data`; -1 when all are finite (and for any other dtype). A bit test: one
// pass, vectorized, fast enough to run over every weight at load.
int64_t first_non_finite(DType dtype, const void* data, size_t count);

// Float32 -> IEEE half / bfloat16 bytes (round to nearest even), for writing checkpoints.
std::vector<uint8_t> float32_to_f16_bytes(const std::vector<float>& values);
std::vector<uint8_t> float32_to_bf16_bytes(const std::vector<float>& values);
std::vector<uint8_t> float32_bytes(const std::vector<float>& values);

// An owned tensor to write.
struct TensorData {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

// Writes a safetensors file (tensors sorted by name, 8-byte aligned header, as the reference
// implementation does). Writes to `<path>.tmp` and renames, so a crash never leaves a torn file.
void write_safetensors(const std::string& path, const std::vector<TensorData>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace ordo::io
