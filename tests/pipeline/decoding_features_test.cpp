// Decoding features beyond search parity: target language by name, sampling, presets and
// where each setting comes from, truncation of long inputs.
// ctest-label: integration
#include <gtest/gtest.h>

#include <fstream>

#include "ordo/ordo.h"
#include "support/errors.h"
#include "support/fixtures.h"
#include "support/temp_dir.h"

namespace ordo {
namespace {

using ordo::testing::error_of;

using nlohmann::json;
using testing::fixture_dir;
using testing::load_golden;

DecodeOptions greedy(int max_new_tokens = 20) {
  DecodeOptions options;
  options.beam_size = 1;
  options.max_new_tokens = max_new_tokens;
  return options;
}

// The fixture's golden greedy run forced the target language by id; naming it must do the same.
TEST(TargetLanguage, ByNameEqualsGoldenForcedBos) {
  for (const auto& [fixture, lang] :
       std::vector<std::pair<std::string, std::string>>{{"m2m100", "de"}, {"nllb", "deu_Latn"}, {"mbart50", "de_DE"}}) {
    const json golden = load_golden(fixture);
    const Translator translator(fixture_dir(fixture));
    DecodeOptions options = greedy();
    options.target_lang = lang;
    const auto sentences = golden["sentences"].get<std::vector<std::string>>();
    const auto results = translator.translate(sentences, options);
    for (size_t i = 0; i < sentences.size(); ++i) {
      if (!has_text(sentences[i])) {  // not run: one empty hypothesis
        EXPECT_TRUE(results[i].hypotheses[0].ids.empty()) << fixture << " sentence " << i;
        continue;
      }
      const auto& expected = golden["generation"]["greedy"]["per_sentence"][i];
      const auto ids = expected["sequences"][0].get<std::vector<int64_t>>();
      EXPECT_EQ(results[i].hypotheses[0].ids,
                std::vector<int64_t>(ids.begin() + 1, ids.begin() + expected["lengths"][0].get<int64_t>()))
          << fixture << " sentence " << i;
      EXPECT_EQ(results[i].hypotheses[0].text, expected["texts"][0].get<std::string>()) << fixture;
    }
  }
}

const Translator& marian() {
  static const Translator translator(fixture_dir("marian_opus_en_mg"));
  return translator;
}

TEST(TargetLanguage, AnUnknownTargetLanguageIsAnErrorListingTheKnownOnes) {
  const Translator m2m(fixture_dir("m2m100"));
  DecodeOptions options = greedy();
  options.target_lang = "xx_Klingon";
  const std::string unknown = error_of([&] { m2m.translate({"Hello"}, options); });
  EXPECT_NE(unknown.find("unknown target language 'xx_Klingon'"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("known:"), std::string::npos) << unknown;
}

TEST(TargetLanguage, ATargetLanguageForAOnePairModelIsAnErrorSayingItIsNotMultilingual) {
  DecodeOptions options = greedy();
  options.target_lang = "de";
  EXPECT_NE(error_of([&] { marian().translate({"Hello"}, options); }).find("not multilingual"), std::string::npos);
}

// A source language that contradicts a one-pair model's folder (en -> mg) was once ignored.
DecodeOptions from_french() {
  DecodeOptions options = greedy();
  options.source_lang = "fr";
  return options;
}

TEST(TargetLanguage, ASourceLanguageOtherThanTheOnePairModelsIsAnError) {
  EXPECT_NE(error_of([&] { marian().translate({"Hello"}, from_french()); }).find("from 'en' only"), std::string::npos);
}

TEST(TargetLanguage, ResolvedSettingsNameAContradictorySourceLanguage) {
  EXPECT_NE(error_of([&] { marian().resolved_settings(from_french()); }).find("--source-lang 'fr'"), std::string::npos);
}

TEST(TargetLanguage, TheOnePairModelsOwnSourceLanguageChangesNothing) {
  DecodeOptions options = greedy();
  options.source_lang = "en";
  EXPECT_EQ(marian().translate({"Hello"}, options)[0].hypotheses[0].ids,
            marian().translate({"Hello"}, greedy())[0].hypotheses[0].ids);
}

// mBART folders: tokenizer_class MBart50Tokenizer puts the source code first, anything else is
// mbart-large-cc25's MBartTokenizer (the source code after </s>, 25 codes), as AutoTokenizer.
TEST(TargetLanguage, MBartTokenizerClassChoosesTheLayout) {
  const Translator mbart50(fixture_dir("mbart50"));
  const json golden = load_golden("mbart50");
  const auto fifty = golden["tokenization"][0]["input_ids"].get<std::vector<int64_t>>();  // en_XX ... </s>
  EXPECT_EQ(mbart50.encode(golden["sentences"][0]), fifty);
  EXPECT_EQ(mbart50.languages().size(), 52u);
  std::vector<int64_t> fr = fifty;
  fr[0] = fifty[0] + 4;  // fr_XX: four codes after en_XX
  EXPECT_EQ(mbart50.encode(golden["sentences"][0], "fr_XX"), fr);

  ordo::testing::TempDir dir;
  ordo::testing::copy_dir(fixture_dir("mbart50"), dir.path());
  for (const char* file : {"config.json", "tokenizer_config.json"}) {
    std::ifstream in(dir.file(file));
    json config = json::parse(in);
    config.erase("tokenizer_class");
    if (std::string(file) == "tokenizer_config.json") config["tokenizer_class"] = "MBartTokenizer";
    std::ofstream(dir.file(file)) << config.dump(2);
  }
  const Translator cc25(dir.path());
  std::vector<int64_t> expected(fifty.begin() + 1, fifty.end());
  expected.push_back(fifty[0]);  // pieces </s> en_XX
  EXPECT_EQ(cc25.encode(golden["sentences"][0]), expected);
  EXPECT_EQ(cc25.languages().size(), 25u);
  DecodeOptions options = greedy();
  options.target_lang = "sl_SI";  // mBART-50's last code, not cc25's
  EXPECT_NE(error_of([&] { cc25.translate({"Hello"}, options); }).find("unknown target language 'sl_SI'"),
            std::string::npos);
}

// A temperature the scores overflow with failed each input with an
// internal error naming no option.
TEST(Sampling, TemperatureOutOfRangeIsAnOptionError) {
  const Translator translator(fixture_dir("marian_opus_en_mg"));
  DecodeOptions sample = greedy();
  sample.sample = true;
  for (double temperature : {1e308, 3e38, 1e-40, 0.0}) {
    sample.temperature = static_cast<float>(temperature);
    const std::string error = error_of([&] { translator.translate({"Hello."}, sample); });
    EXPECT_NE(error.find("invalid decoding option: temperature"), std::string::npos) << temperature << ": " << error;
  }
  sample.temperature = 0.5f;
  EXPECT_FALSE(translator.translate({"Hello."}, sample)[0].hypotheses[0].ids.empty());
}

const Translator& tcbig() {
  static const Translator translator(fixture_dir("marian_tcbig_en_pt"));
  return translator;
}

const std::vector<std::string>& tcbig_sentences() {
  static const auto sentences = load_golden("marian_tcbig_en_pt")["sentences"].get<std::vector<std::string>>();
  return sentences;
}

DecodeOptions sampling(uint64_t seed) {
  DecodeOptions sample = greedy();
  sample.sample = true;
  sample.temperature = 1.5f;
  sample.seed = seed;
  return sample;
}

// The golden sentences sampled with seed 42.
const std::vector<TranslationResult>& sampled_with_seed_42() {
  static const auto results = tcbig().translate(tcbig_sentences(), sampling(42));
  return results;
}

TEST(Sampling, TheSameSeedGivesTheSameSamples) {
  const auto again = tcbig().translate(tcbig_sentences(), sampling(42));
  ASSERT_EQ(again.size(), sampled_with_seed_42().size());
  for (size_t i = 0; i < again.size(); ++i)
    EXPECT_EQ(sampled_with_seed_42()[i].hypotheses[0].ids, again[i].hypotheses[0].ids) << i;
}

TEST(Sampling, AnotherSeedGivesOtherSamples) {
  const auto other = tcbig().translate(tcbig_sentences(), sampling(7));
  ASSERT_EQ(other.size(), sampled_with_seed_42().size());
  int differing = 0;
  for (size_t i = 0; i < other.size(); ++i)
    differing += sampled_with_seed_42()[i].hypotheses[0].ids != other[i].hypotheses[0].ids;
  EXPECT_GT(differing, 0) << "different seeds gave identical samples for every sentence";
}

TEST(Sampling, SamplingFromTheTop1IsGreedy) {
  DecodeOptions top1 = greedy();
  top1.sample = true;
  top1.top_k = 1;
  const auto sampled = tcbig().translate(tcbig_sentences(), top1);
  const auto argmax = tcbig().translate(tcbig_sentences(), greedy());
  ASSERT_EQ(sampled.size(), argmax.size());
  for (size_t i = 0; i < sampled.size(); ++i) EXPECT_EQ(sampled[i].hypotheses[0].ids, argmax[i].hypotheses[0].ids);
}

TEST(Sampling, NBestSamplingGivesThatManyHypotheses) {
  DecodeOptions several = sampling(7);
  several.n_best = 3;
  EXPECT_EQ(tcbig().translate({tcbig_sentences()[0]}, several)[0].hypotheses.size(), 3u);
}

std::string source_of(const std::vector<ResolvedSetting>& settings, const std::string& name, std::string* value) {
  for (const ResolvedSetting& s : settings)
    if (s.name == name) {
      if (value) *value = s.value;
      return s.source;
    }
  return "<absent>";
}

TEST(Presets, OptionsBeatGenerationConfigBeatsPresetBeatsDefault) {
  // pegasus' generation_config.json: num_beams 8, length_penalty 0.8, max_length 256.
  const Translator translator(fixture_dir("pegasus"));
  auto preset = std::make_shared<DecodeOptions>();
  preset->beam_size = 2;
  preset->no_repeat_ngram_size = 3;
  preset->length_penalty = 2.0f;
  DecodeOptions options;
  options.preset = preset;
  options.min_new_tokens = 4;
  const auto settings = translator.resolved_settings(options);
  std::string value;
  EXPECT_EQ(source_of(settings, "beam_size", &value), "generation_config.json");
  EXPECT_EQ(value, "8");
  EXPECT_EQ(source_of(settings, "length_penalty", &value), "generation_config.json");
  EXPECT_EQ(value, "0.8");
  EXPECT_EQ(source_of(settings, "no_repeat_ngram_size", &value), "preset");
  EXPECT_EQ(value, "3");
  EXPECT_EQ(source_of(settings, "min_new_tokens", &value), "option");
  EXPECT_EQ(source_of(settings, "repetition_penalty", &value), "default");
}

TEST(Presets, BundledPresetsLoad) {
  for (const char* name : {"translation", "summarization"}) {
    const DecodeOptions p = load_preset(std::string(ORDO_SOURCE_DIR) + "/configs/" + name + ".json");
    EXPECT_TRUE(p.beam_size.has_value()) << name;
    EXPECT_TRUE(p.max_new_tokens.has_value()) << name;
  }
}

TEST(Presets, AFieldOfTheWrongTypeIsAnErrorNamingIt) {
  testing::TempDir dir;
  const std::string bad = dir.write("p.json", R"({"decoding": {"beam_size": "four"}})");
  EXPECT_NE(error_of([&] { load_preset(bad); }).find("field 'beam_size' must be an integer"), std::string::npos);
}

TEST(Presets, AnUnknownFieldIsAnErrorNamingIt) {
  testing::TempDir dir;
  const std::string unknown = dir.write("q.json", R"({"decoding": {"beam_width": 4}})");
  EXPECT_NE(error_of([&] { load_preset(unknown); }).find("field 'beam_width' is not a decoding option"),
            std::string::npos);
}

TEST(Truncation, LongInputIsCutToTheModelsPositionsCountingTheDroppedTokens) {
  std::string text;
  for (int i = 0; i < 700; ++i) text += "apple ";
  const auto ids = marian().encode(text);
  ASSERT_GT(ids.size(), 512u);
  const auto results = marian().translate({text}, greedy(5));
  EXPECT_EQ(results[0].truncated_tokens, static_cast<int64_t>(ids.size()) - 512);
  EXPECT_FALSE(results[0].hypotheses[0].ids.empty());
}

TEST(Truncation, InputWithinThePositionsIsNotCut) {
  EXPECT_EQ(marian().translate({"apple"}, greedy(5))[0].truncated_tokens, 0);
}

// The ids a tokenizer puts around the text survive truncation and are no text positions:
// mbart-large-cc25's "pieces </s> en_XX" keeps both after the cut (HF truncates the pieces
// before adding them), mBART-50 keeps its leading code, BART its <s>.

// 1100 words: more tokens than mBART's 1024 positions.
std::string too_long_for_mbart() {
  std::string text;
  for (int i = 0; i < 1100; ++i) text += "apple ";
  return text;
}

DecodeOptions two_steps_with_attention() {
  DecodeOptions options = greedy(2);
  options.return_attention = true;
  return options;
}

const Translator& mbart50() {
  static const Translator translator(fixture_dir("mbart50"));
  return translator;
}

// The mbart50 fixture as mbart-large-cc25 (tokenizer_class MBartTokenizer).
struct Cc25Folder {
  ordo::testing::TempDir dir;
  Cc25Folder() {
    ordo::testing::copy_dir(fixture_dir("mbart50"), dir.path());
    for (const char* file : {"config.json", "tokenizer_config.json"}) {
      std::ifstream in(dir.file(file));
      json config = json::parse(in);
      config["tokenizer_class"] = "MBartTokenizer";
      std::ofstream(dir.file(file)) << config.dump(2);
    }
  }
};

TEST(Truncation, Cc25KeepsItsClosingIdsAfterTheCut) {
  const Cc25Folder folder;
  const Translator cc25(folder.dir.path());
  const int64_t en = *mbart50().encode("", "en_XX").begin();
  const auto cut = cc25.translate({too_long_for_mbart()}, two_steps_with_attention())[0];
  ASSERT_EQ(cut.source_ids.size(), 1024u);
  EXPECT_GT(cut.truncated_tokens, 0);
  EXPECT_EQ(std::vector<int64_t>(cut.source_ids.end() - 2, cut.source_ids.end()), (std::vector<int64_t>{2, en}));
  ASSERT_EQ(cut.source_text_positions.size(), 1022u);
  EXPECT_EQ(cut.source_text_positions.front(), 0);
  EXPECT_EQ(cut.source_text_positions.back(), 1021);
}

TEST(Truncation, MBart50KeepsItsLeadingLanguageCodeAfterTheCut) {
  const int64_t en = *mbart50().encode("", "en_XX").begin();
  const auto fifty = mbart50().translate({too_long_for_mbart()}, two_steps_with_attention())[0];
  ASSERT_EQ(fifty.source_ids.size(), 1024u);
  EXPECT_EQ(fifty.source_ids.front(), en);
  EXPECT_EQ(fifty.source_ids.back(), 2);
  EXPECT_EQ(fifty.source_text_positions.front(), 1);
  EXPECT_EQ(fifty.source_text_positions.back(), 1022);
}

TEST(Truncation, BartsFramingIdsAreNoTextPositions) {
  const Translator bart(fixture_dir("bart"));
  const auto short_bart = bart.translate({"Where is the train station?"}, two_steps_with_attention())[0];
  ASSERT_EQ(short_bart.source_ids.size(), 8u);  // <s> Where Ġis Ġthe Ġtrain Ġstation ? </s>
  EXPECT_EQ(short_bart.source_text_positions, (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
}

}  // namespace
}  // namespace ordo
