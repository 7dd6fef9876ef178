// search::top_k_rows against at::topk (random rows, ties, -inf entries), argmax_rows against at::argmax.
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

constexpr float kInf = std::numeric_limits<float>::infinity();

// The top 3 of [1 3 3 -inf] and [2 3 -inf -inf].
kernels::TopK top3_of_ties_and_infinities() {
  return kernels::top_k_rows(at::tensor({1.0f, 3.0f, 3.0f, -kInf, 2.0f, 3.0f, -kInf, -kInf}, at::kFloat).view({2, 4}),
                             3);
}

TEST(TopKRows, TiesKeepTheLowerColumnFirst) {
  const kernels::TopK top = top3_of_ties_and_infinities();
  ASSERT_EQ(top.indices.size(), 6u);
  EXPECT_EQ(std::vector<int64_t>(top.indices.begin(), top.indices.begin() + 3), (std::vector<int64_t>{1, 2, 0}));
  EXPECT_EQ(std::vector<float>(top.values.begin(), top.values.begin() + 3), (std::vector<float>{3, 3, 1}));
}

TEST(TopKRows, MinusInfinityCountsWhenTheRowHasTooFewFiniteValues) {
  const kernels::TopK top = top3_of_ties_and_infinities();
  ASSERT_EQ(top.indices.size(), 6u);
  EXPECT_EQ(std::vector<int64_t>(top.indices.begin() + 3, top.indices.end()), (std::vector<int64_t>{1, 0, 2}));
  EXPECT_EQ(std::vector<float>(top.values.begin() + 3, top.values.end()), (std::vector<float>{3, 2, -kInf}));
}

// Rows of few distinct values (ties within and across blocks of 16), of -inf, and lengths that
// leave a tail after the blocks.
TEST(ArgmaxRows, GivesAtArgmaxsColumnOnTiedRows) {
  at::manual_seed(5);
  for (int64_t n : {1, 15, 16, 17, 100, 58101}) {
    at::Tensor scores = at::randint(0, 4, {9, n}).to(at::kFloat);
    scores[0].fill_(-kInf);
    scores[1].fill_(2.0f);
    EXPECT_TRUE(at::equal(kernels::argmax_rows(scores), scores.argmax(-1))) << n;
  }
}

TEST(ArgmaxRows, TakesARowsFirstNanAsAtArgmaxDoes) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  at::Tensor scores = at::randn({5, 40});
  scores[0][0] = nan;   // at the start
  scores[1][20] = nan;  // in a block, after a larger value
  scores[1][3] = 50.0f;
  scores[2][37] = nan;  // in the tail
  scores[2][38] = nan;
  scores[3][25] = nan;
  scores[3][30] = nan;
  EXPECT_TRUE(at::equal(kernels::argmax_rows(scores), scores.argmax(-1)));
  EXPECT_EQ(kernels::argmax_rows(scores)[1].item<int64_t>(), 20);
}

}  // namespace
}  // namespace ordo::search
