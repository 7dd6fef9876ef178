// The public position-encoding tables (ordo/positions.h) from nn/'s own table code, so what
// `ordo positions` shows is exactly what the encoder and decoder add.
#include "ordo/positions.h"

#include <algorithm>
#include <cmath>

#include "io/model_config.h"
#include "models/checkpoint.h"
#include "models/family.h"
#include "nn/positional_encoding.h"
#include "nn/relative_position.h"
#include "ordo/error.h"

namespace ordo {
namespace {

constexpr int64_t kMaxLength = 1 << 20;
constexpr int64_t kMaxDim = 1 << 16;

PositionTable table(int64_t length, int64_t dim, const nn::PositionEncodingSpec& spec) {
  if (length < 0 || length > kMaxLength)
    throw Error("position table length " + std::to_string(length) + " is out of range [0, " +
                std::to_string(kMaxLength) + "]");
  if (dim < 1 || dim > kMaxDim)
    throw Error("position table dimension " + std::to_string(dim) + " is out of range [1, " + std::to_string(kMaxDim) +
                "]");
  if (!(spec.base > 1.0) || !std::isfinite(spec.base)) throw Error("position table base must be a finite number > 1");
  if (spec.layout == PositionLayout::kLearned)
    throw Error("a learned position table has no formula: it is read from a model (BART, mBART)");
  if (spec.layout == PositionLayout::kFairseq && dim < 4)
    throw Error("the fairseq layout needs at least 4 dimensions (its frequencies divide by d/2 - 1)");
  if (spec.layout == PositionLayout::kPegasusX && (dim < 4 || dim % 2 != 0))
    throw Error(
        "the pegasus-x layout needs an even number of dimensions, at least 4 (its frequencies divide by "
        "d/2 - 1)");
  const std::vector<double> rows = nn::sinusoidal_values(spec.offset + length, dim, spec);
  PositionTable out;
  out.layout = spec.layout;
  out.base = spec.base;
  out.length = length;
  out.dim = dim;
  out.offset = spec.offset;
  out.values.assign(rows.begin() + spec.offset * dim, rows.end());
  return out;
}

// The rows of a learned table (BART, mBART, LED, Whisper) as the checkpoint holds them: position
// p is row offset + p of <stack>.embed_positions.weight, the row the embedder adds. LED's two
// tables have lengths of their own (max_encoder_position_embeddings,
// max_decoder_position_embeddings) and no offset, under the checkpoint's "led." names; so have
// Whisper's (max_source_positions, max_target_positions): its encoder's is OpenAI's sinusoids as
// the checkpoint stores them, one row per 20 ms of audio.
PositionTable learned_table(const std::string& model_dir, const io::ModelConfig& config,
                            const models::FamilySpec& family, const nn::PositionEncodingSpec& spec,
                            std::optional<int64_t> length, bool decoder) {
  const int64_t rows_used = decoder ? io::decoder_positions(config) : config.max_position_embeddings;
  const std::string field =
      decoder ? io::decoder_positions_key(config) : io::config_key(config, "max_position_embeddings");
  const int64_t positions = length.value_or(rows_used);
  if (positions < 0 || positions > rows_used)
    throw Error("position table length " + std::to_string(positions) + " is out of range [0, " +
                std::to_string(rows_used) + "] (" + config.path + " " + field +
                ": a learned table has no rows beyond it)");
  const std::unique_ptr<models::Checkpoint> weights = models::open_checkpoint(model_dir);
  const std::string stack = decoder ? "decoder" : "encoder";
  const std::string name = models::checkpoint_name(family, config, "model." + stack + ".embed_positions.weight");
  if (!weights->contains(name)) throw Error(weights->path() + ": missing tensor '" + name + "'");
  const std::vector<int64_t> shape = weights->shape(name);
  const std::vector<int64_t> implied = {rows_used + spec.offset, config.d_model};
  if (shape != implied) {
    std::string got;
    for (int64_t n : shape) got += (got.empty() ? "" : ", ") + std::to_string(n);
    throw Error(weights->path() + ": tensor '" + name + "' has shape [" + got + "], but " + config.path + " implies [" +
                std::to_string(implied[0]) + ", " + std::to_string(implied[1]) + "] (" + field + " + " +
                std::to_string(spec.offset) + ", d_model)");
  }
  const at::Tensor rows = weights->get_rows(name, spec.offset, positions).contiguous();
  PositionTable out;
  out.layout = PositionLayout::kLearned;
  out.length = positions;
  out.dim = config.d_model;
  out.offset = spec.offset;
  out.stack = stack;
  const float* data = rows.data_ptr<float>();
  out.values.assign(data, data + rows.numel());
  return out;
}

}  // namespace

PositionLayout parse_position_layout(const std::string& name) {
  if (name == "interleaved") return PositionLayout::kInterleaved;
  if (name == "sin-cos") return PositionLayout::kSinCos;
  if (name == "fairseq") return PositionLayout::kFairseq;
  if (name == "learned") return PositionLayout::kLearned;
  if (name == "pegasus-x") return PositionLayout::kPegasusX;
  throw Error("unknown position layout '" + name + "' (known: interleaved, sin-cos, fairseq, learned, pegasus-x)");
}

const char* position_layout_name(PositionLayout layout) {
  switch (layout) {
    case PositionLayout::kInterleaved: return "interleaved";
    case PositionLayout::kSinCos: return "sin-cos";
    case PositionLayout::kFairseq: return "fairseq";
    case PositionLayout::kLearned: return "learned";
    case PositionLayout::kPegasusX: return "pegasus-x";
  }
  return "?";
}

PositionTable position_encodings(int64_t length, int64_t dim, PositionLayout layout, double base) {
  nn::PositionEncodingSpec spec;
  spec.layout = layout;
  spec.base = base;
  return table(length, dim, spec);
}

PositionTable model_position_encodings(const std::string& model_dir, std::optional<int64_t> length, bool decoder) {
  const io::ModelConfig config = io::load_model_config(model_dir + "/config.json");
  const models::FamilySpec family = models::family_for(config);
  if (family.relative_positions)
    throw Error(config.path + ": a " + family.name +
                " model has no position table: its attention adds a relative position bias per head "
                "(model_relative_position_bias)");
  const nn::PositionEncodingSpec spec = models::position_spec(config, family);
  if (spec.layout == PositionLayout::kLearned) return learned_table(model_dir, config, family, spec, length, decoder);
  return table(length.value_or(config.max_position_embeddings), config.d_model, spec);
}

bool model_has_relative_positions(const std::string& model_dir) {
  return models::family_for(io::load_model_config(model_dir + "/config.json")).relative_positions;
}

RelativePositionBiasTable model_relative_position_bias(const std::string& model_dir, std::optional<int64_t> reach,
                                                       bool decoder) {
  const io::ModelConfig config = io::load_model_config(model_dir + "/config.json");
  const models::FamilySpec family = models::family_for(config);
  if (!family.relative_positions)
    throw Error(config.path + ": a " + family.name +
                " model has no relative position bias (its positions are a table)");
  // LongT5's encoder sees only keys within its local radius: the distances its bias can meet.
  const bool local = family.long_attention != nn::LongAttentionKind::kNone && !decoder;
  const int64_t shown =
      reach.value_or(local ? std::max<int64_t>(1, config.local_radius) : config.relative_attention_max_distance);
  if (shown < 1 || shown > kMaxLength)
    throw Error("relative distance reach " + std::to_string(shown) + " is out of range [1, " +
                std::to_string(kMaxLength) + "]");
  const std::string stack = decoder ? "decoder" : "encoder";
  const std::unique_ptr<models::Checkpoint> weights = models::open_checkpoint(model_dir);
  const std::string name =
      models::checkpoint_name(family, config, "model." + stack + ".relative_attention_bias.weight");
  if (!weights->contains(name)) throw Error(weights->path() + ": missing tensor '" + name + "'");
  const int64_t heads = decoder ? config.decoder_attention_heads : config.encoder_attention_heads;
  const std::vector<int64_t> implied = {config.relative_attention_num_buckets, heads};
  if (weights->shape(name) != implied)
    throw Error(weights->path() + ": tensor '" + name + "' is not [" + std::to_string(implied[0]) + ", " +
                std::to_string(implied[1]) + "] (" + config.path + " relative_attention_num_buckets, num_heads)");
  // The engine's own lookup (nn/relative_position.h): what the attention adds is what is shown.
  nn::RelativePositionBias bias(config.relative_attention_num_buckets, config.relative_attention_max_distance, heads,
                                /*bidirectional=*/!decoder);
  bias.weight = weights->get(name);
  RelativePositionBiasTable out;
  out.family = family.name == "longt5" ? "LongT5" : "T5";
  out.stack = stack;
  if (local) out.local_radius = config.local_radius;
  out.bidirectional = bias.bidirectional;
  out.heads = heads;
  out.num_buckets = bias.num_buckets;
  out.max_distance = bias.max_distance;
  out.first = -shown;
  out.last = decoder ? 0 : shown;
  for (int64_t d = out.first; d <= out.last; ++d)
    out.buckets.push_back(nn::relative_position_bucket(d, bias.bidirectional, bias.num_buckets, bias.max_distance));
  const at::Tensor values = bias.by_distance(out.first, out.distances()).contiguous();
  const float* data = values.data_ptr<float>();
  out.values.assign(data, data + values.numel());
  return out;
}

}  // namespace ordo
