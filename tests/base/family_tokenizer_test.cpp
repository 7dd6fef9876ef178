// Pegasus, M2M100 and NLLB tokenization against Hugging Face's slow tokenizers (golden ids,
// pieces and decoded texts of the fixtures), language codes, and missing files.
#include <functional>

#include <gtest/gtest.h>

#include "ordo/error.h"
#include "support/errors.h"
#include "support/fixtures.h"
#include "support/temp_dir.h"
#include "text/tokenizer.h"

namespace ordo::text {
namespace {

using ordo::testing::error_of;

using nlohmann::json;
using ordo::testing::TempDir;

std::unique_ptr<Tokenizer> load(const std::string& fixture) {
  const std::string dir = ordo::testing::fixture_dir(fixture);
  if (fixture == "pegasus") return load_pegasus_tokenizer(dir);
  if (fixture == "m2m100") return load_m2m100_tokenizer(dir);
  return load_nllb_tokenizer(dir);
}

class FamilyTokenizerGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(FamilyTokenizerGolden, EncodesLikeHuggingFace) {
  const json golden = ordo::testing::load_golden(GetParam());
  const auto tokenizer = load(GetParam());
  for (size_t i = 0; i < golden["sentences"].size(); ++i) {
    const std::string text = golden["sentences"][i];
    EXPECT_EQ(tokenizer->encode(text), golden["tokenization"][i]["input_ids"].get<std::vector<int64_t>>()) << i;
    EXPECT_EQ(tokenizer->tokenize(text), golden["tokenization"][i]["pieces"].get<std::vector<std::string>>()) << i;
  }
}

TEST_P(FamilyTokenizerGolden, DecodesGeneratedIdsLikeHuggingFace) {
  const json golden = ordo::testing::load_golden(GetParam());
  const auto tokenizer = load(GetParam());
  int checked = 0;
  for (const auto& [name, gcase] : golden["generation"].items()) {
    if (!gcase.contains("per_sentence")) continue;
    for (const json& sentence : gcase["per_sentence"])
      for (size_t k = 0; k < sentence["sequences"].size(); ++k, ++checked)
        EXPECT_EQ(tokenizer->decode(sentence["sequences"][k].get<std::vector<int64_t>>()),
                  sentence["texts"][k].get<std::string>())
            << name;
  }
  EXPECT_GT(checked, 10);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, FamilyTokenizerGolden, ::testing::Values("pegasus", "m2m100", "nllb"));

TEST(MultilingualTokenizer, LanguageCodesMapToTheForcedBosIds) {
  const auto m2m = load("m2m100");
  const int64_t de = ordo::testing::load_golden("m2m100")["special_ids"]["forced_bos_token_id"];
  EXPECT_EQ(m2m->language_id("de"), de);
  EXPECT_EQ(m2m->language_id("__de__"), de);
  EXPECT_FALSE(m2m->language_id("xx").has_value());
  EXPECT_EQ(m2m->languages().size(), 100u);
  const auto nllb = load("nllb");
  EXPECT_EQ(nllb->language_id("deu_Latn"),
            ordo::testing::load_golden("nllb")["special_ids"]["forced_bos_token_id"].get<int64_t>());
  // Another source language changes only the prefix token.
  const auto en = nllb->encode("Hello world.");
  const auto fr = nllb->encode("Hello world.", "fra_Latn");
  EXPECT_EQ(fr[0], *nllb->language_id("fra_Latn"));
  EXPECT_EQ(std::vector<int64_t>(en.begin() + 1, en.end()), std::vector<int64_t>(fr.begin() + 1, fr.end()));
  EXPECT_NE(error_of([&] { nllb->encode("Hello", "klingon"); }).find("unknown source language 'klingon'"),
            std::string::npos);
  EXPECT_FALSE(load("pegasus")->language_id("de").has_value());
}

TEST(FamilyTokenizer, MissingFilesAreNamed) {
  TempDir pegasus;
  ordo::testing::copy_dir(ordo::testing::fixture_dir("pegasus"), pegasus.path());
  std::remove(pegasus.file("spiece.model").c_str());
  pegasus.write("tokenizer.json", "{}");
  const std::string message = error_of([&] { load_pegasus_tokenizer(pegasus.path()); });
  EXPECT_NE(message.find(pegasus.file("spiece.model") + ": file not found"), std::string::npos) << message;
  EXPECT_NE(message.find("tokenizer.json"), std::string::npos) << message;

  TempDir m2m;
  ordo::testing::copy_dir(ordo::testing::fixture_dir("m2m100"), m2m.path());
  std::remove(m2m.file("vocab.json").c_str());
  EXPECT_NE(error_of([&] { load_m2m100_tokenizer(m2m.path()); }).find(m2m.file("vocab.json")), std::string::npos);
}

}  // namespace
}  // namespace ordo::text
