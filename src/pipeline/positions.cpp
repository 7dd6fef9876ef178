// The public position-encoding tables (ordo/positions.h) from nn/'s own table code, so what
// `ordo positions` shows is exactly what the encoder and decoder add.
#include "ordo/positions.h"

#include <cmath>

#include "io/model_config.h"
#include "models/family.h"
#include "nn/positional_encoding.h"
#include "ordo/error.h"

namespace ordo {
namespace {

constexpr int64_t kMaxLength = 1 << 20;
constexpr int64_t kMaxDim = 1 << 16;

nn::PositionLayout engine_layout(PositionLayout layout) {
  switch (layout) {
    case PositionLayout::kInterleaved: return nn::PositionLayout::kInterleaved;
    case PositionLayout::kSinCos: return nn::PositionLayout::kSinThenCos;
    case PositionLayout::kFairseq: return nn::PositionLayout::kFairseq;
  }
  return nn::PositionLayout::kInterleaved;
}

PositionLayout public_layout(nn::PositionLayout layout) {
  switch (layout) {
    case nn::PositionLayout::kInterleaved: return PositionLayout::kInterleaved;
    case nn::PositionLayout::kSinThenCos: return PositionLayout::kSinCos;
    case nn::PositionLayout::kFairseq: return PositionLayout::kFairseq;
  }
  return PositionLayout::kInterleaved;
}

PositionTable table(int64_t length, int64_t dim, const nn::PositionEncodingSpec& spec) {
  if (length < 0 || length > kMaxLength)
    throw Error("position table length " + std::to_string(length) + " is out of range [0, " + std::to_string(kMaxLength) + "]");
  if (dim < 1 || dim > kMaxDim)
    throw Error("position table dimension " + std::to_string(dim) + " is out of range [1, " + std::to_string(kMaxDim) + "]");
  if (!(spec.base > 1.0) || !std::isfinite(spec.base)) throw Error("position table base must be a finite number > 1");
  if (spec.layout == nn::PositionLayout::kFairseq && dim < 4)
    throw Error("the fairseq layout needs at least 4 dimensions (its frequencies divide by d/2 - 1)");
  const std::vector<double> rows = nn::sinusoidal_values(spec.offset + length, dim, spec);
  PositionTable out;
  out.layout = public_layout(spec.layout);
  out.base = spec.base;
  out.length = length;
  out.dim = dim;
  out.offset = spec.offset;
  out.values.assign(rows.begin() + spec.offset * dim, rows.end());
  return out;
}

}  // namespace

PositionLayout parse_position_layout(const std::string& name) {
  if (name == "interleaved") return PositionLayout::kInterleaved;
  if (name == "sin-cos") return PositionLayout::kSinCos;
  if (name == "fairseq") return PositionLayout::kFairseq;
  throw Error("unknown position layout '" + name + "' (known: interleaved, sin-cos, fairseq)");
}

const char* position_layout_name(PositionLayout layout) {
  switch (layout) {
    case PositionLayout::kInterleaved: return "interleaved";
    case PositionLayout::kSinCos: return "sin-cos";
    case PositionLayout::kFairseq: return "fairseq";
  }
  return "?";
}

PositionTable position_encodings(int64_t length, int64_t dim, PositionLayout layout, double base) {
  nn::PositionEncodingSpec spec;
  spec.layout = engine_layout(layout);
  spec.base = base;
  return table(length, dim, spec);
}

PositionTable model_position_encodings(const std::string& model_dir, std::optional<int64_t> length) {
  const io::ModelConfig config = io::load_model_config(model_dir + "/config.json");
  return table(length.value_or(config.max_position_embeddings), config.d_model,
               models::position_spec(config, models::family_for(config)));
}

}  // namespace ordo
