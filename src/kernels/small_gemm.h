#pragma once
// y = x W (+ bias) for the few rows of a decoding step (1-16), read straight out of oneDNN's
// packed float32 weights. With 16 rows against 0.5-2.4 GB of weights a step streams every
// weight once and does 16 multiply-adds with it; oneDNN's brgemm kernel for such shapes splits
// the rows into register blocks and pads fewer than 4 rows to 4. Here each panel of columns is
// read once per block of k for all the rows (passes of 4 rows, the later ones from L1), with
// the next rows of the panel prefetched; 1-4 rows read two panels at once, whose interleaved
// loads keep more of the memory's lines in flight than one stream (about 1.3 x the bytes per
// second on one core).
//
// The arithmetic is oneDNN's, element by element: each output is a chain of fused multiply-adds
// over k in increasing order, started from zero, one chain per chunk of `k_chunk` values of k
// (oneDNN's K blocking, which depends on the shape and the cache size), the chunks' sums added
// in order, then the bias added, then relu as max(y, 0). The caller (nn/packed_gemm.cpp) finds
// the chunking that gives oneDNN's bits on a probe, and uses this kernel only then.
#include <cstdint>

namespace ordo::kernels {

// W [K, N] packed in panels of `width` columns (16, 32, 48 or 64): panel p holds columns
// [p * width, (p + 1) * width) as K rows of `width` consecutive floats, and starts `stride`
// floats after panel p - 1 (oneDNN's BA16a64b-style float32 layouts; the last panel padded).
struct PanelLayout {
  int64_t width = 0, stride = 0;
};

constexpr int64_t kSmallGemmMaxRows = 16;
// int8 (small_gemm_s8) takes more: its products are cheap enough (64 per instruction) that 32
// rows still beat oneDNN's kernel, whose separate passes quantize and rescale.
constexpr int64_t kSmallGemmS8MaxRows = 32;

// Whether small_gemm has a body here (AVX-512, ORDO_ISA honoured).
bool small_gemm_available();

// y[rows, n] (row-major) from x[rows, k] (row-major), rows in 1..kSmallGemmMaxRows; bias [n] or
// null. Panels are split among the OpenMP threads (kernels/parallel.h).
void small_gemm(const float* x, int64_t rows, int64_t k, const float* panels, PanelLayout layout, int64_t n,
                int64_t k_chunk, const float* bias, bool relu, float* y);

// The same for only `count` groups of 16 columns, `groups` (ascending; group g is columns
// [16 g, 16 g + 16)), with no activation: y's other columns are left as they are. Each column
// gets small_gemm's bits, and only its own lines of the panels are read.
void small_gemm_groups(const float* x, int64_t rows, int64_t k, const float* panels, PanelLayout layout, int64_t n,
                       int64_t k_chunk, const float* bias, float* y, const int64_t* groups, int64_t count);

// int8: the same few rows against oneDNN's packed int8 weights, on AVX-512 VNNI. With int8 weights
// a step streams a quarter of the bytes, and oneDNN's int8 kernel for 1-16 rows reads them no
// faster than its float32 one (a separate pass quantizes, another rescales); here one pass over
// the panels does the products and the rescaling. The sums are exact integers (no order to
// match): y = float(x_q . w_q) * column_scales[n] * row_scales[m] (+ bias[n], relu), the float
// steps in the order oneDNN's output scales and ordo's row rescaling apply them, unfused.

// W_q [K, N] in panels of `width` columns (16, 32, 48 or 64), `stride` bytes apart: panel p holds
// K / 4 groups of width x 4 bytes, column n's k..k+3 consecutive (oneDNN's BA16a64b4a and kin).
struct PanelLayoutS8 {
  int64_t width = 0, stride = 0;
};

// Whether small_gemm_s8 has a body here (AVX-512 with VNNI, ORDO_ISA honoured).
bool small_gemm_s8_available();

// y[rows, n] (row-major) from x_q[rows, k] int8 (row-major, k a multiple of 4), rows in
// 1..kSmallGemmS8MaxRows. `column_sums` [n]: sum over k of column n of W_q. bias [n] or null.
// Panels are split among the OpenMP threads.
void small_gemm_s8(const int8_t* x, int64_t rows, int64_t k, const int8_t* panels, PanelLayoutS8 layout, int64_t n,
                   const int32_t* column_sums, const float* column_scales, const float* row_scales, const float* bias,
                   bool relu, float* y);

}  // namespace ordo::kernels
