// Whisper's tokenizer (text::WhisperTokenizer) against transformers 4.31's WhisperTokenizer:
// the fixture's speech.json (prefix ids, every generated sequence's text, the timestamp
// decoding), tokenizer_golden.json (encode, prompts, decode both ways; made by
// tools/codegen/whisper/make_tokenizer_goldens.py), the special ids of the multilingual,
// English-only and large-v3 layouts, and the errors of broken folders.
// ctest-label: unit
#include <fstream>
#include <functional>

#include <gtest/gtest.h>

#include "ordo/error.h"
#include "support/errors.h"
#include "support/fixtures.h"
#include "support/temp_dir.h"
#include "text/whisper_tokenizer.h"

namespace ordo::text {
namespace {

using nlohmann::json;
using ordo::testing::error_of;
using ordo::testing::TempDir;
using Ids = std::vector<int64_t>;

std::string fixture() { return ordo::testing::fixture_dir("whisper"); }

const WhisperTokenizer& tokenizer() {
  static const auto loaded = load_whisper_tokenizer(fixture());
  return *loaded;
}

json read(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  return json::parse(in);
}

// A copy of the fixture's tokenizer files with vocab.json, added_tokens.json and
// special_tokens_map.json rewritten by `edit` (the other files as they are).
struct Layout {
  json vocab = read(fixture() + "/vocab.json");
  json added = read(fixture() + "/added_tokens.json");
  json map = read(fixture() + "/special_tokens_map.json");
  void write(const TempDir& dir) const {
    dir.write("vocab.json", vocab.dump());
    dir.write("added_tokens.json", added.dump());
    dir.write("special_tokens_map.json", map.dump());
    for (const char* file : {"/merges.txt", "/tokenizer_config.json"}) {
      std::ifstream in(fixture() + file, std::ios::binary);
      dir.write(std::string(file).substr(1), std::string(std::istreambuf_iterator<char>(in), {}));
    }
  }
  // Moves every added token with an id >= `from` by `by`.
  void shift_added(int64_t from, int64_t by) {
    for (auto& [token, id] : added.items())
      if (id.get<int64_t>() >= from) id = id.get<int64_t>() + by;
  }
  void erase_special(const std::string& token) {
    json& list = map["additional_special_tokens"];
    list.erase(std::remove(list.begin(), list.end(), json(token)), list.end());
  }
};

TEST(WhisperTokenizer, ReadsTheSpecialIdsOfTheMultilingualFixture) {
  const WhisperSpecials& s = tokenizer().specials();
  EXPECT_EQ(s.end_of_text, 50257);
  EXPECT_EQ(s.start_of_transcript, 50258);
  EXPECT_EQ(s.translate, 50358);
  EXPECT_EQ(s.transcribe, 50359);
  EXPECT_EQ(s.start_of_lm, 50360);
  EXPECT_EQ(s.start_of_prev, 50361);
  EXPECT_EQ(s.no_speech, 50362);
  EXPECT_EQ(s.no_timestamps, 50363);
  EXPECT_EQ(s.timestamp_begin, 50364);
  EXPECT_EQ(s.vocab_size, 51865);
  EXPECT_EQ(tokenizer().source_id_range().limit, 51865);
}

TEST(WhisperTokenizer, KnowsTheNinetyNineLanguagesInIdOrder) {
  const std::vector<std::string> codes = tokenizer().languages();
  ASSERT_EQ(codes.size(), 99u);
  EXPECT_EQ(codes.front(), "en");
  EXPECT_EQ(codes[1], "zh");
  EXPECT_EQ(codes.back(), "su");
  EXPECT_EQ(tokenizer().language_id("en"), 50259);
  EXPECT_EQ(tokenizer().language_id("<|de|>"), 50261);
  EXPECT_EQ(tokenizer().language_id("haw"), 50352);
  EXPECT_EQ(tokenizer().language_id("xx"), std::nullopt);
  EXPECT_EQ(tokenizer().language_id("english"), std::nullopt);
  EXPECT_EQ(tokenizer().task_id("transcribe"), 50359);
  EXPECT_EQ(tokenizer().task_id("translate"), 50358);
  EXPECT_EQ(tokenizer().task_id("summarize"), std::nullopt);
}

// tokenizer_prefix_goldens: the tokenizer with language and task set frames a text as
// <|startoftranscript|> <|lang|> <|task|> <|notimestamps|> pieces <|endoftext|>.
TEST(WhisperTokenizer, FramesTheTextAsTheSpeechJsonPrefixGoldens) {
  const json golden = read(fixture() + "/speech.json")["tokenizer_prefix_goldens"];
  const WhisperSpecials& s = tokenizer().specials();
  ASSERT_EQ(golden["ids"].size(), 3u);
  for (const auto& [key, ids] : golden["ids"].items()) {
    const std::string lang = key.substr(0, key.find('/')), task = key.substr(key.find('/') + 1);
    Ids expected{s.start_of_transcript, *tokenizer().language_id(lang), *tokenizer().task_id(task), s.no_timestamps};
    for (int64_t id : tokenizer().encode(golden["text"].get<std::string>())) expected.push_back(id);
    expected.push_back(s.end_of_text);
    EXPECT_EQ(expected, ids.get<Ids>()) << key;
  }
}

TEST(WhisperTokenizer, DecodesEveryGeneratedSequenceOfSpeechJsonToItsText) {
  const json cases = read(fixture() + "/speech.json")["cases"];
  ASSERT_EQ(cases.size(), 11u);
  for (const json& c : cases) {
    EXPECT_EQ(tokenizer().decode(c["greedy_ids"].get<Ids>()), c["greedy_text"].get<std::string>()) << c["audio"];
    EXPECT_EQ(tokenizer().decode(c["beam4_ids"].get<Ids>()), c["beam4_text"].get<std::string>()) << c["audio"];
  }
}

TEST(WhisperTokenizer, DecodesWithTimestampsAsSpeechJson) {
  int checked = 0;
  const json speech = read(fixture() + "/speech.json");
  for (const json& c : speech["cases"]) {
    if (!c.contains("greedy_decoded_with_timestamps")) continue;
    EXPECT_EQ(tokenizer().decode_with_timestamps(c["greedy_ids"].get<Ids>()),
              c["greedy_decoded_with_timestamps"].get<std::string>());
    ++checked;
  }
  EXPECT_EQ(checked, 2);
}

TEST(WhisperTokenizer, EncodesAndTokenizesAsTransformers) {
  const json golden = read(fixture() + "/tokenizer_golden.json");
  for (const json& c : golden["encode"]) {
    const std::string text = c["text"];
    EXPECT_EQ(tokenizer().encode(text), c["ids"].get<Ids>()) << text;
    EXPECT_EQ(tokenizer().encode_target(text), c["ids"].get<Ids>()) << text;
    EXPECT_EQ(tokenizer().tokenize(text), c["pieces"].get<std::vector<std::string>>()) << text;
  }
}

TEST(WhisperTokenizer, MakesPromptIdsAsGetPromptIds) {
  const json golden = read(fixture() + "/tokenizer_golden.json");
  for (const json& c : golden["prompt"])
    EXPECT_EQ(tokenizer().prompt_ids(c["text"].get<std::string>()), c["ids"].get<Ids>()) << c["text"];
}

TEST(WhisperTokenizer, RefusesAPromptThatSpellsASpecialToken) {
  const std::string message = error_of([] { tokenizer().prompt_ids("say <|en|> now", "initial_prompt"); });
  EXPECT_NE(message.find("initial_prompt"), std::string::npos) << message;
  EXPECT_NE(message.find("<|en|>"), std::string::npos) << message;
  EXPECT_NE(error_of([] { tokenizer().prompt_ids("at <|1.00|>"); }).find("<|1.00|>"), std::string::npos);
  EXPECT_NE(error_of([] { tokenizer().prompt_ids("bad \xff byte"); }).find("initial prompt"), std::string::npos);
}

TEST(WhisperTokenizer, DecodesAsTransformersWithAndWithoutSpecialTokensAndTimestamps) {
  const json golden = read(fixture() + "/tokenizer_golden.json");
  for (const json& c : golden["decode"]) {
    const Ids ids = c["ids"];
    EXPECT_EQ(tokenizer().decode(ids), c["skip_special"].get<std::string>()) << c["ids"];
    EXPECT_EQ(tokenizer().decode(ids, false), c["keep_special"].get<std::string>()) << c["ids"];
    EXPECT_EQ(tokenizer().decode_with_timestamps(ids, true), c["with_timestamps_skip_special"].get<std::string>())
        << c["ids"];
    EXPECT_EQ(tokenizer().decode_with_timestamps(ids, false), c["with_timestamps_keep_special"].get<std::string>())
        << c["ids"];
  }
}

TEST(WhisperTokenizer, TimestampIdsAreTwoHundredthsOfASecondApart) {
  EXPECT_FALSE(tokenizer().is_timestamp(50363));
  EXPECT_TRUE(tokenizer().is_timestamp(50364));
  EXPECT_DOUBLE_EQ(tokenizer().timestamp_seconds(50364), 0.0);
  EXPECT_NEAR(tokenizer().timestamp_seconds(50364 + 54), 1.08, 1e-12);
  EXPECT_EQ(tokenizer().piece(50364 + 54), "<|1.08|>");
  EXPECT_EQ(tokenizer().token_id("<|30.00|>"), 51864);
  EXPECT_EQ(tokenizer().token_id("Ġhello"), std::optional<int64_t>(tokenizer().encode(" hello")[0]));
}

TEST(WhisperTokenizer, PiecesSkipTheSpecialTokensButKeepTimestamps) {
  EXPECT_EQ(tokenizer().id_to_pieces({50258, 50259, 50364, 15947, 50257, 60000}),
            (std::vector<std::string>{"<|0.00|>", "Hello"}));
  EXPECT_EQ(tokenizer().target_piece(50259), "<|en|>");
  EXPECT_EQ(tokenizer().source_piece(50257), "<|endoftext|>");
}

// English-only checkpoints (openai/whisper-*.en): vocab.json ends at <|endoftext|> 50256
// and every added token sits one id lower; the language tokens are there (the model never
// uses them).
TEST(WhisperTokenizer, ReadsTheEnglishOnlyLayout) {
  Layout layout;
  layout.vocab.erase("");
  layout.vocab["<|endoftext|>"] = 50256;
  layout.shift_added(0, -1);
  TempDir dir;
  layout.write(dir);
  const WhisperTokenizer english(dir.path());
  const WhisperSpecials& s = english.specials();
  EXPECT_EQ(s.end_of_text, 50256);
  EXPECT_EQ(s.start_of_transcript, 50257);
  EXPECT_EQ(english.language_id("en"), 50258);
  EXPECT_EQ(s.translate, 50357);
  EXPECT_EQ(s.transcribe, 50358);
  EXPECT_EQ(s.start_of_prev, 50360);
  EXPECT_EQ(s.no_timestamps, 50362);
  EXPECT_EQ(s.timestamp_begin, 50363);
  EXPECT_EQ(s.vocab_size, 51864);
  EXPECT_EQ(english.decode({50257, 50362, 15947, 1002, 50256}), "Hello world");
  EXPECT_EQ(english.decode_with_timestamps({50257, 50363, 15947, 50413}), "<|startoftranscript|><|0.00|>Hello<|1.00|>");
  EXPECT_EQ(english.prompt_ids("hi"), (Ids{50360, 4879}));
}

// A folder whose files define no language or task tokens still loads; it has no languages.
TEST(WhisperTokenizer, LoadsAFolderWithoutLanguageOrTaskTokens) {
  Layout layout;
  json added = json::object();
  int64_t next = 50258;
  std::vector<std::pair<int64_t, std::string>> by_id;
  for (const auto& [token, id] : layout.added.items()) by_id.emplace_back(id.get<int64_t>(), token);
  std::sort(by_id.begin(), by_id.end());
  for (const auto& [id, token] : by_id) {
    const bool language = token.size() <= 7 && token.find('.') == std::string::npos && token != "<|startoftranscript|>";
    if (language || token == "<|translate|>" || token == "<|transcribe|>") {
      layout.erase_special(token);
      continue;
    }
    added[token] = next++;
  }
  layout.added = added;
  TempDir dir;
  layout.write(dir);
  const WhisperTokenizer bare(dir.path());
  EXPECT_TRUE(bare.languages().empty());
  EXPECT_EQ(bare.language_id("en"), std::nullopt);
  EXPECT_EQ(bare.specials().translate, std::nullopt);
  EXPECT_EQ(bare.task_id("transcribe"), std::nullopt);
  EXPECT_EQ(bare.specials().start_of_transcript, 50258);
  EXPECT_EQ(bare.specials().no_timestamps, 50262);
  EXPECT_EQ(bare.specials().timestamp_begin, 50263);
}

// large-v3: <|yue|> after <|su|>, <|nocaptions|> renamed <|nospeech|>, 51866 ids.
TEST(WhisperTokenizer, ReadsTheLargeV3Layout) {
  Layout layout;
  layout.shift_added(50358, 1);
  layout.added["<|yue|>"] = 50358;
  layout.added["<|nospeech|>"] = layout.added["<|nocaptions|>"];
  layout.added.erase("<|nocaptions|>");
  json& list = layout.map["additional_special_tokens"];
  list.insert(std::find(list.begin(), list.end(), json("<|translate|>")), json("<|yue|>"));
  *std::find(list.begin(), list.end(), json("<|nocaptions|>")) = "<|nospeech|>";
  TempDir dir;
  layout.write(dir);
  const WhisperTokenizer v3(dir.path());
  const WhisperSpecials& s = v3.specials();
  EXPECT_EQ(v3.languages().size(), 100u);
  EXPECT_EQ(v3.languages().back(), "yue");
  EXPECT_EQ(v3.language_id("yue"), 50358);
  EXPECT_EQ(s.translate, 50359);
  EXPECT_EQ(s.transcribe, 50360);
  EXPECT_EQ(s.start_of_prev, 50362);
  EXPECT_EQ(s.no_speech, 50363);
  EXPECT_EQ(s.no_timestamps, 50364);
  EXPECT_EQ(s.timestamp_begin, 50365);
  EXPECT_EQ(s.vocab_size, 51866);
  EXPECT_EQ(v3.decode_with_timestamps({50258, 50358, 50360, 50365, 15947, 50365 + 54, 50257}, true),
            "<|0.00|>Hello<|1.08|>");
}

TEST(WhisperTokenizer, NamesTheMissingFileOrToken) {
  TempDir dir;
  EXPECT_NE(error_of([&] { WhisperTokenizer t(dir.path()); }).find("vocab.json"), std::string::npos);

  Layout layout;
  layout.added.erase("<|notimestamps|>");
  layout.write(dir);
  const std::string missing = error_of([&] { WhisperTokenizer t(dir.path()); });
  EXPECT_NE(missing.find("<|notimestamps|>"), std::string::npos) << missing;
}

TEST(WhisperTokenizer, RefusesMalformedAddedTokens) {
  TempDir dir;
  Layout layout;
  layout.added["<|0.00|>"] = "x";
  layout.write(dir);
  std::string message = error_of([&] { WhisperTokenizer t(dir.path()); });
  EXPECT_NE(message.find("added_tokens.json"), std::string::npos) << message;
  EXPECT_NE(message.find("<|0.00|>"), std::string::npos) << message;

  layout = Layout();
  layout.added["<|0.00|>"] = 15947;  // "Hello"'s id
  layout.write(dir);
  message = error_of([&] { WhisperTokenizer t(dir.path()); });
  EXPECT_NE(message.find("15947"), std::string::npos) << message;

  layout = Layout();
  layout.added["<|far|>"] = int64_t{1} << 40;
  layout.write(dir);
  message = error_of([&] { WhisperTokenizer t(dir.path()); });
  EXPECT_NE(message.find("far beyond"), std::string::npos) << message;
}

}  // namespace
}  // namespace ordo::text
