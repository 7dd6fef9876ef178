#include "io/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>

#include "io/file.h"
#include "io/json_file.h"
#include "ordo/error.h"

namespace ordo::io {
namespace {

struct DTypeInfo {
  DType dtype;
  const char* name;
  size_t size;
};

constexpr DTypeInfo kDTypes[] = {
    {DType::F32, "F32", 4}, {DType::F16, "F16", 2},   {DType::BF16, "BF16", 2}, {DType::F64, "F64", 8},
    {DType::I64, "I64", 8}, {DType::I32, "I32", 4},   {DType::I16, "I16", 2},   {DType::I8, "I8", 1},
    {DType::U8, "U8", 1},   {DType::BOOL, "BOOL", 1},
};

const DTypeInfo* find_dtype(const std::string& name) {
  for (const DTypeInfo& info : kDTypes)
    if (name == info.name) return &info;
  return nullptr;
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

float half_to_float(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else {  // subnormal: normalize
      exponent = 127 - 15 + 1;
      while (!(mantissa & 0x400u)) {
        mantissa <<= 1;
        --exponent;
      }
      mantissa &= 0x3ffu;
      bits = sign | (exponent << 23) | (mantissa << 13);
    }
  } else if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else {
    bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t float_to_half(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t abs = bits & 0x7fffffffu;
  if (abs >= 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0));
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflows to inf
  if (abs < 0x38800000u) {  // becomes a half subnormal (or zero): round to nearest even
    // value = mantissa * 2^(e - 150); in units of the smallest half subnormal (2^-24) that is
    // mantissa >> (126 - e).
    const int shift = 126 - static_cast<int>(abs >> 23);
    if (shift > 24) return static_cast<uint16_t>(sign);
    const uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
    uint32_t half = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = ((abs - 0x38000000u) >> 13);
  const uint32_t rest = abs & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  return static_cast<uint16_t>(sign | half);
}

uint16_t float_to_bf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);  // NaN
  const uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

}  // namespace

const char* dtype_name(DType dtype) {
  for (const DTypeInfo& info : kDTypes)
    if (info.dtype == dtype) return info.name;
  return "?";
}

size_t dtype_size(DType dtype) {
  for (const DTypeInfo& info : kDTypes)
    if (info.dtype == dtype) return info.size;
  return 0;
}

bool is_float(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16 || dtype == DType::F64;
}

int64_t TensorView::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

namespace {

// pread() of exactly `bytes` at `offset`; ordo::Error naming the file otherwise.
void read_exactly(int fd, const std::string& path, uint64_t offset, size_t bytes, void* out) {
  auto* target = static_cast<uint8_t*>(out);
  for (size_t done = 0; done < bytes;) {
    const ssize_t n = ::pread(fd, target + done, bytes - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(path + ": read error (" + std::strerror(errno) + ")");
    if (n == 0)
      throw Error(path + ": truncated while being read (no byte at " + std::to_string(offset + done) +
                  "; was the file replaced or cut short?)");
    done += static_cast<size_t>(n);
  }
}

}  // namespace

SafetensorsFile::SafetensorsFile(const std::string& path) : path_(path) {
  const int fd = open_regular_file(path);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    throw Error(path + ": cannot open file (" + std::strerror(errno) + ")");
  }
  const size_t file_size = static_cast<size_t>(st.st_size);
  if (file_size < 8) {
    ::close(fd);
    throw Error(path + ": truncated safetensors file (" + std::to_string(file_size) +
                " bytes, too short for the 8-byte header length)");
  }
  void* mapping = ::mmap(nullptr, file_size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (mapping == MAP_FAILED) {
    const int err = errno;
    ::close(fd);
    throw Error(path + ": cannot map file (" + std::strerror(err) + ")");
  }
  fd_ = fd;
  mapping_ = mapping;
  mapping_size_ = file_size;

  try {
    const auto* bytes = static_cast<const uint8_t*>(mapping_);
    uint8_t length[8];
    read_exactly(fd_, path, 0, 8, length);
    uint64_t header_size = 0;
    for (int i = 7; i >= 0; --i) header_size = (header_size << 8) | length[i];
    if (header_size > file_size - 8)
      throw Error(path + ": truncated safetensors file: header length " + std::to_string(header_size) +
                  " exceeds the file size " + std::to_string(file_size));
    std::string header_text(header_size, '\0');
    read_exactly(fd_, path, 8, header_size, header_text.data());
    const nlohmann::json header = parse_json_text(header_text, path + " (safetensors header)");
    if (!header.is_object()) throw Error(path + ": safetensors header is not a JSON object");
    const size_t data_start = 8 + header_size;
    const size_t data_size = file_size - data_start;

    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    for (const auto& [name, entry] : header.items()) {
      const std::string where = path + ": tensor '" + name + "'";
      if (name == "__metadata__") {
        if (!entry.is_object()) throw Error(path + ": '__metadata__' must be an object of strings");
        for (const auto& [key, value] : entry.items()) {
          if (!value.is_string()) throw Error(path + ": '__metadata__' field '" + key + "' must be a string");
          metadata_[key] = value.get<std::string>();
        }
        continue;
      }
      if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") || !entry.contains("data_offsets"))
        throw Error(where + ": header entry needs 'dtype', 'shape' and 'data_offsets'");
      if (!entry["dtype"].is_string()) throw Error(where + ": 'dtype' must be a string");
      const DTypeInfo* info = find_dtype(entry["dtype"].get<std::string>());
      if (!info) throw Error(where + ": unsupported dtype '" + entry["dtype"].get<std::string>() + "'");
      TensorView view;
      view.name = name;
      view.dtype = info->dtype;
      if (!entry["shape"].is_array()) throw Error(where + ": 'shape' must be a list of integers");
      uint64_t numel = 1;
      for (const auto& d : entry["shape"]) {
        if (!d.is_number_unsigned()) throw Error(where + ": 'shape' must be a list of non-negative integers");
        const uint64_t dim = d.get<uint64_t>();
        if (dim != 0 && numel > std::numeric_limits<uint64_t>::max() / 2 / dim)
          throw Error(where + ": shape is too large");
        numel *= dim;
        view.shape.push_back(static_cast<int64_t>(dim));
      }
      // numel * element size must not wrap: [2^61] of F64 would "need" 0 bytes.
      if (numel > std::numeric_limits<uint64_t>::max() / 2 / info->size) throw Error(where + ": shape is too large");
      const auto& offsets = entry["data_offsets"];
      if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
          !offsets[1].is_number_unsigned())
        throw Error(where + ": 'data_offsets' must be [begin, end]");
      const uint64_t begin = offsets[0].get<uint64_t>(), end = offsets[1].get<uint64_t>();
      if (begin > end) throw Error(where + ": data_offsets begin > end");
      if (end > data_size)
        throw Error(where + ": data ends at byte " + std::to_string(end) + " but the file has only " +
                    std::to_string(data_size) + " data bytes (truncated file?)");
      if (end - begin != numel * info->size)
        throw Error(where + ": shape " + shape_string(view.shape) + " of " + info->name + " needs " +
                    std::to_string(numel * info->size) + " bytes, data_offsets give " + std::to_string(end - begin));
      view.data = bytes + data_start + begin;
      view.nbytes = end - begin;
      view.offset = data_start + begin;
      ranges.emplace_back(begin, end);
      tensors_.emplace(name, std::move(view));
    }
    std::sort(ranges.begin(), ranges.end());
    for (size_t i = 1; i < ranges.size(); ++i)
      if (ranges[i].first < ranges[i - 1].second)
        throw Error(path + ": tensors overlap in the data section (inconsistent data_offsets)");
  } catch (...) {
    ::munmap(mapping_, mapping_size_);
    mapping_ = nullptr;
    ::close(fd_);
    throw;
  }
}

SafetensorsFile::~SafetensorsFile() {
  if (mapping_) ::munmap(mapping_, mapping_size_);
  if (fd_ >= 0) ::close(fd_);
}

void SafetensorsFile::read(const TensorView& tensor, size_t begin, size_t bytes, void* out) const {
  if (begin > tensor.nbytes || bytes > tensor.nbytes - begin)
    throw Error(path_ + ": bytes " + std::to_string(begin) + "+" + std::to_string(bytes) + " of tensor '" +
                tensor.name + "' are out of range");
  read_exactly(fd_, path_, tensor.offset + begin, bytes, out);
}

bool SafetensorsFile::contains(const std::string& name) const { return tensors_.count(name) != 0; }

const TensorView& SafetensorsFile::get(const std::string& name) const {
  const auto it = tensors_.find(name);
  if (it == tensors_.end()) throw Error(path_ + ": tensor '" + name + "' is missing");
  return it->second;
}

const TensorView& SafetensorsFile::get(const std::string& name, const std::vector<int64_t>& expected_shape) const {
  const TensorView& view = get(name);
  if (view.shape != expected_shape)
    throw Error(path_ + ": tensor '" + name + "' has shape " + shape_string(view.shape) + ", expected " +
                shape_string(expected_shape));
  return view;
}

std::vector<std::string> SafetensorsFile::names() const {
  std::vector<std::string> out;
  for (const auto& entry : tensors_) out.push_back(entry.first);
  return out;
}

void to_float32(const TensorView& tensor, float* out) {
  const size_t n = static_cast<size_t>(tensor.numel());
  const auto* bytes = static_cast<const uint8_t*>(tensor.data);
  switch (tensor.dtype) {
    case DType::F32:
      if (n > 0) std::memcpy(out, bytes, n * 4);  // an empty vector's data() may be null
      break;
    case DType::F64:
      for (size_t i = 0; i < n; ++i) {
        double d;
        std::memcpy(&d, bytes + 8 * i, 8);
        out[i] = static_cast<float>(d);
      }
      break;
    case DType::F16:
      for (size_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, bytes + 2 * i, 2);
        out[i] = half_to_float(h);
      }
      break;
    case DType::BF16:
      for (size_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, bytes + 2 * i, 2);
        const uint32_t bits = static_cast<uint32_t>(h) << 16;
        std::memcpy(&out[i], &bits, 4);
      }
      break;
    default:
      throw Error("tensor '" + tensor.name + "' has dtype " + dtype_name(tensor.dtype) +
                  "; a floating-point tensor (F32, F16, BF16, F64) is expected");
  }
}

std::vector<float> to_float32(const TensorView& tensor) {
  if (!is_float(tensor.dtype)) to_float32(tensor, nullptr);  // throws, naming the dtype
  std::vector<float> out(static_cast<size_t>(tensor.numel()));
  to_float32(tensor, out.data());
  return out;
}

namespace {

// Every value whose exponent bits (`mask`) are all set is a NaN or an infinity. The exponent
// sits just below the sign bit, so (value & mask) + its lowest bit reaches the sign bit exactly
// when all of them are set: the first loop only ANDs, adds and ORs, which the compiler
// vectorizes (a comparison folded into a bool does not, and this scan reads every weight at load).
template <class Bits>
int64_t first_with_all_bits(const void* data, size_t count, Bits mask) {
  const auto* bits = static_cast<const uint8_t*>(data);
  const Bits lowest = static_cast<Bits>(mask & (~mask + 1));
  Bits any = 0;
  for (size_t i = 0; i < count; ++i) {  // no early exit: the loop vectorizes
    Bits value;
    std::memcpy(&value, bits + i * sizeof(Bits), sizeof(Bits));
    any |= static_cast<Bits>((value & mask) + lowest);
  }
  if (!(any >> (sizeof(Bits) * 8 - 1))) return -1;
  for (size_t i = 0; i < count; ++i) {
    Bits value;
    std::memcpy(&value, bits + i * sizeof(Bits), sizeof(Bits));
    if ((value & mask) == mask) return static_cast<int64_t>(i);
  }
  return -1;
}

}  // namespace

int64_t first_non_finite(DType dtype, const void* data, size_t count) {
  switch (dtype) {
    case DType::F32: return first_with_all_bits<uint32_t>(data, count, 0x7f800000u);
    case DType::F16: return first_with_all_bits<uint16_t>(data, count, 0x7c00u);
    case DType::BF16: return first_with_all_bits<uint16_t>(data, count, 0x7f80u);
    case DType::F64: return first_with_all_bits<uint64_t>(data, count, 0x7ff0000000000000ull);
    default: return -1;
  }
}

std::vector<uint8_t> float32_to_f16_bytes(const std::vector<float>& values) {
  std::vector<uint8_t> out(values.size() * 2);
  for (size_t i = 0; i < values.size(); ++i) {
    const uint16_t h = float_to_half(values[i]);
    std::memcpy(out.data() + 2 * i, &h, 2);
  }
  return out;
}

std::vector<uint8_t> float32_to_bf16_bytes(const std::vector<float>& values) {
  std::vector<uint8_t> out(values.size() * 2);
  for (size_t i = 0; i < values.size(); ++i) {
    const uint16_t h = float_to_bf16(values[i]);
    std::memcpy(out.data() + 2 * i, &h, 2);
  }
  return out;
}

std::vector<uint8_t> float32_bytes(const std::vector<float>& values) {
  std::vector<uint8_t> out(values.size() * 4);
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

void write_safetensors(const std::string& path, const std::vector<TensorData>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  std::vector<const TensorData*> sorted;
  for (const TensorData& t : tensors) sorted.push_back(&t);
  std::sort(sorted.begin(), sorted.end(), [](const TensorData* a, const TensorData* b) { return a->name < b->name; });

  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const TensorData* t : sorted) {
    int64_t numel = 1;
    for (int64_t d : t->shape) numel *= d;
    if (t->bytes.size() != static_cast<size_t>(numel) * dtype_size(t->dtype))
      throw Error(path + ": tensor '" + t->name + "' has " + std::to_string(t->bytes.size()) + " bytes, its shape " +
                  shape_string(t->shape) + " needs " + std::to_string(numel * dtype_size(t->dtype)));
    if (header.contains(t->name)) throw Error(path + ": tensor '" + t->name + "' given twice");
    header[t->name] = {
        {"dtype", dtype_name(t->dtype)}, {"shape", t->shape}, {"data_offsets", {offset, offset + t->bytes.size()}}};
    offset += t->bytes.size();
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the data section starts 8-byte aligned

  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(tmp + ": cannot create file");
    uint8_t length[8];
    uint64_t n = text.size();
    for (int i = 0; i < 8; ++i, n >>= 8) length[i] = static_cast<uint8_t>(n & 0xff);
    out.write(reinterpret_cast<const char*>(length), 8);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    for (const TensorData* t : sorted)
      out.write(reinterpret_cast<const char*>(t->bytes.data()), static_cast<std::streamsize>(t->bytes.size()));
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw Error(tmp + ": write failed (disk full?)");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw Error(path + ": cannot replace file (" + std::strerror(errno) + ")");
  }
}

}  // namespace ordo::io
