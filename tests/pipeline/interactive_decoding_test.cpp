// Interactive decoding against transformers 4.31 itself (tests/data/hf/<fixture>/
// interactive.json, made by tools/codegen/goldens/make_interactive_goldens.py): target prefixes
// (greedy and beam 4, as generate() with decoder_input_ids = [start] + prefix) and
// teacher-forced scores (Translator::score).
// ctest-label: integration
#include <cmath>
#include <fstream>
#include <functional>
#include <set>
#include <stdexcept>

#include <gtest/gtest.h>

#include "ordo/translator.h"
#include "support/errors.h"
#include "support/fixtures.h"
#include "support/golden_options.h"

namespace ordo {
namespace {

using nlohmann::json;
using testing::fixture_dir;
using testing::load_interactive;

constexpr double kTolerance = 1e-4;

DecodeOptions options_of(const json& c) {
  DecodeOptions options = testing::options_for(c["kwargs"]);
  return options;
}

class Interactive : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { golden_ = load_interactive(GetParam()); }
  int64_t eos() const { return golden_["meta"]["eos_token_id"].get<int64_t>(); }
  json golden_;
};

// Each prefix case as text (DecodeOptions::target_prefix) and as ids (translate_ids): the
// same sequences as generate(), the prefix kept, beam scores within 1e-4.
TEST_P(Interactive, TargetPrefixMatchesGenerate) {
  const Translator translator(fixture_dir(GetParam()));
  size_t checked = 0;
  for (const json& c : golden_["target_prefix"]) {
    DecodeOptions options = options_of(c);
    options.target_prefix = c["prefix"].get<std::string>();
    const std::string what = GetParam() + " " + c["case"].get<std::string>() + " sentence " +
                             std::to_string(c["sentence_index"].get<int>()) + " prefix '" +
                             c["prefix"].get<std::string>() + "'";
    const auto by_text = translator.translate({c["source"].get<std::string>()}, options);
    options.target_prefix.reset();
    const auto by_ids = translator.translate_ids({c["source_ids"].get<std::vector<int64_t>>()}, options, {},
                                                 {c["prefix_ids"].get<std::vector<int64_t>>()});
    for (const auto* results : {&by_text, &by_ids}) {
      const auto& hyps = results->at(0).hypotheses;
      ASSERT_EQ(hyps.size(), c["sequences"].size()) << what;
      for (size_t k = 0; k < hyps.size(); ++k) {
        EXPECT_EQ(hyps[k].ids, testing::golden_generated(c["sequences"][k], eos())) << what << " hypothesis " << k;
        if (c.contains("sequences_scores"))
          EXPECT_NEAR(hyps[k].score, c["sequences_scores"][k].get<double>(), kTolerance) << what << " hypothesis " << k;
      }
      EXPECT_EQ(hyps[0].text, c["texts"][0].get<std::string>()) << what;
    }
    ++checked;
  }
  EXPECT_EQ(checked, 18u);
}

// Per-input prefixes of different lengths (and none) in one call: each as it is alone.
TEST_P(Interactive, PerInputPrefixesInOneCallEqualOneByOne) {
  const Translator translator(fixture_dir(GetParam()));
  std::vector<std::string> sources, prefixes;
  DecodeOptions options;
  for (const json& c : golden_["target_prefix"]) {
    if (c["case"] != "greedy") continue;
    options = options_of(c);
    sources.push_back(c["source"].get<std::string>());
    prefixes.push_back(c["prefix"].get<std::string>());
  }
  sources.push_back(sources[0]);
  prefixes.push_back("");
  BatchOptions batching;
  batching.batch_size = 4;
  const auto together = translator.translate(sources, options, batching, prefixes);
  ASSERT_EQ(together.size(), sources.size());
  for (size_t i = 0; i < sources.size(); ++i) {
    DecodeOptions alone = options;
    if (!prefixes[i].empty()) alone.target_prefix = prefixes[i];
    EXPECT_EQ(together[i].hypotheses.at(0).ids, translator.translate({sources[i]}, alone)[0].hypotheses.at(0).ids)
        << "input " << i;
  }
  // The one without a prefix is plain decoding.
  EXPECT_EQ(together.back().hypotheses[0].ids, translator.translate({sources.back()}, options)[0].hypotheses[0].ids);
}

// Translator::score: the labels, every token's log-probability and their sum as the forward
// pass with teacher forcing gives them; one batched call equals the goldens too.
TEST_P(Interactive, ScoreMatchesTeacherForcing) {
  const Translator translator(fixture_dir(GetParam()));
  DecodeOptions options;
  if (GetParam() == "m2m100") options.target_lang = "de";
  std::vector<std::string> sources, targets;
  for (const json& c : golden_["teacher_forced"]) {
    sources.push_back(c["source"].get<std::string>());
    targets.push_back(c["target"].get<std::string>());
  }
  BatchOptions batching;
  batching.batch_size = 3;
  const auto batched = translator.score(sources, targets, options, batching);
  ASSERT_EQ(batched.size(), sources.size());
  for (size_t i = 0; i < sources.size(); ++i) {
    const json& c = golden_["teacher_forced"][i];
    for (const auto& r : {batched[i], translator.score({sources[i]}, {targets[i]}, options)[0]}) {
      ASSERT_EQ(r.ids, c["labels"].get<std::vector<int64_t>>()) << GetParam() << " target " << i;
      EXPECT_EQ(r.tokens, c["tokens"].get<std::vector<std::string>>()) << GetParam() << " target " << i;
      ASSERT_EQ(r.log_probs.size(), r.ids.size());
      double worst = 0;
      for (size_t t = 0; t < r.log_probs.size(); ++t)
        worst = std::max(worst, std::abs(r.log_probs[t] - c["log_probs"][t].get<double>()));
      EXPECT_LE(worst, kTolerance) << GetParam() << " target " << i;
      EXPECT_NEAR(r.score, c["score"].get<double>(), kTolerance * std::max(1.0, std::abs(c["score"].get<double>())))
          << GetParam() << " target " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Interactive, ::testing::Values("marian_opus_en_mg", "m2m100", "pegasus"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// A greedy translation scored afterwards gives the score it was printed with (the greedy score
// is the sum of the log-probabilities of its tokens, </s> included), when it ended by itself:
// one cut at the length limit ends with a forced </s> (log-probability 0 in the search).
TEST(InteractiveScore, GreedyTranslationScoresItsOwnScore) {
  const json golden = testing::load_golden("pegasus");
  const Translator translator(fixture_dir("pegasus"));
  DecodeOptions options;
  options.beam_size = 1;
  options.max_new_tokens = 20;
  std::vector<std::string> sources;
  for (const json& s : golden["sentences"]) sources.push_back(s.get<std::string>());
  const auto translated = translator.translate(sources, options);
  std::vector<std::string> ended, targets;
  std::vector<float> scores;
  for (size_t i = 0; i < sources.size(); ++i) {
    const Hypothesis& h = translated[i].hypotheses.at(0);
    if (h.ids.empty() || h.ids.size() >= 20 || h.ids.back() != 1) continue;  // pegasus: </s> = 1
    ended.push_back(sources[i]);
    targets.push_back(h.text);
    scores.push_back(h.score);
  }
  ASSERT_GE(ended.size(), 1u);
  const auto scored = translator.score(ended, targets);
  for (size_t i = 0; i < ended.size(); ++i) EXPECT_NEAR(scored[i].score, scores[i], kTolerance) << targets[i];
}

// return_alternatives: the n_best likeliest next tokens after the prefix, each continued
// greedily: every alternative starts with the prefix and a next token of its own, best first
// by that token's log-probability; the first is the greedy translation with the prefix.
const Translator& marian() {
  static const Translator translator(fixture_dir("marian_opus_en_mg"));
  return translator;
}

const std::string kStation = "Where is the train station?";

DecodeOptions greedy_after_aiza_no() {
  DecodeOptions greedy;
  greedy.beam_size = 1;
  greedy.max_new_tokens = 20;
  greedy.target_prefix = "Aiza no";
  return greedy;
}

DecodeOptions five_alternatives() {
  DecodeOptions options = greedy_after_aiza_no();
  options.return_alternatives = true;
  options.n_best = 5;
  return options;
}

// The greedy translation of kStation after the prefix.
const Hypothesis& greedy_with_prefix() {
  static const Hypothesis h = marian().translate({kStation}, greedy_after_aiza_no())[0].hypotheses.at(0);
  return h;
}

// Five alternatives after the prefix for kStation and for "Hello.".
const std::vector<TranslationResult>& alternatives_after_prefix() {
  static const auto results = marian().translate({kStation, "Hello."}, five_alternatives());
  return results;
}

TEST(InteractiveAlternatives, EachStartsWithThePrefix) {
  ASSERT_GE(greedy_with_prefix().ids.size(), 2u);
  const std::vector<int64_t> prefix(greedy_with_prefix().ids.begin(),
                                    greedy_with_prefix().ids.begin() + 2);  // "Aiza no": two tokens
  ASSERT_EQ(alternatives_after_prefix().size(), 2u);
  const auto& alternatives = alternatives_after_prefix()[0].hypotheses;
  ASSERT_EQ(alternatives.size(), 5u);
  for (const Hypothesis& h : alternatives) {
    ASSERT_GT(h.ids.size(), 2u);
    EXPECT_EQ(std::vector<int64_t>(h.ids.begin(), h.ids.begin() + 2), prefix);
    EXPECT_EQ(h.text.rfind("Aiza no", 0), 0u) << h.text;
  }
}

TEST(InteractiveAlternatives, EachHasANextTokenOfItsOwn) {
  ASSERT_EQ(alternatives_after_prefix().size(), 2u);
  const auto& alternatives = alternatives_after_prefix()[0].hypotheses;
  ASSERT_EQ(alternatives.size(), 5u);
  std::set<int64_t> next;
  for (const Hypothesis& h : alternatives) {
    ASSERT_GT(h.ids.size(), 2u);
    next.insert(h.ids[2]);
  }
  EXPECT_EQ(next.size(), 5u) << "distinct next tokens";
}

TEST(InteractiveAlternatives, TheFirstIsTheGreedyTranslationWithThePrefix) {
  ASSERT_EQ(alternatives_after_prefix().size(), 2u);
  const auto& alternatives = alternatives_after_prefix()[0].hypotheses;
  ASSERT_FALSE(alternatives.empty());
  EXPECT_EQ(alternatives[0].ids, greedy_with_prefix().ids);
  EXPECT_NEAR(alternatives[0].score, greedy_with_prefix().score, 1e-4);
}

TEST(InteractiveAlternatives, EveryInputOfABatchGetsItsAlternatives) {
  ASSERT_EQ(alternatives_after_prefix().size(), 2u);
  EXPECT_EQ(alternatives_after_prefix()[1].hypotheses.size(), 5u);
}

TEST(InteractiveAlternatives, WithoutAPrefixTheyAreAlternativeFirstWords) {
  DecodeOptions options = five_alternatives();
  options.target_prefix.reset();
  const auto start = marian().translate({kStation}, options)[0].hypotheses;
  ASSERT_EQ(start.size(), 5u);
  std::set<int64_t> first_tokens;
  for (const Hypothesis& h : start) first_tokens.insert(h.ids.at(0));
  EXPECT_EQ(first_tokens.size(), 5u);
}

void expect_error(const std::function<void()>& f, const std::string& part) {
  const std::string message = testing::error_of(f);
  EXPECT_NE(message.find(part), std::string::npos) << message;
}

TEST(InteractiveErrors, BadInputIsNamed) {
  const Translator translator(fixture_dir("marian_opus_en_mg"));
  expect_error([&] { translator.score({"a", "b"}, {"x"}); }, "2 sources but 1 targets");
  expect_error([&] { translator.translate({"a", "b"}, {}, {}, {"x"}); }, "1 prefixes for 2 inputs");
  DecodeOptions both;
  both.target_prefix = "Ny";
  expect_error([&] { translator.translate({"a"}, both, {}, {"x"}); }, "exclude each other");
  expect_error([&] { translator.translate_ids({{5, 0}}, {}, {}, {{0}}); }, "end of sequence");
  expect_error([&] { translator.translate({"a"}, {}, {}, {std::string("\xff")}); }, "target prefix 1");
  const Translator fsmt(fixture_dir("fsmt"));
  expect_error([&] { fsmt.score({"a"}, {"b"}); }, "FSMT models take no target text");
}

}  // namespace
}  // namespace ordo
