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

TEST(Cancellation, StopsWithinAStepAndChangesNothingOtherwise) {
  const Translator translator(fixture_dir("marian_opus_en_mg"));
  const std::vector<std::string> sentences = {"Hello world.", "How are you?"};
  DecodeOptions options;
  options.beam_size = 2;
  options.min_new_tokens = 40;
  options.max_new_tokens = 40;
  const auto reference = translator.translate(sentences, options);

  std::atomic<int> asked{0};
  options.cancelled = [&asked] { return ++asked > 1000000; };
  const auto same = translator.translate(sentences, options);
  ASSERT_EQ(same.size(), reference.size());
  for (size_t i = 0; i < same.size(); ++i) EXPECT_EQ(same[i].hypotheses[0].ids, reference[i].hypotheses[0].ids);
  EXPECT_GE(asked.load(), 40);  // once per step at least

  // True from the fifth question on: the call throws at once, having run at most a few steps.
  asked = 0;
  options.cancelled = [&asked] { return ++asked >= 5; };
  try {
    translator.translate(sentences, options);
    FAIL() << "not cancelled";
  } catch (const ordo::Error& e) {
    EXPECT_STREQ(e.what(), "cancelled");
  }
  EXPECT_EQ(asked.load(), 5);
}

}  // namespace
