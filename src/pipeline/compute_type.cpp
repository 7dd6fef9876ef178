// Names of the public ComputeType values (CLI --compute-type, messages, benchmarks).
#include <string>

#include "ordo/options.h"

namespace ordo {

const char* compute_type_name(ComputeType type) {
  switch (type) {
    case ComputeType::kFloat32: return "float32";
    case ComputeType::kBFloat16: return "bfloat16";
    case ComputeType::kInt8: return "int8";
  }
  return "?";
}

ComputeType parse_compute_type(const std::string& name) {
  for (ComputeType type : {ComputeType::kFloat32, ComputeType::kBFloat16, ComputeType::kInt8})
    if (name == compute_type_name(type)) return type;
  throw Error("unknown compute type '" + name + "' (supported: float32, bfloat16, int8)");
}

}  // namespace ordo
