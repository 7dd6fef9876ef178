#include "bench/gemm_report.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <ATen/Parallel.h>

#include "bench/timing.h"
#include "kernels/lanes.h"
#include "kernels/parallel.h"
#include "kernels/small_gemm.h"

namespace ordo::bench {
namespace {

// Every float of [begin, end) read once, 32 at a time (two 64-byte lines), summed so that the
// reads cannot be dropped.
ORDO_TARGET_AVX512 float read_all(const float* data, int64_t begin, int64_t end) {
  kernels::lanes::V16 a = {}, b = {};
  for (int64_t i = begin; i < end; i += 32) {
    a += kernels::lanes::load(data + i);
    b += kernels::lanes::load(data + i + 16);
  }
  return kernels::lanes::lane_sum(a + b);
}

// GB/s of a read of 1 GB on the current thread count, split in one slice per thread.
double read_bandwidth(const std::vector<float>& data, int runs) {
  std::vector<double> rates;
  float sink = 0;
  for (int r = 0; r < runs; ++r) {
    const auto start = Clock::now();
    std::vector<float> sums(2, 0.0f);
    const int64_t blocks = static_cast<int64_t>(data.size()) / 32;
    kernels::parallel_for(0, blocks, 1,
                          [&](int64_t b, int64_t e) { sums[b == 0 ? 0 : 1] = read_all(data.data(), b * 32, e * 32); });
    rates.push_back(static_cast<double>(data.size()) * sizeof(float) / seconds_since(start) / 1e9);
    sink += sums[0] + sums[1];
  }
  if (sink == 12345.0f) std::printf(" ");  // keeps the sums alive
  return median(rates);
}

}  // namespace

int run_gemm_report(int runs) {
  if (!kernels::small_gemm_available()) {
    std::printf("ordo-bench --gemm: the small-rows kernel has no body on this CPU (no AVX-512, or ORDO_ISA)\n");
    return 1;
  }
  runs = std::max(runs, 3);
  const std::vector<float> memory(size_t{256} << 20, 1.0f);  // 1 GB: far more than any L3
  std::printf(
      "| float32 step GEMM (kernels/small_gemm.h) | threads | rows | ms per GEMM | GB/s of weights | GFLOPS | %% of "
      "the memory read rate |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  struct Shape {
    const char* name;
    int64_t k, n;
  };
  const std::vector<Shape> shapes = {
      {"1024 x 4096 (fc1)", 1024, 4096}, {"4096 x 1024 (fc2)", 4096, 1024}, {"768 x 2048 (Flan-T5 wi)", 768, 2048}};
  for (const int threads : {1, 2}) {
    at::set_num_threads(threads);
    const double bandwidth = read_bandwidth(memory, runs);
    std::printf("| memory read (1 GB) | %d | - | - | %.1f | - | 100 |\n", threads, bandwidth);
    for (const Shape& shape : shapes) {
      // Panels of 64 columns, as oneDNN packs them; enough copies of the weights (512 MB) that
      // each GEMM reads them from memory, not from a cache.
      const kernels::PanelLayout layout{64, shape.k * 64};
      const int64_t panels = (shape.n + 63) / 64, floats = panels * layout.stride;
      const int copies = static_cast<int>(std::max<int64_t>(2, (int64_t{512} << 20) / (floats * 4)));
      std::vector<std::vector<float>> weights(static_cast<size_t>(copies), std::vector<float>(floats, 0.01f));
      for (const int64_t rows : {int64_t{1}, int64_t{4}, int64_t{8}}) {
        const std::vector<float> x(static_cast<size_t>(rows * shape.k), 0.5f);
        std::vector<float> y(static_cast<size_t>(rows * shape.n));
        std::vector<double> seconds;
        for (int r = 0; r < runs; ++r) {
          const auto start = Clock::now();
          for (const std::vector<float>& w : weights)
            kernels::small_gemm(x.data(), rows, shape.k, w.data(), layout, shape.n, shape.k, nullptr, false, y.data());
          seconds.push_back(seconds_since(start) / copies);
        }
        const double s = median(seconds), bytes = static_cast<double>(shape.k) * shape.n * sizeof(float);
        std::printf("| %s | %d | %lld | %.3f | %.1f | %.1f | %.0f |\n", shape.name, threads,
                    static_cast<long long>(rows), s * 1e3, bytes / s / 1e9, 2.0 * rows * shape.k * shape.n / s / 1e9,
                    100 * bytes / s / 1e9 / bandwidth);
        std::fflush(stdout);
      }
    }
  }
  return 0;
}

}  // namespace ordo::bench
