// LED's encoder self-attention, Longformer's (transformers' LEDEncoderSelfAttention): each
// position attends to the attention_window / 2 positions on each side of it (per layer) and to
// the global positions; a global position attends to every position, through projections of
// its own (query_global, key_global, value_global). Both parts run in the fixed-order kernel
// (kernels/attention_kernel.h), so that a position's output does not depend on its batch or on
// how far its row is padded, and neither builds a [len, len] tensor:
//   - the window part takes the queries in blocks of w (the one-sided window): block b sees the
//     keys b*w - w .. b*w + 2w - 1 (3w of them) and then the global keys, and a [w, 3w + G]
//     band masks what lies outside each query's own window. The global keys come last so that
//     a row's window keys sum in the same kernel lanes however many global slots its batch
//     has. The blocks are the kernel's batch rows, a bounded number of them per call, so
//     memory stays linear in the length;
//   - the global rows are G queries over the whole (unpadded) row: [G, len].
// transformers pads the input to a multiple of max(attention_window) with masked pad tokens
// and strips them from the output; masked keys get no weight, so the blocks here need no such
// padding: positions past the end are masked like any padding. As there, the global keys are
// taken out of the window part (they are attended once, as global keys), the queries are
// divided by sqrt(head_dim) after their projection, and padding queries give zeros.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/attention_kernel.h"
#include "nn/long_attention.h"
#include "nn/transformer.h"
#include "ordo/error.h"

namespace ordo::nn {

namespace {

// Bound on the float32 keys and values copied for one kernel call of the window part
// (each block's 3w keys and values): about 64 MB.
constexpr int64_t kMaxBlockFloats = int64_t{16} << 20;

struct GlobalProjections {
  Linear query_global, key_global, value_global;
  Linear global_kv;  // after pack(): [key_global; value_global] as one GEMM
};

// The global positions of each row: index [batch, G] (G = the most any row has; the slots
// past a row's own count point at position 0) and slot_mask [batch, G] (0 for a used slot, the
// lowest float for an unused one).
struct GlobalIndex {
  int64_t count = 0;  // G
  at::Tensor index, slot_mask;
  at::Tensor flat_rows;   // int64 [used slots]: b * len + position of each used slot
  at::Tensor flat_slots;  // int64 [used slots]: b * G + slot
};

GlobalIndex global_index(const at::Tensor& is_global) {
  const at::Tensor flags = is_global.to(at::kBool).contiguous();
  const int64_t batch = flags.size(0), len = flags.size(1);
  const auto f = flags.accessor<bool, 2>();
  std::vector<std::vector<int64_t>> positions(batch);
  GlobalIndex g;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t s = 0; s < len; ++s)
      if (f[b][s]) positions[b].push_back(s);
    g.count = std::max<int64_t>(g.count, static_cast<int64_t>(positions[b].size()));
  }
  if (g.count == 0) return g;
  g.index = at::zeros({batch, g.count}, at::kLong);
  g.slot_mask = at::full({batch, g.count}, std::numeric_limits<float>::lowest(), at::kFloat);
  std::vector<int64_t> rows, slots;
  auto index = g.index.accessor<int64_t, 2>();
  auto mask = g.slot_mask.accessor<float, 2>();
  for (int64_t b = 0; b < batch; ++b)
    for (size_t j = 0; j < positions[b].size(); ++j) {
      index[b][j] = positions[b][j];
      mask[b][j] = 0.0f;
      rows.push_back(b * len + positions[b][j]);
      slots.push_back(b * g.count + static_cast<int64_t>(j));
    }
  g.flat_rows = at::tensor(rows, at::kLong);
  g.flat_slots = at::tensor(slots, at::kLong);
  return g;
}

// Rows `index` [batch, G] of `x` [batch, len, dim] -> [batch, G, dim].
at::Tensor gather_rows(const at::Tensor& x, const at::Tensor& index) {
  return x.gather(1, index.unsqueeze(-1).expand({index.size(0), index.size(1), x.size(2)}));
}

class Longformer : public LongAttention {
 public:
  explicit Longformer(const StackShape& shape)
      : heads_(shape.layer.heads), dim_(shape.layer.dim), head_dim_(shape.layer.dim / shape.layer.heads) {
    const std::vector<int64_t>& windows = shape.long_attention.attention_window;
    if (static_cast<int64_t>(windows.size()) != shape.num_layers)
      throw Error("config.json attention_window: " + std::to_string(windows.size()) + " windows for " +
                  std::to_string(shape.num_layers) + " encoder layers");
    for (int64_t window : windows) {
      if (window < 2 || window % 2 != 0)
        throw Error("config.json attention_window: " + std::to_string(window) + " is not a positive even number");
      one_sided_.push_back(window / 2);
    }
    for (int64_t i = 0; i < shape.num_layers; ++i)
      global_.push_back({Linear(dim_, dim_), Linear(dim_, dim_), Linear(dim_, dim_), Linear()});
  }

  at::Tensor forward(const TransformerEncoder& encoder, at::Tensor x, const at::Tensor& attention_mask,
                     const at::Tensor& global_mask) const override {
    const int64_t batch = x.size(0), len = x.size(1);
    const at::Tensor real = attention_mask.ne(0);
    at::Tensor is_global;
    if (global_mask.defined()) {
      if (global_mask.dim() != 2 || global_mask.size(0) != batch || global_mask.size(1) != len) {
        std::string got;
        for (int64_t n : global_mask.sizes()) got += (got.empty() ? "" : ", ") + std::to_string(n);
        throw Error("global attention mask: expected [" + std::to_string(batch) + ", " + std::to_string(len) +
                    "] (one flag per source token), got [" + got + "]");
      }
      is_global = global_mask.ne(0).logical_and(real);
    } else {
      // The first token of each row, as transformers' LED summarization examples set it.
      is_global = at::zeros({batch, len}, at::kBool);
      if (len > 0) is_global.select(1, 0).fill_(true);
      is_global = is_global.logical_and(real);
    }
    const GlobalIndex globals = global_index(is_global);
    const float lowest = std::numeric_limits<float>::lowest();
    // Keys the window part may attend to: tokens that are not global, 0 / lowest.
    const at::Tensor window_keys = at::where(real.logical_and(is_global.logical_not()), 0.0f, lowest);
    const at::Tensor padding = padding_mask(attention_mask);
    const at::Tensor not_real = real.logical_not().unsqueeze(-1);
    for (size_t i = 0; i < encoder.layers.size(); ++i) {
      const EncoderLayer& layer = encoder.layers[i];
      const at::Tensor h = residual(x, layer.self_attn_layer_norm, layer.pre_norm, [&](const at::Tensor& in) {
        at::Tensor out = attend(layer.self_attn, global_[i], one_sided_[i], in, window_keys, globals, padding);
        out.masked_fill_(not_real, 0.0f);
        return layer.self_attn.out_proj.forward(out);
      });
      x = residual(h, layer.final_layer_norm, layer.pre_norm,
                   [&](const at::Tensor& in) { return layer.ffn.forward(in); });
    }
    return x;
  }

  void visit(const std::string& prefix, const ParamVisitor& visitor) override {
    for (size_t i = 0; i < global_.size(); ++i) {
      const std::string attention = join_name(prefix, "layers." + std::to_string(i) + ".self_attn");
      global_[i].query_global.visit(join_name(attention, "query_global"), visitor);
      global_[i].key_global.visit(join_name(attention, "key_global"), visitor);
      global_[i].value_global.visit(join_name(attention, "value_global"), visitor);
    }
  }

  void visit_linears(const std::string& prefix, const LinearVisitor& visitor) override {
    for (size_t i = 0; i < global_.size(); ++i) {
      const std::string attention = join_name(prefix, "layers." + std::to_string(i) + ".self_attn");
      visitor(join_name(attention, "query_global"), global_[i].query_global);
      visitor(join_name(attention, "key_global"), global_[i].key_global);
      visitor(join_name(attention, "value_global"), global_[i].value_global);
      visitor(join_name(attention, "global_kv_proj"), global_[i].global_kv);
    }
  }

  void pack(GemmType type) override {
    for (GlobalProjections& g : global_) {
      if (g.global_kv.packed) continue;
      g.query_global.pack(type);
      g.global_kv = fuse_and_pack({&g.key_global, &g.value_global}, type);
    }
  }

 private:
  // [batch, len, dim] -> [batch, heads, len, head_dim]
  at::Tensor split_heads(const at::Tensor& t) const {
    return t.reshape({t.size(0), t.size(1), heads_, head_dim_}).transpose(1, 2);
  }

  // The attention of one layer, before its output projection: [batch, len, dim].
  at::Tensor attend(const MultiHeadAttention& attn, const GlobalProjections& proj, int64_t w, const at::Tensor& x,
                    const at::Tensor& window_keys, const GlobalIndex& globals, const at::Tensor& padding) const {
    const int64_t batch = x.size(0), len = x.size(1);
    auto [q, k, v] = attn.project_qkv(x);
    const double root = std::sqrt(static_cast<double>(head_dim_));
    q = q / root;  // divided, as transformers does (not multiplied by the inverse)

    const int64_t blocks = (len + w - 1) / w, padded = blocks * w, span = 3 * w, G = globals.count;
    const int64_t keys_per_block = G + span;
    // Queries in blocks of w; keys and values with w positions before and the rest after.
    const at::Tensor q_blocks = at::constant_pad_nd(q, {0, 0, 0, padded - len}).view({batch, blocks, w, dim_});
    const std::vector<int64_t> around = {0, 0, w, padded - len + w};
    const at::Tensor k_heads = split_heads(k), v_heads = split_heads(v);  // [b, h, len, hd]
    const at::Tensor k_padded = at::constant_pad_nd(k_heads, around);     // [b, h, padded + 2w, hd]
    const at::Tensor v_padded = at::constant_pad_nd(v_heads, around);
    // Block j's keys: positions j*w - w .. j*w + 2w - 1, by dimension ([b, blocks, h, hd, span]),
    // the layout the kernel's key chain reads; its values [b, blocks, h, span, hd].
    const at::Tensor k_windows = k_padded.unfold(2, span, w).permute({0, 2, 1, 3, 4});
    const at::Tensor v_windows = v_padded.unfold(2, span, w).permute({0, 2, 1, 4, 3});
    const at::Tensor key_mask =
        at::constant_pad_nd(window_keys, {w, padded - len + w}, std::numeric_limits<float>::lowest())
            .unfold(1, span, w);    // [b, blocks, span]
    at::Tensor k_global, v_global;  // [b, h, hd, G], [b, h, G, hd]
    if (G > 0) {
      k_global = gather_rows(k, globals.index).view({batch, G, heads_, head_dim_}).permute({0, 2, 3, 1});
      v_global = gather_rows(v, globals.index).view({batch, G, heads_, head_dim_}).transpose(1, 2);
    }
    // Query r of a block sees window columns r .. r + 2w; the global columns (after them) always.
    const at::Tensor r = at::arange(w, at::kLong).unsqueeze(1), c = at::arange(span, at::kLong).unsqueeze(0);
    at::Tensor band = at::where(c.ge(r).logical_and(c.le(r + 2 * w)), 0.0f, std::numeric_limits<float>::lowest());
    if (G > 0) band = at::cat({band, at::zeros({w, G}, at::kFloat)}, 1);
    band = band.view({1, 1, w, keys_per_block});

    at::Tensor out = at::empty({batch, padded, dim_}, at::kFloat);
    const int64_t per_block = std::max<int64_t>(1, batch * heads_ * keys_per_block * head_dim_ * 2);
    const int64_t group = std::max<int64_t>(1, kMaxBlockFloats / per_block);
    for (int64_t first = 0; first < blocks; first += group) {
      const int64_t n = std::min(group, blocks - first);
      at::Tensor keys = k_windows.narrow(1, first, n), values = v_windows.narrow(1, first, n);
      at::Tensor mask = key_mask.narrow(1, first, n);
      if (G > 0) {
        keys = at::cat({keys, k_global.unsqueeze(1).expand({batch, n, heads_, head_dim_, G})}, 4);
        values = at::cat({values, v_global.unsqueeze(1).expand({batch, n, heads_, G, head_dim_})}, 3);
        mask = at::cat({mask, globals.slot_mask.unsqueeze(1).expand({batch, n, G})}, 2);
      }
      keys = keys.contiguous().view({batch * n, heads_, head_dim_, keys_per_block}).transpose(2, 3);
      values = values.contiguous().view({batch * n, heads_, keys_per_block, head_dim_});
      mask = mask.contiguous().view({batch * n, 1, 1, keys_per_block});
      const at::Tensor queries = q_blocks.narrow(1, first, n).reshape({batch * n, w, dim_});
      const at::Tensor part = kernels::fixed_order_attention(queries, keys, values, mask, heads_, 1.0f,
                                                             kernels::ScoreOrder::kKeyChain, band);
      out.narrow(1, first * w, n * w).copy_(part.view({batch, n * w, dim_}));
    }
    out = out.narrow(1, 0, len).contiguous();
    if (G == 0) return out;

    // The global positions' own rows: query_global over key_global / value_global of every token.
    const at::Tensor global_q = proj.query_global.forward(gather_rows(x, globals.index)) / root;  // [b, G, dim]
    at::Tensor global_k, global_v;
    if (proj.global_kv.packed) {
      const at::Tensor kv = proj.global_kv.forward(x);
      global_k = kv.narrow(-1, 0, dim_);
      global_v = kv.narrow(-1, dim_, dim_);
    } else {
      global_k = proj.key_global.forward(x);
      global_v = proj.value_global.forward(x);
    }
    const at::Tensor rows = kernels::fixed_order_attention(
        global_q.contiguous(), kernels::keys_by_dimension(split_heads(global_k)), split_heads(global_v).contiguous(),
        padding, heads_, 1.0f, kernels::ScoreOrder::kKeyChain);  // [b, G, dim]
    out.view({batch * len, dim_})
        .index_copy_(0, globals.flat_rows, rows.view({batch * G, dim_}).index_select(0, globals.flat_slots));
    return out;
  }

  int64_t heads_, dim_, head_dim_;
  std::vector<int64_t> one_sided_;  // per layer: attention_window / 2
  std::vector<GlobalProjections> global_;
};

}  // namespace

std::shared_ptr<LongAttention> make_longformer(const StackShape& shape) { return std::make_shared<Longformer>(shape); }

}  // namespace ordo::nn
