// Names of the public ComputeType values (--compute-type, messages, benchmarks): written here
// only; the table of model options and every face take them from compute_type_names().
#include <string>
#include <vector>

#include "ordo/options.h"

namespace ordo {

namespace {
constexpr ComputeType kComputeTypes[] = {ComputeType::kFloat32, ComputeType::kBFloat16, ComputeType::kInt8};
}

const char* compute_type_name(ComputeType type) {
  switch (type) {
    case ComputeType::kFloat32: return "float32";
    case ComputeType::kBFloat16: return "bfloat16";
    case ComputeType::kInt8: return "int8";
  }
  return "?";
}

std::vector<std::string> compute_type_names() {
  std::vector<std::string> names;
  for (ComputeType type : kComputeTypes) names.push_back(compute_type_name(type));
  return names;
}

ComputeType parse_compute_type(const std::string& name) {
  std::string names;
  for (ComputeType type : kComputeTypes) {
    if (name == compute_type_name(type)) return type;
    names += (names.empty() ? "" : ", ") + std::string(compute_type_name(type));
  }
  throw Error("unknown compute type '" + name + "' (supported: " + names + ")");
}

}  // namespace ordo
