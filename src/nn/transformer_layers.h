// One encoder layer and one decoder layer, with the layer norm either after each residual
// block (post-norm: Marian, the original Transformer) or before it (pre-norm: Pegasus,
// M2M100, NLLB).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "nn/attention.h"
#include "nn/feed_forward.h"
#include "nn/layer_norm.h"

namespace ordo::nn {

struct LayerShape {
  int64_t dim = 0;
  int64_t heads = 0;
  int64_t ffn_dim = 0;
  Activation activation = Activation::kRelu;
  bool pre_norm = false;
  // T5: heads of head_dim (d_kv; 0 = dim / heads), no biases, unscaled logits, RMS norms with
  // their epsilon, a gated feed-forward.
  int64_t head_dim = 0;
  bool bias = true;
  bool attention_bias = true;  // Pegasus-X: q/k/v/out without biases (the feed-forward has them)
  bool key_bias = true;        // Whisper: k_proj alone has none (a fused [q; k; v] adds 0 there)
  bool scale_attention = true;
  bool rms_norm = false;
  double norm_eps = 1e-5;
  bool gated = false;
};

// The parts of a layer that are packed as one. Loading packs each part as soon as its
// parameters are read, so that at most one part's float32 weights are resident at a time
// (a whole tc-big decoder layer is 64 MB of them).
enum class LayerPart { kSelfAttention, kCrossAttention, kFeedForward };
using PartVisited = std::function<void(LayerPart)>;

// Applies `block` as a residual sub-layer with the norm before or after it.
template <class Block>
at::Tensor residual(const at::Tensor& x, const LayerNorm& norm, bool pre_norm, Block&& block) {
  if (pre_norm) return x + block(norm.forward(x));
  return norm.forward(x + block(x));
}

struct EncoderLayer {
  MultiHeadAttention self_attn;
  LayerNorm self_attn_layer_norm;
  FeedForward ffn;
  LayerNorm final_layer_norm;
  bool pre_norm = false;

  EncoderLayer() = default;
  explicit EncoderLayer(const LayerShape& shape);

  // x: [batch, src_len, dim]; mask: padding_mask() of the source; position_bias: T5's
  // relative position bias (see MultiHeadAttention::forward_self), or undefined.
  at::Tensor forward(const at::Tensor& x, const at::Tensor& mask, const at::Tensor& position_bias = at::Tensor()) const;
  // `visited(part)` runs once that part's parameters are visited.
  void visit(const std::string& prefix, const ParamVisitor& visitor, const PartVisited& visited = {});
  void visit_linears(const std::string& prefix, const LinearVisitor& visitor);
  void pack(GemmType type);  // inference: see Linear::pack
  void pack(GemmType type, LayerPart part);
};

struct DecoderLayer {
  MultiHeadAttention self_attn;
  LayerNorm self_attn_layer_norm;
  MultiHeadAttention encoder_attn;
  LayerNorm encoder_attn_layer_norm;
  FeedForward ffn;
  LayerNorm final_layer_norm;
  bool pre_norm = false;

  DecoderLayer() = default;
  explicit DecoderLayer(const LayerShape& shape);

  // x: [batch, new_len, dim]. `self_cache` grows by new_len; `memory` holds the encoder
  // output's keys/values for this layer, computed once per source and shared by `group`
  // consecutive rows of x (see DecoderState).
  // `cross_weights`, when given, receives the cross-attention weights [rows, heads, new_len,
  // src_len] (each row's own source; see MultiHeadAttention::weights).
  at::Tensor forward(const at::Tensor& x, KeyValue& self_cache, const at::Tensor& self_mask, const KeyValue& memory,
                     const at::Tensor& memory_mask, int64_t group = 1, at::Tensor* cross_weights = nullptr) const;
  // `visited(part)` runs once that part's parameters are visited.
  void visit(const std::string& prefix, const ParamVisitor& visitor, const PartVisited& visited = {});
  void visit_linears(const std::string& prefix, const LinearVisitor& visitor);
  void pack(GemmType type);  // inference: see Linear::pack
  void pack(GemmType type, LayerPart part);
};

}  // namespace ordo::nn
