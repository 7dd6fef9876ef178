// The public ordo::Translator: text in/text out against the golden texts, options errors,
// invalid input, and concurrent calls on one instance.
// ctest-label: integration
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "ordo/ordo.h"
#include "pipeline/worker_pool.h"
#include "support/fixtures.h"
#include "support/sanitizer.h"
#include "support/temp_dir.h"

namespace ordo {
namespace {

using nlohmann::json;
using testing::fixture_dir;
using testing::load_golden;

DecodeOptions greedy20() {
  DecodeOptions options;
  options.beam_size = 1;
  options.max_new_tokens = 20;
  return options;
}

class TranslatorText : public ::testing::TestWithParam<std::string> {
 protected:
  // The fixture's Translator, loaded once for the suite's tests and released after them.
  const Translator& translator() const {
    std::unique_ptr<Translator>& t = loaded_[GetParam()];
    if (!t) t = std::make_unique<Translator>(fixture_dir(GetParam()));
    return *t;
  }
  static void TearDownTestSuite() { loaded_.clear(); }

 private:
  static std::map<std::string, std::unique_ptr<Translator>> loaded_;
};

std::map<std::string, std::unique_ptr<Translator>> TranslatorText::loaded_;

TEST_P(TranslatorText, GreedyTextsMatchTheGolden) {
  const json golden = load_golden(GetParam());
  const auto sentences = golden["sentences"].get<std::vector<std::string>>();
  DecodeOptions options = greedy20();
  const json& kwargs = golden["generation"]["greedy"]["kwargs"];
  if (kwargs.contains("forced_bos_token_id"))
    options.forced_bos_token_id = kwargs["forced_bos_token_id"].get<int64_t>();
  const auto results = translator().translate(sentences, options);
  ASSERT_EQ(results.size(), sentences.size());
  for (size_t i = 0; i < sentences.size(); ++i) {
    const json& expected = golden["generation"]["greedy"]["per_sentence"][i];
    // An input with no text is not run (HF's model makes text up for it).
    const std::string want = has_text(sentences[i]) ? expected["texts"][0].get<std::string>() : "";
    EXPECT_EQ(results[i].hypotheses[0].text, want) << "sentence " << i;
  }
}

TEST_P(TranslatorText, EncodedTokensMatchTheGolden) {
  const json golden = load_golden(GetParam());
  const auto sentences = golden["sentences"].get<std::vector<std::string>>();
  for (size_t i = 0; i < sentences.size(); ++i)
    EXPECT_EQ(translator().encode(sentences[i]), golden["tokenization"][i]["input_ids"].get<std::vector<int64_t>>())
        << "sentence " << i;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, TranslatorText, ::testing::ValuesIn(testing::seq2seq_fixtures()),
                         [](const auto& info) { return info.param; });

TEST(Translator, ConcurrentCallsGiveTheSameResultsAsSerialOnes) {
  const Translator translator(fixture_dir("marian_opus_en_mg"));
  const json golden = load_golden("marian_opus_en_mg");
  const auto sentences = golden["sentences"].get<std::vector<std::string>>();
  DecodeOptions beam = greedy20();
  beam.beam_size = 4;
  const auto serial = translator.translate(sentences, beam);
  std::vector<std::future<std::vector<TranslationResult>>> runs;
  for (int t = 0; t < 4; ++t)
    runs.push_back(std::async(std::launch::async, [&] { return translator.translate(sentences, beam); }));
  for (auto& run : runs) {
    const auto results = run.get();
    for (size_t i = 0; i < sentences.size(); ++i)
      EXPECT_EQ(results[i].hypotheses[0].ids, serial[i].hypotheses[0].ids) << "sentence " << i;
  }
}

// Small batches by sentences or by tokens, decoded one after another or by several workers,
// give the results of one big batch (padding does not change a sentence's translation).
struct Batching {
  int batch_size, batch_tokens, inter_threads;
};

const std::vector<std::string>& golden_sentences() {
  static const auto sentences = load_golden("marian_opus_en_mg")["sentences"].get<std::vector<std::string>>();
  return sentences;
}

DecodeOptions beam4() {
  DecodeOptions beam = greedy20();
  beam.beam_size = 4;
  return beam;
}

void expect_the_results_of_one_batch(const Batching setting) {
  static const auto reference = Translator(fixture_dir("marian_opus_en_mg")).translate(golden_sentences(), beam4());
  ModelOptions model_options;
  model_options.inter_threads = setting.inter_threads;
  BatchOptions batching;
  batching.batch_size = setting.batch_size;
  batching.batch_tokens = setting.batch_tokens;
  const auto results =
      Translator(fixture_dir("marian_opus_en_mg"), model_options).translate(golden_sentences(), beam4(), batching);
  ASSERT_EQ(results.size(), golden_sentences().size());
  for (size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(results[i].hypotheses[0].ids, reference[i].hypotheses[0].ids) << "sentence " << i;
    EXPECT_NEAR(results[i].hypotheses[0].score, reference[i].hypotheses[0].score, 1e-4) << "sentence " << i;
  }
}

TEST(Translator, BatchesOfTwoSentencesGiveTheResultsOfOneBatch) { expect_the_results_of_one_batch({2, 0, 1}); }

TEST(Translator, TwoWorkersOnBatchesOfTwoGiveTheResultsOfOneBatch) { expect_the_results_of_one_batch({2, 0, 2}); }

TEST(Translator, BatchesByTokensOnTwoWorkersGiveTheResultsOfOneBatch) { expect_the_results_of_one_batch({32, 20, 2}); }

TEST(Translator, OneTokenBatchesOnThreeWorkersGiveTheResultsOfOneBatch) { expect_the_results_of_one_batch({32, 1, 3}); }

TEST(Translator, ZeroInterThreadsIsAnError) {
  ModelOptions bad;
  bad.inter_threads = 0;
  EXPECT_THROW(Translator(fixture_dir("marian_opus_en_mg"), bad), Error);
}

TEST(Translator, NegativeBatchTokensIsAnError) {
  BatchOptions negative;
  negative.batch_tokens = -1;
  EXPECT_THROW(Translator(fixture_dir("marian_opus_en_mg")).translate(golden_sentences(), beam4(), negative), Error);
}

TEST(Translator, InterThreadsPastTheLimitIsAnErrorNamingIt) {
  ModelOptions many;
  many.inter_threads = 100000;
  try {
    Translator translator(fixture_dir("marian_opus_en_mg"), many);
    FAIL() << "100000 inter_threads were accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("inter_threads 100000 is more than 256"), std::string::npos) << e.what();
  }
}

// A pool whose threads the system cannot all start (here: an address space too small for
// their stacks) throws ordo::Error after ending the ones it started; a joinable std::thread
// left behind would terminate the process instead.
TEST(WorkerPoolStart, ThreadsTheSystemCannotStartAreAnErrorNotAnAbort) {
#ifdef ORDO_SANITIZER_ALLOCATOR
  GTEST_SKIP() << "a sanitizer's allocator aborts when the address space runs out";
#else
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const auto start_in_a_small_address_space = [] {
    std::ifstream statm("/proc/self/statm");
    size_t pages = 0;
    statm >> pages;
    const rlim_t room = static_cast<rlim_t>(pages) * static_cast<rlim_t>(::sysconf(_SC_PAGESIZE)) + (rlim_t(64) << 20);
    struct rlimit limit;
    limit.rlim_cur = limit.rlim_max = room;
    ::setrlimit(RLIMIT_AS, &limit);  // room for a few 8 MB thread stacks, not 1000
    try {
      pipeline::WorkerPool pool(1000);
      std::fprintf(stderr, "started %zu\n", pool.size());
      std::_Exit(2);
    } catch (const Error& e) {
      std::fprintf(stderr, "%s\n", e.what());
      std::_Exit(0);
    }
  };
  EXPECT_EXIT(start_in_a_small_address_space(), ::testing::ExitedWithCode(0),
              "cannot start 1000 inter_threads workers: the system gave [0-9]+ threads");
#endif
}

TEST(Translator, EmptyBatchGivesNoResults) {
  const Translator translator(fixture_dir("marian_opus_en_mg"));
  EXPECT_TRUE(translator.translate({}).empty());
}

// "   " once came back as a sentence the model made up, a NUL-only line as garbage. Blank
// inputs (ordo::has_text) get one empty hypothesis, score 0, in place.
TEST(Translator, WhitespaceNulAndInvisibleCharactersAreNoText) {
  EXPECT_FALSE(has_text(""));
  EXPECT_FALSE(has_text(" \t\r\n\v\f"));
  EXPECT_FALSE(has_text(std::string("\0\0", 2)));
  EXPECT_FALSE(
      has_text("\xC2\xA0\xE3\x80\x80\xE2\x80\x8B\xEF\xBB\xBF\x7F"));  // NBSP, ideographic space, ZWSP, BOM, DEL
}

TEST(Translator, AnyVisibleCharacterIsText) {
  EXPECT_TRUE(has_text("  a  "));
  EXPECT_TRUE(has_text("\xC2\xB7"));  // a middle dot is text
  EXPECT_TRUE(has_text("\xFF"));      // not UTF-8: not blank (translate() reports it)
}

const Translator& marian() {
  static const Translator translator(fixture_dir("marian_opus_en_mg"));
  return translator;
}

// Blank inputs of every kind around "Hello." (input 2), translated greedily in one call.
const std::vector<std::string> kBlanksAroundHello = {"   ", std::string("\0", 1), "Hello.", "\t\n", "\xE2\x80\x8B", ""};

const std::vector<TranslationResult>& blanks_around_hello() {
  static const auto results = marian().translate(kBlanksAroundHello, greedy20());
  return results;
}

// Bad options: more hypotheses than beams.
DecodeOptions three_of_two_beams() {
  DecodeOptions options = greedy20();
  options.beam_size = 2;
  options.n_best = 3;
  return options;
}

void expect_the_blank_result(const TranslationResult& result, size_t i) {
  ASSERT_EQ(result.hypotheses.size(), 1u) << i;
  EXPECT_EQ(result.hypotheses[0].text, "") << i;
  EXPECT_TRUE(result.hypotheses[0].ids.empty()) << i;
  EXPECT_EQ(result.hypotheses[0].score, 0.0f) << i;
}

TEST(Translator, ABlankInputGetsOneEmptyHypothesisOfScoreZero) {
  ASSERT_EQ(blanks_around_hello().size(), kBlanksAroundHello.size());
  for (size_t i : {0, 1, 3, 4, 5}) expect_the_blank_result(blanks_around_hello()[i], i);
}

TEST(Translator, TextAmongBlankInputsIsTranslatedAsAlone) {
  ASSERT_EQ(blanks_around_hello().size(), kBlanksAroundHello.size());
  const Hypothesis& hello = blanks_around_hello()[2].hypotheses.at(0);
  EXPECT_EQ(hello.ids, marian().translate({"Hello."}, greedy20())[0].hypotheses[0].ids);
  EXPECT_FALSE(hello.ids.empty());
}

// What the policy prevents.
TEST(Translator, TheModelItselfMakesTextUpForABlankInput) {
  EXPECT_FALSE(marian().translate_ids({marian().encode("   ")}, greedy20())[0].hypotheses[0].ids.empty());
}

TEST(Translator, OnlyBlankInputsGiveAResultEach) { EXPECT_EQ(marian().translate({"  ", "\n"}, greedy20()).size(), 2u); }

TEST(Translator, BadOptionsAreRefusedForOnlyBlankInputsToo) {
  EXPECT_THROW(marian().translate({"  "}, three_of_two_beams()), Error);
}

// The one blank-input policy for callers that tokenize themselves (the server's batcher): a
// source with no ids is a blank input, answered by translate_ids() as translate() answers a
// sentence with no text, without running the model.
struct EmptyIdsAroundHello {
  std::vector<TranslationResult> by_ids, by_text;
  EmptyIdsAroundHello()
      : by_ids(marian().translate_ids({{}, marian().encode("Hello.", greedy20()), {}}, greedy20())),
        by_text(marian().translate({"   ", "Hello.", ""}, greedy20())) {}
};

const EmptyIdsAroundHello& empty_ids_around_hello() {
  static const EmptyIdsAroundHello made;
  return made;
}

TEST(Translator, EmptySourceIdsGetTheResultTranslateGivesABlankInput) {
  const EmptyIdsAroundHello& runs = empty_ids_around_hello();
  ASSERT_EQ(runs.by_ids.size(), 3u);
  ASSERT_EQ(runs.by_text.size(), 3u);
  for (size_t i : {0, 2}) {
    expect_the_blank_result(runs.by_ids[i], i);
    EXPECT_EQ(runs.by_ids[i].hypotheses.at(0).ids, runs.by_text[i].hypotheses.at(0).ids) << i;
  }
}

TEST(Translator, SourceIdsAmongEmptyOnesAreTranslatedAsTranslateDoes) {
  const EmptyIdsAroundHello& runs = empty_ids_around_hello();
  ASSERT_EQ(runs.by_ids.size(), 3u);
  ASSERT_EQ(runs.by_text.size(), 3u);
  EXPECT_FALSE(runs.by_ids[1].hypotheses.at(0).ids.empty());
  EXPECT_EQ(runs.by_ids[1].hypotheses.at(0).ids, runs.by_text[1].hypotheses.at(0).ids);
}

TEST(Translator, OnlyEmptySourceIdsGiveAResultEach) {
  EXPECT_EQ(marian().translate_ids({{}, {}}, greedy20()).size(), 2u);
}

TEST(Translator, BadOptionsAreRefusedForOnlyEmptySourceIdsToo) {
  EXPECT_THROW(marian().translate_ids({{}}, three_of_two_beams()), Error);
}

// A call on a moved-from Translator segfaulted.
TEST(Translator, MovedFromTranslatorThrowsInsteadOfCrashing) {
  Translator original(fixture_dir("marian_opus_en_mg"));
  const Translator moved(std::move(original));
  EXPECT_FALSE(moved.translate({"Hello."}, greedy20())[0].hypotheses[0].ids.empty());
  const auto error_of = [](const auto& call) {
    try {
      call();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of([&] { original.translate({"Hello."}); }).find("moved from"), std::string::npos);
  EXPECT_NE(error_of([&] { original.translate_ids({{1, 0}}); }).find("moved from"), std::string::npos);
  EXPECT_NE(error_of([&] { original.encode("Hello."); }).find("moved from"), std::string::npos);
  EXPECT_NE(error_of([&] { original.languages(); }).find("moved from"), std::string::npos);
  EXPECT_NE(error_of([&] { original.resolved_settings(); }).find("moved from"), std::string::npos);
  EXPECT_NE(error_of([&] { original.model_dir(); }).find("moved from"), std::string::npos);
}

TEST(Translator, InvalidUtf8NamesTheInput) {
  const Translator translator(fixture_dir("marian_opus_en_mg"));
  try {
    translator.translate({"fine", std::string("bad \xC3\x28 byte")});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("input 2"), std::string::npos) << e.what();
  }
}

TEST(Translator, MoreHypothesesThanBeamsIsAnError) {
  EXPECT_THROW(marian().translate({"Hello"}, three_of_two_beams()), Error);
}

TEST(Translator, AZeroBatchSizeIsAnError) {
  BatchOptions no_batch;
  no_batch.batch_size = 0;
  EXPECT_THROW(marian().translate({"Hello"}, DecodeOptions(), no_batch), Error);
}

TEST(Translator, AnIdPastTheVocabularyIsAnError) { EXPECT_THROW(marian().translate_ids({{1, 2, 999999}}), Error); }

TEST(Translator, MinLengthDelaysEos) {
  const Translator translator(fixture_dir("marian_opus_en_mg"));
  DecodeOptions options = greedy20();
  options.max_new_tokens = 12;
  options.min_new_tokens = 12;
  // With EOS impossible until 12 tokens and forced at the last step: exactly 12 generated
  // (the last one EOS, forced by forced_eos_token_id).
  for (const auto& result : translator.translate({"Hello.", "Where is the train station?"}, options)) {
    ASSERT_EQ(result.hypotheses[0].ids.size(), 12u);
    EXPECT_EQ(result.hypotheses[0].ids.back(), 0);
  }
}

TEST(Translator, NoRepeatNgramNeverRepeats) {
  const Translator translator(fixture_dir("marian_opus_en_mg"));
  DecodeOptions options = greedy20();
  options.no_repeat_ngram_size = 2;
  for (const auto& result : translator.translate({"My neighbour planted three apple trees."}, options)) {
    const auto& ids = result.hypotheses[0].ids;
    std::set<std::pair<int64_t, int64_t>> seen;
    int64_t previous = 54687;  // decoder start counts, as in Hugging Face
    for (int64_t id : ids) {
      EXPECT_TRUE(seen.insert({previous, id}).second) << "bigram repeated";
      previous = id;
    }
  }
}

// A copy of the bart fixture whose config.json carries T5-style task_specific_params.
void write_with_tasks(const testing::TempDir& dir, const json& tasks) {
  testing::copy_dir(fixture_dir("bart"), dir.path());
  json config = json::parse(std::ifstream(dir.file("config.json")));
  config["task_specific_params"] = tasks;
  dir.write("config.json", config.dump(2));
}

std::string setting(const std::vector<ResolvedSetting>& settings, const std::string& name) {
  for (const ResolvedSetting& s : settings)
    if (s.name == name) return s.value + " (" + s.source + ")";
  return "unset";
}

// The bart fixture with a summarization and a translation task, loaded once for the tests below.
const Translator& with_tasks() {
  static const testing::TempDir dir;
  static const Translator translator = [] {
    write_with_tasks(dir, {{"summarization",
                            {{"prefix", "summarize: "},
                             {"num_beams", 2},
                             {"length_penalty", 1.5},
                             {"max_length", 12},
                             {"min_length", 3}}},
                           {"translation_en_to_de", {{"prefix", "translate English to German: "}, {"num_beams", 3}}}});
    return Translator(dir.path());
  }();
  return translator;
}

// The bart fixture as it is, without task_specific_params.
const Translator& without_tasks() {
  static const Translator translator(fixture_dir("bart"));
  return translator;
}

DecodeOptions summarize() {
  DecodeOptions options;
  options.task = "summarization";
  return options;
}

const std::string kFromTask = " (config.json task_specific_params.summarization)";
const std::string kTowerText = "The tower is 324 metres tall.";

TEST(Translator, TasksAreTheKeysOfTaskSpecificParams) {
  EXPECT_EQ(with_tasks().tasks(), (std::vector<std::string>{"summarization", "translation_en_to_de"}));
}

TEST(Translator, WithoutATaskTheSettingsComeFromGenerationConfig) {
  // bart's: 4 beams, length penalty 2, no-repeat 3.
  const std::vector<ResolvedSetting> settings = with_tasks().resolved_settings();
  EXPECT_EQ(setting(settings, "beam_size"), "4 (generation_config.json)");
  EXPECT_EQ(setting(settings, "task"), "unset");
}

// As in the transformers pipelines: the task's settings over generation_config.json, the
// caller's over both.
TEST(Translator, ATasksSettingsOverrideGenerationConfig) {
  const std::vector<ResolvedSetting> settings = with_tasks().resolved_settings(summarize());
  EXPECT_EQ(setting(settings, "task"), "summarization (option)");
  EXPECT_EQ(setting(settings, "prefix"), "\"summarize: \"" + kFromTask);
  EXPECT_EQ(setting(settings, "beam_size"), "2" + kFromTask);
  EXPECT_EQ(setting(settings, "length_penalty"), "1.5" + kFromTask);
  EXPECT_EQ(setting(settings, "max_length"), "12" + kFromTask);
  EXPECT_EQ(setting(settings, "min_length"), "3" + kFromTask);
}

TEST(Translator, WhatATaskLeavesOutStaysTheModels) {
  EXPECT_EQ(setting(with_tasks().resolved_settings(summarize()), "no_repeat_ngram_size"), "3 (generation_config.json)");
}

TEST(Translator, TheCallersOptionsOverrideTheTasksSettings) {
  DecodeOptions flags = summarize();
  flags.beam_size = 1;
  flags.max_new_tokens = 5;
  const std::vector<ResolvedSetting> settings = with_tasks().resolved_settings(flags);
  EXPECT_EQ(setting(settings, "beam_size"), "1 (option)");
  EXPECT_EQ(setting(settings, "max_length"), "6 (option)");
  EXPECT_EQ(setting(settings, "length_penalty"), "1.5" + kFromTask);
}

TEST(Translator, EncodeWithATaskPutsItsPrefixBeforeTheInput) {
  const Translator& translator = with_tasks();
  EXPECT_EQ(translator.encode(kTowerText, summarize()), translator.encode("summarize: " + kTowerText));
  EXPECT_NE(translator.encode(kTowerText, summarize()), translator.encode(kTowerText));
}

TEST(Translator, TranslateWithATaskPutsItsPrefixBeforeTheInput) {
  const Translator& translator = with_tasks();
  const TranslationResult prefixed = translator.translate({kTowerText}, summarize()).at(0);
  const TranslationResult by_ids =
      translator.translate_ids({translator.encode("summarize: " + kTowerText)}, summarize()).at(0);
  EXPECT_EQ(prefixed.hypotheses.at(0).ids, by_ids.hypotheses.at(0).ids);
}

TEST(Translator, ATasksMaxLengthBoundsTheTranslation) {
  const TranslationResult prefixed = with_tasks().translate({kTowerText}, summarize()).at(0);
  EXPECT_EQ(prefixed.hypotheses.size(), 1u);
  EXPECT_LE(prefixed.hypotheses.at(0).ids.size(), 11u);  // max_length 12, start token included
}

TEST(Translator, ATaskTheFolderLacksIsAnErrorListingTheTasksItHas) {
  const Translator& translator = with_tasks();
  DecodeOptions unknown;
  unknown.task = "translation_en_to_fr";
  for (const auto& call : std::vector<std::function<void()>>{[&] { translator.translate({kTowerText}, unknown); },
                                                             [&] { translator.resolved_settings(unknown); },
                                                             [&] { translator.encode(kTowerText, unknown); }}) {
    try {
      call();
      FAIL() << "expected an error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("unknown task 'translation_en_to_fr'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("summarization, translation_en_to_de"), std::string::npos) << e.what();
    }
  }
}

TEST(Translator, AFolderWithoutTaskSpecificParamsHasNoTasks) { EXPECT_TRUE(without_tasks().tasks().empty()); }

TEST(Translator, ATaskForAFolderWithoutTaskSpecificParamsIsAnErrorSayingSo) {
  try {
    without_tasks().resolved_settings(summarize());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no task_specific_params"), std::string::npos) << e.what();
  }
}

// t5-small's own layout: its golden sentences were given to transformers with the
// translation_en_to_de prefix; the task puts it there.
TEST(Translator, T5TranslationTaskPutsItsPrefixAsThePipelineDoes) {
  const json golden = load_golden("t5_v1");
  const std::string prefix = golden["meta"]["source_prefix"];
  ASSERT_EQ(prefix, "translate English to German: ");
  const Translator translator(fixture_dir("t5_v1"));
  DecodeOptions options = greedy20();
  options.task = "translation_en_to_de";
  const auto sentences = golden["sentences"].get<std::vector<std::string>>();
  std::vector<std::string> texts;
  for (const std::string& sentence : sentences) {
    ASSERT_EQ(sentence.compare(0, prefix.size(), prefix), 0) << sentence;
    texts.push_back(sentence.substr(prefix.size()));
  }
  const auto results = translator.translate(texts, options);
  for (size_t i = 0; i < texts.size(); ++i) {
    EXPECT_EQ(translator.encode(texts[i], options), golden["tokenization"][i]["input_ids"].get<std::vector<int64_t>>())
        << "sentence " << i;
    if (!has_text(texts[i])) continue;  // the prefix alone: a blank input is not run
    EXPECT_EQ(results[i].hypotheses.at(0).text, golden["generation"]["greedy"]["per_sentence"][i]["texts"][0])
        << "sentence " << i;
  }
}

TEST(Translator, BadTaskSpecificParamsNameConfigJsonAndTheField) {
  for (const json& tasks : {json{{"summarization", {{"num_beams", "four"}}}}, json{{"summarization", 3}},
                            json{{"summarization", {{"prefix", 7}}}},
                            json{{"summarization", {{"forced_bos_token_id", 99999999}}}}, json::array()}) {
    testing::TempDir dir;
    write_with_tasks(dir, tasks);
    try {
      const Translator translator(dir.path());
      FAIL() << "expected an error for " << tasks.dump();
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("config.json"), std::string::npos) << message;
      EXPECT_NE(message.find("task_specific_params"), std::string::npos) << message;
    }
  }
}

}  // namespace
}  // namespace ordo
