// libFuzzer harness: the packed weights cache reader (src/io/packed_weights_file.*, on
// io::VerifiedFile) on arbitrary file bytes. Each input is read as it is (size and checksum
// must refuse nearly everything) and once more sealed, its last 8 bytes replaced by the right
// checksum, so that the fuzzer gets past the checksum to the header, range and NaN checks.
// Every accepted file must give parts that lie inside it, byte counts that match shapes, and
// only finite floats.
#include <cstdint>
#include <cstring>
#include <string>

#include "fuzz_util.h"
#include "io/packed_weights_file.h"
#include "io/verified_file.h"
#include "ordo/error.h"

namespace {

volatile unsigned sink;  // every byte of a part is read into it (AddressSanitizer sees any overrun)

// Reads every byte of [data, data + bytes), after checking it lies in the file's memory.
void check_part(const void* data, size_t bytes, const uint8_t* begin, size_t size, const std::string& what) {
  const auto* p = static_cast<const uint8_t*>(data);
  if (bytes == 0) return;
  if (!p || p < begin || bytes > size || p > begin + size - bytes) ordo::fuzz::fail(what + " lies outside the file");
  unsigned sum = 0;
  for (size_t i = 0; i < bytes; ++i) sum += p[i];
  sink = sum;
}

void read(const std::string& path, const std::string& type, size_t size) {
  try {
    const ordo::io::PackedWeights weights = ordo::io::read_packed_weights(path, type, size_t{64} << 20);
    const auto* begin = static_cast<const uint8_t*>(weights.owner.get());
    if (!begin || reinterpret_cast<uintptr_t>(begin) % ordo::io::kVerifiedFileAlign != 0)
      ordo::fuzz::fail("data not page-aligned");
    if (weights.compute_type != type) ordo::fuzz::fail("accepted a file packed for " + weights.compute_type);
    for (const ordo::io::PackedTensor& t : weights.tensors) {
      uint64_t numel = 1;
      for (const int64_t dim : t.shape) {
        if (dim < 0) ordo::fuzz::fail("negative dimension in '" + t.name + "'");
        numel *= static_cast<uint64_t>(dim);
      }
      if (numel * ordo::io::dtype_size(t.dtype) != t.bytes) ordo::fuzz::fail("bytes of '" + t.name + "' do not match");
      check_part(t.data, t.bytes, begin, size, "tensor '" + t.name + "'");
      if (ordo::io::first_non_finite(t.dtype, t.data, numel) >= 0) ordo::fuzz::fail("NaN accepted in '" + t.name + "'");
    }
    for (const ordo::io::PackedGemmData& g : weights.gemms) {
      if (g.empty) continue;
      check_part(g.weights, g.weight_bytes, begin, size, "GEMM '" + g.name + "'");
      for (const auto* values : {&g.scales, &g.bias})
        if (ordo::io::first_non_finite(ordo::io::DType::F32, values->data(), values->size()) >= 0)
          ordo::fuzz::fail("NaN accepted in '" + g.name + "'");
    }
  } catch (const ordo::Error&) {
    // Refused with a message: what should happen to a damaged file.
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  read(ordo::fuzz::write_file("as_is.ordo-packed", data, size), "float32", size);
  if (size < 8) return 0;
  const uint64_t checksum = ordo::io::verified_checksum(bytes.data(), size - 8);
  for (int i = 0; i < 8; ++i) bytes[size - 8 + i] = static_cast<char>((checksum >> (8 * i)) & 0xff);
  const std::string sealed =
      ordo::fuzz::write_file("sealed.ordo-packed", reinterpret_cast<const uint8_t*>(bytes.data()), size);
  for (const char* type : {"float32", "bfloat16", "int8"}) read(sealed, type, size);
  return 0;
}
