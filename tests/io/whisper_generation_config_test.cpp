// The Whisper keys of generation_config.json (io::GenerationConfig): read from the fixture's
// file, refused with the field named when malformed, and checked against the model's
// vocabulary and decoder by check_generation_ids.
// ctest-label: unit
#include <gtest/gtest.h>

#include "io/model_config.h"
#include "support/errors.h"
#include "support/fixtures.h"
#include "support/temp_dir.h"

namespace ordo::io {
namespace {

using ordo::testing::error_of;
using ordo::testing::TempDir;

GenerationConfig fixture_config() {
  return load_generation_config(ordo::testing::fixture_dir("whisper") + "/generation_config.json");
}

// The sizes check_generation_ids compares with: the fixture's decoder (51865 ids, 2 layers of
// 4 heads).
ModelConfig whisper_sizes() {
  ModelConfig m;
  m.vocab_size = m.decoder_vocab_size = 51865;
  m.decoder_layers = 2;
  m.decoder_attention_heads = 4;
  return m;
}

TEST(WhisperGenerationConfig, ReadsTheFixturesWhisperKeys) {
  const GenerationConfig g = fixture_config();
  ASSERT_TRUE(g.suppress_tokens);
  EXPECT_EQ(g.suppress_tokens->size(), 88u);
  EXPECT_EQ(g.suppress_tokens->front(), 1);
  EXPECT_EQ(g.suppress_tokens->back(), 50362);
  EXPECT_EQ(g.begin_suppress_tokens, (std::vector<int64_t>{220, 50257}));
  EXPECT_EQ(g.forced_decoder_ids, (ForcedDecoderIds{{1, std::nullopt}, {2, 50359}}));
  EXPECT_EQ(g.no_timestamps_token_id, 50363);
  EXPECT_EQ(g.max_initial_timestamp_index, 1);
  EXPECT_EQ(g.is_multilingual, true);
  ASSERT_TRUE(g.lang_to_id);
  EXPECT_EQ(g.lang_to_id->size(), 99u);
  EXPECT_EQ(g.lang_to_id->at("<|de|>"), 50261);
  EXPECT_EQ(g.task_to_id, (std::map<std::string, int64_t>{{"transcribe", 50359}, {"translate", 50358}}));
  EXPECT_EQ(g.alignment_heads, (std::vector<std::pair<int64_t, int64_t>>{{1, 0}, {1, 1}, {1, 2}, {1, 3}}));
  EXPECT_EQ(g.return_timestamps, false);
  EXPECT_NO_THROW(check_generation_ids(g, whisper_sizes()));
}

TEST(WhisperGenerationConfig, AbsentOrNullKeysStayUnset) {
  TempDir dir;
  const GenerationConfig g = load_generation_config(
      dir.write("generation_config.json", R"({"forced_decoder_ids": null, "max_initial_timestamp_index": null})"));
  EXPECT_FALSE(g.forced_decoder_ids);
  EXPECT_FALSE(g.max_initial_timestamp_index);
  EXPECT_FALSE(g.suppress_tokens);
  EXPECT_FALSE(g.lang_to_id);
  EXPECT_FALSE(g.alignment_heads);
}

TEST(WhisperGenerationConfig, NamesTheMalformedField) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"suppress_tokens": [1, -2]})", "suppress_tokens"},
      {R"({"begin_suppress_tokens": "220"})", "begin_suppress_tokens"},
      {R"({"forced_decoder_ids": [[1]]})", "forced_decoder_ids"},
      {R"({"forced_decoder_ids": [[null, 5]]})", "forced_decoder_ids"},
      {R"({"forced_decoder_ids": [[2000000, 5]]})", "forced_decoder_ids"},
      {R"({"no_timestamps_token_id": "x"})", "no_timestamps_token_id"},
      {R"({"max_initial_timestamp_index": -1})", "max_initial_timestamp_index"},
      {R"({"is_multilingual": 1})", "is_multilingual"},
      {R"({"lang_to_id": {"<|en|>": "x"}})", "lang_to_id"},
      {R"({"task_to_id": [1, 2]})", "task_to_id"},
      {R"({"alignment_heads": [[1, null]]})", "alignment_heads"},
      {R"({"return_timestamps": "yes"})", "return_timestamps"},
  };
  TempDir dir;
  for (const auto& [text, field] : cases) {
    const std::string path = dir.write("generation_config.json", text);
    const std::string message = error_of([&] { load_generation_config(path); });
    EXPECT_NE(message.find("generation_config.json"), std::string::npos) << text << ": " << message;
    EXPECT_NE(message.find("'" + field + "'"), std::string::npos) << text << ": " << message;
  }
}

TEST(WhisperGenerationConfig, ChecksTheIdsAgainstTheVocabularyAndTheHeadsAgainstTheDecoder) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"suppress_tokens": [1, 51865]})", "suppress_tokens"},
      {R"({"begin_suppress_tokens": [60000]})", "begin_suppress_tokens"},
      {R"({"forced_decoder_ids": [[1, null], [2, 51865]]})", "forced_decoder_ids"},
      {R"({"no_timestamps_token_id": 51864})", "no_timestamps_token_id"},
      {R"({"lang_to_id": {"<|en|>": 99999}})", "lang_to_id"},
      {R"({"task_to_id": {"transcribe": 51865}})", "task_to_id"},
      {R"({"alignment_heads": [[2, 0]]})", "alignment_heads"},
      {R"({"alignment_heads": [[1, 4]]})", "alignment_heads"},
  };
  TempDir dir;
  for (const auto& [text, field] : cases) {
    const GenerationConfig g = load_generation_config(dir.write("generation_config.json", text));
    const std::string message = error_of([&] { check_generation_ids(g, whisper_sizes()); });
    EXPECT_NE(message.find("'" + field + "'"), std::string::npos) << text << ": " << message;
  }
}

}  // namespace
}  // namespace ordo::io
