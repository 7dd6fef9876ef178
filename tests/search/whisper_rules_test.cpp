// Whisper's generation rules (search/whisper_rules.h and the processors they turn on): the
// setup of each generate() call replayed from transformers 4.31 (processor_golden.json, made by
// tools/codegen/whisper/make_processor_goldens.py: forced ids, begin indices, lengths, and what
// the processor list does to seeded scores), and each rule through greedy and beam search on a
// scripted StepModel whose vocabulary is laid out as Whisper's: text below <|endoftext|>, then
// the start, language, task and <|notimestamps|> tokens, the timestamps last.
// ctest-label: unit
#include <cmath>
#include <fstream>

#include <gtest/gtest.h>

#include "io/model_config.h"
#include "search/logits_processors.h"
#include "search/search.h"
#include "search/whisper_rules.h"
#include "support/errors.h"
#include "support/fixtures.h"
#include "support/scripted_step_model.h"
#include "support/temp_dir.h"

namespace ordo::search {
namespace {

using nlohmann::json;
using ordo::testing::error_of;
using ordo::testing::ScriptedStepModel;
using ordo::testing::TempDir;
using Ids = std::vector<int64_t>;

// ------------------------------------------------------------ goldens of transformers 4.31

const json& goldens() {
  static const json loaded = ordo::testing::load_fixture_json("whisper", "processor_golden.json");
  return loaded;
}

io::GenerationConfig golden_config(const json& config, const TempDir& dir) {
  return io::load_generation_config(dir.write("generation_config.json", config["generation_config"].dump()));
}

// resolve_settings() then apply_whisper_rules() for one generate() call of the goldens
// (max_new_tokens 8, as the script asks).
GenerationSettings golden_settings(const io::GenerationConfig& g, const json& kwargs, int64_t vocab) {
  io::ModelConfig model;
  model.vocab_size = model.decoder_vocab_size = vocab;
  DecodeOptions options;
  options.max_new_tokens = 8;
  GenerationSettings s = resolve_settings(model, g, options);
  WhisperWindow window;
  if (kwargs.contains("language")) window.language_id = whisper_language_id(g, kwargs["language"]);
  if (kwargs.contains("task")) window.task_id = whisper_task_id(g, kwargs["task"]);
  window.timestamps = kwargs.value("return_timestamps", false);
  if (kwargs.contains("prompt_ids")) window.prompt = kwargs["prompt_ids"].get<Ids>();
  apply_whisper_rules(s, g, window);
  return s;
}

// What the processors did to each score: '.' unchanged, 'x' -inf, '0' forced to 0.
std::vector<std::string> masks(const at::Tensor& before, const at::Tensor& after) {
  std::vector<std::string> out;
  for (int64_t r = 0; r < before.size(0); ++r) {
    std::string marks;
    for (int64_t v = 0; v < before.size(1); ++v) {
      const float a = before[r][v].item<float>(), b = after[r][v].item<float>();
      marks += a == b ? '.' : std::isinf(b) && b < 0 ? 'x' : b == 0 ? '0' : '?';
    }
    out.push_back(marks);
  }
  return out;
}

TEST(WhisperRules, BuildsTheForcedIdsBeginIndicesAndLengthsOfGenerate) {
  TempDir dir;
  int setups = 0;
  for (const auto& [name, config] : goldens()["configs"].items()) {
    const io::GenerationConfig g = golden_config(config, dir);
    for (const json& setup : config["setups"]) {
      const std::string where = name + " " + setup["generate_kwargs"].dump();
      const GenerationSettings s = golden_settings(g, setup["generate_kwargs"], goldens()["vocab"]);
      EXPECT_EQ(s.decoder_start_token_id, setup["decoder_start"].get<int64_t>()) << where;
      EXPECT_EQ(s.max_length, setup["max_length"].get<int64_t>()) << where;
      for (const json& p : setup["processors"]) {
        const std::string kind = p["class"];
        if (kind == "SuppressTokensAtBeginLogitsProcessor") {
          EXPECT_EQ(begin_suppress_index(s), p["begin_index"].get<int64_t>()) << where;
        } else if (kind == "ForceTokensLogitsProcessor") {
          io::ForcedDecoderIds expected;
          for (const json& pair : p["force_token_map"])
            expected.emplace_back(pair[0].get<int64_t>(),
                                  pair[1].is_null() ? std::nullopt : std::optional<int64_t>(pair[1].get<int64_t>()));
          EXPECT_EQ(s.forced_decoder_ids, expected) << where;
        } else if (kind == "WhisperTimeStampLogitsProcessor") {
          ASSERT_TRUE(s.timestamp_rules) << where;
          EXPECT_EQ(s.timestamp_rules->begin_index, p["begin_index"].get<int64_t>()) << where;
          EXPECT_EQ(s.timestamp_rules->timestamp_begin, p["timestamp_begin"].get<int64_t>()) << where;
          EXPECT_EQ(s.timestamp_rules->max_initial_timestamp_index, p["max_initial_timestamp_index"].get<int64_t>());
          EXPECT_EQ(s.timestamp_rules->eos_token_id, p["eos_token_id"].get<int64_t>()) << where;
        }
      }
      const bool timestamps = setup["generate_kwargs"].value("return_timestamps", false);
      EXPECT_EQ(s.timestamp_rules.has_value(), timestamps) << where;
      ++setups;
    }
  }
  EXPECT_EQ(setups, 11);
}

TEST(WhisperRules, ProcessorsMaskTheScoresAsTransformersAtEveryLength) {
  TempDir dir;
  int applications = 0;
  for (const auto& [name, config] : goldens()["configs"].items()) {
    const io::GenerationConfig g = golden_config(config, dir);
    for (const json& setup : config["setups"]) {
      const LogitsProcessorList processors(golden_settings(g, setup["generate_kwargs"], goldens()["vocab"]));
      for (const json& a : setup["applications"]) {
        const std::vector<Ids> rows = a["sequences"];
        std::vector<int64_t> flat;
        for (const Ids& row : rows) flat.insert(flat.end(), row.begin(), row.end());
        const at::Tensor sequences = at::tensor(flat, at::kLong).view({static_cast<int64_t>(rows.size()), -1});
        std::vector<float> quarters;
        for (const json& row : a["quarters_in"])
          for (const json& q : row) quarters.push_back(q.get<float>() / 4);
        const at::Tensor before = at::tensor(quarters, at::kFloat).view({sequences.size(0), -1});
        at::Tensor after = before.clone();
        processors.apply(sequences, after);
        EXPECT_EQ(masks(before, after), a["masks_out"].get<std::vector<std::string>>())
            << name << " " << setup["generate_kwargs"].dump() << " length " << sequences.size(1);
        ++applications;
      }
    }
  }
  EXPECT_GT(applications, 80);
}

// ------------------------------------------------------------ apply_whisper_rules

io::GenerationConfig multilingual_config() {
  io::GenerationConfig g;
  g.path = "whisper/generation_config.json";
  g.forced_decoder_ids = io::ForcedDecoderIds{{1, std::nullopt}, {2, 50359}};
  g.no_timestamps_token_id = 50363;
  g.max_initial_timestamp_index = 1;
  g.task_to_id = std::map<std::string, int64_t>{{"transcribe", 50359}, {"translate", 50358}};
  g.lang_to_id = std::map<std::string, int64_t>{{"<|en|>", 50259}, {"<|de|>", 50261}};
  g.max_length = 448;
  return g;
}

GenerationSettings whisper_settings() {
  GenerationSettings s;
  s.decoder_start_token_id = 50258;
  s.eos_token_id = s.pad_token_id = 50257;
  s.max_length = 33;
  s.max_from_new_tokens = true;
  return s;
}

TEST(WhisperRules, ForcesLanguageTaskAndNoTimestampsAfterTheStart) {
  GenerationSettings s = whisper_settings();
  apply_whisper_rules(s, multilingual_config(), {50261, 50358, false, {}});
  EXPECT_EQ(s.forced_decoder_ids, (io::ForcedDecoderIds{{1, 50261}, {2, 50358}, {3, 50363}}));
  EXPECT_EQ(begin_suppress_index(s), 4);
  EXPECT_FALSE(s.timestamp_rules);
  EXPECT_EQ(s.decoder_start_token_id, 50258);
  EXPECT_EQ(s.max_length, 33);
}

TEST(WhisperRules, LeavesTheLanguageStepFreeWithoutALanguage) {
  GenerationSettings s = whisper_settings();
  apply_whisper_rules(s, multilingual_config(), {std::nullopt, 50359, false, {}});
  EXPECT_EQ(s.forced_decoder_ids, (io::ForcedDecoderIds{{1, std::nullopt}, {2, 50359}, {3, 50363}}));
}

TEST(WhisperRules, DefaultsTheTaskToTranscribeWhenOnlyALanguageIsGiven) {
  GenerationSettings s = whisper_settings();
  apply_whisper_rules(s, multilingual_config(), {50259, std::nullopt, true, {}});
  EXPECT_EQ(s.forced_decoder_ids, (io::ForcedDecoderIds{{1, 50259}, {2, 50359}}));
  ASSERT_TRUE(s.timestamp_rules);
  EXPECT_EQ(s.timestamp_rules->begin_index, 4);
  EXPECT_EQ(s.timestamp_rules->timestamp_begin, 50364);
  EXPECT_EQ(s.timestamp_rules->no_timestamps_token_id, 50363);
  EXPECT_EQ(s.timestamp_rules->max_initial_timestamp_index, 1);
  EXPECT_EQ(s.timestamp_rules->eos_token_id, 50257);
}

// generate() without language or task keeps the generation config's forced ids as they are,
// adding no <|notimestamps|> (a transformers 4.31 quirk kept for parity).
TEST(WhisperRules, KeepsTheConfigsForcedIdsWithoutLanguageOrTask) {
  GenerationSettings s = whisper_settings();
  apply_whisper_rules(s, multilingual_config(), {});
  EXPECT_EQ(s.forced_decoder_ids, (io::ForcedDecoderIds{{1, std::nullopt}, {2, 50359}}));
}

// The prompt's <|startofprev|> becomes the decoder start, its text and then the window's
// forced tokens are forced from length 1, and every begin index moves with them.
TEST(WhisperRules, APromptShiftsTheForcedIdsAndTheBeginIndices) {
  GenerationSettings s = whisper_settings();
  apply_whisper_rules(s, multilingual_config(), {50259, 50359, true, {50361, 400, 401, 402}});
  EXPECT_EQ(s.decoder_start_token_id, 50361);
  EXPECT_EQ(s.forced_decoder_ids,
            (io::ForcedDecoderIds{{1, 400}, {2, 401}, {3, 402}, {4, 50258}, {5, 50259}, {6, 50359}}));
  EXPECT_EQ(begin_suppress_index(s), 7);
  ASSERT_TRUE(s.timestamp_rules);
  EXPECT_EQ(s.timestamp_rules->begin_index, 8);
  EXPECT_EQ(s.max_length, 36);  // max_new_tokens grows by the prompt's text
}

TEST(WhisperRules, AMaxLengthProperDoesNotGrowWithThePrompt) {
  GenerationSettings s = whisper_settings();
  s.max_from_new_tokens = false;
  apply_whisper_rules(s, multilingual_config(), {50259, 50359, false, {50361, 400}});
  EXPECT_EQ(s.max_length, 33);
}

// 4.31 keeps text_prompt_ids[-max_length // 2 - 1:]: the last 225 ids for max_length 448.
TEST(WhisperRules, CutsALongPromptToItsLast225Ids) {
  GenerationSettings s = whisper_settings();
  Ids prompt{50361};
  for (int64_t i = 0; i < 300; ++i) prompt.push_back(1000 + i);
  apply_whisper_rules(s, multilingual_config(), {50259, 50359, false, prompt});
  ASSERT_EQ(s.forced_decoder_ids.size(), 225u + 4u);
  EXPECT_EQ(s.forced_decoder_ids.front(), (std::pair<int64_t, std::optional<int64_t>>{1, 1075}));
  EXPECT_EQ(s.forced_decoder_ids[224].second, 1299);
  EXPECT_EQ(s.forced_decoder_ids[225].second, 50258);
  EXPECT_EQ(s.max_length, 33 + 225);
}

TEST(WhisperRules, TimestampsNeedTheNoTimestampsTokenOfTheConfig) {
  io::GenerationConfig g = multilingual_config();
  g.no_timestamps_token_id.reset();
  GenerationSettings s = whisper_settings();
  const std::string message = error_of([&] { apply_whisper_rules(s, g, {50259, 50359, true, {}}); });
  EXPECT_NE(message.find("whisper/generation_config.json"), std::string::npos) << message;
  EXPECT_NE(message.find("no_timestamps_token_id"), std::string::npos) << message;
}

TEST(WhisperRules, ADefaultTaskNeedsTranscribeInTaskToId) {
  io::GenerationConfig g = multilingual_config();
  g.task_to_id = std::map<std::string, int64_t>{{"translate", 50358}};
  GenerationSettings s = whisper_settings();
  EXPECT_NE(error_of([&] {
              apply_whisper_rules(s, g, {50259, std::nullopt, false, {}});
            }).find("task_to_id"),
            std::string::npos);
}

TEST(WhisperRules, LooksUpLanguagesAndTasksInTheConfig) {
  const io::GenerationConfig g = multilingual_config();
  EXPECT_EQ(whisper_language_id(g, "de"), 50261);
  EXPECT_EQ(whisper_language_id(g, "<|en|>"), 50259);
  EXPECT_EQ(whisper_language_id(g, "fr"), std::nullopt);
  EXPECT_EQ(whisper_task_id(g, "translate"), 50358);
  EXPECT_EQ(whisper_task_id(g, "summarize"), std::nullopt);
  EXPECT_EQ(whisper_language_id(io::GenerationConfig{}, "en"), std::nullopt);
}

TEST(WhisperRules, ResolveSettingsTakesSuppressionAndForcingFromTheConfig) {
  io::ModelConfig model;
  model.vocab_size = model.decoder_vocab_size = 51865;
  io::GenerationConfig g = multilingual_config();
  g.suppress_tokens = Ids{1, 2};
  g.begin_suppress_tokens = Ids{220, 50257};
  const GenerationSettings s = resolve_settings(model, g, {});
  EXPECT_EQ(s.suppress_tokens, (Ids{1, 2}));
  EXPECT_EQ(s.begin_suppress_tokens, (Ids{220, 50257}));
  EXPECT_EQ(s.forced_decoder_ids, (io::ForcedDecoderIds{{1, std::nullopt}, {2, 50359}}));
  EXPECT_EQ(begin_suppress_index(s), 3);
  g.suppress_tokens = Ids{51865};
  EXPECT_NE(error_of([&] { resolve_settings(model, g, {}); }).find("51865"), std::string::npos);
}

// ------------------------------------------------------------ the rules in the searches

// Whisper's layout in 16 ids: text 0..5, <|endoftext|> 6, <|startoftranscript|> 7 (the decoder
// start), <|en|> 8, <|transcribe|> 9, <|notimestamps|> 10, timestamps 11..15 (<|0.00|> 11).
constexpr int64_t kVocab = 16, kEot = 6, kSot = 7, kEn = 8, kTranscribe = 9, kNoTimestamps = 10, kZero = 11;

GenerationSettings scripted_settings() {
  GenerationSettings s;
  s.max_length = 12;
  s.eos_token_id = s.pad_token_id = kEot;
  s.decoder_start_token_id = kSot;
  return s;
}

ScriptedStepModel::Distribution ends() { return {{kEot, 0.9}}; }

TEST(WhisperRulesInSearch, SuppressedTokensAreNeverPicked) {
  ScriptedStepModel model(1, kVocab, {{3, 0.6}, {4, 0.3}, {kEot, 0.01}});
  GenerationSettings s = scripted_settings();
  s.max_length = 4;
  s.suppress_tokens = {3};
  EXPECT_EQ(greedy_search(model, 1, s)[0][0].ids, (Ids{4, 4, 4}));
}

TEST(WhisperRulesInSearch, BeginSuppressedTokensAreBannedAtTheFirstFreeStepOnly) {
  const auto run = [](bool suppress) {
    ScriptedStepModel model(1, kVocab, ends());
    model.after({kEn, kTranscribe}, {{kEot, 0.5}, {2, 0.3}, {5, 0.15}}).after({kEn, kTranscribe, 2}, {{kEot, 0.9}});
    GenerationSettings s = scripted_settings();
    s.forced_decoder_ids = {{1, kEn}, {2, kTranscribe}};
    if (suppress) s.begin_suppress_tokens = {kEot};
    return greedy_search(model, 1, s)[0][0].ids;
  };
  EXPECT_EQ(run(false), (Ids{kEn, kTranscribe, kEot}));
  EXPECT_EQ(run(true), (Ids{kEn, kTranscribe, 2, kEot}));
}

TEST(WhisperRulesInSearch, ForcedIdsTakeTheirStepsAndLeaveANullStepToTheModel) {
  ScriptedStepModel model(1, kVocab, ends());
  model.after({}, {{kEn, 0.7}, {3, 0.2}}).after({kEn}, {{4, 0.8}}).after({kEn, kTranscribe}, {{4, 0.8}});
  GenerationSettings s = scripted_settings();
  s.forced_decoder_ids = {{1, std::nullopt}, {2, kTranscribe}, {3, kNoTimestamps}};
  const SearchHypothesis best = greedy_search(model, 1, s)[0][0];
  EXPECT_EQ(best.ids, (Ids{kEn, kTranscribe, kNoTimestamps, kEot}));
  EXPECT_NEAR(best.score, std::log(0.7) + std::log(0.9), 1e-5);  // forced tokens add nothing
}

// Forced ids are what a target prefix is to the search: the same ids and scores, greedy and
// beam (both force after generate()'s own processors, at log-probability 0).
TEST(WhisperRulesInSearch, ForcedIdsScoreAsATargetPrefixDoes) {
  const auto model = [] {
    ScriptedStepModel m(1, kVocab, {{kEot, 0.3}, {2, 0.25}, {3, 0.2}});
    m.after({kEn, kTranscribe}, {{4, 0.5}, {5, 0.4}});
    return m;
  };
  for (const int64_t beams : {1, 3}) {
    GenerationSettings s = scripted_settings();
    s.num_beams = s.num_return_sequences = beams;
    s.max_length = 7;
    ScriptedStepModel prefixed = model(), forced = model();
    const auto with_prefix = search(prefixed, 1, s, {{kEn, kTranscribe}});
    s.forced_decoder_ids = {{1, kEn}, {2, kTranscribe}};
    const auto with_forcing = search(forced, 1, s);
    ASSERT_EQ(with_prefix[0].size(), with_forcing[0].size());
    for (size_t k = 0; k < with_prefix[0].size(); ++k) {
      EXPECT_EQ(with_forcing[0][k].ids, with_prefix[0][k].ids) << beams << " beams, hypothesis " << k;
      EXPECT_NEAR(with_forcing[0][k].score, with_prefix[0][k].score, 1e-6) << beams << " beams, hypothesis " << k;
    }
  }
}

// A model that prefers what the rules forbid at each step: text right after the forced
// tokens, <|notimestamps|> and a far timestamp at the first free step, text after a single
// timestamp that follows text, a third timestamp after a pair.
ScriptedStepModel timestamp_model() {
  ScriptedStepModel model(1, kVocab, ends());
  model.after({kEn, kTranscribe}, {{5, 0.9}})
      .after({kEn, kTranscribe, kZero}, {{4, 0.5}, {kZero + 4, 0.3}, {kZero + 1, 0.1}})
      .after({kEn, kTranscribe, kZero, 4}, {{kNoTimestamps, 0.5}, {kZero + 2, 0.4}, {5, 0.05}})
      .after({kEn, kTranscribe, kZero, 4, kZero + 2}, {{2, 0.7}, {kZero + 3, 0.2}, {kEot, 0.05}})
      .after({kEn, kTranscribe, kZero, 4, kZero + 2, kZero + 3}, {{kZero + 4, 0.8}, {3, 0.1}})
      .after({kEn, kTranscribe, kZero, 4, kZero + 2, kZero + 3, 3}, {{kEot, 0.9}});
  return model;
}

GenerationSettings timestamp_settings() {
  GenerationSettings s = scripted_settings();
  s.forced_decoder_ids = {{1, kEn}, {2, kTranscribe}};
  WhisperTimestampRules rules;
  rules.no_timestamps_token_id = kNoTimestamps;
  rules.timestamp_begin = kZero;
  rules.begin_index = 4;  // two forced ids + 2
  rules.max_initial_timestamp_index = 1;
  rules.eos_token_id = kEot;
  s.timestamp_rules = rules;
  return s;
}

TEST(WhisperRulesInSearch, TimestampsStartAtZeroAndComeInPairs) {
  ScriptedStepModel model = timestamp_model();
  const SearchHypothesis best = greedy_search(model, 1, timestamp_settings())[0][0];
  // <|0.00|> forced; text 4 (the far timestamp 15 is past max_initial_timestamp_index);
  // a timestamp, as their mass beats any text (<|notimestamps|> never); a second one (no text
  // after a single timestamp); text after the pair; the end.
  EXPECT_EQ(best.ids, (Ids{kEn, kTranscribe, kZero, 4, kZero + 2, kZero + 3, 3, kEot}));
}

// A model whose second timestamp of a segment goes back before its first: transformers' rules
// (generate()) take it; openai-whisper's monotonic rule, which its long-form loop decodes with,
// takes the first later one.
ScriptedStepModel backward_timestamp_model() {
  ScriptedStepModel model(1, kVocab, ends());
  model.after({kEn, kTranscribe, kZero}, {{4, 0.9}})
      .after({kEn, kTranscribe, kZero, 4}, {{kZero + 3, 0.9}})
      .after({kEn, kTranscribe, kZero, 4, kZero + 3}, {{kZero + 1, 0.6}, {kZero + 4, 0.3}, {kEot, 0.05}})
      .after({kEn, kTranscribe, kZero, 4, kZero + 3, kZero + 1}, {{kEot, 0.9}})
      .after({kEn, kTranscribe, kZero, 4, kZero + 3, kZero + 4}, {{kEot, 0.9}});
  return model;
}

TEST(WhisperRulesInSearch, TimestampsMayGoBackAsInGenerate) {
  ScriptedStepModel model = backward_timestamp_model();
  const SearchHypothesis best = greedy_search(model, 1, timestamp_settings())[0][0];
  EXPECT_EQ(best.ids, (Ids{kEn, kTranscribe, kZero, 4, kZero + 3, kZero + 1, kEot}));
}

TEST(WhisperRulesInSearch, MonotonicTimestampsNeverGoBack) {
  ScriptedStepModel model = backward_timestamp_model();
  GenerationSettings s = timestamp_settings();
  s.timestamp_rules->monotonic = true;
  const SearchHypothesis best = greedy_search(model, 1, s)[0][0];
  EXPECT_EQ(best.ids, (Ids{kEn, kTranscribe, kZero, 4, kZero + 3, kZero + 4, kEot}));
}

// Beam search applies the rules to log-probabilities (generate() runs its processors after
// log_softmax): a hypothesis' score sums the model's own log-probabilities of its free tokens,
// the masked mass not given back.
TEST(WhisperRulesInSearch, BeamScoresAreTheModelsLogProbabilitiesOfTheFreeTokens) {
  ScriptedStepModel model = timestamp_model();
  GenerationSettings s = timestamp_settings();
  s.num_beams = 2;
  s.num_return_sequences = 2;
  const auto out = beam_search(model, 1, s);
  ASSERT_EQ(out[0].size(), 2u);
  for (const SearchHypothesis& h : out[0]) {
    ASSERT_GE(h.ids.size(), 3u);
    EXPECT_EQ(h.ids[2], kZero);
    double sum = 0;
    for (size_t t = 3; t < h.ids.size(); ++t)
      sum +=
          std::log(model.probability(0, Ids(h.ids.begin(), h.ids.begin() + static_cast<std::ptrdiff_t>(t)), h.ids[t]));
    // Length normalization as HF: the decoder start and the tokens before EOS (all of them
    // when the hypothesis ran out of length).
    const size_t length = h.ids.back() == kEot ? h.ids.size() : h.ids.size() + 1;
    EXPECT_NEAR(h.score, sum / static_cast<double>(length), 1e-5);
    for (int64_t id : h.ids) EXPECT_NE(id, kNoTimestamps);
  }
  // The best: a short segment, <|0.00|> <|0.02|> then the end (allowed after a single
  // timestamp), which greedy's first step (text 4) missed.
  EXPECT_EQ(out[0][0].ids, (Ids{kEn, kTranscribe, kZero, kZero + 1, kEot}));
}

}  // namespace
}  // namespace ordo::search
