// libFuzzer harness: the safetensors reader (src/io/safetensors.*) on arbitrary file bytes.
// Every accepted file must describe tensors that lie inside it with byte sizes that match
// their shapes; to_float32 must then read them without going out of bounds.
#include <cstdint>
#include <limits>

#include "fuzz_util.h"
#include "io/safetensors.h"
#include "ordo/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = ordo::fuzz::write_file("model.safetensors", data, size);
  try {
    ordo::io::SafetensorsFile file(path);
    for (const std::string& name : file.names()) {
      const ordo::io::TensorView& tensor = file.get(name);
      // The element count, computed without overflow, must match the byte range.
      uint64_t numel = 1;
      for (int64_t dim : tensor.shape) {
        if (dim < 0) ordo::fuzz::fail("negative dimension in '" + name + "'");
        if (dim != 0 && numel > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(dim))
          ordo::fuzz::fail("element count of '" + name + "' overflows");
        numel *= static_cast<uint64_t>(dim);
      }
      const uint64_t element = ordo::io::dtype_size(tensor.dtype);
      if (numel > std::numeric_limits<uint64_t>::max() / element || numel * element != tensor.nbytes)
        ordo::fuzz::fail("byte size of '" + name + "' does not match its shape");
      if (tensor.nbytes > size) ordo::fuzz::fail("'" + name + "' is larger than the file");
      if (static_cast<int64_t>(numel) != tensor.numel()) ordo::fuzz::fail("numel() of '" + name + "' is wrong");
      switch (tensor.dtype) {
        case ordo::io::DType::F32:
        case ordo::io::DType::F16:
        case ordo::io::DType::BF16:
        case ordo::io::DType::F64: {
          const std::vector<float> values = ordo::io::to_float32(tensor);
          if (values.size() != numel) ordo::fuzz::fail("to_float32 size of '" + name + "'");
          break;
        }
        default: break;
      }
    }
    (void)file.metadata();
  } catch (const ordo::Error&) {
    // Refused with a message: what should happen to bad input.
  }
  return 0;
}
