// Pegasus-X's encoder (Hugging Face's PegasusXEncoder, transformers 4.31) reads 16,384 tokens
// because no token attends to more than a block of its neighbours and a few global tokens:
//
//   - the embedded source is padded to a multiple of block_size (masked);
//   - num_global_tokens learned vectors (embed_global, not scaled) form a second stream that
//     runs through every layer beside the tokens;
//   - in each layer the tokens are normed by self_attn_layer_norm and the global tokens by
//     global_self_attn_layer_norm; both go through the layer's q/k/v/out projections;
//   - a token attends to the global tokens and to the tokens of its own block; a global token
//     attends to every global token and every token (padding masked);
//   - with stagger_local_blocks, odd layers pad block_size/2 masked positions on both sides,
//     so that their blocks straddle the even layers' block boundaries;
//   - both streams get their residual, then the layer's feed-forward (final_layer_norm) and
//     its residual; the encoder's final layer norm (TransformerEncoder) sees the tokens only.
//
// Each block's attention is one row of a batched attention over [global keys; block keys]
// (kernels::fixed_order_attention, as the dense layers use: a sentence's bits do not depend on
// its batch or padding), so time and memory grow with the length; no [len, len] tensor exists.
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "kernels/attention_kernel.h"
#include "nn/long_attention.h"
#include "nn/transformer.h"
#include "ordo/error.h"

namespace ordo::nn {

namespace {

class PegasusXAttention final : public LongAttention {
 public:
  explicit PegasusXAttention(const StackShape& shape)
      : block_size_(shape.long_attention.block_size),
        num_global_(shape.long_attention.num_global_tokens),
        stagger_(shape.long_attention.stagger_local_blocks) {
    if (block_size_ < 1) throw Error("config.json block_size must be at least 1 (Pegasus-X)");
    if (num_global_ < 0) throw Error("config.json num_global_tokens must not be negative (Pegasus-X)");
    if (stagger_ && (block_size_ < 2 || block_size_ % 2 != 0))
      throw Error("config.json block_size must be even when stagger_local_blocks is set (Pegasus-X)");
    if (!shape.layer.pre_norm) throw Error("Pegasus-X attention runs pre-norm layers only");
    embed_global_ = at::empty({num_global_, shape.layer.dim}, at::kFloat);
    for (int64_t i = 0; i < shape.num_layers; ++i) global_norms_.emplace_back(shape.layer.dim);
  }

  at::Tensor forward(const TransformerEncoder& encoder, at::Tensor x, const at::Tensor& attention_mask,
                     const at::Tensor&) const override {
    const int64_t batch = x.size(0), length = x.size(1), dim = x.size(2);
    const int64_t padded = (length + block_size_ - 1) / block_size_ * block_size_;
    const double lowest = std::numeric_limits<float>::lowest();
    // Additive mask [batch, padded]: 0 for a token, the lowest float for padding (Hugging Face's).
    at::Tensor mask = at::zeros({batch, length}, at::kFloat).masked_fill(attention_mask.eq(0), lowest);
    if (padded > length) {
      x = at::constant_pad_nd(x, {0, 0, 0, padded - length}, 0.0);
      mask = at::constant_pad_nd(mask, {0, padded - length}, lowest);
    }
    at::Tensor globals = embed_global_.unsqueeze(0).expand({batch, num_global_, dim});
    const int64_t shift = block_size_ / 2;
    for (size_t i = 0; i < encoder.layers.size(); ++i) {
      const EncoderLayer& layer = encoder.layers[i];
      const bool staggered = stagger_ && i % 2 == 1;
      at::Tensor tokens = layer.self_attn_layer_norm.forward(x);
      at::Tensor layer_mask = mask;
      if (staggered) {
        tokens = at::constant_pad_nd(tokens, {0, 0, shift, shift}, 0.0);
        layer_mask = at::constant_pad_nd(mask, {shift, shift}, lowest);
      }
      auto [local, global] = attend(layer.self_attn, tokens, global_norms_[i].forward(globals), layer_mask);
      if (staggered) local = local.narrow(1, shift, padded);
      // Both streams' residuals, then the feed-forward over both at once (the same per row).
      at::Tensor both = at::cat({x + local, globals + global}, 1);
      both = both + layer.ffn.forward(layer.final_layer_norm.forward(both));
      x = both.narrow(1, 0, padded);
      globals = both.narrow(1, padded, num_global_);
    }
    return x.narrow(1, 0, length).contiguous();
  }

  void visit(const std::string& prefix, const ParamVisitor& visitor) override {
    visitor(join_name(prefix, "embed_global.weight"), embed_global_);
    for (size_t i = 0; i < global_norms_.size(); ++i)
      global_norms_[i].visit(join_name(prefix, "layers." + std::to_string(i) + ".global_self_attn_layer_norm"),
                             visitor);
  }
  // No projections of its own: the layers' self_attn serve both streams.
  void visit_linears(const std::string&, const LinearVisitor&) override {}
  void pack(GemmType) override {}

 private:
  // One layer's attention: `tokens` [batch, padded, dim] (a multiple of block_size), `globals`
  // [batch, num_global, dim], `mask` [batch, padded] additive. Returns the tokens' and the global
  // tokens' outputs after out_proj.
  std::pair<at::Tensor, at::Tensor> attend(const MultiHeadAttention& attn, const at::Tensor& tokens,
                                           const at::Tensor& globals, const at::Tensor& mask) const {
    const int64_t batch = tokens.size(0), padded = tokens.size(1), global = num_global_;
    const int64_t heads = attn.num_heads, head_dim = attn.head_dim, inner = heads * head_dim;
    const int64_t blocks = padded / block_size_, total = global + padded;
    // Global tokens first: their keys come first in every softmax, as in Hugging Face's.
    const at::Tensor input = at::cat({globals, tokens}, 1);
    auto [q, k, v] = attn.project_qkv(input);  // [batch, total, inner]
    const float scale = attn.scaled ? static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim))) : 1.0f;
    const at::Tensor keys = k.view({batch, total, heads, head_dim});
    const at::Tensor values = v.view({batch, total, heads, head_dim});

    // Global tokens over [global tokens; every token].
    const at::Tensor global_mask =
        at::cat({at::zeros({batch, global}, at::kFloat), mask}, 1).view({batch, 1, 1, total});
    const at::Tensor global_out =
        global == 0
            ? at::empty({batch, 0, inner}, at::kFloat)
            : kernels::fixed_order_attention(q.narrow(1, 0, global), keys.transpose(1, 2), values.transpose(1, 2),
                                             global_mask, heads, scale, kernels::ScoreOrder::kKeyChain);

    // Each block's tokens over [global tokens; the block's tokens]: blocks as rows of a batch.
    const auto per_block = [&](const at::Tensor& t) {  // [batch, total, heads, head_dim] -> [rows, heads, G+bs, hd]
      const at::Tensor shared = t.narrow(1, 0, global).unsqueeze(1).expand({batch, blocks, global, heads, head_dim});
      const at::Tensor own = t.narrow(1, global, padded).reshape({batch, blocks, block_size_, heads, head_dim});
      return at::cat({shared, own}, 2).view({batch * blocks, global + block_size_, heads, head_dim}).transpose(1, 2);
    };
    const at::Tensor block_mask =
        at::cat({at::zeros({batch, blocks, global}, at::kFloat), mask.view({batch, blocks, block_size_})}, 2)
            .view({batch * blocks, 1, 1, global + block_size_});
    const at::Tensor block_queries = q.narrow(1, global, padded).reshape({batch * blocks, block_size_, inner});
    const at::Tensor local_out =
        kernels::fixed_order_attention(block_queries, per_block(keys), per_block(values), block_mask, heads, scale,
                                       kernels::ScoreOrder::kKeyChain)
            .view({batch, padded, inner});

    const at::Tensor out = attn.out_proj.forward(at::cat({global_out, local_out}, 1));
    return {out.narrow(1, global, padded), out.narrow(1, 0, global)};
  }

  int64_t block_size_;
  int64_t num_global_;
  bool stagger_;
  at::Tensor embed_global_;  // [num_global_tokens, dim]
  std::vector<LayerNorm> global_norms_;
};

}  // namespace

std::shared_ptr<LongAttention> make_pegasus_x(const StackShape& shape) {
  return std::make_shared<PegasusXAttention>(shape);
}

}  // namespace ordo::nn
