// OpenAI's audio API through `ordo serve` (the real binary on 127.0.0.1, an ephemeral port, the
// tiny random-weight Whisper of tests/data/hf/whisper beside the bundled en-de): POST
// /v1/audio/transcriptions and /translations take a multipart upload as OpenAI's clients send
// it and answer each response format; a speech model is offered by no text route and a text
// model by no audio route; every refusal is OpenAI's {"error": {"message", "type", "param",
// "code"}} with its status; keys, limits, the timeout and a reload as the other routes have
// them. The model's words are garbage (random weights): the tests compare the formats of one
// transcription with each other, never with real words. Every wait is bounded.
// ctest-label: integration
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "server/en_de_suite.h"

namespace {

using nlohmann::json;
using namespace ordo::testing;

const std::string kTranscriptions = "/v1/audio/transcriptions";
const std::string kTranslations = "/v1/audio/translations";

std::string whisper_dir() { return fixture_dir("whisper"); }
// A clip of the Whisper fixture ("en_16k.wav"), or of tests/data/audio ("audio/en.webm").
std::string clip_path(const std::string& name) {
  return name.rfind("audio/", 0) == 0 ? data_dir() + "/" + name : whisper_dir() + "/audio/" + name;
}

using Fields = std::vector<std::pair<std::string, std::string>>;

// An upload as OpenAI's clients send it: the file part, then the fields (a repeated name: a list).
httplib::MultipartFormDataItems form(const std::string& clip, const Fields& fields = {}) {
  const std::string name = clip.substr(clip.find_last_of('/') + 1);
  httplib::MultipartFormDataItems items = {{"file", file_bytes(clip_path(clip)), name, "application/octet-stream"}};
  for (const auto& [field, value] : fields) items.push_back({field, value, "", ""});
  return items;
}

Answer post_form(const ServerProcess& server, const std::string& route, const httplib::MultipartFormDataItems& items,
                 const httplib::Headers& headers = {}) {
  return answer_of(server.client(120)->Post(route.c_str(), headers, items));
}

Answer transcribe(const ServerProcess& server, const std::string& clip, const Fields& fields = {},
                  const std::string& route = kTranscriptions) {
  return post_form(server, route, form(clip, fields));
}

// Whether `a` is OpenAI's error of `status` naming `param` (empty: null).
::testing::AssertionResult openai_error(const Answer& a, int status, const std::string& param) {
  if (a.status != status) return ::testing::AssertionFailure() << "status " << a.status << ": " << a.text;
  if (!a.body.is_object() || !a.body.contains("error") || !a.body["error"].is_object())
    return ::testing::AssertionFailure() << "not {\"error\": {...}}: " << a.text;
  const json& e = a.body["error"];
  if (!e["message"].is_string() || e["message"].get<std::string>().empty() || !e["type"].is_string() ||
      !e.contains("code") || !e.contains("param"))
    return ::testing::AssertionFailure() << "not OpenAI's fields (message, type, param, code): " << a.text;
  if (param.empty() ? !e["param"].is_null() : e["param"] != param)
    return ::testing::AssertionFailure() << "param is " << e["param"] << ", not '" << param << "': " << a.text;
  return ::testing::AssertionSuccess();
}

std::string message_of(const Answer& a) { return a.body["error"].value("message", ""); }

// Whether `text` holds `part`, saying where it is not.
::testing::AssertionResult has(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << part << "' is not in: " << text;
}

// `done` polled every 20 ms until it holds, at most `seconds`.
bool wait_for(const std::function<bool()>& done, double seconds) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

std::string trimmed(const std::string& s) {
  const size_t begin = s.find_first_not_of(" \t\r\n"), end = s.find_last_not_of(" \t\r\n");
  return begin == std::string::npos ? "" : s.substr(begin, end + 1 - begin);
}

// One server for the suite: the Whisper fixture and the bundled en-de.
class ServeAudio : public EnDeSuite {
 protected:
  static void SetUpTestSuite() { start({"--model", whisper_dir()}); }
  static const ServerProcess& server() { return *server_; }
  // verbose_json of en_16k.wav in English: the transcription the formats are compared with.
  static const json& english_verbose() {
    static const json verbose = [] {
      const Answer a = transcribe(*server_, "en_16k.wav", {{"language", "en"}, {"response_format", "verbose_json"}});
      if (a.status != 200) throw std::runtime_error("verbose_json: " + a.text);
      return a.body;
    }();
    return verbose;
  }
};

TEST_F(ServeAudio, V1ModelsListsTheSpeechModelInOpenAisShapeAndOrdos) {
  const Answer a = answer_of(server().client()->Get("/v1/models"));
  ASSERT_EQ(a.status, 200) << a.text;
  EXPECT_EQ(a.body["object"], "list");
  bool listed = false;
  for (const json& m : a.body["data"]) {
    EXPECT_EQ(m["object"], "model") << m;
    EXPECT_TRUE(m["created"].is_number_integer()) << m;
    EXPECT_EQ(m["owned_by"], "ordo") << m;
    listed = listed || m["id"] == "whisper";
  }
  EXPECT_TRUE(listed) << a.text;
  json whisper;
  for (const json& m : a.body["models"])
    if (m["name"] == "whisper") whisper = m;
  EXPECT_EQ(whisper["task"], "transcribe") << a.text;
  EXPECT_EQ(whisper["model_type"], "whisper") << a.text;
  EXPECT_EQ(whisper["multilingual"], true) << a.text;
  const auto languages = whisper["languages"].get<std::vector<std::string>>();
  EXPECT_NE(std::find(languages.begin(), languages.end(), "de"), languages.end()) << a.text;
}

TEST_F(ServeAudio, AClipIsTranscribedAsJsonHoldingItsText) {
  const Answer a = transcribe(server(), "en_16k.wav", {{"model", "whisper-1"}, {"language", "en"}});
  ASSERT_EQ(a.status, 200) << a.text;
  EXPECT_EQ(a.header("Content-Type").rfind("application/json", 0), 0u) << a.header("Content-Type");
  ASSERT_TRUE(a.body.is_object()) << a.text;
  EXPECT_EQ(a.body.size(), 1u) << a.text;
  EXPECT_EQ(a.body["text"], english_verbose()["text"]) << a.text;
}

TEST_F(ServeAudio, Whisper1AndNoModelAreTheFirstSpeechModel) {
  const Answer named = transcribe(server(), "en_16k.wav", {{"model", "whisper"}, {"language", "en"}});
  const Answer whisper1 = transcribe(server(), "en_16k.wav", {{"model", "whisper-1"}, {"language", "en"}});
  const Answer none = transcribe(server(), "en_16k.wav", {{"language", "en"}});
  ASSERT_EQ(named.status, 200) << named.text;
  EXPECT_EQ(whisper1.text, named.text);
  EXPECT_EQ(none.text, named.text);
}

TEST_F(ServeAudio, TheSameRequestGivesTheSameTranscript) {
  const Fields fields = {{"response_format", "verbose_json"}};
  const Answer first = transcribe(server(), "de_16k.wav", fields), second = transcribe(server(), "de_16k.wav", fields);
  ASSERT_EQ(first.status, 200) << first.text;
  EXPECT_EQ(first.text, second.text);
}

TEST_F(ServeAudio, TextIsTheSegmentsOneALineAsPlainText) {
  const Answer a = transcribe(server(), "en_16k.wav", {{"language", "en"}, {"response_format", "text"}});
  ASSERT_EQ(a.status, 200) << a.text;
  EXPECT_EQ(a.header("Content-Type").rfind("text/plain", 0), 0u) << a.header("Content-Type");
  std::string expected;
  for (const json& s : english_verbose()["segments"]) expected += trimmed(s["text"].get<std::string>()) + "\n";
  EXPECT_EQ(a.text, expected);
}

TEST_F(ServeAudio, VerboseJsonHasTheTaskLanguageDurationAndTimedSegments) {
  const json& v = english_verbose();
  EXPECT_EQ(v["task"], "transcribe");
  EXPECT_EQ(v["language"], "english");
  EXPECT_NEAR(v["duration"].get<double>(), (89154.0 - 44) / 32000, 0.01) << v;  // 16 kHz mono s16
  ASSERT_FALSE(v["segments"].empty()) << v;
  int64_t id = 0;
  for (const json& s : v["segments"]) {  // random weights: their times need not be in order
    EXPECT_EQ(s["id"], id++) << s;
    EXPECT_TRUE(s["start"].is_number() && s["end"].is_number()) << s;
    for (const char* key :
         {"seek", "text", "tokens", "temperature", "avg_logprob", "compression_ratio", "no_speech_prob"})
      EXPECT_TRUE(s.contains(key)) << key << " " << s;
  }
  EXPECT_FALSE(v.contains("words")) << v;
}

TEST_F(ServeAudio, TheLanguageIsDetectedWhenNotGiven) {
  const Answer a = transcribe(server(), "en_16k.wav", {{"response_format", "verbose_json"}});
  ASSERT_EQ(a.status, 200) << a.text;
  EXPECT_TRUE(a.body["language"].is_string()) << a.text;
  EXPECT_FALSE(a.body["language"].get<std::string>().empty()) << a.text;
}

TEST_F(ServeAudio, SrtIsNumberedCuesAsPlainText) {
  const Answer a = transcribe(server(), "en_16k.wav", {{"language", "en"}, {"response_format", "srt"}});
  ASSERT_EQ(a.status, 200) << a.text;
  EXPECT_EQ(a.header("Content-Type").rfind("text/plain", 0), 0u) << a.header("Content-Type");
  EXPECT_EQ(a.text.rfind("1\n00:00:", 0), 0u) << a.text;
  EXPECT_TRUE(has(a.text, " --> "));
}

TEST_F(ServeAudio, VttIsWebVttAsPlainText) {
  const Answer a = transcribe(server(), "en_16k.wav", {{"language", "en"}, {"response_format", "vtt"}});
  ASSERT_EQ(a.status, 200) << a.text;
  EXPECT_EQ(a.header("Content-Type").rfind("text/plain", 0), 0u) << a.header("Content-Type");
  EXPECT_EQ(a.text.rfind("WEBVTT\n\n00:00:", 0), 0u) << a.text;
}

TEST_F(ServeAudio, WordGranularityAloneGivesTheWordsWithoutSegments) {
  const Answer a =
      transcribe(server(), "en_16k.wav",
                 {{"language", "en"}, {"response_format", "verbose_json"}, {"timestamp_granularities[]", "word"}});
  ASSERT_EQ(a.status, 200) << a.text;
  EXPECT_FALSE(a.body.contains("segments")) << a.text;
  ASSERT_TRUE(a.body.contains("words")) << a.text;
  for (const json& w : a.body["words"]) {
    EXPECT_TRUE(w["word"].is_string()) << w;
    EXPECT_TRUE(w["start"].is_number() && w["end"].is_number()) << w;
  }
}

TEST_F(ServeAudio, BothGranularitiesGiveSegmentsAndWords) {
  const Answer a = transcribe(server(), "en_16k.wav",
                              {{"language", "en"},
                               {"response_format", "verbose_json"},
                               {"timestamp_granularities[]", "word"},
                               {"timestamp_granularities[]", "segment"}});
  ASSERT_EQ(a.status, 200) << a.text;
  EXPECT_TRUE(a.body.contains("segments")) << a.text;
  EXPECT_TRUE(a.body.contains("words")) << a.text;
}

TEST_F(ServeAudio, GranularitiesWithoutVerboseJsonAreA400) {
  const Answer a = transcribe(server(), "en_16k.wav", {{"timestamp_granularities[]", "word"}});
  EXPECT_TRUE(openai_error(a, 400, "timestamp_granularities"));
  EXPECT_TRUE(has(message_of(a), "verbose_json"));
}

TEST_F(ServeAudio, TheTranslationsRouteRunsTheTranslateTask) {
  const Answer a =
      transcribe(server(), "de_16k.wav", {{"model", "whisper-1"}, {"response_format", "verbose_json"}}, kTranslations);
  ASSERT_EQ(a.status, 200) << a.text;
  EXPECT_EQ(a.body["task"], "translate");
  EXPECT_TRUE(a.body["text"].is_string()) << a.text;
}

TEST_F(ServeAudio, TranslationsTakeNoLanguage) {
  const Answer a = transcribe(server(), "de_16k.wav", {{"language", "de"}}, kTranslations);
  EXPECT_TRUE(openai_error(a, 400, "language"));
}

TEST_F(ServeAudio, ABrowsersWebmOpusRecordingIsTranscribed) {
  const Answer a = transcribe(server(), "audio/en.webm", {{"response_format", "verbose_json"}});
  ASSERT_EQ(a.status, 200) << a.text;
  EXPECT_NEAR(a.body["duration"].get<double>(), 3.0, 0.5) << a.text;
}

TEST_F(ServeAudio, AnMp3IsTranscribed) { EXPECT_EQ(transcribe(server(), "audio/en.mp3").status, 200); }

TEST_F(ServeAudio, APromptAndATemperatureAreTaken) {
  const Answer a = transcribe(
      server(), "en_16k.wav",
      {{"prompt", "Hello, welcome to the show."}, {"temperature", "0.3"}, {"response_format", "verbose_json"}});
  ASSERT_EQ(a.status, 200) << a.text;
  for (const json& s : a.body["segments"]) EXPECT_NEAR(s["temperature"].get<double>(), 0.3, 1e-6) << s;
}

TEST_F(ServeAudio, APromptThatIsNotUtf8IsA400NamingIt) {
  EXPECT_TRUE(openai_error(transcribe(server(), "en_16k.wav", {{"prompt", "caf\xe9"}}), 400, "prompt"));
}

TEST_F(ServeAudio, ATemperatureOutsideZeroToOneIsA400NamingIt) {
  EXPECT_TRUE(openai_error(transcribe(server(), "en_16k.wav", {{"temperature", "1.5"}}), 400, "temperature"));
  EXPECT_TRUE(openai_error(transcribe(server(), "en_16k.wav", {{"temperature", "warm"}}), 400, "temperature"));
}

TEST_F(ServeAudio, AResponseFormatOpenAiHasNotIsA400NamingTheFormats) {
  const Answer a = transcribe(server(), "en_16k.wav", {{"response_format", "tsv"}});
  EXPECT_TRUE(openai_error(a, 400, "response_format"));
  EXPECT_TRUE(has(message_of(a), "json, text, srt, verbose_json, vtt"));
}

TEST_F(ServeAudio, AnUnknownFieldIsA400NamingIt) {
  const Answer a = transcribe(server(), "en_16k.wav", {{"colour", "blue"}});
  EXPECT_TRUE(openai_error(a, 400, "colour"));
}

TEST_F(ServeAudio, StreamingIsA400) {
  EXPECT_TRUE(openai_error(transcribe(server(), "en_16k.wav", {{"stream", "true"}}), 400, "stream"));
}

TEST_F(ServeAudio, AnUnknownModelIsA400NamingTheSpeechModels) {
  const Answer a = transcribe(server(), "en_16k.wav", {{"model", "gpt-4o-transcribe"}});
  EXPECT_TRUE(openai_error(a, 400, "model"));
  EXPECT_EQ(a.body["error"]["code"], "model_not_found");
  EXPECT_TRUE(has(message_of(a), "served speech models: whisper"));
}

TEST_F(ServeAudio, ATranslationModelIsNotASpeechModel) {
  const Answer a = transcribe(server(), "en_16k.wav", {{"model", "en-de"}});
  EXPECT_TRUE(openai_error(a, 400, "model"));
  EXPECT_TRUE(has(message_of(a), "not a speech model"));
}

TEST_F(ServeAudio, TheTextRoutesDoNotOfferTheSpeechModel) {
  for (const char* route : {"/v1/translate", "/v1/summarize"}) {
    const Answer a = answer_of(
        server().client()->Post(route, json{{"text", "Hello."}, {"model", "whisper"}}.dump(), "application/json"));
    EXPECT_EQ(a.status, 400) << route << " " << a.text;
    EXPECT_TRUE(has(a.body.value("error", ""), "is a speech model")) << route;
  }
  EXPECT_EQ(libre_translated({"Hello."}).size(), 1u);  // en-de still translates
  const Answer languages = answer_of(server().client()->Get("/languages"));
  EXPECT_EQ(languages.body.size(), 2u) << languages.text;  // en and de: no language of the speech model
}

TEST_F(ServeAudio, AnUnknownLanguageIsA400NamingIt) {
  const Answer a = transcribe(server(), "en_16k.wav", {{"language", "xx"}});
  EXPECT_TRUE(openai_error(a, 400, "language"));
  EXPECT_TRUE(has(message_of(a), "'xx'"));
}

TEST_F(ServeAudio, AFileThatIsNotAudioIsA400InvalidFile) {
  const Answer a = post_form(server(), kTranscriptions, {{"file", "this is not audio", "notes.txt", "text/plain"}});
  EXPECT_TRUE(openai_error(a, 400, "file"));
  EXPECT_EQ(a.body["error"]["code"], "invalid_file");
  EXPECT_TRUE(has(message_of(a), "notes.txt"));
}

TEST_F(ServeAudio, AnEmptyFileIsA400) {
  EXPECT_TRUE(
      openai_error(post_form(server(), kTranscriptions, {{"file", "", "empty.wav", "audio/wav"}}), 400, "file"));
}

TEST_F(ServeAudio, AnUploadWithoutAFileIsA400NamingFile) {
  const Answer a = post_form(server(), kTranscriptions, {{"model", "whisper-1", "", ""}});
  EXPECT_TRUE(openai_error(a, 400, "file"));
}

TEST_F(ServeAudio, AJsonBodyIsA400AskingForMultipart) {
  const Answer a =
      answer_of(server().client()->Post(kTranscriptions.c_str(), "{\"model\": \"whisper-1\"}", "application/json"));
  EXPECT_TRUE(openai_error(a, 400, "file"));
  EXPECT_TRUE(has(message_of(a), "multipart/form-data"));
}

TEST_F(ServeAudio, TheRoutesAreCountedInTheMetrics) {
  ASSERT_EQ(transcribe(server(), "en_16k.wav", {}, kTranslations).status, 200);
  MetricsWatch watch(server().port());
  EXPECT_TRUE(watch.wait_until(R"(ordo_http_requests_total{route="/v1/audio/translations",status="200"})",
                               [](double v) { return v >= 1; }, 10));
}

TEST_F(ServeAudio, TheAccessLogNamesTheSpeechModel) {
  const Answer a = post_form(server(), kTranscriptions, form("en_16k.wav"), {{"X-Request-Id", "audio-log-1"}});
  ASSERT_EQ(a.status, 200) << a.text;
  json line;
  EXPECT_TRUE(wait_for(
      [&] {
        std::istringstream in(server().stderr_text());
        for (std::string text; std::getline(in, text);)
          if (text.find("\"audio-log-1\"") != std::string::npos) line = json::parse(text);
        return !line.is_null();
      },
      10));
  EXPECT_EQ(line["route"], kTranscriptions) << line;
  EXPECT_EQ(line["model"], "whisper") << line;
}

TEST_F(ServeAudio, FrontendSettingsGiveTheAudioLimits) {
  const Answer a = answer_of(server().client()->Get("/frontend/settings"));
  ASSERT_EQ(a.status, 200);
  EXPECT_EQ(a.body["maxAudioBytes"], 25 << 20);
  EXPECT_EQ(a.body["maxAudioSeconds"], 7200);
}

// A server of the Whisper fixture alone, with API keys.
class ServeAudioKeys : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    const std::string keys = dir_->write("keys.txt", "k-audio\nk-once name=once req_limit=1\n");
    server_ = new ServerProcess({"--model", whisper_dir(), "--threads", "1", "--api-keys", keys});
  }
  static void TearDownTestSuite() {
    delete server_;
    delete dir_;
  }
  static Answer with_key(const std::string& key, const std::string& route = kTranscriptions) {
    return post_form(*server_, route, form("en_16k.wav"), {{"Authorization", "Bearer " + key}});
  }
  static inline ServerProcess* server_ = nullptr;
  static inline TempDir* dir_ = nullptr;
};

TEST_F(ServeAudioKeys, ABearerKeyIsAccepted) { EXPECT_EQ(with_key("k-audio").status, 200); }

TEST_F(ServeAudioKeys, AMissingKeyIsA401InOpenAisShape) {
  const Answer a = transcribe(*server_, "en_16k.wav");
  EXPECT_TRUE(openai_error(a, 401, ""));
  EXPECT_EQ(a.body["error"]["code"], "invalid_api_key");
}

TEST_F(ServeAudioKeys, AWrongKeyIsA401) { EXPECT_TRUE(openai_error(with_key("k-wrong"), 401, "")); }

TEST_F(ServeAudioKeys, TheKeysRequestLimitIsA429RateLimitError) {
  EXPECT_EQ(with_key("k-once", kTranslations).status, 200);
  const Answer a = with_key("k-once", kTranslations);
  EXPECT_TRUE(openai_error(a, 429, ""));
  EXPECT_EQ(a.body["error"]["type"], "requests");
  EXPECT_FALSE(a.header("Retry-After").empty());
}

TEST_F(ServeAudioKeys, AServerOfOnlyASpeechModelTranslatesNoText) {
  const Answer languages = answer_of(server_->client()->Get("/languages"));
  EXPECT_EQ(languages.body, json::array()) << languages.text;
  const Answer a = answer_of(server_->client()->Post(
      "/translate", json{{"q", "Hello."}, {"source", "en"}, {"target", "de"}, {"api_key", "k-audio"}}.dump(),
      "application/json"));
  EXPECT_EQ(a.status, 400) << a.text;
}

TEST(ServeAudioLimits, AFileOverMaxAudioBytesIsA413NamingTheFlag) {
  ServerProcess server({"--model", whisper_dir(), "--threads", "1", "--max-audio-bytes", "20000"});
  const Answer a = transcribe(server, "en_16k.wav");  // 89154 bytes
  EXPECT_TRUE(openai_error(a, 413, "file"));
  EXPECT_TRUE(has(message_of(a), "--max-audio-bytes"));
  EXPECT_EQ(transcribe(server, "audio/en.mp3").status, 200);  // 12845 bytes
}

TEST(ServeAudioLimits, AudioLongerThanMaxAudioSecondsIsA400NamingTheFile) {
  ServerProcess server({"--model", whisper_dir(), "--threads", "1", "--max-audio-seconds", "2"});
  const Answer a = transcribe(server, "en_16k.wav");  // 2.8 s
  EXPECT_TRUE(openai_error(a, 400, "file"));
  EXPECT_TRUE(has(message_of(a), "en_16k.wav"));
  // 1.5 s, at one temperature (no fallback: quick on silence).
  EXPECT_EQ(transcribe(server, "silence_16k.wav", {{"temperature", "0.5"}}).status, 200);
}

TEST(ServeAudioLimits, ATranscriptionPastTheTimeoutIsA504) {
  ServerProcess server({"--model", whisper_dir(), "--threads", "1", "--file-timeout", "0.01"});
  const Answer a = transcribe(server, "en_long_16k.wav");  // 44 s: two windows
  EXPECT_TRUE(openai_error(a, 504, ""));
  EXPECT_TRUE(has(message_of(a), "--file-timeout"));
  EXPECT_EQ(answer_of(server.client()->Get("/health")).status, 200);
}

// A reload (POST /admin/reload) that renames the speech model loads it under its new name.
TEST(ServeAudioReload, AReloadServesTheSpeechModelUnderItsNewName) {
  TempDir dir;
  const std::string models = dir.file("models.json");
  const auto write_models = [&](const std::string& name) {
    std::ofstream(models) << json{{"models", {{{"name", name}, {"path", whisper_dir()}}}}}.dump();
  };
  write_models("whisper-old");
  const std::string admin = dir.write("admin.txt", "k-admin\n");
  ServerProcess server({"--models", models, "--threads", "1", "--admin-key", admin});
  ASSERT_EQ(transcribe(server, "en_16k.wav", {{"model", "whisper-old"}}).status, 200);
  write_models("whisper-new");
  const Answer reload =
      answer_of(server.client()->Post("/admin/reload", {{"Authorization", "Bearer k-admin"}}, "", "text/plain"));
  ASSERT_EQ(reload.status, 200) << reload.text;
  EXPECT_EQ(reload.body["loaded"], json::array({"whisper-new"})) << reload.text;
  EXPECT_EQ(transcribe(server, "en_16k.wav", {{"model", "whisper-new"}}).status, 200);
  EXPECT_TRUE(openai_error(transcribe(server, "en_16k.wav", {{"model", "whisper-old"}}), 400, "model"));
}

}  // namespace
