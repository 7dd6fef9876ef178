// nn::log_softmax_rows_ / log_softmax_at (the search's per-step log-probabilities) against a
// double-precision reference, and search::top_k_rows with per-beam offsets against ranking
// the explicit sums.
// ctest-label: unit
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kernels/log_softmax.h"
#include "kernels/top_k.h"
#include "ordo/error.h"

namespace ordo {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(LogSoftmaxRows, MatchesDoublePrecisionReference) {
  at::manual_seed(11);
  // Widths below, at and around the 16-lane blocks, and the opus-mt vocabulary.
  for (int64_t n : {1, 7, 16, 17, 33, 1000, 58101}) {
    const at::Tensor logits = at::randn({3, n}) * 6;
    const at::Tensor expected = at::log_softmax(logits.to(at::kDouble), -1);
    at::Tensor ours = logits.clone();
    kernels::log_softmax_rows_(ours);
    const double error = (ours.to(at::kDouble) - expected).abs().max().item<double>();
    EXPECT_LT(error, 2e-5) << "n = " << n;
    // Not a copy of the input: the rows' probabilities sum to 1.
    EXPECT_NEAR(ours.to(at::kDouble).exp().sum(-1).sub(1).abs().max().item<double>(), 0, 1e-5) << n;
  }
}

// Four random rows, row 1 with -inf in column 5 (as beam search's never-pad mask leaves the
// pad column).
at::Tensor masked_logits() {
  at::manual_seed(12);
  at::Tensor logits = at::randn({4, 300});
  logits[1][5] = -kInf;
  return logits;
}

TEST(LogSoftmaxRows, MinusInfinityStaysOutOfTheOtherColumns) {
  at::Tensor all = masked_logits();
  kernels::log_softmax_rows_(all);
  EXPECT_EQ(all[1][5].item<float>(), -kInf);
  EXPECT_TRUE(at::isfinite(all[1].narrow(0, 6, 294)).all().item<bool>());
}

TEST(LogSoftmaxRows, ARowDoesNotDependOnItsBatch) {
  const at::Tensor logits = masked_logits();
  at::Tensor all = logits.clone();
  kernels::log_softmax_rows_(all);
  for (int64_t r = 0; r < 4; ++r) {
    at::Tensor alone = logits[r].unsqueeze(0).clone();
    kernels::log_softmax_rows_(alone);
    EXPECT_TRUE(at::equal(alone[0], all[r])) << r;
  }
}

TEST(LogSoftmaxAt, IsTheValueTheInPlaceRowsHold) {
  at::manual_seed(13);
  const at::Tensor logits = at::randn({6, 58101}) * 4;
  const at::Tensor ids = at::tensor({0L, 1L, 58100L, 17L, 4242L, 31337L}, at::kLong);
  const at::Tensor picked = kernels::log_softmax_at(logits, ids);
  at::Tensor rows = logits.clone();
  kernels::log_softmax_rows_(rows);
  for (int64_t r = 0; r < 6; ++r)
    EXPECT_EQ(picked[r].item<float>(), rows[r][ids[r].item<int64_t>()].item<float>()) << r;
  EXPECT_TRUE(at::equal(logits, logits.clone()));  // unchanged
}

TEST(LogSoftmaxRows, RejectsWhatItCannotRead) {
  at::Tensor strided = at::randn({4, 8}).t();
  EXPECT_THROW(kernels::log_softmax_rows_(strided), Error);
  at::Tensor doubles = at::randn({2, 8}, at::kDouble);
  EXPECT_THROW(kernels::log_softmax_rows_(doubles), Error);
  EXPECT_THROW(kernels::log_softmax_at(at::randn({2, 8}), at::tensor({0L, 8L})), Error);
  EXPECT_THROW(kernels::log_softmax_at(at::randn({2, 8}), at::tensor({0L})), Error);
}

TEST(TopKRowsWithOffsets, RanksTheSumsAsAMatrixHoldingThemWould) {
  at::manual_seed(14);
  const int64_t sentences = 3, beams = 4, vocab = 500;
  at::Tensor scores = at::randn({sentences * beams, vocab});
  scores[2][7] = -kInf;
  // Ties across beams: the same log-probability on two beams with equal running scores.
  scores[5][9] = 3.0f;
  scores[6][2] = 3.0f;
  at::Tensor offsets = at::randn({sentences * beams});
  offsets[5] = offsets[6].item<float>();
  const at::Tensor sums = (scores + offsets.unsqueeze(1)).view({sentences, beams * vocab});
  for (int64_t k : {1, 8, 13}) {
    const kernels::TopK expected = kernels::top_k_rows(sums, k);
    const kernels::TopK ours =
        kernels::top_k_rows(scores.view({sentences, beams * vocab}), k, offsets.data_ptr<float>(), vocab);
    EXPECT_EQ(ours.values, expected.values) << k;
    EXPECT_EQ(ours.indices, expected.indices) << k;
  }
  EXPECT_THROW(kernels::top_k_rows(scores.view({sentences, beams * vocab}), 2, offsets.data_ptr<float>(), 3), Error);
  EXPECT_THROW(kernels::top_k_rows(scores, 0), Error);
  EXPECT_THROW(kernels::top_k_rows(scores, vocab + 1), Error);
}

}  // namespace
}  // namespace ordo
