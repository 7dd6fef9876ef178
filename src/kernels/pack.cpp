#include "kernels/pack.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>

#include <immintrin.h>

#include "kernels/isa.h"
#include "kernels/parallel.h"

namespace ordo::kernels {
namespace {

constexpr size_t kPopulateChunk = size_t{2} << 20;

// 8 x 8 tiles transposed in registers and stored 8 floats at a time, instead of one float per
// store 256 bytes apart.
__attribute__((target("avx2"))) void write_group16_avx2(const float* rows, int64_t in, const int64_t* k_offset,
                                                        float* column) {
  int64_t k = 0;
  for (; k + 8 <= in; k += 8) {
    for (int half = 0; half < 2; ++half) {
      const float* r = rows + half * 8 * in + k;
      const __m256 r0 = _mm256_loadu_ps(r), r1 = _mm256_loadu_ps(r + in), r2 = _mm256_loadu_ps(r + 2 * in),
                   r3 = _mm256_loadu_ps(r + 3 * in), r4 = _mm256_loadu_ps(r + 4 * in), r5 = _mm256_loadu_ps(r + 5 * in),
                   r6 = _mm256_loadu_ps(r + 6 * in), r7 = _mm256_loadu_ps(r + 7 * in);
      const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1), t2 = _mm256_unpacklo_ps(r2, r3),
                   t3 = _mm256_unpackhi_ps(r2, r3), t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5),
                   t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
      // s_j: rows 0-3 (or 4-7) of columns j and j + 4.
      const __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE),
                   s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE),
                   s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE),
                   s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
      float* out = column + half * 8;
      _mm256_storeu_ps(out + k_offset[k + 0], _mm256_permute2f128_ps(s0, s4, 0x20));
      _mm256_storeu_ps(out + k_offset[k + 1], _mm256_permute2f128_ps(s1, s5, 0x20));
      _mm256_storeu_ps(out + k_offset[k + 2], _mm256_permute2f128_ps(s2, s6, 0x20));
      _mm256_storeu_ps(out + k_offset[k + 3], _mm256_permute2f128_ps(s3, s7, 0x20));
      _mm256_storeu_ps(out + k_offset[k + 4], _mm256_permute2f128_ps(s0, s4, 0x31));
      _mm256_storeu_ps(out + k_offset[k + 5], _mm256_permute2f128_ps(s1, s5, 0x31));
      _mm256_storeu_ps(out + k_offset[k + 6], _mm256_permute2f128_ps(s2, s6, 0x31));
      _mm256_storeu_ps(out + k_offset[k + 7], _mm256_permute2f128_ps(s3, s7, 0x31));
    }
  }
  for (; k < in; ++k)
    for (int64_t i = 0; i < 16; ++i) column[k_offset[k] + i] = rows[i * in + k];
}

}  // namespace

std::shared_ptr<const void> map_zeroed(size_t bytes) {
  if (bytes < 2 * kPopulateChunk) return nullptr;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t length = (bytes + page - 1) / page * page;
  void* start = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (start == MAP_FAILED) return nullptr;
#ifdef MADV_POPULATE_WRITE
  // Advice only: a kernel without it (before 5.14) faults the pages in as they are written.
  const int64_t chunks = static_cast<int64_t>((length + kPopulateChunk - 1) / kPopulateChunk);
  parallel_for(0, chunks, 1, [&](int64_t first, int64_t last) {
    const size_t from = static_cast<size_t>(first) * kPopulateChunk;
    const size_t to = std::min(length, static_cast<size_t>(last) * kPopulateChunk);
    ::madvise(static_cast<char*>(start) + from, to - from, MADV_POPULATE_WRITE);
  });
#endif
  return std::shared_ptr<const void>(start, [length](const void* p) { ::munmap(const_cast<void*>(p), length); });
}

// No AVX-512 body: 8 x 8 tiles already store whole cache lines in pairs (and Zen 4 runs
// 512-bit shuffles as two 256-bit halves); baseline x86-64: the scalar loop.
WriteGroup16 pick_write_group16() {
  return pick_for_isa<WriteGroup16>(write_group16_avx2, write_group16_avx2, nullptr);
}

}  // namespace ordo::kernels
