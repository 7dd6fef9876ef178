#include "nn/transformer.h"

namespace ordo::nn {

Embedder::Embedder(const StackShape& shape_) : shape(shape_) {
  if (!shape.absolute_positions) {
    // T5: positions enter through the attention's relative position bias.
  } else if (shape.positions.layout == PositionLayout::kLearned) {
    learned_positions.weight = at::empty({shape.max_positions + shape.positions.offset, shape.layer.dim}, at::kFloat);
    learned_positions.offset = shape.positions.offset;
  } else {
    positions = SinusoidalPositions(shape.max_positions, shape.layer.dim, shape.positions);
  }
  if (shape.layernorm_embedding) layernorm_embedding = LayerNorm(shape.layer.dim);
}

at::Tensor Embedder::forward(const at::Tensor& ids, int64_t past_len) const {
  at::Tensor x = tokens.defined() ? at::embedding(tokens, ids) : packed_rows->rows(ids);
  if (x.scalar_type() != at::kFloat) x = x.to(at::kFloat);  // bfloat16 table (reduced-precision models)
  if (shape.embed_scale != 1.0) x = x * shape.embed_scale;
  if (!shape.absolute_positions) {
    // T5: none added here.
  } else if (shape.positions_from_ids) {
    const at::Tensor is_token = ids.ne(shape.padding_idx).to(at::kLong);
    // Row of the k-th real token is padding_idx + past_len + k; padding keeps padding_idx.
    const at::Tensor rows = (at::cumsum(is_token, 1) + past_len) * is_token + shape.padding_idx;
    // The largest row is at most padding_idx + past_len + the ids' length.
    x = x + positions.rows(rows, shape.padding_idx + past_len + ids.size(1));
  } else if (learned_positions.weight.defined()) {
    x = x + learned_positions.range(past_len, ids.size(1)).unsqueeze(0);
  } else {
    x = x + positions.range(past_len, ids.size(1)).unsqueeze(0);
  }
  if (shape.layernorm_embedding) x = layernorm_embedding.forward(x);
  return x;
}

TransformerEncoder::TransformerEncoder(const StackShape& shape) : embed(shape) {
  for (int64_t i = 0; i < shape.num_layers; ++i) layers.emplace_back(shape.layer);
  if (shape.final_layer_norm) layer_norm = LayerNorm(shape.layer.dim, shape.layer.rms_norm, shape.layer.norm_eps);
  if (shape.relative_buckets > 0)
    relative_bias = RelativePositionBias(shape.relative_buckets, shape.relative_max_distance, shape.layer.heads,
                                         /*bidirectional=*/true);
  long_attention = make_long_attention(shape);
  if (shape.mel_bins > 0) audio = AudioFrontEnd(shape.mel_bins, shape.layer.dim);
}

at::Tensor TransformerEncoder::forward(const at::Tensor& ids, const at::Tensor& attention_mask,
                                       const at::Tensor& global_mask) const {
  at::Tensor x = embed.forward(ids, 0);
  if (long_attention) {
    x = long_attention->forward(*this, x, attention_mask, global_mask);
    return layer_norm.weight.defined() ? layer_norm.forward(x) : x;
  }
  const at::Tensor mask = padding_mask(attention_mask);
  // T5: one bias for every layer, [1, heads, len, len], computed once per call.
  const at::Tensor position_bias =
      relative_bias.defined() ? relative_bias.forward(0, ids.size(1), ids.size(1)) : at::Tensor();
  for (const EncoderLayer& layer : layers) x = layer.forward(x, mask, position_bias);
  if (layer_norm.weight.defined()) x = layer_norm.forward(x);
  return x;
}

at::Tensor TransformerEncoder::forward_features(const at::Tensor& features) const {
  at::Tensor x = audio.forward(features);
  // WhisperEncoder adds its table whole (the frames fill it); the first rows, for any length.
  x = x + embed.learned_positions.range(0, x.size(1)).unsqueeze(0);
  for (const EncoderLayer& layer : layers) x = layer.forward(x, at::Tensor());
  if (layer_norm.weight.defined()) x = layer_norm.forward(x);
  return x;
}

void TransformerEncoder::visit(const std::string& prefix, const ParamVisitor& visitor,
                               const std::function<void(size_t, LayerPart)>& after_part) {
  for (size_t i = 0; i < layers.size(); ++i) {
    PartVisited visited;
    if (after_part) visited = [&](LayerPart part) { after_part(i, part); };
    layers[i].visit(join_name(prefix, "layers." + std::to_string(i)), visitor, visited);
  }
  if (layer_norm.weight.defined()) layer_norm.visit(join_name(prefix, "layer_norm"), visitor);
  if (embed.shape.layernorm_embedding)
    embed.layernorm_embedding.visit(join_name(prefix, "layernorm_embedding"), visitor);
  if (embed.learned_positions.weight.defined())
    visitor(join_name(prefix, "embed_positions.weight"), embed.learned_positions.weight);
  if (relative_bias.defined()) visitor(join_name(prefix, "relative_attention_bias.weight"), relative_bias.weight);
  if (long_attention) long_attention->visit(prefix, visitor);
  if (audio.defined()) audio.visit(prefix, visitor);
}

void TransformerEncoder::visit_linears(const std::string& prefix, const LinearVisitor& visitor) {
  for (size_t i = 0; i < layers.size(); ++i)
    layers[i].visit_linears(join_name(prefix, "layers." + std::to_string(i)), visitor);
  if (long_attention) long_attention->visit_linears(prefix, visitor);
}

void TransformerEncoder::pack(GemmType type) {
  for (EncoderLayer& layer : layers) layer.pack(type);
  if (long_attention) long_attention->pack(type);
}

void DecoderState::select(const at::Tensor& indices) {
  for (KeyValue& kv : self_cache)
    if (!kv.empty()) kv.reorder(indices);
  // The source of each kept row, then the sources still in use (sorted) and, per row, the
  // position of its source among them.
  const at::Tensor row_source = at::div(indices, group, "floor");
  const auto [sources, position] = at::_unique(row_source, /*sorted=*/true, /*return_inverse=*/true);
  const int64_t new_rows = indices.size(0), new_sources = sources.size(0);
  const int64_t new_group = new_rows % new_sources == 0 ? new_rows / new_sources : 0;
  const bool grouped =
      new_group > 0 && at::equal(position, at::arange(new_sources, at::kLong).repeat_interleave(new_group));
  // Grouped: one memory row per source still used. Otherwise (e.g. sampled rows finishing
  // one by one): one memory row per hypothesis.
  const at::Tensor keep = grouped ? sources : row_source;
  if (keep.size(0) != memory_mask.size(0) || !at::equal(keep, at::arange(keep.size(0), at::kLong))) {
    for (KeyValue& kv : memory) kv = kv.select(keep);
    memory_mask = memory_mask.index_select(0, keep);
  }
  group = grouped ? new_group : 1;
}

TransformerDecoder::TransformerDecoder(const StackShape& shape) : embed(shape) {
  for (int64_t i = 0; i < shape.num_layers; ++i) layers.emplace_back(shape.layer);
  if (shape.final_layer_norm) layer_norm = LayerNorm(shape.layer.dim, shape.layer.rms_norm, shape.layer.norm_eps);
  if (shape.relative_buckets > 0)
    relative_bias = RelativePositionBias(shape.relative_buckets, shape.relative_max_distance, shape.layer.heads,
                                         /*bidirectional=*/false);
}

DecoderState TransformerDecoder::start(const at::Tensor& encoder_out, const at::Tensor& encoder_attention_mask) const {
  DecoderState state;
  state.self_cache.resize(layers.size());
  for (const DecoderLayer& layer : layers) state.memory.push_back(layer.encoder_attn.project_key_value(encoder_out));
  state.memory_mask = padding_mask(encoder_attention_mask);
  return state;
}

at::Tensor TransformerDecoder::forward(const at::Tensor& ids, DecoderState& state) const {
  at::Tensor self_mask = causal_mask(ids.size(1), state.length);
  if (relative_bias.defined()) {
    // T5: the new positions against every key so far, plus the causal mask (bias + mask, as
    // Hugging Face sums them), shared by the rows and the layers.
    const at::Tensor bias = relative_bias.forward(state.length, ids.size(1), state.length + ids.size(1));
    self_mask = self_mask.defined() ? bias + self_mask : bias;
  }
  at::Tensor x = embed.forward(ids, state.length);
  if (state.record_cross_attention) state.cross_attention.assign(layers.size(), at::Tensor());
  for (size_t i = 0; i < layers.size(); ++i)
    x = layers[i].forward(x, state.self_cache[i], self_mask, state.memory[i], state.memory_mask, state.group,
                          state.record_cross_attention ? &state.cross_attention[i] : nullptr);
  if (layer_norm.weight.defined()) x = layer_norm.forward(x);
  state.length += ids.size(1);
  return x;
}

void TransformerDecoder::visit(const std::string& prefix, const ParamVisitor& visitor,
                               const std::function<void(size_t, LayerPart)>& after_part) {
  for (size_t i = 0; i < layers.size(); ++i) {
    PartVisited visited;
    if (after_part) visited = [&](LayerPart part) { after_part(i, part); };
    layers[i].visit(join_name(prefix, "layers." + std::to_string(i)), visitor, visited);
  }
  if (layer_norm.weight.defined()) layer_norm.visit(join_name(prefix, "layer_norm"), visitor);
  if (embed.shape.layernorm_embedding)
    embed.layernorm_embedding.visit(join_name(prefix, "layernorm_embedding"), visitor);
  if (embed.learned_positions.weight.defined())
    visitor(join_name(prefix, "embed_positions.weight"), embed.learned_positions.weight);
  if (relative_bias.defined()) visitor(join_name(prefix, "relative_attention_bias.weight"), relative_bias.weight);
}

void TransformerDecoder::visit_linears(const std::string& prefix, const LinearVisitor& visitor) {
  for (size_t i = 0; i < layers.size(); ++i)
    layers[i].visit_linears(join_name(prefix, "layers." + std::to_string(i)), visitor);
}

void TransformerDecoder::pack(GemmType type) {
  for (DecoderLayer& layer : layers) layer.pack(type);
}

}  // namespace ordo::nn
