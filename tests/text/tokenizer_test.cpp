// Marian tokenization against Hugging Face's MarianTokenizer (golden ids, pieces and decoded
// texts of the fixtures, which use the real opus-mt tokenizer files) and malformed inputs.
// ctest-label: unit
#include <sys/stat.h>
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <future>
#include <memory>

#include <gtest/gtest.h>

#include "ordo/error.h"
#include "ordo/text.h"
#include "support/errors.h"
#include "support/fixtures.h"
#include "support/temp_dir.h"
#include "text/sentencepiece.h"
#include "text/tokenizer.h"
#include "text/vocab.h"

namespace ordo::text {
namespace {

using ordo::testing::error_of;

using nlohmann::json;
using ordo::testing::TempDir;

bool separate_vocabs(const std::string& fixture) { return fixture == "marian_sep_en_mg"; }

class MarianTokenizerGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(MarianTokenizerGolden, EncodesLikeHuggingFace) {
  const json golden = ordo::testing::load_golden(GetParam());
  const auto tokenizer = load_marian_tokenizer(ordo::testing::fixture_dir(GetParam()), separate_vocabs(GetParam()));
  const json& sentences = golden["sentences"];
  ASSERT_EQ(sentences.size(), golden["tokenization"].size());
  for (size_t i = 0; i < sentences.size(); ++i) {
    const std::string text = sentences[i].get<std::string>();
    const json& expected = golden["tokenization"][i];
    EXPECT_EQ(tokenizer->encode(text), expected["input_ids"].get<std::vector<int64_t>>()) << "sentence " << i;
    EXPECT_EQ(tokenizer->tokenize(text), expected["pieces"].get<std::vector<std::string>>()) << "sentence " << i;
  }
}

TEST_P(MarianTokenizerGolden, DecodesGeneratedIdsLikeHuggingFace) {
  const json golden = ordo::testing::load_golden(GetParam());
  const auto tokenizer = load_marian_tokenizer(ordo::testing::fixture_dir(GetParam()), separate_vocabs(GetParam()));
  int checked = 0;
  for (const auto& [name, gcase] : golden["generation"].items()) {
    if (!gcase.contains("per_sentence")) continue;
    for (const json& sentence : gcase["per_sentence"]) {
      for (size_t k = 0; k < sentence["sequences"].size(); ++k) {
        const auto ids = sentence["sequences"][k].get<std::vector<int64_t>>();
        EXPECT_EQ(tokenizer->decode(ids), sentence["texts"][k].get<std::string>()) << name;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 10);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, MarianTokenizerGolden, ::testing::ValuesIn(ordo::testing::marian_fixtures()));

std::unique_ptr<Tokenizer> tc_big() {
  return load_marian_tokenizer(ordo::testing::fixture_dir("marian_tcbig_en_pt"), false);
}

TEST(MarianTokenizer, KeepsLeadingLanguageCodeAsOneToken) {
  const auto tokenizer = tc_big();
  const auto pieces = tokenizer->tokenize(">>por<< Hello world.");
  ASSERT_FALSE(pieces.empty());
  EXPECT_EQ(pieces[0], ">>por<<");
  const auto plain = tokenizer->tokenize("Hello world.");
  EXPECT_EQ(std::vector<std::string>(pieces.begin() + 1, pieces.end()), plain);
  // A code in the middle is removed from the text but not kept (HF: re.sub vs re.match).
  EXPECT_EQ(tokenizer->tokenize("Hello >>por<< world."), tokenizer->tokenize("Hello  world."));
}

TEST(MarianTokenizer, LanguageCodeInTheVocabMapsToItsId) {
  // opus-mt-tc-big-en-pt's vocab.json has ">>por<<" (and ">>pob<<"): the code is one token.
  const auto tokenizer = tc_big();
  const auto ids = tokenizer->encode(">>por<< Hello world.");
  ASSERT_GE(ids.size(), 2u);
  EXPECT_EQ(ids.front(), 39141);
  const auto plain = tokenizer->encode("Hello world.");
  EXPECT_EQ(std::vector<int64_t>(ids.begin() + 1, ids.end()), plain);
}

TEST(MarianTokenizer, LanguageCodeRegexIsGreedyLikeTransformers431) {
  // transformers 4.31 uses re.compile(">>.+<<") (greedy; the non-greedy fix, PR #8463, was not
  // merged): everything up to the last "<<" on the line becomes the code token.
  const auto tokenizer = tc_big();
  const auto pieces = tokenizer->tokenize(">>por<< We use cout<< here");
  ASSERT_FALSE(pieces.empty());
  EXPECT_EQ(pieces[0], ">>por<< We use cout<<");
  EXPECT_EQ(std::vector<std::string>(pieces.begin() + 1, pieces.end()), tokenizer->tokenize(" here"));
  const json golden = ordo::testing::load_golden("marian_tcbig_en_pt");
  EXPECT_EQ(tokenizer->encode(">>por<< We use cout<< here").front(),
            golden["special_ids"]["tokenizer_unk_token_id"].get<int64_t>());
  // "." does not cross a newline: a "<<" on the next line does not close the code.
  EXPECT_EQ(tokenizer->tokenize(">>por<< a\nb<<")[0], ">>por<<");
}

// The fixture's special ids.
int64_t marian_special_id(const char* name) {
  return ordo::testing::load_golden("marian_opus_en_mg")["special_ids"][name].get<int64_t>();
}

TEST(MarianTokenizer, AnUnknownPieceMapsToUnk) {
  const auto tokenizer = load_marian_tokenizer(ordo::testing::fixture_dir("marian_opus_en_mg"), false);
  EXPECT_EQ(tokenizer->encode(">>xx_unknown<< hi").front(), marian_special_id("tokenizer_unk_token_id"));
}

TEST(MarianTokenizer, EosIsAppended) {
  const auto tokenizer = load_marian_tokenizer(ordo::testing::fixture_dir("marian_opus_en_mg"), false);
  const int64_t eos = marian_special_id("tokenizer_eos_token_id");
  EXPECT_EQ(tokenizer->encode(">>xx_unknown<< hi").back(), eos);
  EXPECT_EQ(tokenizer->encode(""), std::vector<int64_t>{eos});
}

// A NUL byte came back as two <unk> (the shim returned NUL-terminated
// pieces), where SentencePiece (python sentencepiece 0.1.97 on this source.spm, which HF's
// MarianTokenizer calls) gives one unknown piece: 'a\0b' -> ['▁a', '\x00', 'b'], and a run of
// NULs is one piece too: '\0\0' -> ['▁', '\x00\x00'].
TEST(MarianTokenizer, NulBytesAreOneUnknownPieceAsInSentencePiece) {
  const json golden = ordo::testing::load_golden("marian_opus_en_mg");
  const int64_t unk = golden["special_ids"]["tokenizer_unk_token_id"].get<int64_t>();
  const int64_t eos = golden["special_ids"]["tokenizer_eos_token_id"].get<int64_t>();
  const auto tokenizer = load_marian_tokenizer(ordo::testing::fixture_dir("marian_opus_en_mg"), false);
  EXPECT_EQ(tokenizer->tokenize(std::string("a\0b", 3)), (std::vector<std::string>{"\xE2\x96\x81"
                                                                                   "a",
                                                                                   std::string(1, '\0'), "b"}));
  EXPECT_EQ(tokenizer->tokenize(std::string("\0\0", 2)),
            (std::vector<std::string>{"\xE2\x96\x81", std::string(2, '\0')}));
  const std::vector<int64_t> ids = tokenizer->encode(std::string("a\0b", 3));
  ASSERT_EQ(ids.size(), 4u);
  EXPECT_EQ(ids[0], tokenizer->encode("a")[0]);
  EXPECT_EQ(ids[1], unk);
  EXPECT_NE(ids[2], unk);
  EXPECT_EQ(ids[3], eos);
  const std::vector<int64_t> nuls = tokenizer->encode(std::string("\0\0", 2));
  ASSERT_EQ(nuls.size(), 3u);
  EXPECT_EQ(nuls[1], unk);
}

TEST(MarianTokenizer, SpecialTokensInTextStayWhole) {
  const auto tokenizer = tc_big();
  const auto pieces = tokenizer->tokenize("Hello </s> world");
  EXPECT_NE(std::find(pieces.begin(), pieces.end(), "</s>"), pieces.end());
}

// A copy of a Marian fixture to damage.
struct MarianCopy {
  explicit MarianCopy(const std::string& fixture = "marian_opus_en_mg") {
    ordo::testing::copy_dir(ordo::testing::fixture_dir(fixture), dir.path());
  }
  std::string load_error(bool separate_vocabs = false) const {
    return error_of([&] { load_marian_tokenizer(dir.path(), separate_vocabs); });
  }
  TempDir dir;
};

TEST(MarianTokenizer, AMissingSentencePieceModelIsNamed) {
  MarianCopy copy;
  std::remove(copy.dir.file("source.spm").c_str());
  EXPECT_NE(copy.load_error().find(copy.dir.file("source.spm")), std::string::npos);
}

TEST(MarianTokenizer, AFileThatIsNoSentencePieceModelIsNamed) {
  MarianCopy copy;
  copy.dir.write("source.spm", "this is not a sentencepiece model");
  const std::string not_spm = copy.load_error();
  EXPECT_NE(not_spm.find(copy.dir.file("source.spm")), std::string::npos) << not_spm;
  EXPECT_NE(not_spm.find("SentencePiece"), std::string::npos) << not_spm;
}

TEST(MarianTokenizer, AVocabularyIdThatIsNoNumberNamesThePiece) {
  MarianCopy copy;
  copy.dir.write("vocab.json", "{\"</s>\": 0,\n \"<unk>\": \"one\"}");
  const std::string bad_vocab = copy.load_error();
  EXPECT_NE(bad_vocab.find(copy.dir.file("vocab.json") + ": piece '<unk>'"), std::string::npos) << bad_vocab;
}

TEST(MarianTokenizer, AVocabularyThatIsNoJsonGivesTheLine) {
  MarianCopy copy;
  copy.dir.write("vocab.json", "{\"</s>\": 0,\n \"<unk>\": 1,,}");
  EXPECT_NE(copy.load_error().find(copy.dir.file("vocab.json") + ":2:"), std::string::npos);
}

TEST(MarianTokenizer, AMissingTargetVocabularyIsNamed) {
  MarianCopy copy("marian_sep_en_mg");
  std::remove(copy.dir.file("target_vocab.json").c_str());
  EXPECT_NE(copy.load_error(true).find("target_vocab.json"), std::string::npos);
}

TEST(Vocab, RejectsDuplicateIds) {
  TempDir dir;
  const std::string path = dir.write("vocab.json", R"({"a": 0, "b": 0})");
  EXPECT_NE(error_of([&] { Vocab::load(path); }).find("id 0 is given to both"), std::string::npos);
}

// The error of loading a vocab.json of `content`, and the file's path.
std::pair<std::string, std::string> vocab_error(const std::string& content) {
  TempDir dir;
  const std::string path = dir.write("vocab.json", content);
  return {error_of([&] { Vocab::load(path); }), path};
}

TEST(Vocab, ANegativeIdIsRefusedNamingThePiece) {
  const auto [error, path] = vocab_error(R"({"a": 0, "b": -3})");
  EXPECT_NE(error.find(path + ": piece 'b'"), std::string::npos) << error;
}

TEST(Vocab, AFractionalIdIsRefusedNamingThePiece) {
  const auto [error, path] = vocab_error(R"({"a": 0, "c": 1.5})");
  EXPECT_NE(error.find(path + ": piece 'c'"), std::string::npos) << error;
}

TEST(Vocab, AVocabularyThatIsNoObjectIsRefusedNamingTheFile) {
  const auto [error, path] = vocab_error(R"(["a", "b"])");
  EXPECT_NE(error.find(path), std::string::npos) << error;
}

TEST(Vocab, AMissingFileIsNamed) {
  TempDir dir;
  EXPECT_NE(error_of([&] { Vocab::load(dir.file("missing.json")); }).find(dir.file("missing.json")), std::string::npos);
}

// Ids 0, 1 and 3: 2 is a gap.
Vocab three_piece_vocab() {
  TempDir dir;
  return Vocab::load(dir.write("vocab.json", R"({"</s>": 0, "<unk>": 1, "\u2581hi": 3})"));
}

TEST(Vocab, MapsPiecesAndIdsBothWays) {
  const Vocab vocab = three_piece_vocab();
  EXPECT_EQ(vocab.find("\xe2\x96\x81hi").value_or(-1), 3);
  EXPECT_EQ(vocab.piece(3), "\xe2\x96\x81hi");
}

TEST(Vocab, AnIdOfNoPieceIsTheEmptyPiece) {
  const Vocab vocab = three_piece_vocab();
  EXPECT_EQ(vocab.piece(2), "");
  EXPECT_EQ(vocab.piece(99), "");
}

TEST(Vocab, ARequiredPieceThatIsMissingIsNamed) {
  const Vocab vocab = three_piece_vocab();
  EXPECT_EQ(vocab.require("<unk>"), 1);
  EXPECT_NE(error_of([&] { vocab.require("<pad>"); }).find("'<pad>'"), std::string::npos);
}

TEST(Utf8, AcceptsValidText) {
  EXPECT_NO_THROW(check_utf8("plain ascii", "x"));
  EXPECT_NO_THROW(check_utf8("Jürgen's Straße — 東京 🙂", "x"));
  EXPECT_NO_THROW(check_utf8("", "x"));
}

TEST(Utf8, RejectsEveryKindOfInvalidSequence) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"abc\xff", "invalid lead byte"},
      {"\x80"
       "abc",
       "unexpected continuation byte"},
      {"ab\xc3", "truncated sequence"},
      {"\xe6\x9d", "truncated sequence"},
      {"\xc0\xaf", "overlong encoding"},
      {"\xe0\x80\xaf", "overlong encoding"},
      {"\xed\xa0\x80", "UTF-16 surrogate"},
      {"\xf4\x90\x80\x80", "beyond U+10FFFF"},
      {"\xc3(", "missing continuation byte"},
  };
  for (const auto& [bytes, why] : cases) {
    const std::string text = bytes;  // (clang 14 cannot capture a structured binding)
    const std::string message = error_of([&] { check_utf8(text, "stdin line 7"); });
    EXPECT_NE(message.find("stdin line 7: invalid UTF-8 at byte"), std::string::npos) << message;
    EXPECT_NE(message.find(why), std::string::npos) << message;
  }
  const auto tokenizer = tc_big();
  EXPECT_THROW(tokenizer->encode("bad \xff byte"), Error);
}

TEST(ByteOrderMark, OneLeadingMarkIsDropped) {
  std::string text = "\xef\xbb\xbf\xef\xbb\xbfVertrag\tcontract\n";
  EXPECT_TRUE(ordo::drop_byte_order_mark(text));
  EXPECT_EQ(text, "\xef\xbb\xbfVertrag\tcontract\n");  // a second mark is text (U+FEFF)
}

TEST(ByteOrderMark, TextWithoutALeadingMarkIsKept) {
  for (const std::string kept : {"", "\xef\xbb", "a\xef\xbb\xbf", "\xef\xbb\xbe"}) {
    std::string same = kept;
    EXPECT_FALSE(ordo::drop_byte_order_mark(same));
    EXPECT_EQ(same, kept);
  }
}

TEST(SentencePiece, RoundTripsRealOpusMtModel) {
  const SentencePiece spm(ordo::testing::fixture_dir("marian_tcbig_en_pt") + "/source.spm");
  const std::string text = "Where is the train station?";
  EXPECT_EQ(spm.decode(spm.encode(text)), text);
}

// A directory or a FIFO named like a model file: a clear error, never SentencePiece's
// "basic_filebuf::underflow" and never a read that blocks forever.
TEST(SentencePiece, ADirectoryIsRefusedNamingIt) {
  TempDir dir;
  ASSERT_EQ(::mkdir(dir.file("source.spm").c_str(), 0755), 0);
  const std::string directory = error_of([&] { SentencePiece spm(dir.file("source.spm")); });
  EXPECT_NE(directory.find(dir.file("source.spm") + ": is a directory"), std::string::npos) << directory;
  EXPECT_EQ(directory.find("underflow"), std::string::npos) << directory;
}

TEST(SentencePiece, AFifoIsRefusedNamingItWithoutWaiting) {
  TempDir dir;
  ASSERT_EQ(::mkfifo(dir.file("target.spm").c_str(), 0644), 0);
  auto fifo =
      std::async(std::launch::async, [&] { return error_of([&] { SentencePiece spm(dir.file("target.spm")); }); });
  ASSERT_EQ(fifo.wait_for(std::chrono::seconds(20)), std::future_status::ready) << "loading a FIFO blocks";
  const std::string message = fifo.get();
  EXPECT_NE(message.find(dir.file("target.spm") + ": is a FIFO"), std::string::npos) << message;
}

TEST(SentencePiece, ADirectoryInATokenizerFolderIsRefusedNamingIt) {
  TempDir model;
  ordo::testing::copy_dir(ordo::testing::fixture_dir("marian_opus_en_mg"), model.path());
  std::remove(model.file("source.spm").c_str());
  ASSERT_EQ(::mkdir(model.file("source.spm").c_str(), 0755), 0);
  const std::string folder = error_of([&] { load_marian_tokenizer(model.path(), false); });
  EXPECT_NE(folder.find("source.spm: is a directory"), std::string::npos) << folder;
}

TEST(SentencePiece, IdsOutsideTheModelAreErrorsNotReadsPastItsTable) {
  const SentencePiece spm(ordo::testing::fixture_dir("marian_opus_en_mg") + "/target.spm");
  EXPECT_FALSE(spm.id_to_piece(0).empty());
  EXPECT_NE(error_of([&] { spm.id_to_piece(spm.size()); }).find("outside the vocabulary"), std::string::npos);
  EXPECT_NE(error_of([&] { spm.id_to_piece(-1); }).find("outside the vocabulary"), std::string::npos);
}

}  // namespace
}  // namespace ordo::text
