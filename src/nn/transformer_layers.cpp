#include "nn/transformer_layers.h"

namespace ordo::nn {

namespace {

MultiHeadAttention attention_of(const LayerShape& s) {
  MultiHeadAttention attention(s.dim, s.heads, s.head_dim, s.bias && s.attention_bias, s.scale_attention);
  if (!s.key_bias) attention.k_proj.bias = at::Tensor();
  return attention;
}
LayerNorm norm_of(const LayerShape& s) { return LayerNorm(s.dim, s.rms_norm, s.norm_eps); }
FeedForward feed_forward_of(const LayerShape& s) {
  return FeedForward(s.dim, s.ffn_dim, s.activation, s.gated, s.bias);
}

}  // namespace

EncoderLayer::EncoderLayer(const LayerShape& shape)
    : self_attn(attention_of(shape)),
      self_attn_layer_norm(norm_of(shape)),
      ffn(feed_forward_of(shape)),
      final_layer_norm(norm_of(shape)),
      pre_norm(shape.pre_norm) {}

at::Tensor EncoderLayer::forward(const at::Tensor& x, const at::Tensor& mask, const at::Tensor& position_bias) const {
  at::Tensor h = residual(x, self_attn_layer_norm, pre_norm,
                          [&](const at::Tensor& in) { return self_attn.forward_self(in, mask, position_bias); });
  return residual(h, final_layer_norm, pre_norm, [&](const at::Tensor& in) { return ffn.forward(in); });
}

void EncoderLayer::visit_linears(const std::string& prefix, const LinearVisitor& visitor) {
  self_attn.visit_linears(join_name(prefix, "self_attn"), visitor);
  ffn.visit_linears(prefix, visitor);
}

void EncoderLayer::visit(const std::string& prefix, const ParamVisitor& visitor, const PartVisited& visited) {
  self_attn.visit(join_name(prefix, "self_attn"), visitor);
  if (visited) visited(LayerPart::kSelfAttention);
  self_attn_layer_norm.visit(join_name(prefix, "self_attn_layer_norm"), visitor);
  ffn.visit(prefix, visitor);
  if (visited) visited(LayerPart::kFeedForward);
  final_layer_norm.visit(join_name(prefix, "final_layer_norm"), visitor);
}

DecoderLayer::DecoderLayer(const LayerShape& shape)
    : self_attn(attention_of(shape)),
      self_attn_layer_norm(norm_of(shape)),
      encoder_attn(attention_of(shape)),
      encoder_attn_layer_norm(norm_of(shape)),
      ffn(feed_forward_of(shape)),
      final_layer_norm(norm_of(shape)),
      pre_norm(shape.pre_norm) {}

at::Tensor DecoderLayer::forward(const at::Tensor& x, KeyValue& self_cache, const at::Tensor& self_mask,
                                 const KeyValue& memory, const at::Tensor& memory_mask, int64_t group,
                                 at::Tensor* cross_weights) const {
  at::Tensor h = residual(x, self_attn_layer_norm, pre_norm,
                          [&](const at::Tensor& in) { return self_attn.forward_cached(in, self_cache, self_mask); });
  h = residual(h, encoder_attn_layer_norm, pre_norm, [&](const at::Tensor& in) {
    if (cross_weights) {
      if (group == 1) {
        *cross_weights = encoder_attn.weights(in, memory, memory_mask);
      } else {  // [sources, heads, group * new_len, src] -> [rows, heads, new_len, src]
        const int64_t sources = in.size(0) / group, new_len = in.size(1);
        const at::Tensor w =
            encoder_attn.weights(in.reshape({sources, group * new_len, in.size(2)}), memory, memory_mask);
        *cross_weights = w.view({sources, w.size(1), group, new_len, w.size(3)})
                             .transpose(1, 2)
                             .reshape({sources * group, w.size(1), new_len, w.size(3)});
      }
    }
    if (group == 1) return encoder_attn.forward(in, memory, memory_mask);
    // One new position per row: a source's `group` rows become `group` queries of one row.
    const int64_t sources = in.size(0) / group;
    return encoder_attn.forward(in.reshape({sources, group * in.size(1), in.size(2)}), memory, memory_mask)
        .reshape(in.sizes());
  });
  return residual(h, final_layer_norm, pre_norm, [&](const at::Tensor& in) { return ffn.forward(in); });
}

void EncoderLayer::pack(GemmType type) {
  pack(type, LayerPart::kSelfAttention);
  pack(type, LayerPart::kFeedForward);
}

void EncoderLayer::pack(GemmType type, LayerPart part) {
  if (part == LayerPart::kSelfAttention) self_attn.pack(type, /*self_attention=*/true);
  if (part == LayerPart::kFeedForward) ffn.pack(type);
}

void DecoderLayer::pack(GemmType type) {
  pack(type, LayerPart::kSelfAttention);
  pack(type, LayerPart::kCrossAttention);
  pack(type, LayerPart::kFeedForward);
}

void DecoderLayer::pack(GemmType type, LayerPart part) {
  switch (part) {
    case LayerPart::kSelfAttention: self_attn.pack(type, /*self_attention=*/true); break;
    case LayerPart::kCrossAttention: encoder_attn.pack(type, /*self_attention=*/false); break;
    case LayerPart::kFeedForward: ffn.pack(type); break;
  }
}

void DecoderLayer::visit_linears(const std::string& prefix, const LinearVisitor& visitor) {
  self_attn.visit_linears(join_name(prefix, "self_attn"), visitor);
  encoder_attn.visit_linears(join_name(prefix, "encoder_attn"), visitor);
  ffn.visit_linears(prefix, visitor);
}

void DecoderLayer::visit(const std::string& prefix, const ParamVisitor& visitor, const PartVisited& visited) {
  self_attn.visit(join_name(prefix, "self_attn"), visitor);
  if (visited) visited(LayerPart::kSelfAttention);
  self_attn_layer_norm.visit(join_name(prefix, "self_attn_layer_norm"), visitor);
  encoder_attn.visit(join_name(prefix, "encoder_attn"), visitor);
  if (visited) visited(LayerPart::kCrossAttention);
  encoder_attn_layer_norm.visit(join_name(prefix, "encoder_attn_layer_norm"), visitor);
  ffn.visit(prefix, visitor);
  if (visited) visited(LayerPart::kFeedForward);
  final_layer_norm.visit(join_name(prefix, "final_layer_norm"), visitor);
}

}  // namespace ordo::nn
