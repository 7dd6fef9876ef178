// Beam search (search::beam_search, Hugging Face 4.31's BeamSearchScorer) over a scripted
// StepModel: the n-best list and its length-penalized scores, early stopping, what the model is
// asked to keep at each step. Each test's comment works the steps out from the script; scores are
// sum of log-probabilities / length^length_penalty, the length counting the decoder start and
// not the final EOS.
// ctest-label: unit
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "search/search.h"
#include "support/scripted_step_model.h"

namespace ordo::search {
namespace {

using testing::ScriptedStepModel;
using namespace testing::script;

GenerationSettings beam_settings(int64_t beams = 2, int64_t n_best = 2) {
  GenerationSettings s = settings();
  s.num_beams = beams;
  s.num_return_sequences = n_best;
  s.max_length = 10;
  s.length_penalty = 1.0;
  s.early_stopping = false;
  return s;
}

ScriptedStepModel::Distribution ends() { return {{kEos, 0.9}}; }

double lg(double p) { return std::log(p); }

// Scenario A. Step 1: beams 2 (.6), 3 (.3). Step 2: "2 EOS" (.3) and "3 EOS" (.27) are the two
// best and finish at length 2; the beams go on with 2 4 (.24) and 2 0. Step 3: "2 4 EOS" (.216)
// finishes at length 3. max_length 4 ends the search there.
ScriptedStepModel scenario_a() {
  ScriptedStepModel model(1, kVocab, {{kEos, 0.5}});
  model.after({}, {{2, 0.6}, {3, 0.3}})
      .after({2}, {{kEos, 0.5}, {4, 0.4}})
      .after({3}, {{kEos, 0.9}, {5, 0.05}})
      .after({2, 4}, {{kEos, 0.9}});
  return model;
}

TEST(BeamSearch, RanksFinishedHypothesesBySumOverLengthToThePenalty) {
  ScriptedStepModel model = scenario_a();
  GenerationSettings s = beam_settings();
  s.length_penalty = 2.0;
  s.max_length = 4;
  const auto out = beam_search(model, 1, s);
  // "2 4 EOS": log .216 / 3^2 = -0.1703 beats "2 EOS": log .3 / 2^2 = -0.3010, though its sum is
  // lower; "3 EOS" (log .27 / 4 = -0.3273) was pushed out by it.
  ASSERT_EQ(out[0].size(), 2u);
  EXPECT_EQ(out[0][0].ids, (Ids{2, 4, kEos}));
  EXPECT_NEAR(out[0][0].score, lg(0.6 * 0.4 * 0.9) / 9.0, kTolerance);
  EXPECT_EQ(out[0][1].ids, (Ids{2, kEos}));
  EXPECT_NEAR(out[0][1].score, lg(0.6 * 0.5) / 4.0, kTolerance);
}

TEST(BeamSearch, LengthPenaltyZeroRanksByTheSumOfLogProbs) {
  ScriptedStepModel model = scenario_a();
  GenerationSettings s = beam_settings();
  s.length_penalty = 0.0;
  s.max_length = 4;
  const auto out = beam_search(model, 1, s);
  // Sums: "2 EOS" -1.204, "3 EOS" -1.309, "2 4 EOS" -1.532 (not better than the worst kept). At
  // step 3 the best live sum (-1.532) cannot beat -1.309: done after 3 steps.
  ASSERT_EQ(out[0].size(), 2u);
  EXPECT_EQ(out[0][0].ids, (Ids{2, kEos}));
  EXPECT_NEAR(out[0][0].score, lg(0.6 * 0.5), kTolerance);
  EXPECT_EQ(out[0][1].ids, (Ids{3, kEos}));
  EXPECT_NEAR(out[0][1].score, lg(0.3 * 0.9), kTolerance);
  EXPECT_EQ(model.calls.size(), 3u);
}

TEST(BeamSearch, NumReturnSequencesKeepsOnlyTheBest) {
  ScriptedStepModel model = scenario_a();
  GenerationSettings s = beam_settings(2, 1);
  s.length_penalty = 2.0;
  s.max_length = 4;
  const auto out = beam_search(model, 1, s);
  ASSERT_EQ(out[0].size(), 1u);
  EXPECT_EQ(out[0][0].ids, (Ids{2, 4, kEos}));
}

// Scenario B. Step 1: beams 2 (.5), 3 (.4). Step 2: "2 EOS" (.25, score -0.6931) and "3 EOS"
// (.24, -0.7136) finish: two hypotheses for two beams. Live: 2 4 (.225), 3 5 (.12). Step 3 would
// finish "2 4 EOS" (.2025, -0.5323), better than both.
ScriptedStepModel scenario_b() {
  ScriptedStepModel model(1, kVocab, ends());
  model.after({}, {{2, 0.5}, {3, 0.4}})
      .after({2}, {{kEos, 0.5}, {4, 0.45}})
      .after({3}, {{kEos, 0.6}, {5, 0.3}})
      .after({2, 4}, {{kEos, 0.9}});
  return model;
}

TEST(BeamSearch, EarlyStoppingTrueStopsOnceThereAreAsManyFinishedAsBeams) {
  ScriptedStepModel model = scenario_b();
  GenerationSettings s = beam_settings();
  s.early_stopping = true;
  s.max_length = 4;
  const auto out = beam_search(model, 1, s);
  EXPECT_EQ(model.calls.size(), 2u);
  ASSERT_EQ(out[0].size(), 2u);
  EXPECT_EQ(out[0][0].ids, (Ids{2, kEos}));
  EXPECT_NEAR(out[0][0].score, lg(0.25) / 2, kTolerance);
  EXPECT_EQ(out[0][1].ids, (Ids{3, kEos}));
  EXPECT_NEAR(out[0][1].score, lg(0.24) / 2, kTolerance);
}

TEST(BeamSearch, EarlyStoppingFalseGoesOnWhileALiveBeamCanStillWin) {
  // After step 2 the best candidate's sum, -1.386, over length 3 is -0.462, above the worst
  // finished (-0.7136): go on. "2 4 EOS" then pushes "3 EOS" out.
  ScriptedStepModel model = scenario_b();
  GenerationSettings s = beam_settings();
  s.early_stopping = false;
  s.max_length = 4;
  const auto out = beam_search(model, 1, s);
  EXPECT_EQ(model.calls.size(), 3u);
  ASSERT_EQ(out[0].size(), 2u);
  EXPECT_EQ(out[0][0].ids, (Ids{2, 4, kEos}));
  EXPECT_NEAR(out[0][0].score, lg(0.5 * 0.45 * 0.9) / 3, kTolerance);
  EXPECT_EQ(out[0][1].ids, (Ids{2, kEos}));
  EXPECT_NEAR(out[0][1].score, lg(0.25) / 2, kTolerance);
}

// Scenario C. Step 1: EOS (.5) finishes at once (score -0.6931); beams 2 (.4), 3 (.08). Step 2:
// "2 EOS" (.2, -0.8047) finishes: the list is full, its worst -0.8047. Live: 2 4 (.18), 3 5.
// Step 3 continues 2 4 with 6 (p6) and 7 (p7), no EOS among the top two.
ScriptedStepModel scenario_c(double p6, double p7) {
  ScriptedStepModel model(1, kVocab, {{kEos, 0.5}});
  model.after({}, {{kEos, 0.5}, {2, 0.4}, {3, 0.08}})
      .after({2}, {{kEos, 0.5}, {4, 0.45}})
      .after({3}, {{5, 0.8}})
      .after({2, 4}, {{6, p6}, {7, p7}});
  return model;
}

TEST(BeamSearch, EarlyStoppingFalseJudgesTheBestLiveScoreAtTheLengthItWillHave) {
  // Step 3's best sum is log .0738 = -2.607. transformers 4.31 (BeamSearchScorer.process,
  // cur_len = input_ids.shape[-1] + 1) divides it by 4, the length it belongs to: -0.652 is
  // above the worst -0.8047, so a 4th step runs. Divided by 3 (-0.869) it would stop after 3.
  ScriptedStepModel model = scenario_c(0.41, 0.39);
  GenerationSettings s = beam_settings();
  s.max_length = 5;
  const auto out = beam_search(model, 1, s);
  EXPECT_EQ(model.calls.size(), 4u);
  ASSERT_EQ(out[0].size(), 2u);
  EXPECT_EQ(out[0][0].ids, (Ids{kEos}));
  EXPECT_NEAR(out[0][0].score, lg(0.5), kTolerance);
  EXPECT_EQ(out[0][1].ids, (Ids{2, kEos}));
  EXPECT_NEAR(out[0][1].score, lg(0.2) / 2, kTolerance);
}

TEST(BeamSearch, EarlyStoppingFalseStopsWhenNoLiveBeamCanBeatTheWorstFinished) {
  // Step 3's best sum is log .036 = -3.324; over length 4, -0.831 is below the worst -0.8047.
  ScriptedStepModel model = scenario_c(0.2, 0.19);
  GenerationSettings s = beam_settings();
  s.max_length = 5;
  const auto out = beam_search(model, 1, s);
  EXPECT_EQ(model.calls.size(), 3u);
  ASSERT_EQ(out[0].size(), 2u);
  EXPECT_EQ(out[0][0].ids, (Ids{kEos}));
  EXPECT_EQ(out[0][1].ids, (Ids{2, kEos}));
}

TEST(BeamSearch, AnEosOutsideTheTopBeamsCandidatesDoesNotFinishAHypothesis) {
  // Step 2 ranks: 2 4 (.3025), "2 EOS" (.22, finishes), "3 EOS" (.2, rank 2 of 2 beams: not a
  // hypothesis), 3 5 (.18). With early stopping, had "3 EOS" counted the list would be full and
  // the search over after step 2; it goes on and finishes 2 4 and 3 5 at step 3.
  ScriptedStepModel model(1, kVocab, ends());
  model.after({}, {{2, 0.55}, {3, 0.4}}).after({2}, {{4, 0.55}, {kEos, 0.4}}).after({3}, {{kEos, 0.5}, {5, 0.45}});
  GenerationSettings s = beam_settings();
  s.early_stopping = true;
  const auto out = beam_search(model, 1, s);
  EXPECT_EQ(model.calls.size(), 3u);
  ASSERT_EQ(out[0].size(), 2u);
  EXPECT_EQ(out[0][0].ids, (Ids{2, 4, kEos}));
  EXPECT_NEAR(out[0][0].score, lg(0.55 * 0.55 * 0.9) / 3, kTolerance);
  EXPECT_EQ(out[0][1].ids, (Ids{3, 5, kEos}));
  EXPECT_NEAR(out[0][1].score, lg(0.4 * 0.45 * 0.9) / 3, kTolerance);
}

TEST(BeamSearch, AtMaxLengthLiveBeamsJoinTheFinishedWithTheirScores) {
  // EOS never likely: after 2 steps (max_length 3) the beams 2 4 (.42) and 3 4 (.21) are the
  // result, without EOS, scored over length 3; the model is not asked to reorder after the last.
  ScriptedStepModel model(1, kVocab, {{4, 0.7}, {5, 0.2}});
  model.after({}, {{2, 0.6}, {3, 0.3}});
  GenerationSettings s = beam_settings();
  s.max_length = 3;
  const auto out = beam_search(model, 1, s);
  ASSERT_EQ(out[0].size(), 2u);
  EXPECT_EQ(out[0][0].ids, (Ids{2, 4}));
  EXPECT_NEAR(out[0][0].score, lg(0.42) / 3, kTolerance);
  EXPECT_EQ(out[0][1].ids, (Ids{3, 4}));
  EXPECT_NEAR(out[0][1].score, lg(0.21) / 3, kTolerance);
  EXPECT_EQ(model.calls.size(), 2u);
  EXPECT_EQ(model.selects, (std::vector<Ids>{{0, 0}, {0, 0}}));
}

// Scenario F: step 2's best continuation grows the second beam (3 6, .3325) and the second best
// the first (2 4, .18), so the beams swap.
ScriptedStepModel scenario_f() {
  ScriptedStepModel model(1, kVocab, ends());
  model.after({}, {{2, 0.6}, {3, 0.35}}).after({2}, {{4, 0.3}, {5, 0.25}}).after({3}, {{6, 0.95}});
  return model;
}

TEST(BeamSearch, SelectKeepsTheRowsEachNewBeamContinues) {
  ScriptedStepModel model = scenario_f();
  GenerationSettings s = beam_settings();
  s.early_stopping = true;
  const auto out = beam_search(model, 1, s);
  // Start: the input's row copied for each beam; step 1: both beams from row 0; step 2: swap.
  EXPECT_EQ(model.selects, (std::vector<Ids>{{0, 0}, {0, 0}, {1, 0}}));
  EXPECT_EQ(model.rows_per_call(), (Ids{2, 2, 2}));
  ASSERT_EQ(model.calls.size(), 3u);
  EXPECT_EQ(model.calls[2].histories, (std::vector<Ids>{{3, 6}, {2, 4}}));
  ASSERT_EQ(out[0].size(), 2u);
  EXPECT_EQ(out[0][0].ids, (Ids{3, 6, kEos}));
  EXPECT_NEAR(out[0][0].score, lg(0.35 * 0.95 * 0.9) / 3, kTolerance);
  EXPECT_EQ(out[0][1].ids, (Ids{2, 4, kEos}));
  EXPECT_NEAR(out[0][1].score, lg(0.6 * 0.3 * 0.9) / 3, kTolerance);
}

TEST(BeamSearch, AttentionFollowsEachHypothesisThroughBeamReorders) {
  ScriptedStepModel model = scenario_f();
  GenerationSettings s = beam_settings();
  s.early_stopping = true;
  s.return_attention = true;
  const auto out = beam_search(model, 1, s);
  ASSERT_EQ(out[0].size(), 2u);
  for (const SearchHypothesis& hyp : out[0]) {
    ASSERT_EQ(hyp.attention.size(0), static_cast<int64_t>(hyp.ids.size()));
    for (int64_t t = 0; t < hyp.attention.size(0); ++t) {
      // Row t: the step that predicted ids[t], i.e. the one asked about ids[0..t).
      const Ids history(hyp.ids.begin(), hyp.ids.begin() + t);
      EXPECT_EQ(hyp.attention[t][0][0][1].item<float>(), static_cast<float>(model.code(history)))
          << "token " << t << " of " << hyp.ids[0];
    }
  }
}

TEST(BeamSearch, FinishedInputsLeaveTheBatch) {
  // Input 0 finishes both beams at step 2 (early stopping); input 1 only at step 3.
  ScriptedStepModel model(2, kVocab, ends());
  model.after(0, {}, {{2, 0.6}, {3, 0.35}})
      .after(1, {}, {{4, 0.6}, {5, 0.35}})
      .after(1, {4}, {{6, 0.9}})
      .after(1, {5}, {{7, 0.9}});
  GenerationSettings s = beam_settings();
  s.early_stopping = true;
  const auto out = beam_search(model, 2, s);
  EXPECT_EQ(model.rows_per_call(), (Ids{4, 4, 2}));
  // Start: each input's row per beam; step 1: beams from each input's first row; step 2: input 0
  // gone, input 1's beams (rows 2, 3) kept in order.
  EXPECT_EQ(model.selects, (std::vector<Ids>{{0, 0, 1, 1}, {0, 0, 2, 2}, {2, 3}}));
  ASSERT_EQ(model.calls.size(), 3u);
  EXPECT_EQ(model.calls[2].inputs, (Ids{1, 1}));
  EXPECT_EQ(model.calls[2].histories, (std::vector<Ids>{{4, 6}, {5, 7}}));
  ASSERT_EQ(out.size(), 2u);
  ASSERT_EQ(out[0].size(), 2u);
  EXPECT_EQ(out[0][0].ids, (Ids{2, kEos}));
  EXPECT_NEAR(out[0][0].score, lg(0.6 * 0.9) / 2, kTolerance);
  EXPECT_EQ(out[0][1].ids, (Ids{3, kEos}));
  ASSERT_EQ(out[1].size(), 2u);
  EXPECT_EQ(out[1][0].ids, (Ids{4, 6, kEos}));
  EXPECT_NEAR(out[1][0].score, lg(0.6 * 0.9 * 0.9) / 3, kTolerance);
  EXPECT_EQ(out[1][1].ids, (Ids{5, 7, kEos}));
  EXPECT_NEAR(out[1][1].score, lg(0.35 * 0.9 * 0.9) / 3, kTolerance);
}

TEST(BeamSearch, TargetPrefixIsForcedAtNoCostButCountsInTheLength) {
  // 6 is unlikely at step 1 but forced at log-probability 0; the length still counts it.
  ScriptedStepModel model(1, kVocab, ends());
  model.after({}, {{2, 0.9}}).after({6}, {{kEos, 0.6}, {4, 0.3}});
  GenerationSettings s = beam_settings();
  s.max_length = 4;
  const auto out = beam_search(model, 1, s, Prefixes{{6}});
  ASSERT_EQ(out[0].size(), 2u);
  EXPECT_EQ(out[0][0].ids, (Ids{6, kEos}));
  EXPECT_NEAR(out[0][0].score, lg(0.6) / 2, kTolerance);
  EXPECT_EQ(out[0][1].ids, (Ids{6, 4, kEos}));
  EXPECT_NEAR(out[0][1].score, lg(0.3 * 0.9) / 3, kTolerance);
  EXPECT_EQ(model.calls[1].histories[0], (Ids{6}));
}

// Whether `ids`, after the decoder start, say some bigram twice.
bool repeats_a_bigram(const Ids& ids) {
  Ids all{0};
  all.insert(all.end(), ids.begin(), ids.end());
  for (size_t i = 0; i + 1 < all.size(); ++i)
    for (size_t j = i + 1; j + 1 < all.size(); ++j)
      if (all[i] == all[j] && all[i + 1] == all[j + 1]) return true;
  return false;
}

TEST(BeamSearch, NoRepeatNgramSizeAppliesToEveryBeam) {
  // 2 and 3 call each other (2 3 2 3 ... is the likeliest path); with bigrams unique no beam
  // may say "2 3" twice: not in the results, not in any history the model is asked about.
  ScriptedStepModel model(1, kVocab, ends());
  model.rule = [](int64_t, const ScriptedStepModel::Tokens& h) -> ScriptedStepModel::Distribution {
    if (h.empty() || h.back() == 3) return {{2, 0.7}, {5, 0.2}};
    if (h.back() == 2) return {{3, 0.6}, {4, 0.3}};
    return ends();
  };
  GenerationSettings s = beam_settings();
  s.no_repeat_ngram_size = 2;
  s.max_length = 7;
  const auto out = beam_search(model, 1, s);
  ASSERT_EQ(out[0].size(), 2u);
  for (const SearchHypothesis& hyp : out[0]) EXPECT_FALSE(repeats_a_bigram(hyp.ids)) << hyp.ids.size();
  for (const auto& call : model.calls)
    for (const Ids& h : call.histories) EXPECT_FALSE(repeats_a_bigram(h)) << h.size();
  EXPECT_EQ(out[0][0].ids, (Ids{2, 3, 2, 4, kEos}));
}

}  // namespace
}  // namespace ordo::search
