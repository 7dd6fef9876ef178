// ctest-label: unit
// Audio longer than a window without timestamps (src/speech/chunked.h) against transformers
// 4.31's ASR pipeline: speech.json's long_form_pipeline holds the chunks it cut the 44 s clip
// into, what generate() returned for each, and the text it merged them into.
#include "speech/chunked.h"

#include <gtest/gtest.h>

#include "support/fixtures.h"
#include "text/whisper_tokenizer.h"

namespace ordo::speech {
namespace {

using Ids = std::vector<int64_t>;

std::vector<MergedToken> tokens(const Ids& ids, size_t chunk) {
  std::vector<MergedToken> out;
  for (int64_t id : ids) out.push_back({id, chunk});
  return out;
}
Ids ids_of(const std::vector<MergedToken>& merged) {
  Ids out;
  for (const MergedToken& t : merged) out.push_back(t.id);
  return out;
}

TEST(Chunked, ChunksAreThePipelines) {
  const nlohmann::json golden = testing::load_fixture_json("whisper", "speech.json")["long_form_pipeline"][0];
  const std::vector<Chunk> chunks = plan_chunks(708836, 480000, 80000, 80000);
  const nlohmann::json& expected = golden["chunks_16k_samples"];
  ASSERT_EQ(chunks.size(), expected.size());
  for (size_t i = 0; i < chunks.size(); ++i) {
    EXPECT_EQ(chunks[i].start, expected[i]["start_sample"].get<int64_t>());
    EXPECT_EQ(chunks[i].samples, expected[i]["stride"][0].get<int64_t>());
    EXPECT_EQ(chunks[i].stride_left, expected[i]["stride"][1].get<int64_t>());
    EXPECT_EQ(chunks[i].stride_right, expected[i]["stride"][2].get<int64_t>());
    EXPECT_EQ(chunks[i].is_last, expected[i]["is_last"].get<bool>());
  }
}

TEST(Chunked, AudioShorterThanAChunkIsOneChunk) {
  const std::vector<Chunk> chunks = plan_chunks(44555, 480000, 80000, 80000);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_TRUE(chunks[0].is_last);
  EXPECT_EQ(chunks[0].stride_left + chunks[0].stride_right, 0);
}

TEST(Chunked, OverlapsAreCutInTheirMiddle) {
  // [1 2 3 4 5] and [3 4 5 6 7] overlap on 3 4 5: the left keeps 1 2 3 (its half: 3 tokens
  // of the overlap rounded down), the right gives 4 5 6 7.
  const std::vector<MergedToken> merged =
      longest_common_sequence({tokens({1, 2, 3, 4, 5}, 0), tokens({3, 4, 5, 6, 7}, 1)});
  EXPECT_EQ(ids_of(merged), (Ids{1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(merged[3].chunk, 1u);
  EXPECT_EQ(merged[2].chunk, 0u);
}

TEST(Chunked, SequencesWithoutCommonTokensAreJoined) {
  EXPECT_EQ(ids_of(longest_common_sequence({tokens({1, 2}, 0), tokens({3, 4}, 1)})), (Ids{1, 2, 3, 4}));
}

TEST(Chunked, MergedTextIsThePipelinesText) {
  const nlohmann::json golden = testing::load_fixture_json("whisper", "speech.json")["long_form_pipeline"][0];
  ASSERT_FALSE(golden["timestamps"].get<bool>());
  const auto tokenizer = text::load_whisper_tokenizer(testing::fixture_dir("whisper"));
  const text::WhisperSpecials& sp = tokenizer->specials();
  std::vector<Ids> outputs;
  for (const auto& ids : golden["per_chunk_greedy_ids"]) outputs.push_back(ids.get<Ids>());
  MergeSettings settings;
  settings.timestamp_begin = sp.timestamp_begin;
  settings.first_special = sp.end_of_text;
  settings.is_language = [&](int64_t id) {
    const std::string piece = tokenizer->piece(id);
    return piece.size() > 4 && tokenizer->language_id(piece).has_value();
  };
  const std::vector<std::vector<MergedToken>> pieces =
      merge_chunks(outputs, plan_chunks(708836, 480000, 80000, 80000), settings);
  std::string text;
  for (const auto& piece : pieces) text += tokenizer->decode(ids_of(piece));
  EXPECT_EQ(text, golden["pipeline_output"]["text"].get<std::string>());
}

}  // namespace
}  // namespace ordo::speech
