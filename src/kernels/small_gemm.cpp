#include "kernels/small_gemm.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/isa.h"
#include "kernels/lanes.h"
#include "kernels/parallel.h"

namespace ordo::kernels {
namespace {

// k rows of a panel per pass: 64 rows x 256 bytes stay in L1 while rows 5-8 (the registers
// hold 4 rows x 64 columns of sums) read them again.
constexpr int64_t kBlockK = 64;
// How far ahead (in k rows) the panel's next rows are asked for. With at most 4 rows (one pass
// per block) into L1, 48 rows ahead: the loads of a few rows are short next to the memory's
// latency. With 5-8 rows (two passes per block) the next block is asked for into L2, half of
// each row's cache lines in each pass, so that memory streams while rows 5-8 reread L1 (asked
// for by the first pass alone, memory would idle while the second pass runs).
constexpr int64_t kPrefetchRows = 48;
constexpr int64_t kPrefetchRowsL2 = 64;
// Two panels at once (tile_pair): half as far ahead, so that both panels' block and what is
// asked for stay within L1 (4 rows reread the block).
constexpr int64_t kPrefetchRowsPair = 24;

// What one pass over a block of k asks the memory for: rows `ahead` further on, the panel's
// 64-byte lines [first, last) of each row, into L1 or L2.
struct Prefetch {
  int64_t ahead = 0;
  int first = 0, last = 0;
  bool l2 = false;
};
constexpr int64_t kTile = 64;  // floats per row of the per-panel sums (the widest panel)

// part[m][16 j ..] for rows m < M of x and columns [16 j, 16 j + 16) of the panel (its rows
// `width` floats apart), k in [k0, k1): a chain from zero when `fresh`, continued from part
// otherwise.
template <int M, int CZ>
ORDO_TARGET_AVX512 void tile(const float* x, int64_t ldx, const float* w, int64_t width, int64_t k0, int64_t k1,
                             bool fresh, Prefetch prefetch, float* part) {
  __m512 acc[M][CZ];
#pragma GCC unroll 4
  for (int m = 0; m < M; ++m)
#pragma GCC unroll 4
    for (int j = 0; j < CZ; ++j) acc[m][j] = fresh ? _mm512_setzero_ps() : _mm512_loadu_ps(part + m * kTile + 16 * j);
  const float* xs[M];
#pragma GCC unroll 4
  for (int m = 0; m < M; ++m) xs[m] = x + m * ldx;
  for (int64_t k = k0; k < k1; ++k) {
    const float* row = w + k * width;
#pragma GCC unroll 4
    for (int j = 0; j < CZ; ++j) {
      if (j < prefetch.first || j >= prefetch.last) continue;
      const char* line = reinterpret_cast<const char*>(row + prefetch.ahead * width + 16 * j);
      if (prefetch.l2)
        _mm_prefetch(line, _MM_HINT_T1);
      else
        _mm_prefetch(line, _MM_HINT_T0);
    }
    __m512 b[CZ];
#pragma GCC unroll 4
    for (int j = 0; j < CZ; ++j) b[j] = _mm512_loadu_ps(row + 16 * j);
#pragma GCC unroll 4
    for (int m = 0; m < M; ++m) {
      const __m512 a = _mm512_set1_ps(xs[m][k]);
#pragma GCC unroll 4
      for (int j = 0; j < CZ; ++j) acc[m][j] = _mm512_fmadd_ps(a, b[j], acc[m][j]);
    }
  }
#pragma GCC unroll 4
  for (int m = 0; m < M; ++m)
#pragma GCC unroll 4
    for (int j = 0; j < CZ; ++j) _mm512_storeu_ps(part + m * kTile + 16 * j, acc[m][j]);
}

// Rows [0, M) (M <= 4) against every column of the panel (cz vectors): at most 16 sums.
template <int M>
ORDO_TARGET_AVX512 void rows_of(int cz, const float* x, int64_t ldx, const float* w, int64_t width, int64_t k0,
                                int64_t k1, bool fresh, Prefetch prefetch, float* part) {
  switch (cz) {
    case 1: tile<M, 1>(x, ldx, w, width, k0, k1, fresh, prefetch, part); break;
    case 2: tile<M, 2>(x, ldx, w, width, k0, k1, fresh, prefetch, part); break;
    case 3: tile<M, 3>(x, ldx, w, width, k0, k1, fresh, prefetch, part); break;
    default: tile<M, 4>(x, ldx, w, width, k0, k1, fresh, prefetch, part); break;
  }
}

ORDO_TARGET_AVX512 void rows_any(int64_t rows, int cz, const float* x, int64_t ldx, const float* w, int64_t width,
                                 int64_t k0, int64_t k1, bool fresh, Prefetch prefetch, float* part) {
  switch (rows) {
    case 1: rows_of<1>(cz, x, ldx, w, width, k0, k1, fresh, prefetch, part); break;
    case 2: rows_of<2>(cz, x, ldx, w, width, k0, k1, fresh, prefetch, part); break;
    case 3: rows_of<3>(cz, x, ldx, w, width, k0, k1, fresh, prefetch, part); break;
    default: rows_of<4>(cz, x, ldx, w, width, k0, k1, fresh, prefetch, part); break;
  }
}

// total[m][j] = x[m] . column j of the panel's first `vectors` x 16 columns (its rows `width`
// floats apart), chunk by chunk as oneDNN sums. Per block of k: rows 1-4 stream the panel's
// rows from memory (whole cache lines, in order), further rows read them again from L1.
ORDO_TARGET_AVX512 void panel(const float* x, int64_t rows, int64_t k, const float* p, int64_t width, int vectors,
                              int64_t k_chunk, float* total) {
  alignas(64) float part[kSmallGemmMaxRows * kTile];
  for (int64_t start = 0; start < k; start += k_chunk) {
    const int64_t end = std::min(k, start + k_chunk);
    for (int64_t k0 = start; k0 < end; k0 += kBlockK) {
      const int64_t k1 = std::min(end, k0 + kBlockK);
      if (rows <= 4) {
        rows_any(rows, vectors, x, k, p, width, k0, k1, k0 == start, {kPrefetchRows, 0, vectors, false}, part);
      } else {
        // Passes of 4 rows; each asks for its share of the next block's lines.
        const int64_t passes = (rows + 3) / 4;
        for (int64_t pass = 0; pass < passes; ++pass) {
          const int first = static_cast<int>(vectors * pass / passes),
                    last = static_cast<int>(vectors * (pass + 1) / passes);
          rows_any(std::min<int64_t>(4, rows - 4 * pass), vectors, x + 4 * pass * k, k, p, width, k0, k1, k0 == start,
                   {kPrefetchRowsL2, first, last, true}, part + 4 * pass * kTile);
        }
      }
    }
    for (int64_t m = 0; m < rows; ++m)
      for (int64_t j = 0; j < 16 * vectors; ++j)
        total[m * kTile + j] = start == 0 ? part[m * kTile + j] : part[m * kTile + j] + total[m * kTile + j];
  }
}

// Two panels at once, vectors [j0, j0 + CZ) of each row of both, their rows' loads interleaved:
// one core keeps more of the memory's lines in flight with two streams of loads than with one
// (about 1.3 x the bytes per second of a single stream on the Xeon). Each panel's
// arithmetic is tile's: the same chains, in the same order.
template <int M, int CZ>
ORDO_TARGET_AVX512 void tile_pair(const float* x, int64_t ldx, const float* wa, const float* wb, int64_t width, int j0,
                                  int64_t k0, int64_t k1, bool fresh, Prefetch prefetch, float* part_a, float* part_b) {
  __m512 acc[2][M][CZ];
  float* parts[2] = {part_a + 16 * j0, part_b + 16 * j0};
#pragma GCC unroll 2
  for (int s = 0; s < 2; ++s)
#pragma GCC unroll 4
    for (int m = 0; m < M; ++m)
#pragma GCC unroll 4
      for (int j = 0; j < CZ; ++j)
        acc[s][m][j] = fresh ? _mm512_setzero_ps() : _mm512_loadu_ps(parts[s] + m * kTile + 16 * j);
  for (int64_t k = k0; k < k1; ++k) {
    const float* row[2] = {wa + k * width, wb + k * width};
    for (int j = prefetch.first; j < prefetch.last; ++j)
#pragma GCC unroll 2
      for (int s = 0; s < 2; ++s)
        _mm_prefetch(reinterpret_cast<const char*>(row[s] + prefetch.ahead * width + 16 * j), _MM_HINT_T0);
    __m512 b[2][CZ];
#pragma GCC unroll 4
    for (int j = 0; j < CZ; ++j)
#pragma GCC unroll 2
      for (int s = 0; s < 2; ++s) b[s][j] = _mm512_loadu_ps(row[s] + 16 * (j0 + j));
#pragma GCC unroll 4
    for (int m = 0; m < M; ++m) {
      const __m512 a = _mm512_set1_ps(x[m * ldx + k]);
#pragma GCC unroll 2
      for (int s = 0; s < 2; ++s)
#pragma GCC unroll 4
        for (int j = 0; j < CZ; ++j) acc[s][m][j] = _mm512_fmadd_ps(a, b[s][j], acc[s][m][j]);
    }
  }
#pragma GCC unroll 2
  for (int s = 0; s < 2; ++s)
#pragma GCC unroll 4
    for (int m = 0; m < M; ++m)
#pragma GCC unroll 4
      for (int j = 0; j < CZ; ++j) _mm512_storeu_ps(parts[s] + m * kTile + 16 * j, acc[s][m][j]);
}

template <int M>
ORDO_TARGET_AVX512 void pair_of(int cz, const float* x, int64_t ldx, const float* wa, const float* wb, int64_t width,
                                int j0, int64_t k0, int64_t k1, bool fresh, Prefetch prefetch, float* part_a,
                                float* part_b) {
  switch (cz) {
    case 1: tile_pair<M, 1>(x, ldx, wa, wb, width, j0, k0, k1, fresh, prefetch, part_a, part_b); break;
    case 2: tile_pair<M, 2>(x, ldx, wa, wb, width, j0, k0, k1, fresh, prefetch, part_a, part_b); break;
    case 3: tile_pair<M, 3>(x, ldx, wa, wb, width, j0, k0, k1, fresh, prefetch, part_a, part_b); break;
    default: tile_pair<M, 4>(x, ldx, wa, wb, width, j0, k0, k1, fresh, prefetch, part_a, part_b); break;
  }
}

// panel() for two panels of 1-4 rows. Four rows of two whole panels would need 32 registers of
// sums: they go in two passes over each block, the first half of each row's vectors and then
// the second (which the first asked for).
ORDO_TARGET_AVX512 void panel_pair(const float* x, int64_t rows, int64_t k, const float* wa, const float* wb,
                                   int64_t width, int vectors, int64_t k_chunk, float* total_a, float* total_b) {
  alignas(64) float part[2][kSmallGemmMaxRows * kTile];
  const Prefetch all{kPrefetchRowsPair, 0, vectors, false}, none{0, 0, 0, false};
  for (int64_t start = 0; start < k; start += k_chunk) {
    const int64_t end = std::min(k, start + k_chunk);
    for (int64_t k0 = start; k0 < end; k0 += kBlockK) {
      const int64_t k1 = std::min(end, k0 + kBlockK);
      const bool fresh = k0 == start;
      switch (rows) {
        case 1: pair_of<1>(vectors, x, k, wa, wb, width, 0, k0, k1, fresh, all, part[0], part[1]); break;
        case 2: pair_of<2>(vectors, x, k, wa, wb, width, 0, k0, k1, fresh, all, part[0], part[1]); break;
        case 3: pair_of<3>(vectors, x, k, wa, wb, width, 0, k0, k1, fresh, all, part[0], part[1]); break;
        default:
          pair_of<4>(std::min(vectors, 2), x, k, wa, wb, width, 0, k0, k1, fresh, all, part[0], part[1]);
          if (vectors > 2) pair_of<4>(vectors - 2, x, k, wa, wb, width, 2, k0, k1, fresh, none, part[0], part[1]);
          break;
      }
    }
    float* totals[2] = {total_a, total_b};
    for (int s = 0; s < 2; ++s)
      for (int64_t m = 0; m < rows; ++m)
        for (int64_t j = 0; j < 16 * vectors; ++j)
          totals[s][m * kTile + j] =
              start == 0 ? part[s][m * kTile + j] : part[s][m * kTile + j] + totals[s][m * kTile + j];
  }
}

struct F32Call {
  const float* x;
  int64_t rows, k;
  const float* panels;
  PanelLayout layout;
  int64_t n, k_chunk;
  const float* bias;
  bool relu;
  float* y;
  const int64_t* chosen;  // the units to compute (null: every panel)
  bool groups;            // chosen are groups of 16 columns, not panels
};

// Where unit i of the call is: its first weight and column, and how many vectors of 16 columns.
struct Unit {
  const float* w;
  int64_t first;
  int vectors;
};

ORDO_TARGET_AVX512 Unit unit_at(const F32Call& c, int64_t i) {
  const int64_t id = c.chosen ? c.chosen[i] : i;
  const int per_panel = static_cast<int>(c.layout.width / 16);
  if (!c.groups) return {c.panels + id * c.layout.stride, id * c.layout.width, per_panel};
  return {c.panels + id / per_panel * c.layout.stride + 16 * (id % per_panel), 16 * id, 1};
}

// A unit's sums, + bias, relu, into its columns of y.
ORDO_TARGET_AVX512 void store_unit(const F32Call& c, const Unit& u, const float* total) {
  const int64_t first = u.first, count = std::min<int64_t>(16 * u.vectors, c.n - first);
  for (int64_t m = 0; m < c.rows; ++m) {
    float* out = c.y + m * c.n + first;
    const float* sums = total + m * kTile;
    for (int64_t j = 0; j < count; ++j) {
      float v = c.bias ? sums[j] + c.bias[first + j] : sums[j];
      if (c.relu) v = v > 0.0f ? v : 0.0f;  // oneDNN's relu with alpha 0: max(v, +0)
      out[j] = v;
    }
  }
}

// Units [begin, end) of the call, two at a time where 1-4 rows allow.
ORDO_TARGET_AVX512 void panels_avx512(const F32Call& c, int64_t begin, int64_t end) {
  alignas(64) float total[2][kSmallGemmMaxRows * kTile];
  const int64_t width = c.layout.width;
  for (int64_t i = begin; i < end;) {
    const Unit a = unit_at(c, i);
    if (c.rows <= 4 && i + 1 < end) {
      const Unit b = unit_at(c, i + 1);
      panel_pair(c.x, c.rows, c.k, a.w, b.w, width, a.vectors, c.k_chunk, total[0], total[1]);
      store_unit(c, a, total[0]);
      store_unit(c, b, total[1]);
      i += 2;
    } else {
      panel(c.x, c.rows, c.k, a.w, width, a.vectors, c.k_chunk, total[0]);
      store_unit(c, a, total[0]);
      i += 1;
    }
  }
}

// int8 (AVX-512 VNNI). vpdpbusd multiplies unsigned by signed bytes: x's rows go in as x + 128
// (their bytes with the top bit flipped), and 128 x the column's sum comes off again. Both
// sums are exact integers, so the result is oneDNN's int32 whatever the order.
#define ORDO_TARGET_AVX512_VNNI __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx512vnni,avx2,fma")))

// Groups of 4 k per pass: 64 groups of a 64-wide panel are 16 KB, in L1 while rows 5-8 reread them.
constexpr int64_t kBlockGroups = 64;
constexpr int64_t kPrefetchGroups = 24;
constexpr int64_t kPrefetchGroupsL2 = 32;
constexpr int64_t kPrefetchGroupsPair = 12;  // two panels at once: half as far (kPrefetchRowsPair)

template <int M, int CZ>
ORDO_TARGET_AVX512_VNNI void tile_s8(const uint32_t* x, int64_t ldx, const int8_t* w, int64_t g0, int64_t g1,
                                     bool fresh, Prefetch prefetch, int32_t* part) {
  constexpr int64_t width = 16 * CZ;  // columns; a group is width x 4 bytes
  __m512i acc[M][CZ];
#pragma GCC unroll 4
  for (int m = 0; m < M; ++m)
#pragma GCC unroll 4
    for (int j = 0; j < CZ; ++j)
      acc[m][j] = fresh ? _mm512_setzero_si512() : _mm512_loadu_si512(part + m * kTile + 16 * j);
  for (int64_t g = g0; g < g1; ++g) {
    const int8_t* group = w + g * width * 4;
#pragma GCC unroll 4
    for (int j = 0; j < CZ; ++j) {
      if (j < prefetch.first || j >= prefetch.last) continue;
      const char* line = reinterpret_cast<const char*>(group + prefetch.ahead * width * 4 + 64 * j);
      if (prefetch.l2)
        _mm_prefetch(line, _MM_HINT_T1);
      else
        _mm_prefetch(line, _MM_HINT_T0);
    }
    __m512i b[CZ];
#pragma GCC unroll 4
    for (int j = 0; j < CZ; ++j) b[j] = _mm512_loadu_si512(group + 64 * j);
#pragma GCC unroll 4
    for (int m = 0; m < M; ++m) {
      const __m512i a = _mm512_set1_epi32(static_cast<int>(x[m * ldx + g]));
#pragma GCC unroll 4
      for (int j = 0; j < CZ; ++j) acc[m][j] = _mm512_dpbusd_epi32(acc[m][j], a, b[j]);
    }
  }
#pragma GCC unroll 4
  for (int m = 0; m < M; ++m)
#pragma GCC unroll 4
    for (int j = 0; j < CZ; ++j) _mm512_storeu_si512(part + m * kTile + 16 * j, acc[m][j]);
}

template <int M>
ORDO_TARGET_AVX512_VNNI void rows_of_s8(int cz, const uint32_t* x, int64_t ldx, const int8_t* w, int64_t g0, int64_t g1,
                                        bool fresh, Prefetch prefetch, int32_t* part) {
  switch (cz) {
    case 1: tile_s8<M, 1>(x, ldx, w, g0, g1, fresh, prefetch, part); break;
    case 2: tile_s8<M, 2>(x, ldx, w, g0, g1, fresh, prefetch, part); break;
    case 3: tile_s8<M, 3>(x, ldx, w, g0, g1, fresh, prefetch, part); break;
    default: tile_s8<M, 4>(x, ldx, w, g0, g1, fresh, prefetch, part); break;
  }
}

ORDO_TARGET_AVX512_VNNI void rows_any_s8(int64_t rows, int cz, const uint32_t* x, int64_t ldx, const int8_t* w,
                                         int64_t g0, int64_t g1, bool fresh, Prefetch prefetch, int32_t* part) {
  switch (rows) {
    case 1: rows_of_s8<1>(cz, x, ldx, w, g0, g1, fresh, prefetch, part); break;
    case 2: rows_of_s8<2>(cz, x, ldx, w, g0, g1, fresh, prefetch, part); break;
    case 3: rows_of_s8<3>(cz, x, ldx, w, g0, g1, fresh, prefetch, part); break;
    default: rows_of_s8<4>(cz, x, ldx, w, g0, g1, fresh, prefetch, part); break;
  }
}

// tile_s8 for two panels at once, vectors [j0, j0 + CZ) of each (tile_pair's two streams).
template <int M, int CZ>
ORDO_TARGET_AVX512_VNNI void tile_s8_pair(const uint32_t* x, int64_t ldx, const int8_t* wa, const int8_t* wb,
                                          int64_t width, int j0, int64_t g0, int64_t g1, bool fresh, Prefetch prefetch,
                                          int32_t* part_a, int32_t* part_b) {
  __m512i acc[2][M][CZ];
  int32_t* parts[2] = {part_a + 16 * j0, part_b + 16 * j0};
#pragma GCC unroll 2
  for (int s = 0; s < 2; ++s)
#pragma GCC unroll 4
    for (int m = 0; m < M; ++m)
#pragma GCC unroll 4
      for (int j = 0; j < CZ; ++j)
        acc[s][m][j] = fresh ? _mm512_setzero_si512() : _mm512_loadu_si512(parts[s] + m * kTile + 16 * j);
  for (int64_t g = g0; g < g1; ++g) {
    const int8_t* group[2] = {wa + g * width * 4, wb + g * width * 4};
    for (int j = prefetch.first; j < prefetch.last; ++j)
#pragma GCC unroll 2
      for (int s = 0; s < 2; ++s)
        _mm_prefetch(reinterpret_cast<const char*>(group[s] + prefetch.ahead * width * 4 + 64 * j), _MM_HINT_T0);
    __m512i b[2][CZ];
#pragma GCC unroll 4
    for (int j = 0; j < CZ; ++j)
#pragma GCC unroll 2
      for (int s = 0; s < 2; ++s) b[s][j] = _mm512_loadu_si512(group[s] + 64 * (j0 + j));
#pragma GCC unroll 4
    for (int m = 0; m < M; ++m) {
      const __m512i a = _mm512_set1_epi32(static_cast<int>(x[m * ldx + g]));
#pragma GCC unroll 2
      for (int s = 0; s < 2; ++s)
#pragma GCC unroll 4
        for (int j = 0; j < CZ; ++j) acc[s][m][j] = _mm512_dpbusd_epi32(acc[s][m][j], a, b[s][j]);
    }
  }
#pragma GCC unroll 2
  for (int s = 0; s < 2; ++s)
#pragma GCC unroll 4
    for (int m = 0; m < M; ++m)
#pragma GCC unroll 4
      for (int j = 0; j < CZ; ++j) _mm512_storeu_si512(parts[s] + m * kTile + 16 * j, acc[s][m][j]);
}

template <int M>
ORDO_TARGET_AVX512_VNNI void pair_of_s8(int cz, const uint32_t* x, int64_t ldx, const int8_t* wa, const int8_t* wb,
                                        int64_t width, int j0, int64_t g0, int64_t g1, bool fresh, Prefetch prefetch,
                                        int32_t* part_a, int32_t* part_b) {
  switch (cz) {
    case 1: tile_s8_pair<M, 1>(x, ldx, wa, wb, width, j0, g0, g1, fresh, prefetch, part_a, part_b); break;
    case 2: tile_s8_pair<M, 2>(x, ldx, wa, wb, width, j0, g0, g1, fresh, prefetch, part_a, part_b); break;
    case 3: tile_s8_pair<M, 3>(x, ldx, wa, wb, width, j0, g0, g1, fresh, prefetch, part_a, part_b); break;
    default: tile_s8_pair<M, 4>(x, ldx, wa, wb, width, j0, g0, g1, fresh, prefetch, part_a, part_b); break;
  }
}

struct S8Call {
  const uint32_t* x;  // rows x groups words: x + 128, 4 k per word
  int64_t rows, groups;
  const int8_t* panels;
  PanelLayoutS8 layout;
  int64_t n;
  const int32_t* column_sums;
  const float *column_scales, *row_scales, *bias;
  bool relu;
  float* y;
};

// The sums of panels wa and wb (1-4 rows; panel_pair's passes).
ORDO_TARGET_AVX512_VNNI void panel_pair_s8(const S8Call& c, const int8_t* wa, const int8_t* wb, int32_t* part_a,
                                           int32_t* part_b) {
  const int vectors = static_cast<int>(c.layout.width / 16);
  const Prefetch all{kPrefetchGroupsPair, 0, vectors, false}, none{0, 0, 0, false};
  for (int64_t g0 = 0; g0 < c.groups; g0 += kBlockGroups) {
    const int64_t g1 = std::min(c.groups, g0 + kBlockGroups);
    const bool fresh = g0 == 0;
    const int64_t w = c.layout.width;
    switch (c.rows) {
      case 1: pair_of_s8<1>(vectors, c.x, c.groups, wa, wb, w, 0, g0, g1, fresh, all, part_a, part_b); break;
      case 2: pair_of_s8<2>(vectors, c.x, c.groups, wa, wb, w, 0, g0, g1, fresh, all, part_a, part_b); break;
      case 3: pair_of_s8<3>(vectors, c.x, c.groups, wa, wb, w, 0, g0, g1, fresh, all, part_a, part_b); break;
      default:
        pair_of_s8<4>(std::min(vectors, 2), c.x, c.groups, wa, wb, w, 0, g0, g1, fresh, all, part_a, part_b);
        if (vectors > 2) pair_of_s8<4>(vectors - 2, c.x, c.groups, wa, wb, w, 2, g0, g1, fresh, none, part_a, part_b);
        break;
    }
  }
}

// The sums of one panel.
ORDO_TARGET_AVX512_VNNI void panel_s8(const S8Call& c, const int8_t* w, int32_t* part) {
  const int vectors = static_cast<int>(c.layout.width / 16);
  for (int64_t g0 = 0; g0 < c.groups; g0 += kBlockGroups) {
    const int64_t g1 = std::min(c.groups, g0 + kBlockGroups);
    if (c.rows <= 4) {
      rows_any_s8(c.rows, vectors, c.x, c.groups, w, g0, g1, g0 == 0, {kPrefetchGroups, 0, vectors, false}, part);
    } else {
      const int64_t passes = (c.rows + 3) / 4;  // as panel()
      for (int64_t pass = 0; pass < passes; ++pass) {
        const int first = static_cast<int>(vectors * pass / passes),
                  last = static_cast<int>(vectors * (pass + 1) / passes);
        rows_any_s8(std::min<int64_t>(4, c.rows - 4 * pass), vectors, c.x + 4 * pass * c.groups, c.groups, w, g0, g1,
                    g0 == 0, {kPrefetchGroupsL2, first, last, true}, part + 4 * pass * kTile);
      }
    }
  }
}

// float(sum - 128 column sum) * column scale (oneDNN's output scale), * row scale, + bias,
// max(0, y): each rounded on its own (explicit rounding: never fused into one FMA).
ORDO_TARGET_AVX512_VNNI void store_panel_s8(const S8Call& c, int64_t p, const int32_t* part) {
  const __m512 zero = _mm512_setzero_ps();
  constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  const int64_t first = p * c.layout.width, count = std::min(c.layout.width, c.n - first);
  for (int64_t j = 0; j < count; j += 16) {
    const __mmask16 mask = count - j >= 16 ? 0xffff : static_cast<__mmask16>((1u << (count - j)) - 1);
    const __m512i sums = _mm512_maskz_loadu_epi32(mask, c.column_sums + first + j);
    const __m512i offset = _mm512_slli_epi32(sums, 7);
    const __m512 scale = _mm512_maskz_loadu_ps(mask, c.column_scales + first + j);
    const __m512 bias = c.bias ? _mm512_maskz_loadu_ps(mask, c.bias + first + j) : zero;
    for (int64_t m = 0; m < c.rows; ++m) {
      const __m512i total = _mm512_sub_epi32(_mm512_loadu_si512(part + m * kTile + j), offset);
      __m512 v = _mm512_mul_round_ps(_mm512_cvtepi32_ps(total), scale, kRound);
      v = _mm512_mul_round_ps(v, _mm512_set1_ps(c.row_scales[m]), kRound);
      if (c.bias) v = _mm512_add_round_ps(v, bias, kRound);
      if (c.relu) v = _mm512_max_ps(zero, v);  // std::max(v, 0.0f): -0 and NaN stay
      _mm512_mask_storeu_ps(c.y + m * c.n + first + j, mask, v);
    }
  }
}

// Panels [begin, end), two at a time where 1-4 rows allow.
ORDO_TARGET_AVX512_VNNI void panels_s8_avx512(const S8Call& c, int64_t begin, int64_t end) {
  alignas(64) int32_t part[2][kSmallGemmS8MaxRows * kTile];
  for (int64_t p = begin; p < end;) {
    const int8_t* w = c.panels + p * c.layout.stride;
    if (c.rows <= 4 && p + 1 < end) {
      panel_pair_s8(c, w, w + c.layout.stride, part[0], part[1]);
      store_panel_s8(c, p, part[0]);
      store_panel_s8(c, p + 1, part[1]);
      p += 2;
    } else {
      panel_s8(c, w, part[0]);
      store_panel_s8(c, p, part[0]);
      p += 1;
    }
  }
}

}  // namespace

bool small_gemm_available() {
  static const bool available = best_isa() == Isa::kAvx512;
  return available;
}

namespace {

void run_f32(const F32Call& call, int64_t count, int64_t unit_columns) {
  // Claims of an even number of units (the pairs above), each at least ~130k multiply-adds.
  const int64_t grain = (grain_for(call.rows * call.k * unit_columns) + 1) / 2 * 2;
  parallel_claim(0, count, grain, [&](int64_t begin, int64_t end) { panels_avx512(call, begin, end); });
}

}  // namespace

void small_gemm(const float* x, int64_t rows, int64_t k, const float* panels, PanelLayout layout, int64_t n,
                int64_t k_chunk, const float* bias, bool relu, float* y) {
  const F32Call call{x, rows, k, panels, layout, n, k_chunk > 0 ? k_chunk : k, bias, relu, y, nullptr, false};
  run_f32(call, (n + layout.width - 1) / layout.width, layout.width);
}

void small_gemm_groups(const float* x, int64_t rows, int64_t k, const float* panels, PanelLayout layout, int64_t n,
                       int64_t k_chunk, const float* bias, float* y, const int64_t* groups, int64_t count) {
  const F32Call call{x, rows, k, panels, layout, n, k_chunk > 0 ? k_chunk : k, bias, false, y, groups, true};
  run_f32(call, count, 16);
}

bool small_gemm_s8_available() {
  static const bool available = best_isa() == Isa::kAvx512 && __builtin_cpu_supports("avx512vnni");
  return available;
}

void small_gemm_s8(const int8_t* x, int64_t rows, int64_t k, const int8_t* panels, PanelLayoutS8 layout, int64_t n,
                   const int32_t* column_sums, const float* column_scales, const float* row_scales, const float* bias,
                   bool relu, float* y) {
  const int64_t groups = k / 4;
  uint32_t words[kSmallGemmS8MaxRows * 512];
  std::vector<uint32_t> more;
  uint32_t* shifted = words;
  if (rows * groups > static_cast<int64_t>(sizeof words / sizeof words[0])) {
    more.resize(static_cast<size_t>(rows * groups));
    shifted = more.data();
  }
  for (int64_t i = 0; i < rows * groups; ++i) {
    uint32_t word;
    std::memcpy(&word, x + 4 * i, 4);
    shifted[i] = word ^ 0x80808080u;  // each byte + 128, as unsigned
  }
  const S8Call call{shifted, rows, groups, panels, layout, n, column_sums, column_scales, row_scales, bias, relu, y};
  const int64_t count = (n + layout.width - 1) / layout.width;
  const int64_t grain = (grain_for(rows * k * layout.width / 4) + 1) / 2 * 2;  // pairs, as run_f32
  parallel_claim(0, count, grain, [&](int64_t begin, int64_t end) { panels_s8_avx512(call, begin, end); });
}

}  // namespace ordo::kernels
