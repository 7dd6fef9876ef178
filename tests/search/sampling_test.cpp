// Sampling (search::greedy_search with do_sample) over a scripted StepModel: the draws depend on
// the seed and on nothing else (not on the other hypotheses or inputs of the batch), and the
// warpers narrow the choice as Hugging Face's do (top_k = 1 is greedy search).
// ctest-label: unit
#include <cmath>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "search/search.h"
#include "support/scripted_step_model.h"

namespace ordo::search {
namespace {

using testing::ScriptedStepModel;
using namespace testing::script;

GenerationSettings sampling_settings(uint64_t seed) {
  GenerationSettings s = settings();
  s.num_beams = 1;
  s.do_sample = true;
  s.seed = seed;
  s.max_length = 9;
  return s;
}

// Nearly flat over the six words, never EOS: two seeds' 8 draws agree only by chance, about
// once in 6^8.
ScriptedStepModel::Distribution flat() { return {{2, 0.17}, {3, 0.17}, {4, 0.17}, {5, 0.17}, {6, 0.16}, {7, 0.16}}; }
// Another input's distribution: 2 and 3 only.
ScriptedStepModel::Distribution two_words() { return {{2, 0.5}, {3, 0.5}}; }

Ids sample(uint64_t seed, ScriptedStepModel::Distribution d = flat()) {
  ScriptedStepModel model(1, kVocab, d);
  return greedy_search(model, 1, sampling_settings(seed))[0][0].ids;
}

TEST(SamplingSearch, TheSameSeedDrawsTheSameTokens) {
  const Ids first = sample(7);
  EXPECT_EQ(first.size(), 8u);
  EXPECT_EQ(sample(7), first);
}

TEST(SamplingSearch, AnotherSeedDrawsOtherTokens) { EXPECT_NE(sample(7), sample(8)); }

TEST(SamplingSearch, TopKOneIsGreedySearch) {
  const auto script = [](ScriptedStepModel& m) {
    m.after({}, {{3, 0.3}, {4, 0.25}, {5, 0.2}})
        .after({3}, {{5, 0.3}, {6, 0.29}})
        .after({3, 5}, {{kEos, 0.3}, {2, 0.2}});
  };
  ScriptedStepModel greedy_model(1, kVocab, flat());
  script(greedy_model);
  GenerationSettings greedy = sampling_settings(0);
  greedy.do_sample = false;
  const SearchHypothesis expected = greedy_search(greedy_model, 1, greedy)[0][0];
  ASSERT_EQ(expected.ids, (Ids{3, 5, kEos}));
  for (uint64_t seed : {0, 1, 2, 3}) {
    ScriptedStepModel model(1, kVocab, flat());
    script(model);
    GenerationSettings s = sampling_settings(seed);
    s.top_k = 1;
    const SearchHypothesis got = greedy_search(model, 1, s)[0][0];
    EXPECT_EQ(got.ids, expected.ids) << "seed " << seed;
    EXPECT_FLOAT_EQ(static_cast<float>(got.score), static_cast<float>(expected.score)) << "seed " << seed;
  }
}

TEST(SamplingSearch, TopPKeepsTheLikeliestTokensThatReachP) {
  // 2 (.5) and 3 (.3) reach 0.6; 4 (.15) and the rest are cut. Over 40 seeds both 2 and 3 come.
  std::set<int64_t> firsts;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    ScriptedStepModel model(1, kVocab, {{kEos, 0.9}});
    model.after({}, {{2, 0.5}, {3, 0.3}, {4, 0.15}});
    GenerationSettings s = sampling_settings(seed);
    s.top_p = 0.6;
    firsts.insert(greedy_search(model, 1, s)[0][0].ids.at(0));
  }
  EXPECT_EQ(firsts, (std::set<int64_t>{2, 3}));
}

TEST(SamplingSearch, EachReturnedSequenceDrawsWithItsOwnSeed) {
  // num_return_sequences 3 at seed 7: the input's row copied three times; sequence k is what a
  // single sequence draws at seed 7 + k.
  ScriptedStepModel model(1, kVocab, flat());
  GenerationSettings s = sampling_settings(7);
  s.num_return_sequences = 3;
  const auto out = greedy_search(model, 1, s);
  ASSERT_FALSE(model.selects.empty());
  EXPECT_EQ(model.selects[0], (Ids{0, 0, 0}));
  EXPECT_EQ(model.rows_per_call()[0], 3);
  ASSERT_EQ(out[0].size(), 3u);
  for (uint64_t k = 0; k < 3; ++k) EXPECT_EQ(out[0][k].ids, sample(7 + k)) << k;
}

TEST(SamplingSearch, AnInputDrawsTheSameTokensAloneOrInABatch) {
  // Input 1 of a batch (behind an input with another distribution) draws what it draws alone.
  ScriptedStepModel batch(2, kVocab, flat());
  batch.rule = [](int64_t input, const ScriptedStepModel::Tokens&) { return input == 0 ? two_words() : flat(); };
  const auto out = greedy_search(batch, 2, sampling_settings(11));
  EXPECT_EQ(out[1][0].ids, sample(11, flat()));
  EXPECT_EQ(out[0][0].ids, sample(11, two_words()));
}

TEST(SamplingSearch, TheScoreIsTheSumOfTheDrawnTokensLogProbs) {
  ScriptedStepModel model(1, kVocab, flat());
  const SearchHypothesis got = greedy_search(model, 1, sampling_settings(5))[0][0];
  double expected = 0;
  Ids history;
  for (int64_t id : got.ids) {
    expected += std::log(model.probability(0, history, id));
    history.push_back(id);
  }
  EXPECT_NEAR(got.score, expected, 1e-4);
}

}  // namespace
}  // namespace ordo::search
