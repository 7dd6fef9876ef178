// LongT5's encoder self-attention (Hugging Face's LongT5LocalAttention and
// LongT5TransientGlobalAttention, transformers 4.31), so that a 16k-token input costs time and
// memory in proportion to its length rather than its square.
//
// Local: the sequence is cut into blocks of block_len = local_radius + 1 positions (the last
// one padded); the queries of a block attend to the keys of that block and of its two
// neighbours (3 * block_len keys), of which those more than local_radius away, padding and the
// blocks' own padding are masked (-1e4, as Hugging Face adds). T5's bidirectional relative
// position buckets, over the real distance key - query, give each of the 3 * block_len keys its
// bias from the encoder's table (block 0's relative_attention_bias, TransformerEncoder::
// relative_bias), the same for every block and layer.
//
// Transient-global adds, per layer, one "side" token per global_block_size positions: the sum
// of that block's attention inputs (after the layer's norm), normalised by the layer's
// global_input_layer_norm and projected by the same k and v. Every query also attends to every
// side token, with a bias from global_relative_attention_bias on (side token - the query's own
// global block) and a mask that hides the blocks past the last real one. A trailing partial
// block joins the block before it; padding belongs to none. The side tokens make the cost
// grow as length x length / global_block_size, as in Hugging Face; the blocks are attended in
// chunks so that memory stays bounded.
//
// Each chunk of blocks runs through kernels::fixed_order_attention with the blocks as its batch
// rows: a query's result does not depend on the other blocks, the batch or the padding.
#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/attention_kernel.h"
#include "nn/long_attention.h"
#include "nn/relative_position.h"
#include "nn/transformer.h"
#include "ordo/error.h"

namespace ordo::nn {

namespace {

// Hugging Face's additive value for a masked key.
constexpr float kMasked = -1e4f;
// How many scores (batch x blocks x heads x block_len x keys) one chunk of blocks attends at
// most: its keys, values, biases and masks are a few times that many floats.
constexpr int64_t kChunkScores = int64_t{1} << 22;

class LongT5Attention final : public LongAttention {
 public:
  explicit LongT5Attention(const StackShape& shape)
      : global_(shape.long_attention.kind == LongAttentionKind::kLongT5TransientGlobal),
        block_len_(shape.long_attention.local_radius + 1),
        global_block_size_(shape.long_attention.global_block_size),
        heads_(shape.layer.heads),
        head_dim_(shape.layer.head_dim > 0 ? shape.layer.head_dim : shape.layer.dim / shape.layer.heads) {
    if (shape.long_attention.local_radius < 0) throw Error("LongT5: local_radius must not be negative");
    if (shape.relative_buckets <= 0) throw Error("LongT5: the encoder needs relative position buckets");
    if (global_) {
      if (global_block_size_ < 1) throw Error("LongT5: global_block_size must be positive");
      for (int64_t i = 0; i < shape.num_layers; ++i)
        global_norms_.emplace_back(shape.layer.dim, /*rms=*/true, shape.layer.norm_eps);
      global_bias_ =
          RelativePositionBias(shape.relative_buckets, shape.relative_max_distance, heads_, /*bidirectional=*/true);
    }
  }

  at::Tensor forward(const TransformerEncoder& encoder, at::Tensor x, const at::Tensor& attention_mask,
                     const at::Tensor&) const override {
    const Shared shared = prepare(encoder, attention_mask, x.size(0), x.size(1));
    for (size_t i = 0; i < encoder.layers.size(); ++i) {
      const EncoderLayer& layer = encoder.layers[i];
      x = residual(x, layer.self_attn_layer_norm, layer.pre_norm,
                   [&](const at::Tensor& in) { return self_attention(layer.self_attn, i, in, shared); });
      x = residual(x, layer.final_layer_norm, layer.pre_norm,
                   [&](const at::Tensor& in) { return layer.ffn.forward(in); });
    }
    return x;
  }

  void visit(const std::string& prefix, const ParamVisitor& visitor) override {
    if (!global_) return;
    visitor(join_name(prefix, "global_relative_attention_bias.weight"), global_bias_.weight);
    for (size_t i = 0; i < global_norms_.size(); ++i)
      global_norms_[i].visit(join_name(prefix, "layers." + std::to_string(i) + ".self_attn.global_input_layer_norm"),
                             visitor);
  }
  void visit_linears(const std::string&, const LinearVisitor&) override {}
  void pack(GemmType) override {}

 private:
  // What every layer shares for one call: the blocks' masks and biases and, for
  // transient-global, each position's global block.
  struct Shared {
    int64_t batch = 0, length = 0, blocks = 0, globals = 0;
    at::Tensor local_bias;  // [1, heads, block_len, 3 * block_len]
    at::Tensor local_mask;  // [batch, blocks, block_len, 3 * block_len]: 0 or kMasked
    // Transient-global only.
    at::Tensor block_ids;    // int64 [batch, length]: each position's global block, -1 for none
    at::Tensor tokens;       // bool [batch, length]: not padding
    at::Tensor real;         // bool [batch, 1, globals]: side token j sums a block of the input
    at::Tensor side_bias;    // [heads, 2 * globals]: global_relative_attention_bias by distance 1 - globals ..
    at::Tensor side_offset;  // int64 [batch, length]: where a position's row of side_bias starts
  };

  Shared prepare(const TransformerEncoder& encoder, const at::Tensor& attention_mask, int64_t batch,
                 int64_t length) const {
    Shared s;
    s.batch = batch;
    s.length = length;
    const int64_t bl = block_len_;
    s.blocks = (length + bl - 1) / bl;
    // Query q of a block against key k of its three blocks is distance k - bl - q.
    const at::Tensor runs = encoder.relative_bias.by_distance(1 - 2 * bl, 4 * bl - 1);  // [heads, 4bl - 1]
    s.local_bias = at::empty({1, heads_, bl, 3 * bl}, at::kFloat);
    {
      const float* r = runs.data_ptr<float>();
      float* o = s.local_bias.data_ptr<float>();
      for (int64_t h = 0; h < heads_; ++h)
        for (int64_t q = 0; q < bl; ++q)  // distance k - bl - q is run index k - q + bl - 1
          std::memcpy(o + (h * bl + q) * 3 * bl, r + h * (4 * bl - 1) + (bl - 1 - q), 3 * bl * sizeof(float));
    }
    // The mask with one block of padding on either side and the last block's padding.
    const at::Tensor tokens = attention_mask.ne(0);
    const at::Tensor padded = at::constant_pad_nd(tokens.to(at::kByte), {bl, (s.blocks + 1) * bl - length}, 0);
    const at::Tensor queries = padded.narrow(1, bl, s.blocks * bl).view({batch, s.blocks, bl, 1});
    const at::Tensor keys = padded.unfold(1, 3 * bl, bl).narrow(1, 0, s.blocks).unsqueeze(2);  // [b, blocks, 1, 3bl]
    const at::Tensor key_index = at::arange(3 * bl, at::kLong).view({1, 3 * bl});
    const at::Tensor query_index = at::arange(bl, at::kLong).view({bl, 1});
    const at::Tensor near = (key_index - bl - query_index).abs().lt(bl);  // [bl, 3bl]
    const at::Tensor allowed = queries.logical_and(keys).logical_and(near);
    s.local_mask = at::where(allowed, at::zeros({}, at::kFloat), at::full({}, kMasked, at::kFloat));
    if (global_) global_blocks(attention_mask, s);
    return s;
  }

  // Hugging Face's _make_global_fixed_block_ids and compute_side_bias, step for step (the
  // cumulative sum of 1 / global_block_size included, so that a size that is no power of two
  // rounds alike).
  void global_blocks(const at::Tensor& attention_mask, Shared& s) const {
    const int64_t batch = s.batch, length = s.length, size = global_block_size_;
    const at::Tensor mask = attention_mask.ne(0).to(at::kLong);
    const at::Tensor step = at::full({batch, length}, 1.0f / static_cast<float>(size), at::kFloat);
    const at::Tensor fixed = at::cumsum(step, 1) - step;
    const at::Tensor ones = at::where(mask.ne(0), at::ones({}, at::kFloat), at::full({}, -1000.0f, at::kFloat));
    at::Tensor ids = at::floor(ones + fixed - 1.0).to(at::kLong).clamp_min(-1);
    ids = ids * mask + (mask - 1);
    // A trailing partial block joins the block before it.
    const at::Tensor block_ends = at::arange(length, at::kLong).remainder(size).eq(size - 1);
    const at::Tensor full_blocks = block_ends.logical_and(ids.ge(0)).sum(-1, /*keepdim=*/true).to(at::kLong) - 1;
    s.block_ids = at::where(ids.lt(full_blocks), ids, full_blocks);
    s.globals = length / size;
    if (s.globals == 0) return;
    // Side token j is real when j <= the row's last block; tokens see the real ones, padding
    // the others.
    // (Built per chunk of blocks in self_attention: length x globals values in all.)
    const at::Tensor last = std::get<0>(s.block_ids.max(1, /*keepdim=*/true));  // [b, 1]
    s.real = at::arange(s.globals, at::kLong).view({1, 1, s.globals}).le(last.unsqueeze(2));
    s.tokens = mask.ne(0);
    // Distance j - block_id runs from 1 - globals (block globals - 1) to globals (block -1).
    s.side_bias = global_bias_.by_distance(1 - s.globals, 2 * s.globals);
    s.side_offset = s.globals - 1 - s.block_ids;  // run index of j = 0
  }

  at::Tensor self_attention(const MultiHeadAttention& attn, size_t layer, const at::Tensor& in, const Shared& s) const {
    const int64_t batch = s.batch, length = s.length, bl = block_len_, blocks = s.blocks;
    const int64_t inner = heads_ * head_dim_;
    const auto [q, k, v] = attn.project_qkv(in);
    // Side keys and values: the layer's normalised block sums, projected.
    at::Tensor side_k, side_v;
    const int64_t globals = s.globals;
    if (global_ && globals > 0) {
      const int64_t dim = in.size(2);
      // Position p adds to row b * (globals + 1) + its block; padding to a spare row per sentence.
      const at::Tensor rows = (s.block_ids.where(s.block_ids.ge(0), at::full({}, globals, at::kLong)) +
                               at::arange(batch, at::kLong).unsqueeze(1) * (globals + 1))
                                  .reshape({-1});
      at::Tensor sums = at::zeros({batch * (globals + 1), dim}, at::kFloat);
      sums.index_add_(0, rows, in.reshape({batch * length, dim}).to(at::kFloat));
      const at::Tensor global_in =
          global_norms_[layer].forward(sums.view({batch, globals + 1, dim}).narrow(1, 0, globals).contiguous());
      const auto side = attn.project_qkv(global_in);  // (its queries are not used)
      side_k = side[1];
      side_v = side[2];
    }
    // Padded to whole blocks, and the keys with a block of zeros on either side.
    const int64_t tail = blocks * bl - length;
    const at::Tensor q_blocks = at::constant_pad_nd(q, {0, 0, 0, tail}, 0).view({batch, blocks, bl, inner});
    const at::Tensor k_padded = at::constant_pad_nd(k, {0, 0, bl, tail + bl}, 0);
    const at::Tensor v_padded = at::constant_pad_nd(v, {0, 0, bl, tail + bl}, 0);
    const int64_t keys = 3 * bl + (global_ ? globals : 0);
    const int64_t chunk = std::max<int64_t>(1, kChunkScores / std::max<int64_t>(1, batch * heads_ * bl * keys));
    std::vector<at::Tensor> outputs;
    for (int64_t first = 0; first < blocks; first += chunk) {
      const int64_t n = std::min(chunk, blocks - first);
      const auto three_blocks = [&](const at::Tensor& padded, const at::Tensor& side) {
        std::vector<at::Tensor> parts;
        for (int64_t j = 0; j < 3; ++j)
          parts.push_back(padded.narrow(1, (first + j) * bl, n * bl).view({batch, n, bl, inner}));
        if (side.defined()) parts.push_back(side.unsqueeze(1).expand({batch, n, globals, inner}));
        return at::cat(parts, 2).view({batch * n, keys, heads_, head_dim_}).transpose(1, 2);  // [b*n, h, keys, d]
      };
      const at::Tensor key = three_blocks(k_padded, side_k), value = three_blocks(v_padded, side_v);
      const at::Tensor queries = q_blocks.narrow(1, first, n).reshape({batch * n, bl, inner});
      at::Tensor mask = s.local_mask.narrow(1, first, n);  // [b, n, bl, 3bl]
      at::Tensor bias = s.local_bias;
      if (global_ && globals > 0) {
        // The chunk's positions, those past the end (the last block's padding) as the last.
        const at::Tensor positions = at::arange(first * bl, (first + n) * bl, at::kLong).clamp_max(length - 1);
        const at::Tensor sees = s.real.eq(s.tokens.index_select(1, positions).unsqueeze(2));  // [b, n * bl, g]
        const at::Tensor side_mask = at::where(sees, at::zeros({}, at::kFloat), at::full({}, kMasked, at::kFloat));
        mask = at::cat({mask, side_mask.view({batch, n, bl, globals})}, 3);
        const at::Tensor index = (s.side_offset.index_select(1, positions).unsqueeze(2) +
                                  at::arange(globals, at::kLong).view({1, 1, globals}))
                                     .reshape({-1});
        const at::Tensor side_bias = s.side_bias.index_select(1, index)
                                         .view({heads_, batch, n, bl, globals})
                                         .permute({1, 2, 0, 3, 4})
                                         .reshape({batch * n, heads_, bl, globals});
        bias = at::cat({s.local_bias.expand({batch * n, heads_, bl, 3 * bl}), side_bias}, 3);
      }
      outputs.push_back(kernels::fixed_order_attention(queries, key, value, mask.reshape({batch * n, 1, bl, keys}),
                                                       heads_, 1.0f, kernels::ScoreOrder::kKeyChain, bias)
                            .view({batch, n * bl, inner}));
    }
    const at::Tensor context = (outputs.size() == 1 ? outputs[0] : at::cat(outputs, 1)).narrow(1, 0, length);
    return attn.out_proj.forward(context.contiguous());
  }

  bool global_;
  int64_t block_len_, global_block_size_, heads_, head_dim_;
  std::vector<LayerNorm> global_norms_;  // transient-global: each layer's global_input_layer_norm
  RelativePositionBias global_bias_;     // transient-global: global_relative_attention_bias (block 0)
};

}  // namespace

std::shared_ptr<LongAttention> make_longt5(const StackShape& shape) { return std::make_shared<LongT5Attention>(shape); }

}  // namespace ordo::nn
