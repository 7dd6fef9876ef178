// The searches chosen from the settings in one place (search::search_kind), and
// return_alternatives' first step (search::alternatives_search) over a scripted StepModel: the
// prefix fed, then the n likeliest next tokens by the model's own log-probabilities, end and
// padding excluded, best first.
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

GenerationSettings alternatives(int64_t n) {
  GenerationSettings s = settings();
  s.num_beams = 1;
  s.max_length = 10;
  s.alternatives = n;
  return s;
}

TEST(SearchKinds, EachSettingChoosesItsSearch) {
  GenerationSettings s = alternatives(0);
  EXPECT_EQ(search_kind(s), SearchKind::kGreedy);
  s.do_sample = true;
  EXPECT_EQ(search_kind(s), SearchKind::kSample);
  s.do_sample = false;
  s.num_beams = 4;
  EXPECT_EQ(search_kind(s), SearchKind::kBeam);
  s.force_words_ids = {{3}};
  EXPECT_EQ(search_kind(s), SearchKind::kConstrainedBeam);
  s.alternatives = 2;
  EXPECT_EQ(search_kind(s), SearchKind::kAlternatives);
}

TEST(AlternativesSearch, TheLikeliestNextTokensComeBestFirstWithTheirLogProbabilities) {
  ScriptedStepModel model(1, kVocab, {{kEos, 0.9}});
  model.after({}, {{kEos, 0.4}, {5, 0.3}, {3, 0.2}, {6, 0.05}});
  const auto out = search(model, 1, alternatives(3));
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].size(), 3u);
  // EOS, the likeliest, is excluded and nothing is renormalized.
  EXPECT_EQ(out[0][0].ids, (Ids{5}));
  EXPECT_EQ(out[0][1].ids, (Ids{3}));
  EXPECT_EQ(out[0][2].ids, (Ids{6}));
  EXPECT_NEAR(out[0][0].score, std::log(0.3), kTolerance);
  EXPECT_NEAR(out[0][2].score, std::log(0.05), kTolerance);
  EXPECT_EQ(model.calls.size(), 1u);  // one step: the alternatives are not continued here
}

TEST(AlternativesSearch, TheStepComesAfterEachInputsPrefix) {
  ScriptedStepModel model(2, kVocab, {{kEos, 0.9}});
  model.after(0, {4, 2}, {{7, 0.6}, {3, 0.3}}).after(1, {6, 6}, {{0, 0.55}, {2, 0.4}});
  const auto out = search(model, 2, alternatives(1), {{4, 2}, {6, 6}});
  ASSERT_EQ(model.calls.size(), 3u);  // the start token, then the two prefix tokens
  EXPECT_EQ(model.calls[2].histories[0], (Ids{4, 2}));
  EXPECT_EQ(model.calls[2].histories[1], (Ids{6, 6}));
  EXPECT_EQ(out[0][0].ids, (Ids{4, 2, 7}));  // the prefix, then the alternative
  // Input 1's likeliest after the padding id (excluded) is 2.
  EXPECT_EQ(out[1][0].ids, (Ids{6, 6, 2}));
  EXPECT_NEAR(out[1][0].score, std::log(0.4), kTolerance);
}

}  // namespace
}  // namespace ordo::search
