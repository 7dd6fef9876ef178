// FSMT tokenization against Hugging Face's FSMTTokenizer (transformers 4.31, sacremoses 0.1.1):
// the golden ids, pieces, tokens and decoded texts of the fsmt fixture (trained BPE, separate
// en/de vocabularies), special tokens written in the text, BPE merge order, and the errors for
// missing or malformed files.
// ctest-label: unit
#include <fstream>

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

std::unique_ptr<Tokenizer> fsmt() { return load_fsmt_tokenizer(ordo::testing::fixture_dir("fsmt")); }

// The outputs of a generation case: per_sentence[i], or the case itself for batched_greedy.
std::vector<json> outputs(const json& gcase) {
  if (gcase.contains("per_sentence")) return gcase["per_sentence"].get<std::vector<json>>();
  return {gcase};
}

TEST(FsmtTokenizer, InputIdsAndPiecesOfEverySentence) {
  const json golden = ordo::testing::load_golden("fsmt");
  const auto tokenizer = fsmt();
  ASSERT_EQ(golden["sentences"].size(), 8u);
  for (size_t i = 0; i < golden["sentences"].size(); ++i) {
    const std::string text = golden["sentences"][i];
    EXPECT_EQ(tokenizer->encode(text), golden["tokenization"][i]["input_ids"].get<Ids>()) << "sentence " << i;
    EXPECT_EQ(tokenizer->tokenize(text), golden["tokenization"][i]["pieces"].get<Pieces>()) << "sentence " << i;
  }
}

// Calls `check(name, ids, sentence, k)` for every sequence of the fixture's golden generation
// cases (greedy, two beam cases, batched).
template <typename Check>
void for_each_generated_sequence(const json& golden, const Check& check) {
  for (const auto& [name, gcase] : golden["generation"].items())
    for (const json& sentence : outputs(gcase))
      for (size_t k = 0; k < sentence["sequences"].size(); ++k)
        check(name, sentence["sequences"][k].get<Ids>(), sentence, k);
}

TEST(FsmtTokenizer, EveryGeneratedSequenceDecodesToTheGoldenText) {
  const auto tokenizer = fsmt();
  int texts = 0;
  for_each_generated_sequence(
      ordo::testing::load_golden("fsmt"), [&](const std::string& name, const Ids& ids, const json& sentence, size_t k) {
        EXPECT_EQ(tokenizer->decode(ids), sentence["texts"][k].get<std::string>()) << name << " sequence " << k;
        ++texts;
      });
  EXPECT_GE(texts, 8 + 2 * 8 * 4 + 8);
}

// golden tokens = convert_ids_to_tokens(sequence); id_to_pieces drops <s> <pad> </s> <unk>.
TEST(FsmtTokenizer, EveryGeneratedSequencesPiecesAreTheGoldenTokensWithoutSpecials) {
  const auto tokenizer = fsmt();
  int tokens = 0;
  for_each_generated_sequence(ordo::testing::load_golden("fsmt"),
                              [&](const std::string& name, const Ids& ids, const json& sentence, size_t k) {
                                if (!sentence.contains("tokens")) return;
                                Pieces expected;
                                for (const std::string& t : sentence["tokens"][k].get<Pieces>())
                                  if (t != "<s>" && t != "<pad>" && t != "</s>" && t != "<unk>") expected.push_back(t);
                                EXPECT_EQ(tokenizer->id_to_pieces(ids), expected) << name << " sequence " << k;
                                ++tokens;
                              });
  EXPECT_GE(tokens, 8 + 2 * 8 * 4);
}

// <unk> = 3 and </s> = 2 in vocab-src.json; the text around them is tokenized on its own.
TEST(FsmtTokenizer, SpecialTokensInTheTextStayWholeAndStripTheirSpaces) {
  const auto tokenizer = fsmt();
  EXPECT_EQ(tokenizer->encode("the model <unk> is </s> the"), (Ids{5, 15, 3, 14, 2, 5, 2}));
  EXPECT_EQ(tokenizer->tokenize("the<unk>the"), (Pieces{"the</w>", "<unk>", "the</w>"}));
}

TEST(FsmtTokenizer, AnEmptyTextIsEosAlone) { EXPECT_EQ(fsmt()->encode(""), Ids{2}); }

TEST(FsmtTokenizer, MosesRunsBeforeBpe) {
  const auto tokenizer = fsmt();
  // Dashes split aggressively (@-@), quotes and apostrophes escaped, punctuation normalized.
  EXPECT_EQ(tokenizer->tokenize("model-model"), (Pieces{"model</w>", "@-@</w>", "model</w>"}));
  EXPECT_EQ(tokenizer->tokenize("[model]"), (Pieces{"&#91;</w>", "model</w>", "&#93;</w>"}));
  // Tabs and newlines are removed (remove_non_printing_char), not turned into spaces.
  EXPECT_EQ(tokenizer->tokenize("the\tmodel"), tokenizer->tokenize("themodel"));
  // Fullwidth punctuation is replaced first (replace_unicode_punct).
  EXPECT_EQ(tokenizer->tokenize("the model，"), tokenizer->tokenize("the model,"));
}

TEST(FsmtTokenizer, DecodingDetokenizesWithTheTargetLanguageRules) {
  const auto tokenizer = fsmt();
  const json vocab = json::parse(std::ifstream(ordo::testing::fixture_dir("fsmt") + "/vocab-tgt.json"));
  const auto id = [&](const std::string& piece) { return vocab.at(piece).get<int64_t>(); };
  // "Sie , die @-@ Sie ." -> "Sie, die-Sie."; special ids vanish.
  EXPECT_EQ(tokenizer->decode(
                {2, id("Sie</w>"), id(",</w>"), id("die</w>"), id("@-@</w>"), id("Sie</w>"), id(".</w>"), 2, 1}),
            "Sie, die-Sie.");
  // An id outside vocab-tgt.json is "<unk>", as HF's decoder.get(id, unk_token).
  EXPECT_EQ(tokenizer->id_to_pieces({id("Sie</w>"), 99999}), (Pieces{"Sie</w>", "<unk>"}));
}

void copy_fixture(const TempDir& dir) { ordo::testing::copy_dir(ordo::testing::fixture_dir("fsmt"), dir.path()); }

// The error of loading the fixture's tokenizer with `file` written as `content` ("": removed).
std::string error_with_file(const std::string& file, const std::string& content) {
  TempDir dir;
  copy_fixture(dir);
  if (content.empty())
    std::remove(dir.file(file).c_str());
  else
    dir.write(file, content);
  return error_of([&] { load_fsmt_tokenizer(dir.path()); });
}

TEST(FsmtTokenizer, AMissingFileIsNamed) {
  for (const char* file : {"vocab-src.json", "vocab-tgt.json", "merges.txt"}) {
    const std::string message = error_with_file(file, "");
    EXPECT_NE(message.find(file), std::string::npos) << message;
  }
}

TEST(FsmtTokenizer, ALanguageWithoutItsVocabularyIsNamed) {
  const std::string message = error_with_file("tokenizer_config.json", R"({"langs": ["en", "fr"]})");
  EXPECT_NE(message.find("language 'fr'"), std::string::npos) << message;
}

TEST(FsmtTokenizer, LangsOfOneLanguageIsRefusedNamingTheField) {
  const std::string message = error_with_file("tokenizer_config.json", R"({"langs": ["en"]})");
  EXPECT_NE(message.find("'langs'"), std::string::npos) << message;
}

TEST(FsmtTokenizer, AMalformedMergesFileIsNamed) {
  const std::string message = error_with_file("merges.txt", "i n 5\n\xff\xfe bad\n");
  EXPECT_NE(message.find("merges.txt"), std::string::npos) << message;
}

// Only "a b" and "ab c</w>" merge; HF drops the text after the last newline ("x y").
class FsmtMerges : public ::testing::Test {
 protected:
  void SetUp() override {
    copy_fixture(dir_);
    dir_.write("merges.txt", "a b 10\nab c</w> 5\nx y");
    dir_.write("vocab-src.json", R"({"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3, "abc</w>": 4, "x": 5, "y</w>": 6})");
  }
  TempDir dir_;
};

TEST_F(FsmtMerges, MergesApplyByRank) {
  EXPECT_EQ(load_fsmt_tokenizer(dir_.path())->tokenize("abc"), (Pieces{"abc</w>"}));
  EXPECT_EQ(load_fsmt_tokenizer(dir_.path())->encode("abc xy cab"), (Ids{4, 5, 6, 3, 3, 3, 2}));
}

TEST_F(FsmtMerges, TheLastLineWithoutANewlineIsNoMerge) {
  EXPECT_EQ(load_fsmt_tokenizer(dir_.path())->tokenize("abc xy"), (Pieces{"abc</w>", "x", "y</w>"}));
}

TEST(FsmtTokenizer, LowerCaseWhenTheConfigAsks) {
  TempDir dir;
  copy_fixture(dir);
  dir.write("tokenizer_config.json", R"({"langs": ["en", "de"], "do_lower_case": true})");
  const auto lower = load_fsmt_tokenizer(dir.path());
  EXPECT_EQ(lower->tokenize("The MODEL <unk>"), fsmt()->tokenize("the model <unk>"));
}

}  // namespace
}  // namespace ordo::text
