// Scaled dot-product attention whose result for one query row does not depend on anything
// else in the batch: not on the other rows, not on how far the keys are padded, not on the
// thread count. LibTorch's matmul/softmax/matmul route does not have that property: its
// softmax sums and the probabilities x values product group their reductions by the padded
// length (vector width, BLAS K-blocking, a naive loop below 400 multiply-adds, OpenBLAS's
// "small matrix" kernels above), so a sentence padded next to a longer one gets scores
// that differ in the last bits, and sometimes another token.
//
// Here each (row, head, query) is computed alone, in a fixed order:
//   scores s = (q * scale) . k_s   over head_dim, in 64 fixed lanes, then a fixed tree;
//   p_s = exp(s - max)             one polynomial for every element (no scalar tail);
//   sum = sum p_s                  in 16 lanes by position (a masked position adds +0);
//   out = (sum_s p_s v_s) / sum    in position order, positions with p_s = 0 skipped,
//                                  vectorized over head_dim.
// A masked (padded) position has p_s = 0 exactly, so padding changes no bit. It is also
// faster than the LibTorch route at decoding shapes (no batched BLAS calls of a few
// hundred multiply-adds, no intermediate tensors, no head transposes).
#pragma once

#include <cstdint>

#include <ATen/ATen.h>

namespace ordo::nn {

// softmax(q k^T * scale + additive_mask) v for every head.
//   q:     [batch, q_len, heads * head_dim], unit stride in the last dimension (a view into
//          a fused projection is fine);
//   key, value: [batch, heads, kv_len, head_dim], unit stride in the last dimension;
//   additive_mask: undefined, or broadcastable to [batch, heads, q_len, kv_len]: 0 where
//          allowed, a large negative number (padding_mask, causal_mask) where not.
// Returns [batch, q_len, heads * head_dim], contiguous. A query row that sees no position
// at all (every key masked: an empty source) attends to position 0 alone, which is what it
// gets when it is translated by itself (one padding position).
// Inference only (no autograd). float32.
at::Tensor fixed_order_attention(const at::Tensor& q, const at::Tensor& key, const at::Tensor& value,
                                 const at::Tensor& additive_mask, int64_t heads, float scale);

}  // namespace ordo::nn
