// Multi-head scaled dot-product attention (BART/Marian layout: q/k/v/out projections with
// biases, q scaled by head_dim^-0.5 after its projection). T5 differs in three settings: no
// biases, no scaling, and heads x head_dim (its d_kv) need not be d_model; and its self-attention
// adds a relative position bias to the logits (nn/relative_position.h).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/attention_kernel.h"
#include "nn/linear.h"

namespace ordo::nn {

// Keys and values split into heads: [batch, heads, length, head_dim].
//
// A growing self-attention cache keeps spare room along `length` (key/value are views into
// key_buffer/value_buffer, whose capacity doubles), so appending a step writes one position
// instead of copying the whole cache. A beam reorder copies no keys or values: with `origin`,
// each row's position s is read from row origin[row][s] of the buffers (the row of the
// hypothesis that wrote it), and a reorder copies those row numbers only. key/value are then
// the buffers as stored, not row by row; select() (rows dropped) and a growth of the buffers
// copy the positions back into rows of their own.
struct KeyValue {
  at::Tensor key, value;
  at::Tensor key_buffer, value_buffer;  // [batch, heads, capacity, head_dim]; undefined for
                                        // a fixed key/value (the encoder memory)
  at::Tensor origin;                    // int32 [batch, capacity]; undefined: every row reads its own positions
  bool empty() const { return !key.defined(); }
  int64_t length() const { return key.defined() ? key.size(2) : 0; }
  // Keeps rows `indices` (beam search reordering, dropping finished sentences), each row's
  // positions in a row of its own (no origin).
  KeyValue select(const at::Tensor& indices) const;
  // select() in place for as many rows: only `origin` changes (beam search reordering).
  void reorder(const at::Tensor& indices);
  // Appends `fresh` ([batch, heads, new_len, head_dim]) along the length.
  void append(const KeyValue& fresh);

 private:
  // Rows `source` (count of them), each position copied from where origin says, into new
  // buffers of `capacity` positions.
  KeyValue gather(const int64_t* source, int64_t count, int64_t capacity) const;
};

// The self-attention caches' buffers of 1 MB or more are mappings that a freed cache leaves
// kept for the next one (no fresh pages to fault in at every batch; attention.cpp says how
// many). This unmaps the kept ones, for a process gone idle (ordo::release_idle_memory), and
// returns their bytes. Caches alive meanwhile are untouched.
size_t release_kept_cache_mappings();

struct MultiHeadAttention {
  Linear q_proj, k_proj, v_proj, out_proj;
  // After pack(): the projections that always run together as one GEMM. Self-attention:
  // [q; k; v] (out = 3 x dim); cross-attention: [k; v] of the encoder memory.
  Linear qkv_proj, kv_proj;
  int64_t num_heads = 0;
  int64_t head_dim = 0;
  bool scaled = true;  // logits q . k / sqrt(head_dim); T5: q . k

  MultiHeadAttention() = default;
  // head_dim 0: dim / heads (which must divide dim).
  MultiHeadAttention(int64_t dim, int64_t heads, int64_t head_dim = 0, bool bias = true, bool scaled = true);

  // Projects `x` [batch, length, dim] to keys and values (keys laid out by dimension:
  // keys_by_dimension, what forward() reads in place).
  KeyValue project_key_value(const at::Tensor& x) const;

  // Attends from `x` [batch, q_len, dim] over `kv`. `additive_mask` (may be undefined) is
  // broadcastable to [batch, heads, q_len, kv_len]: 0 where allowed, a large negative number
  // where not.
  at::Tensor forward(const at::Tensor& x, const KeyValue& kv, const at::Tensor& additive_mask) const;

  // The attention weights forward() uses, softmax(q k^T / sqrt(head_dim) + mask), as
  // [batch, heads, q_len, kv_len]: for callers that show or align them (computed apart from
  // forward(), so nothing is spent on them when nobody asks).
  at::Tensor weights(const at::Tensor& x, const KeyValue& kv, const at::Tensor& additive_mask) const;

  // Self-attention of `x` over itself (the encoder's). `position_bias` (may be undefined), broadcastable
  // to [batch, heads, q_len, kv_len], is added to the logits before the mask (T5's relative positions:
  // [1, heads, len, len], kept apart from the [batch, 1, 1, len] padding mask so that their sum,
  // batch x heads x len x len, is never built).
  at::Tensor forward_self(const at::Tensor& x, const at::Tensor& additive_mask,
                          const at::Tensor& position_bias = at::Tensor()) const;

  // The self-attention's projections of `x` [batch, len, dim]: q, k and v, each [batch, len,
  // heads x head_dim] (q unscaled; after pack(), views of the fused GEMM's output). For the
  // attentions that attend their own way (nn/long_attention.h).
  std::array<at::Tensor, 3> project_qkv(const at::Tensor& x) const;

  // Self-attention with a cache: appends x's keys/values to `cache`, then attends over it.
  at::Tensor forward_cached(const at::Tensor& x, KeyValue& cache, const at::Tensor& additive_mask) const;

  void visit(const std::string& prefix, const ParamVisitor& visitor);
  void visit_linears(const std::string& prefix, const LinearVisitor& visitor);
  // Inference only (see Linear::pack): packs out_proj and the fused projections of a self-
  // or cross-attention; the separate q/k/v weights are then released.
  void pack(GemmType type, bool self_attention);

 private:
  at::Tensor split_heads(const at::Tensor& x) const;  // [b, t, dim] -> [b, heads, t, head_dim]
  // Attends with projected queries `q` [batch, q_len, dim] (unscaled) and applies out_proj.
  // `order`: how the kernel sums scores (kernels/attention_kernel.h), fixed per call site so that
  // every call of that site sums alike: forward() and forward_self() kKeyChain, forward_cached()
  // kDimensionTree.
  at::Tensor attend(const at::Tensor& q, const KeyValue& kv, const at::Tensor& additive_mask, kernels::ScoreOrder order,
                    const at::Tensor& position_bias = at::Tensor()) const;
  double scaling() const;  // what q is multiplied by
  // Splits the fused projection `qkv` [b, t, parts x dim] into its `parts`.
  at::Tensor part(const at::Tensor& fused, int64_t index) const;
};

// The additive mask for key padding: [batch, 1, 1, src_len], 0 for tokens, the most negative
// float for padding (the value Hugging Face adds, so the softmax matches theirs).
at::Tensor padding_mask(const at::Tensor& attention_mask /* [batch, src_len], 1 = token */);

// The additive causal mask for `q_len` new positions after `past_len` cached ones:
// [1, 1, q_len, past_len + q_len]; undefined when q_len == 1 (nothing to hide).
at::Tensor causal_mask(int64_t q_len, int64_t past_len);

}  // namespace ordo::nn
