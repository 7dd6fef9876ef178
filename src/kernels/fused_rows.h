#pragma once
// Two row-wise steps of T5's layers done in one pass each instead of a chain of LibTorch ops.
// At decoding shapes (8 rows x 768) each LibTorch op costs more in dispatch and allocation than
// in arithmetic: T5's RMS norm was six of them (pow, mean, add, rsqrt, mul, mul) three times
// per decoder layer, and the gated feed-forward's act(a) * b two more after two GEMMs.
//
// Each row alone, in a fixed order (the same for every row, batch and thread count), 16 lanes
// by column (kernels/lanes.h): vectorizing changes speed, not results. They evaluate the
// formulas of Hugging Face's modules; the summation order and the tanh/exp differ from
// LibTorch's (Sleef, its own blocking), so results may differ from it in the last bits.
#include <ATen/ATen.h>

#include "kernels/activation.h"

namespace ordo::kernels {

// T5LayerNorm: weight * (x * rsqrt(mean(x^2) + eps)) per row, the mean in float32.
// x: [..., dim] float32, weight: [dim] float32 -> a new tensor shaped as x.
at::Tensor rms_norm_rows(const at::Tensor& x, const at::Tensor& weight, double eps);

// Whether gated_rows has a kernel for `activation` (gelu_new, silu, relu).
bool gated_rows_supported(Activation activation);

// The gated feed-forward's middle: `fused` [..., 2 x hidden] float32 holds [a | b] per row (the
// fused [fc1; gate] GEMM) -> act(a) * b, [..., hidden]. gelu_new as Hugging Face's NewGELU:
// 0.5 a (1 + tanh(sqrt(2/pi) (a + 0.044715 a^3))).
at::Tensor gated_rows(const at::Tensor& fused, Activation activation);

}  // namespace ordo::kernels
