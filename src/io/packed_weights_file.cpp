#include "io/packed_weights_file.h"

#include <cstring>
#include <limits>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/verified_file.h"
#include "ordo/error.h"

namespace ordo::io {
namespace {

using nlohmann::json;

const std::string kMagic = "ORDOPACK";
constexpr int kFormat = kPackedWeightsFormat;

// The dtype of the packed weights of a compute type; kInt8 stands for "no floats".
DType weight_dtype(const std::string& compute_type) {
  if (compute_type == "float32") return DType::F32;
  if (compute_type == "bfloat16") return DType::BF16;
  if (compute_type == "int8") return DType::I8;
  throw Error("unknown compute type '" + compute_type + "'");
}

void check_finite(DType dtype, const void* data, size_t count, const std::string& what) {
  const int64_t at = first_non_finite(dtype, data, count);
  if (at >= 0) throw Error(what + " holds NaN or an infinity (element " + std::to_string(at) + ")");
}

// The big scans (float tensors, float32/bfloat16 packed weights: 2.4 GB in a float32
// Pegasus-large file) on `threads` threads, each a consecutive run of them; the first one in
// file order that fails is reported, whatever the threads.
struct FiniteCheck {
  DType dtype;
  const void* data;
  size_t count;
  std::string what;
};

void check_finite(const std::vector<FiniteCheck>& checks, int threads) {
  size_t total = 0;
  for (const FiniteCheck& c : checks) total += c.count;
  const size_t runs = std::min<size_t>(static_cast<size_t>(std::max(threads, 1)), checks.size());
  std::vector<size_t> first(runs + 1, checks.size());  // run r checks [first[r], first[r + 1])
  first[0] = 0;
  for (size_t i = 0, r = 1, seen = 0; i < checks.size() && r < runs; ++i) {
    seen += checks[i].count;
    if (seen * runs >= total * r) first[r++] = i + 1;
  }
  std::vector<std::pair<size_t, int64_t>> failed(runs, {checks.size(), -1});  // check, element
  const auto scan = [&](size_t r) {
    for (size_t i = first[r]; i < first[r + 1]; ++i) {
      const int64_t at = first_non_finite(checks[i].dtype, checks[i].data, checks[i].count);
      if (at >= 0) {
        failed[r] = {i, at};
        return;
      }
    }
  };
  std::vector<std::thread> helpers;
  for (size_t r = 1; r < runs; ++r) helpers.emplace_back(scan, r);
  if (runs > 0) scan(0);
  for (std::thread& helper : helpers) helper.join();
  for (const auto& [i, at] : failed)
    if (at >= 0) throw Error(checks[i].what + " holds NaN or an infinity (element " + std::to_string(at) + ")");
}

std::vector<float> floats(const uint8_t* data, size_t bytes, const std::string& what) {
  if (bytes % sizeof(float) != 0) throw Error(what + " has " + std::to_string(bytes) + " bytes, not whole floats");
  std::vector<float> values(bytes / sizeof(float));
  if (!values.empty()) std::memcpy(values.data(), data, bytes);
  check_finite(DType::F32, values.data(), values.size(), what);
  return values;
}

// An integer field (a float is refused: converting 1e300 to an integer is undefined).
int64_t integer(const json& object, const char* key) {
  const json& value = object.at(key);
  if (!value.is_number_integer()) throw Error(std::string("field '") + key + "' is not an integer");
  return value.get<int64_t>();
}

// A small integer field (an enum), in [low, high].
int small_integer(const json& object, const char* key, int low, int high) {
  const int64_t value = integer(object, key);
  if (value < low || value > high) throw Error(std::string("field '") + key + "' is " + std::to_string(value));
  return static_cast<int>(value);
}

}  // namespace

void write_packed_weights(const std::string& path, const PackedWeights& weights) {
  VerifiedFileWriter file;
  json tensors = json::array(), gemms = json::array();
  for (const PackedTensor& t : weights.tensors)
    tensors.push_back({{"name", t.name},
                       {"dtype", t.dtype == DType::F32 ? "f32" : "bf16"},
                       {"shape", t.shape},
                       {"data", file.add(t.data, t.bytes)}});
  for (const PackedGemmData& g : weights.gemms) {
    if (g.empty) {
      gemms.push_back({{"name", g.name}, {"empty", true}});
      continue;
    }
    gemms.push_back({{"name", g.name},
                     {"type", g.type},
                     {"in", g.in},
                     {"out", g.out},
                     {"activation", g.activation},
                     {"fused_activation", g.fused_activation},
                     {"rows_readable", g.rows_readable},
                     {"layout", file.add(g.layout.data(), g.layout.size())},
                     {"weights", file.add(g.weights, g.weight_bytes)},
                     {"scales", file.add(g.scales.data(), g.scales.size() * sizeof(float))},
                     {"bias", file.add(g.bias.data(), g.bias.size() * sizeof(float))}});
  }
  const json header = {{"format", kFormat},
                       {"type", weights.compute_type},
                       {"tensors", tensors},
                       {"absent", weights.absent},
                       {"linears", gemms},
                       {"encoder_embedding", weights.encoder_embedding},
                       {"decoder_embedding", weights.decoder_embedding}};
  file.write(path, kMagic, header);
}

PackedWeights read_packed_weights(const std::string& path, const std::string& compute_type, size_t max_bytes,
                                  int threads) {
  const DType weights_dtype = weight_dtype(compute_type);
  const VerifiedFile file = read_verified_file(path, kMagic, max_bytes, threads);
  std::vector<FiniteCheck> finite;
  const json& header = file.header;
  try {
    if (integer(header, "format") != kFormat)
      throw Error("cache format " + header.at("format").dump() + ", not " + std::to_string(kFormat));
    PackedWeights out;
    out.compute_type = header.at("type").get<std::string>();
    if (out.compute_type != compute_type) throw Error("packed for " + out.compute_type + ", not " + compute_type);
    out.owner = file.data;
    for (const json& t : header.at("tensors")) {
      PackedTensor tensor;
      tensor.name = t.at("name").get<std::string>();
      const std::string what = "tensor '" + tensor.name + "'";
      const std::string dtype = t.at("dtype").get<std::string>();
      if (dtype != "f32" && dtype != "bf16") throw Error(what + " has dtype '" + dtype + "'");
      tensor.dtype = dtype == "f32" ? DType::F32 : DType::BF16;
      for (const json& dim : t.at("shape")) {
        if (!dim.is_number_unsigned()) throw Error(what + ": shape is not a list of sizes");
        tensor.shape.push_back(dim.get<int64_t>());
      }
      tensor.data = file.part(t.at("data"), &tensor.bytes);
      const size_t element = dtype_size(tensor.dtype);
      uint64_t numel = 1;
      for (const int64_t dim : tensor.shape) {
        if (dim < 0 || (dim > 0 && numel > tensor.bytes / element / static_cast<uint64_t>(dim)))
          throw Error(what + ": shape does not match its " + std::to_string(tensor.bytes) + " bytes");
        numel *= static_cast<uint64_t>(dim);
      }
      if (numel * element != tensor.bytes)
        throw Error(what + ": shape does not match its " + std::to_string(tensor.bytes) + " bytes");
      finite.push_back({tensor.dtype, tensor.data, numel, what});
      out.tensors.push_back(std::move(tensor));
    }
    out.absent = header.at("absent").get<std::vector<std::string>>();
    for (const json& l : header.at("linears")) {
      PackedGemmData gemm;
      gemm.name = l.at("name").get<std::string>();
      const std::string what = "GEMM '" + gemm.name + "'";
      if (l.contains("empty")) {
        gemm.empty = true;
        out.gemms.push_back(std::move(gemm));
        continue;
      }
      gemm.type = small_integer(l, "type", 0, 255);
      gemm.in = integer(l, "in");
      gemm.out = integer(l, "out");
      gemm.activation = small_integer(l, "activation", -1, 255);
      gemm.fused_activation = l.at("fused_activation").get<bool>();
      gemm.rows_readable = l.at("rows_readable").get<bool>();
      size_t bytes = 0;
      const uint8_t* layout = file.part(l.at("layout"), &bytes);
      gemm.layout.assign(layout, layout + bytes);
      gemm.weights = file.part(l.at("weights"), &gemm.weight_bytes);
      if (weights_dtype != DType::I8)
        finite.push_back(
            {weights_dtype, gemm.weights, gemm.weight_bytes / dtype_size(weights_dtype), what + " weights"});
      const uint8_t* scales = file.part(l.at("scales"), &bytes);
      gemm.scales = floats(scales, bytes, what + " scales");
      const uint8_t* bias = file.part(l.at("bias"), &bytes);
      gemm.bias = floats(bias, bytes, what + " bias");
      out.gemms.push_back(std::move(gemm));
    }
    out.encoder_embedding = header.at("encoder_embedding").get<std::string>();
    out.decoder_embedding = header.at("decoder_embedding").get<std::string>();
    check_finite(finite, threads);
    return out;
  } catch (const json::exception& e) {
    throw Error(path + ": malformed header (" + e.what() + ")");
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

}  // namespace ordo::io
