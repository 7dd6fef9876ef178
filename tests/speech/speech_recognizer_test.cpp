// ctest-label: integration
// ordo::SpeechRecognizer on the tiny Whisper fixture (tests/data/hf/whisper) against transformers
// 4.31: every generate() case of speech.json (greedy and 4 beams, transcribe and translate, with
// and without timestamps, a free language), from its features and from its 16 kHz WAV; language
// detection; the ASR pipeline's text of the 44 s clip; and token times (speech/
// whisper_token_timestamps.json, tools/codegen/whisper/make_speech_goldens.py).
#include "ordo/speech.h"

#include <algorithm>
#include <cmath>
#include <regex>
#include <thread>

#include <gtest/gtest.h>

#include "io/file.h"
#include "ordo/translator.h"
#include "support/fixtures.h"
#include "support/golden_arrays.h"

namespace ordo {
namespace {

using Ids = std::vector<int64_t>;

const SpeechRecognizer& whisper() {
  static const SpeechRecognizer recognizer(testing::fixture_dir("whisper"));
  return recognizer;
}
const nlohmann::json& speech_json() {
  static const nlohmann::json golden = testing::load_fixture_json("whisper", "speech.json");
  return golden;
}
std::string clip_path(const std::string& wav) { return testing::fixture_dir("whisper") + "/audio/" + wav; }
std::vector<float> features_of(const std::string& wav) {
  const std::string name = wav.substr(0, wav.size() - 4);  // en_16k.wav -> en_16k
  return testing::read_npy_float32(testing::fixture_dir("whisper") + "/features/" + name + ".npy");
}
DecodeOptions golden_decoding(int beams) {
  DecodeOptions o;
  o.beam_size = beams;
  o.max_new_tokens = 32;
  return o;
}
std::string language_of(const nlohmann::json& c) {
  return c["language"].is_null() ? "" : c["language"].get<std::string>();
}
std::string case_name(const nlohmann::json& c) {
  return c["audio"].get<std::string>() + " " + c["task"].get<std::string>() + " " + language_of(c) +
         (c["timestamps"].get<bool>() ? " timestamps" : "");
}

TEST(SpeechRecognizer, GreedyIdsMatchTransformersForEveryCase) {
  for (const auto& c : speech_json()["cases"]) {
    SCOPED_TRACE(case_name(c));
    const SpeechGeneration g =
        whisper().generate({features_of(c["audio"])}, language_of(c), c["task"], c["timestamps"], golden_decoding(1));
    ASSERT_EQ(g.ids.size(), 1u);
    EXPECT_EQ(g.ids[0], c["greedy_ids"].get<Ids>());
  }
}

TEST(SpeechRecognizer, BeamIdsMatchTransformersForEveryCase) {
  for (const auto& c : speech_json()["cases"]) {
    SCOPED_TRACE(case_name(c));
    const SpeechGeneration g =
        whisper().generate({features_of(c["audio"])}, language_of(c), c["task"], c["timestamps"], golden_decoding(4));
    ASSERT_EQ(g.ids.size(), 1u);
    Ids expected = c["beam4_ids"].get<Ids>();
    const auto end = std::find(expected.begin() + 1, expected.end(), 50257);  // beams are padded after EOS
    if (end != expected.end()) expected.erase(end + 1, expected.end());
    EXPECT_EQ(g.ids[0], expected);
  }
}

TEST(SpeechRecognizer, FeaturesOfTheWavsGiveTheSameIds) {
  for (const auto& c : speech_json()["cases"]) {
    SCOPED_TRACE(case_name(c));
    const std::vector<float> f = whisper().features(read_audio(clip_path(c["audio"])));
    const SpeechGeneration g = whisper().generate({f}, language_of(c), c["task"], c["timestamps"], golden_decoding(1));
    EXPECT_EQ(g.ids.at(0), c["greedy_ids"].get<Ids>());
  }
}

TEST(SpeechRecognizer, WindowsDecodedTogetherGiveEachItsOwnIds) {
  std::vector<std::vector<float>> batch;
  std::vector<Ids> expected;
  for (const auto& c : speech_json()["cases"])
    if (c["task"] == "transcribe" && c["language"] == "en" && !c["timestamps"].get<bool>()) {
      batch.push_back(features_of(c["audio"]));
      expected.push_back(c["greedy_ids"].get<Ids>());
    }
  ASSERT_EQ(batch.size(), 2u);  // en and en_long
  const SpeechGeneration g = whisper().generate(batch, "en", "transcribe", false, golden_decoding(1));
  EXPECT_EQ(g.ids, expected);
}

TEST(SpeechRecognizer, DecodeDropsSpecialAndTimestampTokens) {
  // transformers' decode(skip_special_tokens=True) writes the timestamps a model made without
  // the timestamp rules ("<|14.30|>"); ordo's decode() leaves them out.
  const std::regex timestamp("<\\|[0-9]+\\.[0-9]{2}\\|>");
  for (const auto& c : speech_json()["cases"]) {
    if (c["timestamps"].get<bool>()) continue;
    SCOPED_TRACE(case_name(c));
    EXPECT_EQ(whisper().decode(c["greedy_ids"].get<Ids>()),
              std::regex_replace(c["greedy_text"].get<std::string>(), timestamp, ""));
  }
}

TEST(SpeechRecognizer, DecodeWithTimestampsWritesThemAsTransformersDoes) {
  for (const auto& c : speech_json()["cases"]) {
    if (!c["timestamps"].get<bool>()) continue;
    SCOPED_TRACE(case_name(c));
    EXPECT_EQ(whisper().decode_with_timestamps(c["greedy_ids"].get<Ids>()), c["greedy_text"].get<std::string>());
  }
}

TEST(SpeechRecognizer, DetectLanguageMatchesOpenaiWhisperWithin1e4) {
  for (const auto& [clip, golden] : speech_json()["language_detection"].items()) {
    SCOPED_TRACE(clip);
    const auto detected = whisper().detect_language(read_audio(clip_path(clip + "_16k.wav")));
    ASSERT_GE(detected.size(), 3u);
    for (size_t k = 0; k < 3; ++k) {
      const std::string token = golden["top3"][k]["token"];
      EXPECT_EQ("<|" + detected[k].first + "|>", token);
      EXPECT_NEAR(std::log(detected[k].second), golden["top3"][k]["logprob_among_languages"].get<double>(), 1e-4);
    }
  }
}

TEST(SpeechRecognizer, KnowsTheLanguagesOfAMultilingualModel) {
  EXPECT_TRUE(whisper().multilingual());
  EXPECT_EQ(whisper().languages().size(), 99u);
  EXPECT_EQ(whisper().n_mels(), 80);
}

TEST(SpeechRecognizer, ShortAudioIsOneWindowDecodedAsGenerate) {
  const nlohmann::json& c = speech_json()["cases"][2];  // en transcribe, timestamps
  ASSERT_TRUE(c["timestamps"].get<bool>());
  TranscribeOptions o;
  o.language = "en";
  o.decode = golden_decoding(1);
  const Transcription t = whisper().transcribe(read_audio(clip_path(c["audio"])), o);
  Ids tokens;
  for (const Segment& s : t.segments) tokens.insert(tokens.end(), s.tokens.begin(), s.tokens.end());
  const Ids ids = c["greedy_ids"].get<Ids>();
  EXPECT_EQ(tokens, Ids(ids.begin() + 3, ids.end()));  // after <|startoftranscript|><|en|><|transcribe|>
  EXPECT_EQ(t.language, "en");
  EXPECT_EQ(t.language_probability, 1.0f);
  EXPECT_NEAR(t.duration, 2.7847, 1e-4);
  ASSERT_FALSE(t.segments.empty());
  EXPECT_EQ(t.segments[0].start, 0.0);
}

TEST(SpeechRecognizer, AutoLanguageIsTheDetectedOne) {
  TranscribeOptions o;
  o.language = "auto";
  o.timestamps = false;
  o.decode = golden_decoding(1);
  const Transcription t = whisper().transcribe(read_audio(clip_path("en_16k.wav")), o);
  EXPECT_EQ(t.language, "az");  // the random model's top language for this clip
  EXPECT_NEAR(std::log(t.language_probability), -0.751746, 1e-4);
}

TEST(SpeechRecognizer, LongAudioWithoutTimestampsIsThePipelinesText) {
  const nlohmann::json& golden = speech_json()["long_form_pipeline"][0];
  ASSERT_FALSE(golden["timestamps"].get<bool>());
  TranscribeOptions o;
  o.language = "en";
  o.timestamps = false;
  o.decode = golden_decoding(1);
  const Transcription t = whisper().transcribe(read_audio(clip_path("en_long_16k.wav")), o);
  EXPECT_EQ(t.text, golden["pipeline_output"]["text"].get<std::string>());
  ASSERT_EQ(t.segments.size(), 2u);
  EXPECT_DOUBLE_EQ(t.segments[0].end, 25.0);
  EXPECT_DOUBLE_EQ(t.segments[1].start, 25.0);
  EXPECT_NEAR(t.segments[1].end, 708836 / 16000.0, 1e-9);
}

TEST(SpeechRecognizer, LongAudioWithTimestampsGoesWindowAfterWindow) {
  TranscribeOptions o;
  o.language = "en";
  o.decode = golden_decoding(1);
  std::vector<double> done;
  o.on_progress = [&](double seconds, double total) {
    EXPECT_NEAR(total, 44.3, 0.01);
    done.push_back(seconds);
    return true;
  };
  const Transcription t = whisper().transcribe(read_audio(clip_path("en_long_16k.wav")), o);
  ASSERT_GE(done.size(), 2u);
  EXPECT_TRUE(std::is_sorted(done.begin(), done.end()));
  EXPECT_NEAR(done.back(), 44.3, 0.01);
  for (size_t i = 0; i < t.segments.size(); ++i) {
    EXPECT_EQ(t.segments[i].id, static_cast<int64_t>(i));
    EXPECT_LE(t.segments[i].start, t.segments[i].end);
    if (i > 0) EXPECT_LE(t.segments[i - 1].start, t.segments[i].start);
  }
}

TEST(SpeechRecognizer, ProgressAnsweringFalseStopsAfterTheFirstWindow) {
  TranscribeOptions o;
  o.language = "en";
  o.timestamps = false;
  o.batching.batch_size = 1;
  o.decode = golden_decoding(1);
  int windows = 0;
  o.on_progress = [&](double, double) { return ++windows < 1; };
  const Transcription t = whisper().transcribe(read_audio(clip_path("en_long_16k.wav")), o);
  EXPECT_EQ(windows, 1);
  ASSERT_EQ(t.segments.size(), 1u);
  EXPECT_DOUBLE_EQ(t.segments[0].start, 0.0);
}

TEST(SpeechRecognizer, CancelledStopsTheCall) {
  TranscribeOptions o;
  o.language = "en";
  o.decode.cancelled = [] { return true; };
  try {
    whisper().transcribe(read_audio(clip_path("en_16k.wav")), o);
    FAIL() << "not cancelled";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "cancelled");
  }
}

TEST(SpeechRecognizer, WordTimesAreTransformersTokenTimestamps) {
  const nlohmann::json golden =
      nlohmann::json::parse(io::read_regular_file(testing::data_dir() + "/speech/whisper_token_timestamps.json"));
  for (const auto& c : golden["cases"]) {
    SCOPED_TRACE(c["clip"].get<std::string>() + (c["timestamps"].get<bool>() ? " timestamps" : ""));
    TranscribeOptions o;
    o.language = c["language"];
    o.task = c["task"];
    o.timestamps = c["timestamps"];
    o.word_timestamps = true;
    o.decode = golden_decoding(1);
    const Transcription t = whisper().transcribe(read_audio(clip_path(c["clip"].get<std::string>() + "_16k.wav")), o);
    std::vector<Word> words;
    for (const Segment& s : t.segments) words.insert(words.end(), s.words.begin(), s.words.end());
    ASSERT_EQ(words.size(), c["words"].size());
    for (size_t i = 0; i < words.size(); ++i) {
      const nlohmann::json& w = c["words"][i];
      EXPECT_EQ(words[i].word, w["word"].get<std::string>());
      EXPECT_NEAR(words[i].start, std::round(w["start"].get<double>() * 100) / 100, 1e-9) << i;
      if (!w["end"].is_null()) EXPECT_NEAR(words[i].end, std::round(w["end"].get<double>() * 100) / 100, 1e-9) << i;
      EXPECT_GT(words[i].probability, 0.0f);
    }
  }
}

TEST(SpeechRecognizer, AnInitialPromptIsGeneratesPromptIds) {
  const nlohmann::json golden =
      nlohmann::json::parse(io::read_regular_file(testing::data_dir() + "/speech/whisper_token_timestamps.json"));
  for (const auto& c : golden["prompted"]) {
    const bool timestamps = c["timestamps"];
    SCOPED_TRACE(timestamps ? "timestamps" : "no timestamps");
    TranscribeOptions o;
    o.language = "en";
    o.timestamps = timestamps;
    o.initial_prompt = c["prompt"];
    o.decode = golden_decoding(1);
    const Transcription t = whisper().transcribe(read_audio(clip_path("en_16k.wav")), o);
    const Ids ids = c["ids"].get<Ids>();
    if (timestamps) {
      Ids tokens;
      for (const Segment& s : t.segments) tokens.insert(tokens.end(), s.tokens.begin(), s.tokens.end());
      // After <|startofprev|>, the prompt, <|startoftranscript|><|en|><|transcribe|>.
      const size_t generated = c["prompt_ids"].size() + 3;
      Ids expected(ids.begin() + static_cast<std::ptrdiff_t>(generated), ids.end());
      if (!expected.empty() && expected.back() == 50257) expected.pop_back();
      EXPECT_EQ(tokens, expected);
    } else {
      EXPECT_EQ(t.text, whisper().decode(ids));
    }
  }
}

TEST(SpeechRecognizer, FailingWindowsAreSampledAtTheNextTemperature) {
  for (const bool timestamps : {true, false}) {
    SCOPED_TRACE(timestamps ? "timestamps" : "no timestamps");
    TranscribeOptions o;
    o.language = "en";
    o.timestamps = timestamps;
    o.temperatures = {0.0f, 0.5f, 1.0f};
    o.compression_ratio_threshold = 0.0f;  // every text fails: the last temperature stays
    o.decode = golden_decoding(1);
    const Transcription t = whisper().transcribe(read_audio(clip_path("en_long_16k.wav")), o);
    ASSERT_FALSE(t.segments.empty());
    for (const Segment& s : t.segments) EXPECT_EQ(s.temperature, 1.0f);
  }
}

TEST(SpeechRecognizer, SegmentsCarryTheirWindowsStatistics) {
  TranscribeOptions o;
  o.language = "en";
  o.decode = golden_decoding(1);
  const Transcription t = whisper().transcribe(read_audio(clip_path("en_16k.wav")), o);
  ASSERT_FALSE(t.segments.empty());
  for (const Segment& s : t.segments) {
    EXPECT_GT(s.no_speech_prob, 0.0);
    EXPECT_LT(s.no_speech_prob, 1.0);
    EXPECT_LT(s.avg_logprob, 0.0);
    EXPECT_GT(s.compression_ratio, 0.0);
  }
}

TEST(SpeechRecognizer, ConcurrentCallsGiveTheResultsOfSerialOnes) {
  const std::vector<float> samples = read_audio(clip_path("en_long_16k.wav"));
  TranscribeOptions o;
  o.language = "en";
  o.decode = golden_decoding(1);
  const std::string serial = whisper().transcribe(samples, o).text;
  std::vector<std::string> texts(3);
  std::vector<std::thread> threads;
  for (std::string& text : texts) threads.emplace_back([&] { text = whisper().transcribe(samples, o).text; });
  for (std::thread& t : threads) t.join();
  for (const std::string& text : texts) EXPECT_EQ(text, serial);
}

TEST(SpeechRecognizer, UnknownLanguageIsRefusedNamingIt) {
  TranscribeOptions o;
  o.language = "xx";
  try {
    whisper().transcribe(read_audio(clip_path("en_16k.wav")), o);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'xx'"), std::string::npos) << e.what();
  }
}

TEST(SpeechRecognizer, FeaturesOfTheWrongSizeAreRefused) {
  EXPECT_THROW(whisper().generate({std::vector<float>(100)}, "en", "transcribe", false), Error);
}

TEST(SpeechRecognizer, ATextModelFolderIsRefused) {
  try {
    SpeechRecognizer r(testing::fixture_dir("marian_opus_en_mg"));
    FAIL() << "loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a speech model"), std::string::npos) << e.what();
  }
}

TEST(SpeechRecognizer, ATranslatorRefusesAWhisperFolderPointingAtSpeechRecognizer) {
  try {
    Translator t(testing::fixture_dir("whisper"));
    FAIL() << "loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("SpeechRecognizer"), std::string::npos) << e.what();
  }
}

TEST(SpeechRecognizer, AMovedFromRecognizerSaysSo) {
  SpeechRecognizer a(testing::fixture_dir("whisper"));
  SpeechRecognizer b(std::move(a));
  EXPECT_THROW(a.n_mels(), Error);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(b.n_mels(), 80);
}

}  // namespace
}  // namespace ordo
