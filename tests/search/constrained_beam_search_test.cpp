// Constrained beam search (search::constrained_beam_search, transformers 4.31's force_words_ids)
// over a scripted StepModel: the forced phrase is put in even where the model finds it unlikely,
// a hypothesis without it does not finish, and at max_length the best unconstrained beams fill
// the n-best list. The first test's steps are worked out from the script.
// ctest-label: unit
#include <algorithm>
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "search/constrained_beam_search.h"
#include "search/search.h"
#include "support/errors.h"
#include "support/scripted_step_model.h"

namespace ordo::search {
namespace {

using testing::ScriptedStepModel;
using namespace testing::script;

GenerationSettings constrained_settings(std::vector<Ids> phrases) {
  GenerationSettings s = settings();
  s.num_beams = 2;
  s.num_return_sequences = 2;
  s.max_length = 5;
  s.force_words_ids = std::move(phrases);
  return s;
}

bool holds(const Ids& ids, const Ids& phrase) {
  return std::search(ids.begin(), ids.end(), phrase.begin(), phrase.end()) != ids.end();
}

// Left alone the model says "2 EOS" (.63). 5 is unlikely first (.05) and after 2 (.02); once
// said, 6 follows (.9), then EOS (.9).
ScriptedStepModel unlikely_phrase_model(int64_t batch_size = 1) {
  ScriptedStepModel model(batch_size, kVocab, {{kEos, 0.5}});
  model.after({}, {{2, 0.7}, {3, 0.2}, {5, 0.05}})
      .after({2}, {{kEos, 0.9}, {5, 0.02}})
      .after({5}, {{6, 0.9}})
      .after({2, 5}, {{6, 0.9}})
      .after({5, 6}, {{kEos, 0.9}})
      .after({2, 5, 6}, {{kEos, 0.9}});
  return model;
}

TEST(ConstrainedBeamSearch, TheScriptAloneDoesNotSayThePhrase) {
  ScriptedStepModel model = unlikely_phrase_model();
  GenerationSettings s = constrained_settings({});
  const auto out = beam_search(model, 1, s);
  EXPECT_EQ(out[0][0].ids, (Ids{2, kEos}));
  EXPECT_FALSE(holds(out[0][0].ids, {5, 6}));
}

TEST(ConstrainedBeamSearch, ForcedPhraseIsPutInWhereTheModelFindsItUnlikely) {
  // Step 1: beams 2 (bank 0) and 3 (bank 0) are the top two; the beam proposes 5, which
  // starts the phrase (bank 1) and so ranks first: beams 5, 2. Step 2: "2 EOS" is the best
  // candidate but lacks the phrase: not finished; 5 6 (bank 2) and the proposed 2 5 (bank 1) are
  // the beams. Step 3: "5 6 EOS" finishes (length 3); 2 5 6 goes on. Step 4: "2 5 6 EOS"
  // finishes (length 4).
  ScriptedStepModel model = unlikely_phrase_model();
  const auto out = constrained_beam_search(model, 1, constrained_settings({{5, 6}}));
  ASSERT_EQ(out[0].size(), 2u);
  EXPECT_EQ(out[0][0].ids, (Ids{5, 6, kEos}));
  EXPECT_NEAR(out[0][0].score, std::log(0.05 * 0.9 * 0.9) / 3, kTolerance);
  EXPECT_EQ(out[0][1].ids, (Ids{2, 5, 6, kEos}));
  EXPECT_NEAR(out[0][1].score, std::log(0.7 * 0.02 * 0.9 * 0.9) / 4, kTolerance);
  ASSERT_GE(model.calls.size(), 2u);
  EXPECT_EQ(model.calls[1].histories, (std::vector<Ids>{{5}, {2}}));
  EXPECT_EQ(model.selects[1], (Ids{0, 0}));
}

// Two phrases, one a single token, neither likely; once a history holds both, EOS is likely.
ScriptedStepModel two_phrase_model() {
  ScriptedStepModel model = unlikely_phrase_model();
  model.rule = [](int64_t, const ScriptedStepModel::Tokens& h) -> ScriptedStepModel::Distribution {
    if (holds(h, {7}) && holds(h, {5, 6})) return {{kEos, 0.95}};
    return {{kEos, 0.5}};
  };
  return model;
}

TEST(ConstrainedBeamSearch, EveryHypothesisHoldsEachPhrase) {
  // With early stopping the search ends once two hypotheses that hold both phrases finished.
  ScriptedStepModel model = two_phrase_model();
  GenerationSettings s = constrained_settings({{7}, {5, 6}});
  s.max_length = 8;
  s.early_stopping = true;
  const auto out = constrained_beam_search(model, 1, s);
  ASSERT_EQ(out[0].size(), 2u);
  for (const SearchHypothesis& hyp : out[0]) {
    EXPECT_TRUE(holds(hyp.ids, {7})) << hyp.ids.size();
    EXPECT_TRUE(holds(hyp.ids, {5, 6})) << hyp.ids.size();
    EXPECT_EQ(hyp.ids.back(), kEos);
  }
  EXPECT_LT(model.calls.size(), 7u);
}

TEST(ConstrainedBeamSearch, AtMaxLengthBeamsWithoutThePhrasesFillInUnlessEnoughLiveBeamsHoldThem) {
  // transformers 4.31's ConstrainedBeamSearchScorer.finalize counts only the live beams that
  // hold every phrase: fewer than n_best, and all the live beams join the list, which can rank
  // one without the phrases above the finished hypotheses that hold them.
  ScriptedStepModel model = two_phrase_model();
  GenerationSettings s = constrained_settings({{7}, {5, 6}});
  s.max_length = 8;
  const auto out = constrained_beam_search(model, 1, s);
  // Finished on the way: "5 6 7 EOS" (step 4, log(.05 .9 .00357 .95) / 4 = -2.198) and
  // "5 6 0 7 EOS" (step 5, -2.172). At max_length the live beams are 5 6 0 0 0 0 7 (holds both)
  // and 5 6 0 0 0 0 0 (lacks 7): one < n_best, so both join, and both outscore the finished.
  // p(0 | 5 6) = .025, then .125 a step; p(7) = .0179.
  EXPECT_EQ(model.calls.size(), 7u);
  ASSERT_EQ(out[0].size(), 2u);
  EXPECT_EQ(out[0][0].ids, (Ids{5, 6, 0, 0, 0, 0, 0}));
  EXPECT_NEAR(out[0][0].score, std::log(0.05 * 0.9 * 0.025 * std::pow(0.125, 4)) / 8, kTolerance);
  EXPECT_EQ(out[0][1].ids, (Ids{5, 6, 0, 0, 0, 0, 7}));
  EXPECT_NEAR(out[0][1].score, std::log(0.05 * 0.9 * 0.025 * std::pow(0.125, 3) * 0.5 / 28) / 8, kTolerance);
}

TEST(ConstrainedBeamSearch, AtMaxLengthTheBestBeamsFillInWhenNoneHoldsThePhrase) {
  // max_length 2 leaves one token: the two-token phrase cannot fit. The beams after step 1 (5,
  // then 2) join the list with their scores and the better, 2, comes first.
  ScriptedStepModel model = unlikely_phrase_model();
  GenerationSettings s = constrained_settings({{5, 6}});
  s.max_length = 2;
  const auto out = constrained_beam_search(model, 1, s);
  ASSERT_EQ(out[0].size(), 2u);
  EXPECT_EQ(out[0][0].ids, (Ids{2}));
  EXPECT_NEAR(out[0][0].score, std::log(0.7) / 2, kTolerance);
  EXPECT_EQ(out[0][1].ids, (Ids{5}));
  EXPECT_NEAR(out[0][1].score, std::log(0.05) / 2, kTolerance);
}

TEST(ConstrainedBeamSearch, FinishedInputsLeaveTheBatch) {
  // Phrase: 5. Input 0 says it at once: "5 EOS" finishes at step 2 and "6 5 EOS" at step 3,
  // which fills its list (early stopping); input 1, the unlikely-phrase script, goes on alone.
  ScriptedStepModel model = unlikely_phrase_model(2);
  model.after(0, {}, {{5, 0.8}, {6, 0.15}}).after(0, {5}, {{kEos, 0.9}}).after(0, {6}, {{5, 0.9}});
  GenerationSettings s = constrained_settings({{5}});
  s.early_stopping = true;
  const auto out = constrained_beam_search(model, 2, s);
  ASSERT_EQ(out.size(), 2u);
  ASSERT_EQ(out[0].size(), 2u);
  EXPECT_EQ(out[0][0].ids, (Ids{5, kEos}));
  EXPECT_EQ(out[0][1].ids, (Ids{6, 5, kEos}));
  for (const SearchHypothesis& hyp : out[1]) EXPECT_TRUE(holds(hyp.ids, {5}));
  const std::vector<int64_t> rows = model.rows_per_call();
  ASSERT_GE(rows.size(), 4u);
  EXPECT_EQ(rows[2], 4);
  EXPECT_EQ(rows[3], 2);
  EXPECT_EQ(model.calls[3].inputs, (Ids{1, 1}));
}

TEST(ConstrainedBeamSearch, NeedsBeamSearch) {
  ScriptedStepModel model = unlikely_phrase_model();
  GenerationSettings s = constrained_settings({{5, 6}});
  s.num_beams = 1;
  s.num_return_sequences = 1;
  const std::string message = testing::error_of([&] { constrained_beam_search(model, 1, s); });
  EXPECT_NE(message.find("force_words needs beam search"), std::string::npos) << message;
}

}  // namespace
}  // namespace ordo::search
