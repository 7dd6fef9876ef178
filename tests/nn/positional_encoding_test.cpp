// Position encodings against hand-computed and published values.
// ctest-label: unit
#include <cmath>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "nn/positional_encoding.h"
#include "support/thread_count.h"

namespace ordo::nn {
namespace {

TEST(PositionalEncoding, InterleavedMatchesPublishedTableForBase100) {
  // Positions 0-3, d = 4, n = 100: the table published with the textbook formula.
  const float expected[4][4] = {{0, 1, 0, 1},
                                {0.84147098f, 0.54030231f, 0.09983342f, 0.99500417f},
                                {0.90929743f, -0.41614684f, 0.19866933f, 0.98006658f},
                                {0.14112001f, -0.9899925f, 0.29552023f, 0.95533649f}};
  PositionEncodingSpec spec;
  spec.layout = PositionLayout::kInterleaved;
  spec.base = 100.0;
  const at::Tensor table = sinusoidal_table(4, 4, spec);
  for (int p = 0; p < 4; ++p)
    for (int j = 0; j < 4; ++j) EXPECT_NEAR(table[p][j].item<float>(), expected[p][j], 1e-7) << p << "," << j;
}

TEST(PositionalEncoding, SinThenCosPutsSinesFirst) {
  // Hugging Face Marian: column i < d/2 is sin(pos / 10000^(2i/d)), column d/2 + i the cosine.
  PositionEncodingSpec spec;
  spec.layout = PositionLayout::kSinCos;
  const int64_t d = 8;
  const at::Tensor table = sinusoidal_table(5, d, spec);
  for (int pos = 0; pos < 5; ++pos)
    for (int i = 0; i < d / 2; ++i) {
      const double angle = pos / std::pow(10000.0, 2.0 * i / d);
      EXPECT_NEAR(table[pos][i].item<float>(), std::sin(angle), 1e-6);
      EXPECT_NEAR(table[pos][d / 2 + i].item<float>(), std::cos(angle), 1e-6);
    }
}

// fairseq: frequencies 10000^(-i/(d/2-1)), table row padding_idx is zero, the first real
// position is padding_idx + 1.
SinusoidalPositions fairseq_positions_of_width_6() {
  PositionEncodingSpec spec;
  spec.layout = PositionLayout::kFairseq;
  spec.offset = 2;
  spec.zero_row = 1;
  return SinusoidalPositions(10, 6, spec);
}

TEST(PositionalEncoding, FairseqPaddingRowIsZero) {
  const SinusoidalPositions positions = fairseq_positions_of_width_6();
  EXPECT_EQ(positions.rows(at::tensor({int64_t{1}})).abs().sum().item<float>(), 0.0f);
}

TEST(PositionalEncoding, FairseqFirstPositionIsTheRowPastThePadding) {
  const int64_t d = 6;
  const SinusoidalPositions positions = fairseq_positions_of_width_6();
  const at::Tensor first = positions.range(0, 1)[0];  // row 2 of the table: position value 2
  for (int i = 0; i < d / 2; ++i) {
    const double angle = 2.0 * std::exp(i * -std::log(10000.0) / (d / 2 - 1));
    EXPECT_NEAR(first[i].item<float>(), std::sin(angle), 1e-6);
    EXPECT_NEAR(first[d / 2 + i].item<float>(), std::cos(angle), 1e-6);
  }
}

// fairseq rows with the bound a decoding step knows (padding + length): the same rows as without
// it inside the table, and rows past the table still computed when the bound says they may be.
TEST(PositionalEncoding, FairseqRowsWithABoundAreTheRowsWithout) {
  PositionEncodingSpec spec;
  spec.layout = PositionLayout::kFairseq;
  spec.offset = 2;
  spec.zero_row = 1;
  SinusoidalPositions positions(10, 6, spec);  // 12 table rows
  const at::Tensor inside = at::tensor(std::vector<int64_t>{1, 5, 11});
  EXPECT_TRUE(at::equal(positions.rows(inside, 11), positions.rows(inside)));
  const at::Tensor past = at::tensor(std::vector<int64_t>{3, 14});
  const at::Tensor grown = positions.rows(past, 14);
  EXPECT_TRUE(at::equal(grown, positions.rows(past)));
  EXPECT_TRUE(at::equal(grown[1], sinusoidal_table(15, 6, spec)[14]));
}

// The value-by-value formulas the table was first computed with (each value its own pow / exp):
// the table, computed once per column and on several threads, holds exactly their bits.
std::vector<double> reference_values(int64_t positions, int64_t dim, const PositionEncodingSpec& spec) {
  std::vector<double> table(static_cast<size_t>(positions * dim), 0.0);
  const int64_t half = dim / 2;
  for (int64_t pos = 0; pos < positions; ++pos) {
    double* row = table.data() + pos * dim;
    if (pos == spec.zero_row) continue;
    if (spec.layout == PositionLayout::kFairseq) {
      const float scale = static_cast<float>(std::log(spec.base) / static_cast<double>(half - 1));
      for (int64_t i = 0; i < half; ++i) {
        const float angle = static_cast<float>(pos) * std::exp(static_cast<float>(i) * -scale);
        row[i] = std::sin(angle);
        row[half + i] = std::cos(angle);
      }
      continue;
    }
    const int64_t sines = dim / 2 + dim % 2;
    for (int64_t j = 0; j < dim; ++j) {
      const double angle = pos / std::pow(spec.base, 2.0 * (j / 2) / static_cast<double>(dim));
      if (spec.layout == PositionLayout::kInterleaved)
        row[j] = j % 2 == 0 ? std::sin(angle) : std::cos(angle);
      else if (j % 2 == 0)
        row[j / 2] = std::sin(angle);
      else
        row[sines + j / 2] = std::cos(angle);
    }
  }
  return table;
}

TEST(PositionalEncoding, TablesHoldTheValueByValueFormulasBitsOnAnyThreads) {
  testing::ThreadCount restore;
  for (const int threads : {1, 2}) {
    at::set_num_threads(threads);
    for (const PositionLayout layout :
         {PositionLayout::kInterleaved, PositionLayout::kSinCos, PositionLayout::kFairseq})
      for (const int64_t dim : {int64_t{7}, int64_t{64}, int64_t{1024}}) {
        PositionEncodingSpec spec;
        spec.layout = layout;
        if (layout == PositionLayout::kFairseq) spec.zero_row = 1;
        const int64_t positions = 300;
        const std::vector<double> table = sinusoidal_values(positions, dim, spec);
        const std::vector<double> expected = reference_values(positions, dim, spec);
        ASSERT_EQ(table.size(), expected.size());
        size_t differing = 0;
        for (size_t i = 0; i < table.size(); ++i)
          differing += std::memcmp(&table[i], &expected[i], sizeof(double)) != 0;
        EXPECT_EQ(differing, 0u) << "layout " << static_cast<int>(layout) << ", dim " << dim << ", " << threads
                                 << " threads";
      }
  }
}

TEST(PositionalEncoding, TooLongSequenceIsAnError) {
  SinusoidalPositions positions(4, 4, PositionEncodingSpec{});
  EXPECT_THROW(positions.range(2, 3), std::exception);
}

}  // namespace
}  // namespace ordo::nn
