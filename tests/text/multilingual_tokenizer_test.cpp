// Pegasus, M2M100 and NLLB tokenizers against Hugging Face's slow tokenizers (transformers
// 4.31): golden ids, pieces, generated tokens and texts of the fixtures; language codes;
// special tokens written in the text; Pegasus' additional_special_tokens rules; missing files.
// ctest-label: unit
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>

#include <gtest/gtest.h>

#include "ordo/error.h"
#include "support/errors.h"
#include "support/fixtures.h"
#include "support/temp_dir.h"
#include "text/tokenizer.h"

namespace ordo::text {
namespace {

using nlohmann::json;
using ordo::testing::error_of;
using ordo::testing::TempDir;
using Ids = std::vector<int64_t>;
using Pieces = std::vector<std::string>;

std::unique_ptr<Tokenizer> load_from(const std::string& fixture, const std::string& dir) {
  if (fixture == "pegasus") return load_pegasus_tokenizer(dir);
  if (fixture == "m2m100") return load_m2m100_tokenizer(dir);
  return load_nllb_tokenizer(dir);
}
std::unique_ptr<Tokenizer> load(const std::string& fixture) {
  return load_from(fixture, ordo::testing::fixture_dir(fixture));
}

json read_json(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}
void write_json(const std::string& path, const json& value) { std::ofstream(path) << value.dump(2); }

Pieces concat(std::initializer_list<Pieces> parts) {
  Pieces out;
  for (const Pieces& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// The ids HF's batch_decode(skip_special_tokens=True) drops: for Pegasus the fixed ids below
// the offset and <unk>; for M2M100/NLLB <s> <pad> </s> <unk>, the language codes and NLLB's
// <mask>. M2M100's madeup-word ids after the languages are not special: they become "<unk>".
bool is_special_id(const std::string& fixture, const Tokenizer& tokenizer, int64_t id) {
  if (fixture == "pegasus") return id < 103 || id == 105;
  if (id <= 3) return true;
  int64_t first_language = INT64_MAX;
  for (const std::string& lang : tokenizer.languages())
    first_language = std::min(first_language, *tokenizer.language_id(lang));
  const int64_t end = first_language + static_cast<int64_t>(tokenizer.languages().size()) + (fixture == "nllb" ? 1 : 0);
  return id >= first_language && id < end;
}

// The outputs of a generation case: per_sentence[i], or the case itself for batched_greedy
// (sequences and texts of all sentences, no tokens).
std::vector<json> outputs(const json& gcase) {
  if (gcase.contains("per_sentence")) return gcase["per_sentence"].get<std::vector<json>>();
  return {gcase};
}

class HfSlowTokenizerGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(HfSlowTokenizerGolden, InputIdsAndPiecesOfEverySentence) {
  const json golden = ordo::testing::load_golden(GetParam());
  const auto tokenizer = load(GetParam());
  ASSERT_EQ(golden["sentences"].size(), 8u);
  for (size_t i = 0; i < golden["sentences"].size(); ++i) {
    const std::string text = golden["sentences"][i];
    EXPECT_EQ(tokenizer->encode(text), golden["tokenization"][i]["input_ids"].get<Ids>()) << "sentence " << i;
    EXPECT_EQ(tokenizer->tokenize(text), golden["tokenization"][i]["pieces"].get<Pieces>()) << "sentence " << i;
  }
}

TEST_P(HfSlowTokenizerGolden, EveryGeneratedSequenceDecodesToTheGoldenText) {
  const json golden = ordo::testing::load_golden(GetParam());
  const auto tokenizer = load(GetParam());
  int checked = 0;
  for (const auto& [name, gcase] : golden["generation"].items())
    for (const json& sentence : outputs(gcase))
      for (size_t k = 0; k < sentence["sequences"].size(); ++k, ++checked)
        EXPECT_EQ(tokenizer->decode(sentence["sequences"][k].get<Ids>()), sentence["texts"][k].get<std::string>())
            << name << " sequence " << k;
  EXPECT_GE(checked, 8 + 2 * 8 * 4 + 8);  // greedy, two beam cases, batched
}

// golden tokens = convert_ids_to_tokens(sequence); id_to_pieces drops the special ones.
TEST_P(HfSlowTokenizerGolden, GeneratedIdsMapToTheGoldenTokens) {
  const json golden = ordo::testing::load_golden(GetParam());
  const auto tokenizer = load(GetParam());
  int checked = 0;
  for (const auto& [name, gcase] : golden["generation"].items())
    for (const json& sentence : outputs(gcase)) {
      if (!sentence.contains("tokens")) continue;
      for (size_t k = 0; k < sentence["sequences"].size(); ++k, ++checked) {
        const Ids ids = sentence["sequences"][k].get<Ids>();
        const Pieces tokens = sentence["tokens"][k].get<Pieces>();
        ASSERT_EQ(ids.size(), tokens.size()) << name;
        Pieces expected;
        for (size_t j = 0; j < ids.size(); ++j)
          if (!is_special_id(GetParam(), *tokenizer, ids[j])) expected.push_back(tokens[j]);
        EXPECT_EQ(tokenizer->id_to_pieces(ids), expected) << name << " sequence " << k;
      }
    }
  EXPECT_GE(checked, 8 + 2 * 8 * 4);
}

TEST_P(HfSlowTokenizerGolden, EosEndsTheInput) {
  const json golden = ordo::testing::load_golden(GetParam());
  const Ids empty = load(GetParam())->encode("");
  ASSERT_FALSE(empty.empty());
  EXPECT_EQ(empty.back(), golden["special_ids"]["tokenizer_eos_token_id"].get<int64_t>());
}

TEST_P(HfSlowTokenizerGolden, SpecialIdsDecodeToNothing) {
  const json golden = ordo::testing::load_golden(GetParam());
  const json& special = golden["special_ids"];
  EXPECT_EQ(
      load(GetParam())
          ->decode({special["tokenizer_pad_token_id"].get<int64_t>(), special["tokenizer_unk_token_id"].get<int64_t>(),
                    special["tokenizer_eos_token_id"].get<int64_t>()}),
      "");
}

// A multilingual tokenizer starts every input with its source language's id; Pegasus has no
// languages and starts with nothing.
TEST_P(HfSlowTokenizerGolden, AnInputStartsWithTheSourceLanguageIfTheTokenizerHasLanguages) {
  const json golden = ordo::testing::load_golden(GetParam());
  const auto tokenizer = load(GetParam());
  const Ids empty = tokenizer->encode("");
  if (GetParam() == "pegasus") {
    EXPECT_EQ(empty, Ids{1});
    EXPECT_TRUE(tokenizer->languages().empty());
    EXPECT_FALSE(tokenizer->language_id("de").has_value());
    return;
  }
  const std::string src = read_json(ordo::testing::fixture_dir(GetParam()) + "/tokenizer_config.json")["src_lang"];
  const std::optional<int64_t> src_id = tokenizer->language_id(src);
  ASSERT_TRUE(src_id.has_value()) << src;
  EXPECT_EQ(empty, (Ids{*src_id, 2}));
  for (const json& tokenization : golden["tokenization"])
    EXPECT_EQ(tokenization["input_ids"][0].get<int64_t>(), *src_id);
}

// Pegasus ignores a source language; the others' default is the one in tokenizer_config.json.
TEST_P(HfSlowTokenizerGolden, GivingTheDefaultSourceLanguageChangesNothing) {
  const auto tokenizer = load(GetParam());
  const std::string src =
      GetParam() == "pegasus"
          ? std::string("de")
          : read_json(ordo::testing::fixture_dir(GetParam()) + "/tokenizer_config.json")["src_lang"].get<std::string>();
  EXPECT_EQ(tokenizer->encode("Where is it?", src), tokenizer->encode("Where is it?"));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, HfSlowTokenizerGolden, ::testing::Values("pegasus", "m2m100", "nllb"));

TEST(MultilingualLanguages, TargetLanguageIsTheGoldenForcedBos) {
  const auto m2m = load("m2m100");
  const int64_t de = ordo::testing::load_golden("m2m100")["special_ids"]["forced_bos_token_id"];
  EXPECT_EQ(de, 3655);
  EXPECT_EQ(m2m->language_id("de"), de);
  EXPECT_EQ(m2m->language_id("__de__"), de);
  EXPECT_EQ(m2m->language_id("en"), 3657);
  // FAIRSEQ_LANGUAGE_CODES["m2m100"] order, right after vocab.json's 3639 entries.
  EXPECT_EQ(m2m->language_id("af"), 3639);
  EXPECT_EQ(m2m->language_id("zu"), 3639 + 99);
  EXPECT_EQ(m2m->languages().size(), 100u);

  const auto nllb = load("nllb");
  const int64_t deu = ordo::testing::load_golden("nllb")["special_ids"]["forced_bos_token_id"];
  EXPECT_EQ(deu, 2542);
  EXPECT_EQ(nllb->language_id("deu_Latn"), deu);
  EXPECT_EQ(nllb->language_id("eng_Latn"), 2547);
  EXPECT_EQ(nllb->languages().size(), 202u);
  // FAIRSEQ_LANGUAGE_CODES order, after the spm pieces shifted by one; <mask> last.
  const int64_t first = *nllb->language_id("ace_Arab");
  EXPECT_EQ(nllb->language_id("zul_Latn"), first + 201);
  EXPECT_EQ(nllb->encode("<mask>"), (Ids{2547, first + 202, 2}));
}

TEST(MultilingualLanguages, UnknownLanguages) {
  for (const char* fixture : {"m2m100", "nllb"}) {
    const auto tokenizer = load(fixture);
    EXPECT_FALSE(tokenizer->language_id("klingon").has_value()) << fixture;
    EXPECT_FALSE(tokenizer->language_id("").has_value()) << fixture;
    const std::string message = error_of([&] { tokenizer->encode("Hello", "klingon"); });
    EXPECT_NE(message.find("unknown source language 'klingon'"), std::string::npos) << message;
    EXPECT_NE(message.find("(known: "), std::string::npos) << message;
    EXPECT_NE(message.find(ordo::testing::fixture_dir(fixture)), std::string::npos) << message;
  }
  // Codes of one family are not codes of the other.
  EXPECT_FALSE(load("m2m100")->language_id("deu_Latn").has_value());
  EXPECT_FALSE(load("nllb")->language_id("de").has_value());
}

TEST(MultilingualLanguages, AnotherSourceLanguageChangesOnlyThePrefix) {
  const auto m2m = load("m2m100");
  const Ids en = m2m->encode("Where is the train station?");
  const Ids fr = m2m->encode("Where is the train station?", "fr");
  EXPECT_EQ(fr[0], *m2m->language_id("__fr__"));
  EXPECT_EQ(Ids(en.begin() + 1, en.end()), Ids(fr.begin() + 1, fr.end()));
  EXPECT_EQ(m2m->encode("Where is the train station?", "__fr__"), fr);
}

// Ids past the language codes (M2M100's 8 madeup words, 3739..3746 here) are not special:
// HF 4.31 turns them into "<unk>", which convert_tokens_to_string keeps as text.
TEST(MultilingualLanguages, MadeupWordIdsDecodeToUnk) {
  const auto m2m = load("m2m100");
  EXPECT_EQ(m2m->id_to_pieces({2, 3655, 3742, 2}), Pieces{"<unk>"});
  EXPECT_EQ(m2m->decode({2, 3655, 3742, 3742, 2}), "<unk><unk>");
}

// PreTrainedTokenizer.tokenize: special tokens in the text stay whole and the whitespace on
// both sides is stripped, except NLLB's <mask> (AddedToken lstrip=True, rstrip=False).
TEST(SpecialTokensInText, SplitOffAsHuggingFaceDoes) {
  const auto pegasus = load("pegasus");
  EXPECT_EQ(pegasus->tokenize("Hello <mask_1> world </s>"),
            concat({pegasus->tokenize("Hello"), {"<mask_1>"}, pegasus->tokenize("world"), {"</s>"}}));
  const Ids ids = pegasus->encode("Hello <mask_2> <unk_7>");
  ASSERT_GE(ids.size(), 3u);
  EXPECT_EQ(Ids(ids.end() - 3, ids.end()), (Ids{3, 9, 1}));  // <mask_2>=3, <unk_7>=7+2, </s>
  EXPECT_EQ(pegasus->decode(ids), pegasus->decode(pegasus->encode("Hello")));

  const auto m2m = load("m2m100");
  EXPECT_EQ(m2m->tokenize("__fr__ Bonjour"), concat({{"__fr__"}, m2m->tokenize("Bonjour")}));
  const Ids m2m_ids = m2m->encode("__fr__ Bonjour");
  EXPECT_EQ(m2m_ids[0], 3657);
  EXPECT_EQ(m2m_ids[1], *m2m->language_id("fr"));

  const auto nllb = load("nllb");
  EXPECT_EQ(nllb->tokenize("Hello <mask> world"),
            concat({nllb->tokenize("Hello"), {"<mask>"}, nllb->tokenize(" world")}));
  EXPECT_EQ(nllb->tokenize("Hello deu_Latn world"),
            concat({nllb->tokenize("Hello"), {"deu_Latn"}, nllb->tokenize("world")}));
}

// PegasusTokenizer.__init__ with additional_special_tokens: mask_token_sent is prepended when
// missing and <unk_i> tokens fill the list from i = len(list) up to offset - 2.
TEST(PegasusAdditionalSpecialTokens, ShortListIsFilledAsHuggingFaceDoes) {
  TempDir dir;
  ordo::testing::copy_dir(ordo::testing::fixture_dir("pegasus"), dir.path());
  json config = read_json(dir.file("tokenizer_config.json"));
  config["additional_special_tokens"] = json::array({"<mask_1>"});
  write_json(dir.file("tokenizer_config.json"), config);
  std::remove(dir.file("special_tokens_map.json").c_str());
  const auto tokenizer = load_pegasus_tokenizer(dir.path());
  EXPECT_EQ(tokenizer->encode("<unk_1>"), (Ids{4, 1}));
  EXPECT_EQ(tokenizer->encode("<unk_101>"), (Ids{104, 1}));
  EXPECT_EQ(tokenizer->encode("<mask_1>"), (Ids{2, 1}));
  EXPECT_NE(tokenizer->tokenize("<unk_102>"), Pieces{"<unk_102>"});  // not special any more
  EXPECT_EQ(tokenizer->decode({0, 2, 3, 4, 104, 1}), "");
}

TEST(PegasusAdditionalSpecialTokens, DefaultListWhenAbsent) {
  TempDir dir;
  ordo::testing::copy_dir(ordo::testing::fixture_dir("pegasus"), dir.path());
  json config = read_json(dir.file("tokenizer_config.json"));
  config.erase("additional_special_tokens");
  write_json(dir.file("tokenizer_config.json"), config);
  std::remove(dir.file("special_tokens_map.json").c_str());
  const auto tokenizer = load_pegasus_tokenizer(dir.path());
  const json golden = ordo::testing::load_golden("pegasus");
  for (size_t i = 0; i < golden["sentences"].size(); ++i)
    EXPECT_EQ(tokenizer->encode(golden["sentences"][i]), golden["tokenization"][i]["input_ids"].get<Ids>()) << i;
  EXPECT_EQ(tokenizer->encode("<unk_102>"), (Ids{104, 1}));
}

TEST(PegasusAdditionalSpecialTokens, DuplicatesAreAnErrorNamingTheField) {
  TempDir dir;
  ordo::testing::copy_dir(ordo::testing::fixture_dir("pegasus"), dir.path());
  json config = read_json(dir.file("tokenizer_config.json"));
  config["additional_special_tokens"] = json::array({"<mask_1>", "<unk_2>"});  // filling adds <unk_2> again
  write_json(dir.file("tokenizer_config.json"), config);
  const std::string message = error_of([&] { load_pegasus_tokenizer(dir.path()); });
  EXPECT_NE(message.find(dir.file("tokenizer_config.json")), std::string::npos) << message;
  EXPECT_NE(message.find("additional_special_tokens"), std::string::npos) << message;
}

TEST(MultilingualTokenizerFiles, MissingFilesAreNamed) {
  {
    TempDir dir;
    ordo::testing::copy_dir(ordo::testing::fixture_dir("pegasus"), dir.path());
    std::remove(dir.file("spiece.model").c_str());
    std::string message = error_of([&] { load_pegasus_tokenizer(dir.path()); });
    EXPECT_NE(message.find(dir.file("spiece.model") + ": file not found"), std::string::npos) << message;
    dir.write("tokenizer.json", "{}");
    message = error_of([&] { load_pegasus_tokenizer(dir.path()); });
    EXPECT_NE(message.find(dir.file("spiece.model") + ": file not found"), std::string::npos) << message;
    EXPECT_NE(message.find("tokenizer.json"), std::string::npos) << message;
  }
  {
    TempDir dir;
    ordo::testing::copy_dir(ordo::testing::fixture_dir("m2m100"), dir.path());
    std::remove(dir.file("vocab.json").c_str());
    const std::string message = error_of([&] { load_m2m100_tokenizer(dir.path()); });
    EXPECT_NE(message.find(dir.file("vocab.json") + ": file not found"), std::string::npos) << message;
  }
  for (const char* fixture : {"m2m100", "nllb"}) {
    TempDir dir;
    ordo::testing::copy_dir(ordo::testing::fixture_dir(fixture), dir.path());
    std::remove(dir.file("sentencepiece.bpe.model").c_str());
    const std::string message = error_of([&] { load_from(fixture, dir.path()); });
    EXPECT_NE(message.find(dir.file("sentencepiece.bpe.model") + ": file not found"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace ordo::text
