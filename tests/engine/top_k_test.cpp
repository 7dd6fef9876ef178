// search::top_k_rows against at::topk: random rows, ties, -inf entries.
// ctest-label: unit
#include <gtest/gtest.h>

#include "kernels/top_k.h"

namespace ordo::search {
namespace {

TEST(TopKRows, MatchesAtTopkOnRandomRows) {
  at::manual_seed(3);
  const at::Tensor scores = at::randn({5, 1000});
  for (int64_t k : {1, 2, 8, 17}) {
    const kernels::TopK top = kernels::top_k_rows(scores, k);
    const auto [values, indices] = at::topk(scores, k, 1, true, true);
    for (int64_t r = 0; r < 5; ++r)
      for (int64_t i = 0; i < k; ++i) {
        EXPECT_EQ(top.values[r * k + i], values[r][i].item<float>()) << r << " " << i;
        EXPECT_EQ(top.indices[r * k + i], indices[r][i].item<int64_t>()) << r << " " << i;
      }
  }
}

TEST(TopKRows, TiesKeepTheLowerColumnFirstAndMinusInfinityCounts) {
  const float inf = std::numeric_limits<float>::infinity();
  const at::Tensor scores = at::tensor({1.0f, 3.0f, 3.0f, -inf, 2.0f, 3.0f, -inf, -inf}, at::kFloat).view({2, 4});
  const kernels::TopK top = kernels::top_k_rows(scores, 3);
  EXPECT_EQ(top.indices, (std::vector<int64_t>{1, 2, 0, 1, 0, 2}));
  EXPECT_EQ(top.values, (std::vector<float>{3, 3, 1, 3, 2, -inf}));
}

}  // namespace
}  // namespace ordo::search
