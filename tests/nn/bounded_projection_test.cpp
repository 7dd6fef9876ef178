// PackedGemm::forward_bounded, the output projection of greedy search without scores: exact
// (forward()'s own bits) wherever it says so, an upper bound of forward()'s value everywhere
// else, and its largest value forward()'s largest, on random weights of the workload's and a
// big model's output shapes, for any number of rows.
// ctest-label: unit
#include <cstdlib>
#include <cstring>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include "kernels/small_gemm.h"
#include "nn/packed_gemm.h"
#include "support/thread_count.h"

namespace ordo::nn {
namespace {

bool bounded_here() {
  return kernels::small_gemm_available() && kernels::small_gemm_s8_available() && !std::getenv("ORDO_SMALL_GEMM") &&
         gemm_type_supported(GemmType::kInt8);
}

TEST(BoundedProjection, IsExactWhereItSaysAndAnUpperBoundElsewhere) {
  if (!bounded_here()) GTEST_SKIP() << "no AVX-512 VNNI kernels here";
  testing::ThreadCount restore;
  at::manual_seed(11);
  struct Shape {
    int64_t in, out;
    bool bias;
  };
  for (const Shape shape : {Shape{512, 58101, false}, Shape{1024, 4001, true}}) {
    const PackedGemm gemm(at::randn({shape.out, shape.in}) * 0.05, shape.bias ? at::randn({shape.out}) : at::Tensor(),
                          GemmType::kFloat32);
    for (const int threads : {1, 2}) {
      at::set_num_threads(threads);
      // 1-16 rows: one call of the small-rows kernel for the exact columns; more: blocks of 16.
      for (const int64_t rows : {1, 2, 3, 4, 5, 8, 13, 16, 17, 40}) {
        const at::Tensor x = at::randn({rows, shape.in}) * 2;
        const at::Tensor full = gemm.forward(x);
        const PackedGemm::Bounded bounded = gemm.forward_bounded(x);
        ASSERT_TRUE(bounded.exact.defined()) << rows << " rows";
        const at::Tensor exact = bounded.exact;
        // Exact columns: the same bits.
        const at::Tensor got = bounded.values.masked_select(exact), want = full.masked_select(exact);
        ASSERT_EQ(std::memcmp(got.data_ptr<float>(), want.data_ptr<float>(), sizeof(float) * got.numel()), 0);
        // Elsewhere never below; at a large vocabulary, only a small share computed exactly.
        ASSERT_TRUE(bounded.values.ge(full).all().item<bool>()) << shape.out << ", " << rows << " rows";
        if (shape.out > 50000 && rows <= 2)
          EXPECT_LT(exact.sum().item<int64_t>(), shape.out / 2) << shape.out << ", " << rows << " rows";
        // The largest lands on an exact column and is forward()'s.
        const at::Tensor picked = bounded.values.argmax(-1);
        ASSERT_TRUE(exact.gather(1, picked.unsqueeze(1)).all().item<bool>());
        ASSERT_TRUE(picked.equal(full.argmax(-1)));
      }
    }
  }
}

TEST(BoundedProjection, OfAnInt8GemmIsItsForwardWithNoBound) {
  if (!gemm_type_supported(GemmType::kInt8)) GTEST_SKIP() << "no int8 GEMM here";
  at::manual_seed(12);
  const PackedGemm gemm(at::randn({300, 64}), at::Tensor(), GemmType::kInt8);
  const at::Tensor x = at::randn({2, 64});
  const PackedGemm::Bounded bounded = gemm.forward_bounded(x);
  EXPECT_FALSE(bounded.exact.defined());
  EXPECT_TRUE(bounded.values.equal(gemm.forward(x)));
}

}  // namespace
}  // namespace ordo::nn
