// One row of the bounds greedy search without scores works from (nn/packed_gemm.h,
// forward_bounded): an int8 screen's value of every logit widened by a proven bound on its
// error, to an upper bound of the exact logit, and the groups of 16 columns that can hold the
// row's largest. A loop over the whole vocabulary for every row of every step (58k columns x
// 32 rows in a batch), so it has an AVX-512 body beside the scalar one; both give valid bounds
// (not the same bits: only the exact logits reach the tokens).
#pragma once

#include <cstdint>

namespace ordo::kernels {

// Per column n, the bound's factors (float, rounded up when made); per row, its norms.
struct ScreenColumns {
  const float *x_holder, *x_cs, *q_holder, *q_cs, *sum_rounding, *fixed;
};
struct ScreenRow {
  float l1, x_norm, row_scale, d_norm, g_l1;
};

// values[n] >= a[n] + e_n and wanted[g] = 1 for each group g of 16 columns holding a column
// whose upper bound reaches the largest lower bound a[n] - e_n, where
// e_n = 1.01 (min(l1 x_holder, x_norm x_cs) + min(row_scale q_holder, d_norm q_cs)
//             + g_l1 sum_rounding + fixed + 8 u |a[n]|) + 1e-30,
// each sum and difference pushed outwards by 2^-20 of itself (the 1 % covers the float
// roundings of computing e_n). False when the lower bounds are not finite.
bool screen_bounds(const float* a, int64_t n, const ScreenColumns& columns, const ScreenRow& row, float* values,
                   char* wanted);

}  // namespace ordo::kernels
