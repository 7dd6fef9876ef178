// T5's relative position buckets against values worked out by hand, and the bias table built
// from them (nn/relative_position.h).
// ctest-label: unit
#include <gtest/gtest.h>

#include "nn/relative_position.h"

namespace ordo::nn {
namespace {

// T5's settings: 32 buckets, max distance 128. Distance = key position - query position.
//
// Bidirectional (the encoder): the 32 buckets split in two halves of 16, keys after the query
// (distance > 0) in the upper half (+16). Within a half, n = |distance|; max_exact = 16 / 2 = 8:
// n < 8 is its own bucket, n >= 8 goes to 8 + trunc(ln(n / 8) / ln(128 / 8) * (16 - 8)), at most 15.
// ln(16) = 2.7725887.
//   n = 8:   ln(1) = 0                              -> 8 + 0 = 8
//   n = 11:  ln(1.375) = 0.3184537 / 2.7725887 = 0.1148578 * 8 = 0.9189 -> 8 + 0 = 8
//   n = 12:  ln(1.5)   = 0.4054651 / 2.7725887 = 0.1462406 * 8 = 1.1699 -> 8 + 1 = 9
//   n = 15:  ln(1.875) = 0.6286087 / 2.7725887 = 0.2267226 * 8 = 1.8138 -> 8 + 1 = 9
//   n = 16:  ln(2) / ln(16) = 1/4 exactly (also in float32: ln 16 rounds to 4 x ln 2's float)
//            * 8 = 2                               -> 8 + 2 = 10
//   n = 32:  ln(4) / ln(16) = 1/2 * 8 = 4          -> 12
//   n = 64:  ln(8) / ln(16) = 3/4 * 8 = 6          -> 14
//   n = 127: ln(15.875) = 2.7646961 / 2.7725887 = 0.9971533 * 8 = 7.9772 -> 8 + 7 = 15
//   n = 128: ln(16) / ln(16) = 1 * 8 = 8 -> 16, capped at 15
//   n = 1000: far beyond max_distance -> 15 (capped)
TEST(RelativePositionBucket, BidirectionalByHand) {
  const auto bucket = [](int64_t distance) { return relative_position_bucket(distance, true, 32, 128); };
  EXPECT_EQ(bucket(0), 0);   // the query itself: lower half, n = 0
  EXPECT_EQ(bucket(-1), 1);  // one key before
  EXPECT_EQ(bucket(1), 17);  // one key after: 16 + 1
  EXPECT_EQ(bucket(-7), 7);  // the last exact distance (7 < 8)
  EXPECT_EQ(bucket(7), 23);  // 16 + 7
  EXPECT_EQ(bucket(-8), 8);  // the first logarithmic one: max_exact = num_buckets / 4 = 8
  EXPECT_EQ(bucket(8), 24);  // 16 + 8
  EXPECT_EQ(bucket(-11), 8);
  EXPECT_EQ(bucket(-12), 9);
  EXPECT_EQ(bucket(-15), 9);
  EXPECT_EQ(bucket(15), 25);  // 16 + 9
  EXPECT_EQ(bucket(-16), 10);
  EXPECT_EQ(bucket(16), 26);
  EXPECT_EQ(bucket(-32), 12);
  EXPECT_EQ(bucket(-64), 14);
  EXPECT_EQ(bucket(-127), 15);
  EXPECT_EQ(bucket(127), 31);
  EXPECT_EQ(bucket(-128), 15);  // at max_distance
  EXPECT_EQ(bucket(128), 31);
  EXPECT_EQ(bucket(-1000), 15);  // beyond it
  EXPECT_EQ(bucket(1000), 31);
  EXPECT_EQ(bucket(-(int64_t{1} << 40)), 15);
}

// Causal (the decoder): keys after the query (distance > 0) all get bucket 0; n = -distance
// otherwise, max_exact = 32 / 2 = 16: n < 16 exact, else 16 + trunc(ln(n / 16) / ln(128 / 16) * 16),
// at most 31. ln(8) = 2.0794415.
//   n = 16:  ln(1) = 0                               -> 16
//   n = 20:  ln(1.25) = 0.2231436 / 2.0794415 = 0.1073093 * 16 = 1.7169 -> 17
//   n = 32:  ln(2) / ln(8) = 1/3 * 16 = 5.3333       -> 21
//   n = 64:  ln(4) / ln(8) = 2/3 * 16 = 10.6667      -> 26
//   n = 127: ln(7.9375) = 2.0715111 / 2.0794415 = 0.9961863 * 16 = 15.9390 -> 31
//   n = 128: ln(8) / ln(8) = 1 * 16 = 16 -> 32, capped at 31
TEST(RelativePositionBucket, CausalByHand) {
  const auto bucket = [](int64_t distance) { return relative_position_bucket(distance, false, 32, 128); };
  EXPECT_EQ(bucket(0), 0);
  EXPECT_EQ(bucket(1), 0);  // a later key (masked anyway): bucket 0
  EXPECT_EQ(bucket(500), 0);
  EXPECT_EQ(bucket(-1), 1);
  EXPECT_EQ(bucket(-15), 15);  // the last exact distance (15 < 16)
  EXPECT_EQ(bucket(-16), 16);  // the first logarithmic one: max_exact = num_buckets / 2 = 16
  EXPECT_EQ(bucket(-20), 17);
  EXPECT_EQ(bucket(-32), 21);
  EXPECT_EQ(bucket(-64), 26);
  EXPECT_EQ(bucket(-127), 31);
  EXPECT_EQ(bucket(-128), 31);  // at max_distance
  EXPECT_EQ(bucket(-500), 31);  // beyond it
}

// Another size, so nothing above is a constant in disguise: 8 buckets, max distance 20,
// bidirectional: halves of 4, max_exact 2; n >= 2: 2 + trunc(ln(n / 2) / ln(10) * 2), at most 3.
//   n = 2: 0 -> 2;  n = 6: ln 3 / ln 10 = 0.4771 * 2 = 0.954 -> 2;  n = 7: ln 3.5 / ln 10 = 0.5441
//   * 2 = 1.088 -> 3;  n = 20: ln 10 / ln 10 * 2 = 2 -> 4, capped at 3.
TEST(RelativePositionBucket, SmallTableByHand) {
  const auto bucket = [](int64_t distance) { return relative_position_bucket(distance, true, 8, 20); };
  EXPECT_EQ(bucket(0), 0);
  EXPECT_EQ(bucket(-1), 1);
  EXPECT_EQ(bucket(1), 5);
  EXPECT_EQ(bucket(-2), 2);
  EXPECT_EQ(bucket(-6), 2);
  EXPECT_EQ(bucket(-7), 3);
  EXPECT_EQ(bucket(7), 7);
  EXPECT_EQ(bucket(-20), 3);
  EXPECT_EQ(bucket(20), 7);
}

// The table read through the buckets: query i (from q_start) against key s reads row
// bucket(s - q_start - i), per head.
TEST(RelativePositionBias, LooksUpEveryQueryAndKeyThroughItsBucket) {
  RelativePositionBias bias(32, 128, 3, /*bidirectional=*/false);
  bias.weight = at::arange(32 * 3, at::kFloat).view({32, 3});  // row b, head h holds 3b + h
  const at::Tensor values = bias.forward(/*q_start=*/40, /*q_len=*/2, /*kv_len=*/42);
  ASSERT_EQ(values.sizes(), (at::IntArrayRef{1, 3, 2, 42}));
  for (int64_t h = 0; h < 3; ++h)
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t s = 0; s < 42; ++s)
        ASSERT_EQ(values[0][h][i][s].item<float>(), 3 * relative_position_bucket(s - 40 - i, false, 32, 128) + h)
            << h << " " << i << " " << s;
  // The query at 41 against key 0 is distance -41: ln(41/16) / ln 8 * 16 = 7.2403 -> 23; head 1.
  EXPECT_EQ(values[0][1][1][0].item<float>(), 3 * 23 + 1);
  const at::Tensor by_distance = bias.by_distance(-3, 5);  // distances -3 .. 1
  EXPECT_EQ(by_distance[2][0].item<float>(), 3 * 3 + 2);
  EXPECT_EQ(by_distance[2][4].item<float>(), 2);  // distance +1: causal bucket 0
}

}  // namespace
}  // namespace ordo::nn
