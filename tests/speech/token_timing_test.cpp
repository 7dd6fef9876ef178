// ctest-label: unit
// Token times and words (src/speech/token_timing.h) on small inputs whose answers transformers
// 4.31's own functions gave (_dynamic_time_warping, _median_filter, _combine_tokens_into_words).
#include "speech/token_timing.h"

#include <map>

#include <gtest/gtest.h>

#include "text/hf_rules.h"

namespace ordo::speech {
namespace {

std::function<std::string(const std::vector<int64_t>&)> fake_decode(std::map<int64_t, std::string> pieces) {
  return [pieces](const std::vector<int64_t>& ids) {
    std::string bytes;
    for (int64_t id : ids) bytes += pieces.at(id);
    return text::decode_utf8_replacing(bytes);
  };
}

TEST(TokenTiming, DynamicTimeWarpingFollowsTransformersPath) {
  const at::Tensor m =
      at::tensor({0.1, 0.9, 0.3, 0.5, 0.7, 0.2, 0.8, 0.1, 0.4, 0.6, 0.05, 0.3}, at::kDouble).view({3, 4});
  const WarpPath path = dynamic_time_warping(-m);
  EXPECT_EQ(path.token, (std::vector<int64_t>{0, 0, 0, 1, 1, 2}));
  EXPECT_EQ(path.position, (std::vector<int64_t>{0, 1, 2, 2, 3, 3}));
}

TEST(TokenTiming, MedianFilterReflectsTheEdges) {
  const at::Tensor x = at::tensor({3.f, 1.f, 4.f, 1.f, 5.f, 9.f, 2.f, 6.f}).view({1, 1, 8});
  const at::Tensor three = median_filter(x, 3).view({-1});
  const at::Tensor five = median_filter(x, 5).view({-1});
  EXPECT_TRUE(at::equal(three, at::tensor({1.f, 3.f, 1.f, 4.f, 5.f, 5.f, 6.f, 2.f})));
  EXPECT_TRUE(at::equal(five, at::tensor({3.f, 1.f, 3.f, 4.f, 4.f, 5.f, 5.f, 6.f})));
}

TEST(TokenTiming, MedianFilterRefusesAnEvenWidth) { EXPECT_ANY_THROW(median_filter(at::zeros({1, 8}), 4)); }

TEST(TokenTiming, TokenTimestampsStartWithZeroAndGiveOneTimePerQuery) {
  // Two queries, one layer, one head, four positions: the first looks at position 1, the second at 3.
  const at::Tensor attention = at::tensor({0.1f, 0.7f, 0.1f, 0.1f, 0.1f, 0.1f, 0.1f, 0.7f}).view({2, 1, 1, 4});
  const std::vector<double> times = token_timestamps(attention, {{0, 0}}, 1, 0.02);
  ASSERT_EQ(times.size(), 3u);
  EXPECT_EQ(times[0], 0.0);
  EXPECT_LE(times[1], times[2]);
}

TEST(TokenTiming, TokenTimestampsRefuseAnAlignmentHeadOutsideTheDecoder) {
  EXPECT_ANY_THROW(token_timestamps(at::ones({2, 1, 1, 4}), {{1, 0}}, 1));
}

TEST(TokenTiming, WordsSplitAtSpacesAndTakeTheirPunctuation) {
  const auto decode = fake_decode({{1, " Hello"},
                                   {2, ","},
                                   {3, " wor"},
                                   {4, "ld"},
                                   {5, "!"},
                                   {6, " \""},
                                   {7, "Hi"},
                                   {8, "\""},
                                   {9, " ("},
                                   {10, "x"},
                                   {11, ")"}});
  const std::vector<WordTokens> words = group_words({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, decode, 100, false);
  ASSERT_EQ(words.size(), 4u);
  EXPECT_EQ(words[0].word, " Hello,");
  EXPECT_EQ(words[1].word, " world!");
  EXPECT_EQ(words[2].word, " \"Hi\"");
  EXPECT_EQ(words[3].word, " (x)");
  EXPECT_EQ(words[1].indices, (std::vector<size_t>{2, 3, 4}));
  EXPECT_EQ(words[3].indices, (std::vector<size_t>{8, 9, 10}));
}

TEST(TokenTiming, WordsDoNotEndInsideACharacter) {
  const auto decode = fake_decode({{20, "\xc3"}, {21, "\xa9t"}, {22, " a"}});
  const std::vector<WordTokens> words = group_words({20, 21, 22}, decode, 100, false);
  ASSERT_EQ(words.size(), 2u);
  EXPECT_EQ(words[0].word, "\xc3\xa9t");
  EXPECT_EQ(words[0].indices, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(words[1].word, " a");
}

TEST(TokenTiming, LanguagesWithoutSpacesSplitAtEveryCharacter) {
  const auto decode = fake_decode({{1, "\xe4\xbd"}, {2, "\xa0"}, {3, "\xe5\xa5\xbd"}});
  const std::vector<WordTokens> words = group_words({1, 2, 3}, decode, 100, true);
  ASSERT_EQ(words.size(), 2u);
  EXPECT_EQ(words[0].indices, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(words[1].word, "\xe5\xa5\xbd");
  EXPECT_TRUE(splits_words_on_unicode("ja"));
  EXPECT_FALSE(splits_words_on_unicode("de"));
}

}  // namespace
}  // namespace ordo::speech
