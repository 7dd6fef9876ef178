// Documents longer than the model's positions (ordo/document.h): chunk_text's cuts on a
// counter of words, and summarize_documents with the bundled dialogsum summarizer (512
// positions) on eight DialogSum dialogues joined (tests/data/samples/dialogsum_dev30.jsonl).
// ctest-label: integration
#include <algorithm>
#include <fstream>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ordo/document.h"
#include "ordo/translator.h"
#include "support/cli_run.h"
#include "support/errors.h"
#include "support/fixtures.h"
#include "support/temp_dir.h"

namespace ordo {
namespace {

// One token a word, and one for the end of the sequence.
size_t words(const std::string& text) {
  size_t n = 1;
  bool in_word = false;
  for (char c : text) {
    const bool space = c == ' ' || c == '\n' || c == '\t';
    n += !space && !in_word;
    in_word = !space;
  }
  return n;
}

std::vector<std::string> pieces_of(const std::string& text, const std::vector<SentenceSpan>& spans) {
  std::vector<std::string> out;
  for (const SentenceSpan& s : spans) out.push_back(text.substr(s.begin, s.end - s.begin));
  return out;
}

TEST(ChunkText, SentencesArePackedIntoChunksThatFitAndAShortLastSentenceIsRepeated) {
  const std::string text = "A b c. D e f. G h i. J k l. M n o. P q r.";  // 4 tokens a sentence
  const std::vector<std::string> chunks = pieces_of(text, chunk_text(text, "en", 16, words));
  ASSERT_EQ(chunks, (std::vector<std::string>{"A b c. D e f. G h i. J k l. M n o.", "M n o. P q r."}));
  for (const std::string& c : chunks) EXPECT_LE(words(c), 16u) << c;
  // A last sentence of more than a quarter of the limit is not repeated.
  EXPECT_EQ(pieces_of(text, chunk_text(text, "en", 12, words)),
            (std::vector<std::string>{"A b c. D e f. G h i.", "J k l. M n o. P q r."}));
}

TEST(ChunkText, AParagraphEndClosesAChunkThatHoldsAQuarterOfTheLimit) {
  const std::string text = "One two three. Four five.\n\nSix seven. Eight nine.";  // 6 tokens before the blank line
  EXPECT_EQ(pieces_of(text, chunk_text(text, "en", 20, words)),
            (std::vector<std::string>{"One two three. Four five.", "Six seven. Eight nine."}));
  EXPECT_EQ(pieces_of(text, chunk_text(text, "en", 40, words)),
            (std::vector<std::string>{"One two three. Four five.\n\nSix seven. Eight nine."}));
}

TEST(ChunkText, ASentenceLongerThanTheLimitIsCutBetweenWords) {
  const std::string text = "a b c d e f g h i j k";
  const std::vector<std::string> chunks = pieces_of(text, chunk_text(text, "en", 5, words));
  EXPECT_EQ(chunks, (std::vector<std::string>{"a b c d", "e f g h", "i j k"}));
}

TEST(ChunkText, AWordLongerThanTheLimitIsCutBetweenCharactersNotInsideOne) {
  const std::string text = "ääääääää";  // 8 characters of 2 bytes
  const auto characters = [](const std::string& piece) { return piece.size() / 2 + 1; };
  const std::vector<std::string> chunks = pieces_of(text, chunk_text(text, "", 4, characters));
  EXPECT_EQ(chunks, (std::vector<std::string>{"äää", "äää", "ää"}));
}

TEST(ChunkText, ATextWithoutSentencesHasNoChunksAndBadUtf8IsRefused) {
  EXPECT_TRUE(chunk_text(" \n ", "en", 8, words).empty());
  EXPECT_NE(testing::error_of([] { chunk_text("ab\xff", "en", 8, words); }).find("document"), std::string::npos);
}

// The bundled summarizer and eight DialogSum dev dialogues joined by blank lines: 1,775
// tokens for a model of 512 positions.
struct Dialogues {
  std::vector<std::string> dialogues;
  std::string document;
  Dialogues() {
    std::ifstream in(testing::data_dir() + "/samples/dialogsum_dev30.jsonl");
    std::string line;
    for (int row = 0; std::getline(in, line); ++row)
      if (row >= 10 && row < 18) dialogues.push_back(nlohmann::json::parse(line)["dialogue"].get<std::string>());
    for (const std::string& d : dialogues) document += (document.empty() ? "" : "\n\n") + d;
  }
};

const Translator& dialogsum() {
  static const Translator translator(std::string(ORDO_SOURCE_DIR) + "/models/dialogsum");
  return translator;
}

TEST(SummarizeDocuments, ADocumentThatFitsIsSummarizedAsTranslateDoes) {
  const Dialogues d;
  const std::vector<TranslationResult> a = summarize_documents(dialogsum(), {d.dialogues[0], d.dialogues[7]});
  const std::vector<TranslationResult> b = dialogsum().translate({d.dialogues[0], d.dialogues[7]});
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(a[i].hypotheses.at(0).ids, b[i].hypotheses.at(0).ids);
    EXPECT_EQ(a[i].hypotheses.at(0).score, b[i].hypotheses.at(0).score);
  }
}

TEST(SummarizeDocuments, ALongDocumentIsSummarizedInPartsAndItsSummaryEndsWithItsLastPart) {
  const Dialogues d;
  ASSERT_GT(dialogsum().encode(d.document).size(), 3 * static_cast<size_t>(dialogsum().max_source_tokens()));
  std::mutex lock;
  std::vector<ChunkProgress> progress;
  LongInputOptions long_input;
  long_input.on_progress = [&](const ChunkProgress& p) {
    std::lock_guard<std::mutex> hold(lock);
    progress.push_back(p);
  };
  const TranslationResult r = summarize_documents(dialogsum(), {d.document}, {}, long_input).at(0);
  EXPECT_EQ(r.truncated_tokens, 0);
  const std::string last = dialogsum().translate({d.dialogues.back()}).at(0).hypotheses.at(0).text;
  const std::string& text = r.hypotheses.at(0).text;
  ASSERT_GE(text.size(), last.size());
  EXPECT_EQ(text.substr(text.size() - last.size()), last) << text;  // the last dialogue is its own chunk
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.back().total, progress.size());
  EXPECT_GE(progress.size(), 4u);
}

TEST(SummarizeDocuments, TruncateIsTheOneCutPassAndRefuseNamesTheInput) {
  const Dialogues d;
  LongInputOptions truncate;
  truncate.mode = LongInput::kTruncate;
  const TranslationResult cut = summarize_documents(dialogsum(), {d.document}, {}, truncate).at(0);
  EXPECT_GT(cut.truncated_tokens, 1000);
  EXPECT_EQ(cut.hypotheses.at(0).ids, dialogsum().translate({d.document}).at(0).hypotheses.at(0).ids);
  LongInputOptions refuse;
  refuse.mode = LongInput::kRefuse;
  const std::string message = testing::error_of([&] {
    summarize_documents(dialogsum(), {d.dialogues[0], d.document}, {}, refuse);
  });
  EXPECT_NE(message.find("input 2: the document has"), std::string::npos) << message;
  EXPECT_NE(message.find("more than the 512 the model takes"), std::string::npos) << message;
}

TEST(SummarizeDocuments, AChunkSizeOutsideItsBoundsIsAnError) {
  for (const int64_t tokens : {31, 513}) {
    LongInputOptions o;
    o.chunk_tokens = tokens;
    const std::string message = testing::error_of([&] { summarize_documents(dialogsum(), {"Hello."}, {}, o); });
    EXPECT_NE(message.find("a chunk holds from 32 to 512 tokens"), std::string::npos) << message;
  }
}

TEST(SummarizeDocuments, AnEmptyDocumentGivesAnEmptySummaryAndOneLongSentenceIsCutByTokens) {
  EXPECT_EQ(summarize_documents(dialogsum(), {""}).at(0).hypotheses.at(0).text, "");
  std::string sentence;  // 20,000 characters, no sentence end
  while (sentence.size() < 20000) sentence += "#Person1#: the train to the city leaves at nine and ";
  const TranslationResult r = summarize_documents(dialogsum(), {sentence}).at(0);
  EXPECT_EQ(r.truncated_tokens, 0);
  EXPECT_FALSE(r.hypotheses.at(0).text.empty());
}

// The real binary: a long document with no truncation warning, a line per chunk on stderr,
// and a summary that ends with what `ordo summarize` says of its last dialogue alone;
// --long-input refuse and a bad --chunk-tokens fail naming themselves.
TEST(SummarizeCli, ALongDocumentIsSummarizedInPartsWithProgressAndNoTruncation) {
  const Dialogues d;
  const testing::TempDir dir;
  const std::string input = dir.write("dialogues.txt", d.document + "\n");
  const std::string last = dir.write("last.txt", d.dialogues.back() + "\n");
  const std::string model = " -m '" + std::string(ORDO_SOURCE_DIR) + "/models/dialogsum'";
  const testing::CliRun run = testing::run_ordo("summarize --document" + model + " -i '" + input + "'");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.err.find("tokens dropped"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("ordo: summarizing in parts: chunk 1 of "), std::string::npos) << run.err;
  const testing::CliRun alone = testing::run_ordo("summarize --document -q" + model + " -i '" + last + "'");
  ASSERT_EQ(alone.exit_code, 0) << alone.err;
  ASSERT_GT(run.out.size(), alone.out.size());
  EXPECT_EQ(run.out.substr(run.out.size() - alone.out.size()), alone.out) << run.out;
  const testing::CliRun refused =
      testing::run_ordo("summarize --document --long-input refuse" + model + " -i '" + input + "'");
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("more than the 512 the model takes"), std::string::npos) << refused.err;
  const testing::CliRun small =
      testing::run_ordo("summarize --document --chunk-tokens 16" + model + " -i '" + input + "'");
  EXPECT_NE(small.exit_code, 0);
  EXPECT_NE(small.err.find("--chunk-tokens 16: a chunk holds from 32 to 512 tokens"), std::string::npos) << small.err;
}

}  // namespace
}  // namespace ordo
