// Symmetric per-row int8 quantization, the input side of the int8 GEMMs (nn/packed_gemm.h:
// the weights are quantized per output channel when they are packed). A kernel of its own,
// beside the other per-row kernels, with one scalar and one AVX-512 version of the same
// arithmetic (kernels/isa.h picks).
#pragma once

#include <ATen/ATen.h>

namespace ordo::kernels {

// x [rows, cols] float32, contiguous -> x_q [rows, cols] int8 with x[r] ~ x_q[r] * scales[r]
// (scales: [rows] float32, written), scales[r] = max(max_j |x[r][j]|, 1e-12) / 127 and
// x_q = x * (1 / scale) rounded half to even. Vectorized where the CPU has AVX-512, bit for
// bit the same everywhere. Throws ordo::Error on a wrong type or shape.
at::Tensor quantize_rows(const at::Tensor& x, at::Tensor& scales);

// The weights' side, per output channel, as packing has always computed it (the same bytes):
// w [rows, cols] float32, row-major, finite -> q [rows, cols] int8 and scales [rows], scales[r]
// = max(max_j |w[r][j]|, 1e-12) / 127, q = w / scale (a division, not a product by its
// inverse) rounded half to even, within [-127, 127]. One row at a time, no threads of its own.
void quantize_weight_rows(const float* w, int64_t rows, int64_t cols, int8_t* q, float* scales);

}  // namespace ordo::kernels
