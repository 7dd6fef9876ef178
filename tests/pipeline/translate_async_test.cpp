// Translator::translate_async: the same call on a thread of its own, its results or its error
// delivered through a future.
// ctest-label: integration
#include <gtest/gtest.h>

#include <future>
#include <string>
#include <vector>

#include "ordo/translator.h"
#include "support/fixtures.h"

namespace ordo {
namespace {

class TranslateAsync : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { translator = new Translator(testing::fixture_dir("marian_opus_en_mg")); }
  static void TearDownTestSuite() {
    delete translator;
    translator = nullptr;
  }
  static DecodeOptions short_options() {
    DecodeOptions o;
    o.max_new_tokens = 8;
    return o;
  }
  static Translator* translator;
};
Translator* TranslateAsync::translator = nullptr;

const std::vector<std::string> kSentences = {"Where is the train station?", "", "Call me."};

TEST_F(TranslateAsync, GivesTheResultsOfTranslate) {
  const std::vector<TranslationResult> expected = translator->translate(kSentences, short_options());
  const std::vector<TranslationResult> results = translator->translate_async(kSentences, short_options()).get();
  ASSERT_EQ(results.size(), expected.size());
  for (size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(results[i].hypotheses[0].ids, expected[i].hypotheses[0].ids) << i;
    EXPECT_EQ(results[i].hypotheses[0].text, expected[i].hypotheses[0].text) << i;
  }
}

TEST_F(TranslateAsync, TwoCallsInFlightKeepTheirOwnOptions) {
  DecodeOptions beams = short_options();
  beams.beam_size = 3;
  auto greedy = translator->translate_async({"Call me."}, short_options());
  auto beam = translator->translate_async({"Call me."}, beams);
  EXPECT_EQ(greedy.get()[0].hypotheses[0].ids,
            translator->translate({"Call me."}, short_options())[0].hypotheses[0].ids);
  EXPECT_EQ(beam.get()[0].hypotheses[0].ids, translator->translate({"Call me."}, beams)[0].hypotheses[0].ids);
}

TEST_F(TranslateAsync, AnInvalidCallsErrorArrivesThroughTheFuture) {
  DecodeOptions o = short_options();
  o.beam_size = 1;
  o.force_words = "Haus";  // needs beam search
  auto future = translator->translate_async({"Call me."}, o);
  EXPECT_THROW(future.get(), Error);
}

TEST(TranslateAsyncOnNoModel, AMovedFromTranslatorThrowsAtOnce) {
  Translator first(testing::fixture_dir("marian_opus_en_mg"));
  Translator second(std::move(first));
  EXPECT_THROW(first.translate_async({"Call me."}), Error);  // NOLINT(bugprone-use-after-move)
}

}  // namespace
}  // namespace ordo
