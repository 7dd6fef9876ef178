// Lexical constraints and glossaries against transformers 4.31 itself
// (tests/data/hf/<fixture>/interactive.json "constrained": generate(force_words_ids=..., num_beams=4,
// num_return_sequences=4) with one and two forced phrases).
// ctest-label: integration
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>

#include <gtest/gtest.h>

#include "ordo/translator.h"
#include "support/cli_run.h"
#include "support/errors.h"
#include "support/fixtures.h"
#include "support/golden_options.h"
#include "support/temp_dir.h"

namespace ordo {
namespace {

using nlohmann::json;
using testing::fixture_dir;
using testing::load_interactive;

constexpr double kTolerance = 1e-4;

std::string joined(const json& words) {
  std::string out;
  for (const json& w : words) out += (out.empty() ? "" : "|") + w.get<std::string>();
  return out;
}

void expect_error(const std::function<void()>& f, const std::string& part) {
  const std::string message = testing::error_of(f);
  EXPECT_NE(message.find(part), std::string::npos) << message;
}

class Constrained : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { golden_ = load_interactive(GetParam()); }
  int64_t eos() const { return golden_["meta"]["eos_token_id"].get<int64_t>(); }
  json golden_;
};

// Every constrained case, the phrases as text (translate) and the sources as ids
// (translate_ids): the same four sequences, in the same order, and the same scores (null in
// the golden = -inf: a hypothesis that misses a phrase, returned to fill the n-best).
TEST_P(Constrained, ForceWordsMatchGenerate) {
  const Translator translator(fixture_dir(GetParam()));
  size_t checked = 0, two_phrases = 0;
  for (const json& c : golden_["constrained"]) {
    DecodeOptions options = testing::options_for(c["kwargs"]);
    options.force_words = joined(c["force_words"]);
    const std::string what = GetParam() + " sentence " + std::to_string(c["sentence_index"].get<int>()) +
                             " force_words '" + *options.force_words + "'";
    const auto by_text = translator.translate({c["source"].get<std::string>()}, options);
    const auto by_ids = translator.translate_ids({c["source_ids"].get<std::vector<int64_t>>()}, options);
    for (const auto* results : {&by_text, &by_ids}) {
      const auto& hyps = results->at(0).hypotheses;
      ASSERT_EQ(hyps.size(), c["sequences"].size()) << what;
      for (size_t k = 0; k < hyps.size(); ++k) {
        EXPECT_EQ(hyps[k].ids, testing::golden_generated(c["sequences"][k], eos())) << what << " hypothesis " << k;
        const json& score = c["sequences_scores"][k];
        if (score.is_null())
          EXPECT_TRUE(std::isinf(hyps[k].score) && hyps[k].score < 0)
              << what << " hypothesis " << k << ": " << hyps[k].score;
        else
          EXPECT_NEAR(hyps[k].score, score.get<double>(), kTolerance) << what << " hypothesis " << k;
      }
      EXPECT_EQ(hyps[0].text, c["texts"][0].get<std::string>()) << what;
    }
    ++checked;
    two_phrases += c["force_words"].size() == 2;
  }
  EXPECT_EQ(checked, 6u);
  EXPECT_EQ(two_phrases, 3u);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Constrained, ::testing::Values("marian_opus_en_mg", "m2m100", "pegasus"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// The marian golden's options (beam 4, n-best 4, 20 new tokens) and its constrained cases.
struct MarianCase {
  json golden = load_interactive("marian_opus_en_mg");
  const json& one_phrase(int sentence) const {
    for (const json& c : golden["constrained"])
      if (c["sentence_index"] == sentence && c["force_words"].size() == 1) return c;
    throw std::runtime_error("no case");
  }
};

TEST(ForceWords, BadOptionsAreNamed) {
  const Translator translator(fixture_dir("marian_opus_en_mg"));
  DecodeOptions o;
  o.beam_size = 4;
  o.force_words = "trano||x";
  expect_error([&] { translator.translate({"My house."}, o); }, "force_words: phrase 2 is empty");
  o.force_words = " ";
  expect_error([&] { translator.translate({"My house."}, o); }, "force_words: phrase 1 is empty");
  o.force_words = "trano";
  o.beam_size = 1;
  expect_error([&] { translator.translate({"My house."}, o); }, "force_words needs beam search");
  o.sample = true;
  expect_error([&] { translator.translate({"My house."}, o); }, "force_words needs beam search");
  o.sample.reset();
  o.beam_size = 4;
  o.target_prefix = "Ny";
  expect_error([&] { translator.translate({"My house."}, o); }, "force_words with a target prefix is not supported");
}

// The real binary: --force-words forces its phrase into every line, as the library does.
TEST(ForceWordsCli, TheFlagGivesTheLibrarysConstrainedOutput) {
  const MarianCase m;
  const std::string source = m.one_phrase(0)["source"].get<std::string>();
  const testing::TempDir dir;
  const std::string input = dir.write("in.txt", source + "\n");
  const std::string model = " -m '" + fixture_dir("marian_opus_en_mg") + "' --max-length 20 -i '" + input + "' -b 4";
  const Translator translator(fixture_dir("marian_opus_en_mg"));
  DecodeOptions o;
  o.beam_size = 4;
  o.max_new_tokens = 20;
  o.force_words = "trano";
  const std::string forced = translator.translate({source}, o)[0].hypotheses.at(0).text;
  EXPECT_NE(forced.find("trano"), std::string::npos) << forced;
  const testing::CliRun flag = testing::run_ordo("translate" + model + " --force-words trano");
  ASSERT_EQ(flag.exit_code, 0) << flag.err;
  EXPECT_EQ(flag.out, forced + "\n");
}

}  // namespace
}  // namespace ordo
