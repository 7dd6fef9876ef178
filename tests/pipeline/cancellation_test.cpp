// DecodeOptions::cancelled: a caller (the server, for a request that timed out or whose client
// hung up) stops a translation within a decoding step; unset or never true, nothing changes.
// ctest-label: unit
#include <atomic>

#include <gtest/gtest.h>

#include "ordo/ordo.h"
#include "support/fixtures.h"

namespace {

using ordo::DecodeOptions;
using ordo::Translator;
using ordo::testing::fixture_dir;

const Translator& marian() {
  static const Translator translator(fixture_dir("marian_opus_en_mg"));
  return translator;
}

const std::vector<std::string> kSentences = {"Hello world.", "How are you?"};

// Beam 2, exactly 40 steps.
DecodeOptions forty_steps() {
  DecodeOptions options;
  options.beam_size = 2;
  options.min_new_tokens = 40;
  options.max_new_tokens = 40;
  return options;
}

// The sentences translated with a cancelled() that is never true, and how often it was asked.
struct NeverCancelled {
  std::atomic<int> asked{0};
  std::vector<ordo::TranslationResult> results;
  NeverCancelled() {
    DecodeOptions options = forty_steps();
    options.cancelled = [this] { return ++asked > 1000000; };
    results = marian().translate(kSentences, options);
  }
};

const NeverCancelled& never_cancelled() {
  static const NeverCancelled made;
  return made;
}

TEST(Cancellation, ACallbackThatNeverCancelsChangesNoTranslation) {
  const auto reference = marian().translate(kSentences, forty_steps());
  const auto& same = never_cancelled().results;
  ASSERT_EQ(same.size(), reference.size());
  for (size_t i = 0; i < same.size(); ++i) EXPECT_EQ(same[i].hypotheses[0].ids, reference[i].hypotheses[0].ids);
}

TEST(Cancellation, TheCallbackIsAskedAtLeastOncePerStep) { EXPECT_GE(never_cancelled().asked.load(), 40); }

// True from the fifth question on: the call throws at once, having run at most a few steps.
TEST(Cancellation, ATrueAnswerStopsTheCallWithinAStep) {
  std::atomic<int> asked{0};
  DecodeOptions options = forty_steps();
  options.cancelled = [&asked] { return ++asked >= 5; };
  try {
    marian().translate(kSentences, options);
    FAIL() << "not cancelled";
  } catch (const ordo::Error& e) {
    EXPECT_STREQ(e.what(), "cancelled");
  }
  EXPECT_EQ(asked.load(), 5);
}

}  // namespace
