// Greedy search (search::greedy_search) over a scripted StepModel: which token each step takes,
// when it stops, what it streams, and which rows it keeps asking the model about, with the
// expected ids and scores worked out from the script.
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

GenerationSettings greedy_settings() {
  GenerationSettings s = settings();
  s.num_beams = 1;
  s.max_length = 10;
  return s;
}

// After anything the script does not name: EOS, nearly surely.
ScriptedStepModel::Distribution ends() { return {{kEos, 0.9}}; }

// A script whose most likely path is 3 5 </s> (0.5, 0.6, 0.7).
ScriptedStepModel three_step_model() {
  ScriptedStepModel model(1, kVocab, ends());
  model.after({}, {{3, 0.5}, {4, 0.3}, {kEos, 0.1}})
      .after({3}, {{5, 0.6}, {kEos, 0.3}})
      .after({3, 5}, {{kEos, 0.7}, {2, 0.2}});
  return model;
}

TEST(GreedySearch, PicksTheMostLikelyTokenEachStepUntilEos) {
  ScriptedStepModel model = three_step_model();
  const auto out = greedy_search(model, 1, greedy_settings());
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].size(), 1u);
  EXPECT_EQ(out[0][0].ids, (Ids{3, 5, kEos}));
  EXPECT_NEAR(out[0][0].score, std::log(0.5) + std::log(0.6) + std::log(0.7), kTolerance);
}

// One row a step, the decoder start fed first, and asked about exactly the chosen prefixes.
TEST(GreedySearch, AsksTheModelOneRowAStepAboutTheChosenPrefix) {
  ScriptedStepModel model = three_step_model();
  greedy_search(model, 1, greedy_settings());
  EXPECT_EQ(model.rows_per_call(), (Ids{1, 1, 1}));
  ASSERT_EQ(model.calls.size(), 3u);
  EXPECT_EQ(model.calls[2].histories[0], (Ids{3, 5}));
  EXPECT_TRUE(model.selects.empty());
}

TEST(GreedySearch, StopsAtMaxLengthCountingTheDecoderStart) {
  ScriptedStepModel model(1, kVocab, {{2, 0.8}});  // never EOS first
  GenerationSettings s = greedy_settings();
  s.max_length = 4;  // the start token + 3 new ones
  const auto out = greedy_search(model, 1, s);
  EXPECT_EQ(out[0][0].ids, (Ids{2, 2, 2}));  // no EOS appended
  EXPECT_NEAR(out[0][0].score, 3 * std::log(0.8), kTolerance);
  EXPECT_EQ(model.calls.size(), 3u);
}

// EOS is the most likely token at every step; min_new_tokens = 2 bans it for two steps. The
// score is the log-probability after the ban (log_softmax of the processed logits): 0.3 / 0.4.
ScriptedStepModel eos_first_model() {
  ScriptedStepModel model(1, kVocab, ends());
  model.after({}, {{kEos, 0.6}, {3, 0.3}}).after({3}, {{kEos, 0.6}, {4, 0.3}}).after({3, 4}, {{kEos, 0.9}});
  return model;
}

TEST(GreedySearch, MinNewTokensBansEosUntilThatManyTokens) {
  ScriptedStepModel model = eos_first_model();
  GenerationSettings s = greedy_settings();
  s.min_new_tokens = 2;
  const auto out = greedy_search(model, 1, s);
  EXPECT_EQ(out[0][0].ids, (Ids{3, 4, kEos}));
  EXPECT_NEAR(out[0][0].score, 2 * std::log(0.3 / 0.4) + std::log(0.9), kTolerance);
}

TEST(GreedySearch, MinLengthCountsTheDecoderStart) {
  ScriptedStepModel model = eos_first_model();
  GenerationSettings s = greedy_settings();
  s.min_length = 2;  // start + 1 token: EOS banned at the first step only
  const auto out = greedy_search(model, 1, s);
  EXPECT_EQ(out[0][0].ids, (Ids{3, kEos}));
}

TEST(GreedySearch, WithoutMinLengthEosMayComeFirst) {
  ScriptedStepModel model = eos_first_model();
  const auto out = greedy_search(model, 1, greedy_settings());
  EXPECT_EQ(out[0][0].ids, (Ids{kEos}));
  EXPECT_NEAR(out[0][0].score, std::log(0.6), kTolerance);
}

// The prefix 6 7 is unlikely at every step; the search takes it anyway, then goes on greedily.
ScriptedStepModel prefix_model() {
  ScriptedStepModel model(1, kVocab, ends());
  model.after({}, {{3, 0.9}}).after({6}, {{3, 0.9}}).after({6, 7}, {{kEos, 0.8}});
  return model;
}

TEST(GreedySearch, TargetPrefixIsForcedAndAddsNothingToTheScore) {
  ScriptedStepModel model = prefix_model();
  const auto out = greedy_search(model, 1, greedy_settings(), Prefixes{{6, 7}});
  EXPECT_EQ(out[0][0].ids, (Ids{6, 7, kEos}));
  EXPECT_NEAR(out[0][0].score, std::log(0.8), kTolerance);
}

TEST(GreedySearch, TargetPrefixTokensAreStreamedAtLogProbabilityZero) {
  ScriptedStepModel model = prefix_model();
  greedy_search(model, 1, greedy_settings(), Prefixes{{6, 7}});
  ASSERT_EQ(model.streamed.size(), 3u);
  EXPECT_EQ(model.streamed[0].id, 6);
  EXPECT_EQ(model.streamed[0].log_prob, 0.0f);
  EXPECT_EQ(model.streamed[1].log_prob, 0.0f);
  EXPECT_NEAR(model.streamed[2].log_prob, std::log(0.8), kTolerance);
}

TEST(GreedySearch, FinishedInputsLeaveTheBatch) {
  // Input 0 ends at once; input 1 takes three steps.
  ScriptedStepModel model(2, kVocab, ends());
  model.after(0, {}, {{kEos, 0.7}}).after(1, {}, {{2, 0.7}}).after(1, {2}, {{3, 0.7}}).after(1, {2, 3}, {{kEos, 0.7}});
  const auto out = greedy_search(model, 2, greedy_settings());
  EXPECT_EQ(out[0][0].ids, (Ids{kEos}));
  EXPECT_EQ(out[1][0].ids, (Ids{2, 3, kEos}));
  EXPECT_EQ(model.rows_per_call(), (Ids{2, 1, 1}));
  ASSERT_EQ(model.selects.size(), 1u);
  EXPECT_EQ(model.selects[0], (Ids{1}));
  EXPECT_EQ(model.calls[1].inputs, (Ids{1}));
}

// Two hypotheses that never reach EOS; on_token stops the second at its first token.
class GreedySearchStoppedByOnToken : public ::testing::Test {
 protected:
  void SetUp() override {
    model_.stop_at = [](int64_t hypothesis, int64_t) { return hypothesis == 1; };
    GenerationSettings s = greedy_settings();
    s.max_length = 4;
    out_ = greedy_search(model_, 2, s);
  }
  ScriptedStepModel model_{2, kVocab, {{2, 0.9}}};
  std::vector<std::vector<SearchHypothesis>> out_;
};

TEST_F(GreedySearchStoppedByOnToken, AHypothesisEndsWhereOnTokenSaysSoWithoutEos) {
  EXPECT_EQ(out_[0][0].ids, (Ids{2, 2, 2}));
  EXPECT_EQ(out_[1][0].ids, (Ids{2}));
}

TEST_F(GreedySearchStoppedByOnToken, EachTokenIsStreamedToItsHypothesis) {
  std::vector<int64_t> hypotheses;
  for (const auto& t : model_.streamed) hypotheses.push_back(t.hypothesis);
  EXPECT_EQ(hypotheses, (Ids{0, 1, 0, 0}));
}

TEST_F(GreedySearchStoppedByOnToken, AStoppedHypothesisLeavesTheBatch) {
  EXPECT_EQ(model_.rows_per_call(), (Ids{2, 1, 1}));
}

// A wrapper that adds one thing to a step (cancellation, streaming) is a ForwardingStep: every
// other call reaches the model it wraps, on_token's stop included.
TEST(ForwardingStep, AStopTheWrappedModelAsksForStillEndsTheHypothesis) {
  ScriptedStepModel model{2, kVocab, {{2, 0.9}}};
  model.stop_at = [](int64_t hypothesis, int64_t) { return hypothesis == 1; };
  ForwardingStep wrapped(model);
  GenerationSettings s = greedy_settings();
  s.max_length = 4;
  const auto out = greedy_search(wrapped, 2, s);
  EXPECT_EQ(out[1][0].ids, (Ids{2}));
  EXPECT_EQ(model.rows_per_call(), (Ids{2, 1, 1}));
}

TEST(GreedySearch, NoRepeatNgramSizeBansTheTokenThatWouldRepeatAnNgram) {
  // 2 and 3 call each other: 2 3 2 3 ... ; with bigrams unique the second "2 3" is banned.
  ScriptedStepModel model(1, kVocab, ends());
  model.rule = [](int64_t, const ScriptedStepModel::Tokens& h) -> ScriptedStepModel::Distribution {
    if (h.empty() || h.back() == 3) return {{2, 0.7}, {5, 0.2}};
    if (h.back() == 2) return {{3, 0.6}, {4, 0.3}};
    return ends();
  };
  GenerationSettings s = greedy_settings();
  s.max_length = 7;
  EXPECT_EQ(greedy_search(model, 1, s)[0][0].ids, (Ids{2, 3, 2, 3, 2, 3}));
  ScriptedStepModel again(1, kVocab, ends());
  again.rule = model.rule;
  s.no_repeat_ngram_size = 2;
  const auto out = greedy_search(again, 1, s);
  EXPECT_EQ(out[0][0].ids, (Ids{2, 3, 2, 4, kEos}));
  // The banned 3 leaves 4 with 0.3 of the remaining 0.4.
  EXPECT_NEAR(out[0][0].score, std::log(0.7) + std::log(0.6) + std::log(0.7) + std::log(0.3 / 0.4) + std::log(0.9),
              kTolerance);
}

TEST(GreedySearch, RepetitionPenaltyMakesASeenTokenLessLikely) {
  // After 2, repeating it (0.45) beats 4 (0.35); penalty 2 doubles its negative logit.
  ScriptedStepModel model(1, kVocab, ends());
  model.after({}, {{2, 0.5}, {3, 0.4}}).after({2}, {{2, 0.45}, {4, 0.35}});
  GenerationSettings s = greedy_settings();
  EXPECT_EQ(greedy_search(model, 1, s)[0][0].ids, (Ids{2, 2, kEos}));
  ScriptedStepModel again(1, kVocab, ends());
  again.after({}, {{2, 0.5}, {3, 0.4}}).after({2}, {{2, 0.45}, {4, 0.35}});
  s.repetition_penalty = 2.0;
  EXPECT_EQ(greedy_search(again, 1, s)[0][0].ids, (Ids{2, 4, kEos}));
}

TEST(GreedySearch, ForcedBosTokenIsTheFirstTokenAtNoCost) {
  ScriptedStepModel model(1, kVocab, ends());
  model.after({}, {{3, 0.9}}).after({7}, {{kEos, 0.8}});
  GenerationSettings s = greedy_settings();
  s.forced_bos_token_id = 7;
  const auto out = greedy_search(model, 1, s);
  EXPECT_EQ(out[0][0].ids, (Ids{7, kEos}));
  EXPECT_NEAR(out[0][0].score, std::log(0.8), kTolerance);
}

TEST(GreedySearch, AttentionFollowsEachHypothesisWhenRowsLeave) {
  ScriptedStepModel model(2, kVocab, ends());
  model.after(0, {}, {{kEos, 0.7}}).after(1, {}, {{2, 0.7}}).after(1, {2}, {{3, 0.7}}).after(1, {2, 3}, {{kEos, 0.7}});
  GenerationSettings s = greedy_settings();
  s.return_attention = true;
  const auto out = greedy_search(model, 2, s);
  const at::Tensor a = out[1][0].attention;  // [3 tokens, 1, 1, 2]
  ASSERT_EQ(a.size(0), 3);
  for (int64_t t = 0; t < 3; ++t) {
    EXPECT_EQ(a[t][0][0][0].item<float>(), 1.0f) << t;  // input 1's row at every step
    const Ids history(out[1][0].ids.begin(), out[1][0].ids.begin() + t);
    EXPECT_EQ(a[t][0][0][1].item<float>(), static_cast<float>(model.code(history))) << t;
  }
  EXPECT_EQ(out[0][0].attention.size(0), 1);
}

// The script's logits offered as bounded logits (StepModel::next_logits_bounded): exact on
// each row's `exact_top` largest, elsewhere raised by `raise` (an upper bound); counts how often
// the search asked for which.
class BoundedScript : public StepModel {
 public:
  BoundedScript(ScriptedStepModel& script, int64_t exact_top, float raise)
      : script_(script), exact_top_(exact_top), raise_(raise) {}
  at::Tensor next_logits(const at::Tensor& tokens) override {
    ++logits_calls;
    return script_.next_logits(tokens);
  }
  BoundedLogits next_logits_bounded(const at::Tensor& tokens) override {
    ++bounded_calls;
    const at::Tensor logits = script_.next_logits(tokens);
    at::Tensor exact = at::zeros(logits.sizes(), at::kBool);
    exact.scatter_(1, std::get<1>(logits.topk(exact_top_, -1)), true);
    return {at::where(exact, logits, logits + raise_), exact, [this, logits] {
              ++full_calls;
              return logits;
            }};
  }
  void select(const at::Tensor& rows) override { script_.select(rows); }
  int logits_calls = 0, bounded_calls = 0, full_calls = 0;

 private:
  ScriptedStepModel& script_;
  int64_t exact_top_;
  float raise_;
};

GenerationSettings without_scores() {
  GenerationSettings s = greedy_settings();
  s.need_scores = false;
  return s;
}

TEST(GreedySearch, WithoutScoresPicksFromBoundedLogitsWhenTheLargestIsExact) {
  ScriptedStepModel script = three_step_model();
  BoundedScript model(script, 2, 0.01f);
  const auto out = greedy_search(model, 1, without_scores());
  EXPECT_EQ(out[0][0].ids, (Ids{3, 5, kEos}));
  EXPECT_EQ(out[0][0].score, 0.0);
  EXPECT_EQ(model.bounded_calls, 3);
  EXPECT_EQ(model.full_calls, 0);
  EXPECT_EQ(model.logits_calls, 0);
}

TEST(GreedySearch, WithoutScoresTakesTheStepInFullWhenABoundIsTheLargest) {
  ScriptedStepModel script = three_step_model();
  BoundedScript model(script, 1, 10.0f);  // every other token's bound above the top logit
  const auto out = greedy_search(model, 1, without_scores());
  EXPECT_EQ(out[0][0].ids, (Ids{3, 5, kEos}));
  EXPECT_EQ(model.full_calls, 3);
}

// min_new_tokens bans the exact top (EOS); the pick falls to a bound, and the full step's
// logits (processed again) give the second token.
TEST(GreedySearch, WithoutScoresAppliesTheProcessorsToTheFullStepToo) {
  ScriptedStepModel script = eos_first_model();
  BoundedScript model(script, 1, 0.01f);
  GenerationSettings s = without_scores();
  s.min_new_tokens = 2;
  const auto out = greedy_search(model, 1, s);
  EXPECT_EQ(out[0][0].ids, (Ids{3, 4, kEos}));
  EXPECT_EQ(model.full_calls, 2);
}

// With renormalize_logits (a log-softmax after the other processors), two logits 1e-7 apart may
// round into a tie that the reference breaks by index: such a step is taken in full.
TEST(GreedySearch, WithoutScoresAndRenormalizingTakesTheStepInFullWhenTheLeadIsWithinRounding) {
  ScriptedStepModel script(1, kVocab, ends());
  script.after({}, {{4, 0.3000001}, {3, 0.3}}).after({4}, {{kEos, 0.9}});
  BoundedScript model(script, 2, 0.0f);
  GenerationSettings s = without_scores();
  s.renormalize_logits = true;
  const auto out = greedy_search(model, 1, s);
  EXPECT_EQ(out[0][0].ids, (Ids{4, kEos}));
  EXPECT_EQ(model.full_calls, 1);  // the first step; the second leads by far
}

TEST(GreedySearch, WithScoresNeverAsksForBoundedLogits) {
  ScriptedStepModel script = three_step_model();
  BoundedScript model(script, 2, 0.01f);
  const auto out = greedy_search(model, 1, greedy_settings());
  EXPECT_NEAR(out[0][0].score, std::log(0.5) + std::log(0.6) + std::log(0.7), kTolerance);
  EXPECT_EQ(model.bounded_calls, 0);
  EXPECT_EQ(model.logits_calls, 3);
}

}  // namespace
}  // namespace ordo::search
