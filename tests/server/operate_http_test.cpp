// Operating `ordo serve` for months, with the real binary on 127.0.0.1 (ephemeral
// ports): reloading the models without downtime (SIGHUP and POST /admin/reload; requests in
// flight finish on the old model, new ones use the new one, a broken folder keeps the old one,
// a removed model leaves /languages and returns its memory), per-key limits (429 with
// Retry-After, the window resets, the limits in /metrics without the keys), the JSON access-log
// line and the X-Request-Id header. Every wait is bounded.
// ctest-label: integration
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>

#include "server/server_process.h"
#include "support/fixtures.h"
#include "support/sanitizer.h"
#include "support/temp_dir.h"

namespace {

using nlohmann::json;
using ordo::testing::ServerProcess;
using ordo::testing::TempDir;

using ordo::testing::Answer;
using ordo::testing::answer_of;

Answer post(const ServerProcess& server, const std::string& path, const json& body,
            const httplib::Headers& headers = {}) {
  return answer_of(server.client()->Post(path.c_str(), headers, body.dump(), "application/json"));
}

Answer get(const ServerProcess& server, const std::string& path) {
  return answer_of(server.client()->Get(path.c_str()));
}

double metric(const std::string& metrics_text, const std::string& sample) {
  const size_t at = metrics_text.find("\n" + sample + " ");
  if (at == std::string::npos) return -1;
  return std::stod(metrics_text.substr(at + sample.size() + 2));
}

std::vector<std::string> sample_lines(size_t n) {
  std::ifstream in(ordo::testing::data_dir() + "/samples/multi30k_val100.en");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line) && lines.size() < n;) lines.push_back(line);
  return lines;
}

std::vector<std::string> texts_of(const Answer& a) {
  std::vector<std::string> out;
  for (const json& r : a.body["results"]) out.push_back(r["text"]);
  return out;
}

// Resident memory of a process, in MB (VmRSS).
double rss_mb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return -1;
}

// Waits (at most `seconds`) until `done` holds, checking every 20 ms.
template <typename F>
bool eventually(double seconds, F done) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

// The JSON access-log lines in `text` (other lines, such as "ordo serve: ...", skipped). Like
// any reader of a live log, only whole lines: a last one without its newline is being written.
std::vector<json> log_lines(const std::string& text) {
  std::vector<json> out;
  const std::string whole = text.substr(0, text.rfind('\n') + 1);
  std::istringstream in(whole);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] == '{') out.push_back(json::parse(line));
  return out;
}

json log_line_with_id(const std::string& text, const std::string& id) {
  for (const json& line : log_lines(text))
    if (line.value("id", "") == id) return line;
  return nullptr;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Reloading under load, run once for the suite (two model loads per start and a long
// request make a server start the costly part) and looked at by one test per behaviour:
//   1. m and ende are en-de; a long request to m is in flight when SIGHUP makes m de-en,
//      adds deen and keeps ende;
//   2. the admin route is asked without the right key;
//   3. m is pointed at a broken folder and ende removed (POST /admin/reload); then SIGTERM.
// What each step gave is kept in `Seen`; no test changes the server.
class ServeReloadUnderLoad : public ::testing::Test {
 protected:
  struct Seen {
    std::vector<std::string> lines;  // the long request's
    json german, to_m;               // a de-en request, and the same to m
    bool in_flight_before_reload = false, done_before_reload = false, sighup_reported = false;
    std::string stderr_after_sighup;
    Answer new_m, new_deen, in_flight, ende;
    bool old_m_unloaded = false;
    std::string stderr_after_first_stage;
    int no_key = 0, wrong_key = 0, name_as_key = 0;  // POST /admin/reload's statuses
    std::string broken;                              // the broken folder
    Answer broken_report, m_after_broken, ende_after_removal, languages_after_removal;
    std::string stderr_after_broken;
    bool ende_unloaded = false;
    double rss_before = 0, rss_after = 0;
    bool rss_returned = false;
    std::string metrics;
    int exit_status = -1;
  };

  static void SetUpTestSuite() {
    seen_ = new Seen;
    dir_ = new TempDir;
    Seen& seen = *seen_;
    TempDir& dir = *dir_;
    const std::string models = dir.file("models.json");
    dir.write("models.json", R"({"models": [{"name": "m", "path": "en-de"}, {"name": "ende", "path": "en-de"}]})");
    dir.write("admin.txt", "admin-secret-5d1e name=ops\n");
    ServerProcess server({"--models", models, "--admin-key", dir.file("admin.txt"), "--threads", "1", "--batch-size",
                          "4", "--log-text"});

    // 1. A long request to m (en-de): 200 sentences, 4 per batch.
    seen.lines = sample_lines(100);
    seen.lines.insert(seen.lines.end(), seen.lines.begin(), seen.lines.end());
    std::atomic<bool> in_flight_done{false};
    std::thread client([&] {
      seen.in_flight = post(server, "/v1/translate", json{{"model", "m"}, {"text", seen.lines}, {"beam_size", 1}});
      in_flight_done = true;
    });
    {
      ordo::testing::MetricsWatch watch(server.port());
      seen.in_flight_before_reload = watch.wait_until(
          "ordo_http_requests_in_flight", [](double n) { return n >= 1; }, 30);
    }
    dir.write("models.json", R"({"models": [{"name": "m", "path": "de-en"}, {"name": "ende", "path": "en-de"},
                                            {"name": "deen", "path": "de-en"}]})");
    ::kill(server.pid(), SIGHUP);
    seen.sighup_reported =
        eventually(60, [&] { return server.stderr_text().find("reload (SIGHUP): ") != std::string::npos; });
    seen.stderr_after_sighup = server.stderr_text();
    seen.done_before_reload = in_flight_done;
    seen.german = {{"text", "Ein Mann fährt mit dem Fahrrad die Straße entlang."}, {"beam_size", 1}};
    seen.to_m = seen.german;
    seen.to_m["model"] = "m";
    json to_deen = seen.german;
    to_deen["model"] = "deen";
    seen.new_m = post(server, "/v1/translate", seen.to_m, {{"X-Request-Id", "reload-new-m"}});
    seen.new_deen = post(server, "/v1/translate", to_deen);
    client.join();
    seen.ende = post(server, "/v1/translate", json{{"model", "ende"}, {"text", seen.lines}, {"beam_size", 1}});
    seen.old_m_unloaded =
        eventually(10, [&] { return server.stderr_text().find("ordo serve: unloaded m") != std::string::npos; });
    seen.stderr_after_first_stage = server.stderr_text();

    // 2. POST /admin/reload without the admin key.
    seen.no_key = post(server, "/admin/reload", json::object()).status;
    seen.wrong_key =
        post(server, "/admin/reload", json::object(), {{"Authorization", "Bearer admin-secret-5d1e0"}}).status;
    seen.name_as_key = post(server, "/admin/reload", json{{"api_key", "ops"}}).status;

    // 3. m points at a broken folder, ende is removed.
    seen.broken = dir.file("broken");
    ::mkdir(seen.broken.c_str(), 0755);
    dir.write("broken/config.json", R"({"model_type": "marian"})");
    dir.write("models.json",
              R"({"models": [{"name": "m", "path": ")" + seen.broken + R"("}, {"name": "deen", "path": "de-en"}]})");
    seen.rss_before = rss_mb(server.pid());
    seen.broken_report = post(server, "/admin/reload", json::object(), {{"Authorization", "Bearer admin-secret-5d1e"}});
    seen.stderr_after_broken = server.stderr_text();
    seen.m_after_broken = post(server, "/v1/translate", seen.to_m);
    seen.ende_after_removal = post(server, "/v1/translate", json{{"model", "ende"}, {"text", "A dog."}});
    seen.languages_after_removal = get(server, "/languages");
    seen.ende_unloaded =
        eventually(10, [&] { return server.stderr_text().find("ordo serve: unloaded ende") != std::string::npos; });
    seen.rss_after = seen.rss_before;
    seen.rss_returned = eventually(10, [&] { return (seen.rss_after = rss_mb(server.pid())) < seen.rss_before - 25; });
    std::cout << "RSS before removing en-de " << seen.rss_before << " MB, after " << seen.rss_after << " MB\n";
    seen.metrics = get(server, "/metrics").text;
    seen.exit_status = server.stop(SIGTERM);
  }
  static void TearDownTestSuite() {
    delete seen_;
    seen_ = nullptr;
    delete dir_;
    dir_ = nullptr;
  }
  static const Seen& seen() { return *seen_; }
  static Seen* seen_;
  static TempDir* dir_;
};
ServeReloadUnderLoad::Seen* ServeReloadUnderLoad::seen_ = nullptr;
TempDir* ServeReloadUnderLoad::dir_ = nullptr;

TEST_F(ServeReloadUnderLoad, SighupLoadsTheChangedAndNewModelsAndKeepsTheOthers) {
  ASSERT_TRUE(seen().sighup_reported) << seen().stderr_after_sighup;
  EXPECT_NE(seen().stderr_after_sighup.find("ordo serve: reload (SIGHUP): ok; loaded m, deen; kept ende"),
            std::string::npos)
      << seen().stderr_after_sighup;
}

TEST_F(ServeReloadUnderLoad, TheLongRequestWasStillInFlightAtTheReload) {
  EXPECT_TRUE(seen().in_flight_before_reload) << "the long request was never in flight";
  EXPECT_FALSE(seen().done_before_reload)
      << "the long request ended before the reload: the test proves nothing; make it longer";
}

// New requests to m use the new model (de-en, as deen answers), while the old one finishes.
TEST_F(ServeReloadUnderLoad, NewRequestsUseTheNewModel) {
  ASSERT_EQ(seen().new_m.status, 200) << seen().new_m.text;
  EXPECT_EQ(seen().new_m.header("X-Request-Id"), "reload-new-m");
  EXPECT_EQ(seen().new_m.body["results"], seen().new_deen.body["results"]);
}

// The request in flight was answered by the old m, en-de, all of it: ende gives the same.
TEST_F(ServeReloadUnderLoad, TheRequestInFlightFinishesOnTheOldModel) {
  ASSERT_EQ(seen().in_flight.status, 200) << seen().in_flight.text;
  ASSERT_EQ(seen().ende.status, 200) << seen().ende.text;
  EXPECT_EQ(texts_of(seen().in_flight), texts_of(seen().ende));
  EXPECT_NE(texts_of(seen().in_flight)[0], seen().lines[0]);
}

TEST_F(ServeReloadUnderLoad, TheOldModelIsUnloadedOnceItsLastRequestIsAnswered) {
  EXPECT_TRUE(seen().old_m_unloaded) << seen().stderr_after_first_stage;
}

// --log-text: the access-log line holds the texts; the model is the one that answered.
TEST_F(ServeReloadUnderLoad, TheAccessLogLineNamesTheModelAndHoldsTheText) {
  const json logged = log_line_with_id(seen().stderr_after_first_stage, "reload-new-m");
  ASSERT_TRUE(logged.is_object()) << seen().stderr_after_first_stage.substr(0, 2000);
  EXPECT_EQ(logged["model"], "m");
  EXPECT_EQ(logged["text"], json::array({seen().german["text"]}));
  EXPECT_EQ(logged["chars"], 50);
}

TEST_F(ServeReloadUnderLoad, AdminReloadNeedsTheAdminKey) {
  EXPECT_EQ(seen().no_key, 403);
  EXPECT_EQ(seen().wrong_key, 403);
  EXPECT_EQ(seen().name_as_key, 403);  // the name is not the key
}

TEST_F(ServeReloadUnderLoad, ABrokenFolderIs422NamingTheModelAndItsFile) {
  const Answer& report = seen().broken_report;
  EXPECT_EQ(report.status, 422) << report.text;
  EXPECT_EQ(report.body["result"], "failed");
  EXPECT_EQ(report.body["kept"], json::array({"m", "deen"}));
  EXPECT_EQ(report.body["unloading"], json::array({"ende"}));
  ASSERT_EQ(report.body["errors"].size(), 1u) << report.text;
  EXPECT_EQ(report.body["errors"][0]["model"], "m");
  EXPECT_EQ(report.body["errors"][0]["serving"], "old");
  EXPECT_NE(report.body["errors"][0]["error"].get<std::string>().find(seen().broken + "/config.json"),
            std::string::npos)
      << report.text;
}

TEST_F(ServeReloadUnderLoad, AFailedReloadIsLoggedWithWhatWasKeptAndRemoved) {
  EXPECT_NE(
      seen().stderr_after_broken.find("reload (POST /admin/reload): failed; kept m, deen; removed ende; model 'm': "),
      std::string::npos)
      << seen().stderr_after_broken;
}

TEST_F(ServeReloadUnderLoad, AModelWhoseNewFolderIsBrokenKeepsServingTheOld) {
  EXPECT_EQ(seen().m_after_broken.body["results"], seen().new_m.body["results"]);
}

TEST_F(ServeReloadUnderLoad, ARemovedModelIsUnknown) { EXPECT_EQ(seen().ende_after_removal.status, 400); }

// Nothing translates en -> de any more.
TEST_F(ServeReloadUnderLoad, ARemovedModelLeavesLanguages) {
  ASSERT_EQ(seen().languages_after_removal.status, 200);
  for (const json& language : seen().languages_after_removal.body)
    if (language["code"] == "en") EXPECT_EQ(language["targets"], json::array()) << language;
}

// The bundled en-de holds ~52 MB of float32 weights: most of it goes back to the system.
// (Not under a sanitizer: its allocator keeps freed memory in quarantine, and the server
// under test is built as this test is.)
TEST_F(ServeReloadUnderLoad, ARemovedModelsMemoryIsReturned) {
#ifdef ORDO_SANITIZER_ALLOCATOR
  GTEST_SKIP() << "sanitizer build: freed memory stays in the allocator's quarantine";
#endif
  EXPECT_TRUE(seen().rss_returned) << "RSS before " << seen().rss_before << " MB, after " << seen().rss_after << " MB";
}

TEST_F(ServeReloadUnderLoad, ARemovedModelIsUnloaded) {
  EXPECT_TRUE(seen().ende_unloaded) << seen().stderr_after_broken;
}

TEST_F(ServeReloadUnderLoad, MetricsCountTheReloadsAndTheLoadErrors) {
  EXPECT_EQ(metric(seen().metrics, "ordo_reload_total{result=\"ok\"}"), 1);
  EXPECT_EQ(metric(seen().metrics, "ordo_reload_total{result=\"failed\"}"), 1);
  EXPECT_EQ(metric(seen().metrics, "ordo_model_load_errors_total{model=\"m\"}"), 1);
  EXPECT_EQ(metric(seen().metrics, "ordo_models"), 2);
}

TEST_F(ServeReloadUnderLoad, SigtermAfterTheReloadsExitsZero) { EXPECT_EQ(seen().exit_status, 0); }

// Reloading one small model three times, run once for the suite and looked at by one test per
// behaviour: with nothing changed (the admin key given as an api_key field), with a file of its
// folder replaced in place (same bytes, a new modification time), and with a models file that
// does not parse.
class ServeReloadOfAFolder : public ::testing::Test {
 protected:
  struct Seen {
    Answer before, unchanged, replaced, after_replaced, unparsable, after_unparsable;
    std::string metrics;
  };
  static void SetUpTestSuite() {
    seen_ = new Seen;
    Seen& seen = *seen_;
    TempDir dir;
    const std::string tiny = dir.file("tiny");
    ::mkdir(tiny.c_str(), 0755);
    ordo::testing::copy_dir(ordo::testing::fixture_dir("marian_opus_en_mg"), tiny);
    dir.write("models.json",
              R"({"models": [{"name": "tiny", "path": ")" + tiny + R"(", "source": "en", "target": "xx"}]})");
    dir.write("admin.txt", "admin-secret-77\n");
    ServerProcess server({"--models", dir.file("models.json"), "--admin-key", dir.file("admin.txt"), "--threads", "1"});
    const json request = {{"model", "tiny"}, {"text", "Hello"}, {"max_new_tokens", 3}};
    const json reload = {{"api_key", "admin-secret-77"}};
    seen.before = post(server, "/v1/translate", request);
    seen.unchanged = post(server, "/admin/reload", reload);
    dir.write("tiny/config.json", read_file(tiny + "/config.json") + "\n");
    seen.replaced = post(server, "/admin/reload", reload);
    seen.after_replaced = post(server, "/v1/translate", request);
    dir.write("models.json", "{\"models\": [");
    seen.unparsable = post(server, "/admin/reload", reload);
    seen.after_unparsable = post(server, "/v1/translate", request);
    seen.metrics = get(server, "/metrics").text;
  }
  static void TearDownTestSuite() {
    delete seen_;
    seen_ = nullptr;
  }
  static const Seen& seen() { return *seen_; }
  static Seen* seen_;
};
ServeReloadOfAFolder::Seen* ServeReloadOfAFolder::seen_ = nullptr;

TEST_F(ServeReloadOfAFolder, AnUnchangedModelIsKeptNotLoadedAgain) {
  ASSERT_EQ(seen().unchanged.status, 200) << seen().unchanged.text;
  EXPECT_EQ(seen().unchanged.body["kept"], json::array({"tiny"}));
  EXPECT_EQ(seen().unchanged.body["loaded"], json::array());
}

TEST_F(ServeReloadOfAFolder, AFolderWithAFileReplacedInPlaceIsLoadedAgain) {
  ASSERT_EQ(seen().replaced.status, 200) << seen().replaced.text;
  EXPECT_EQ(seen().replaced.body["loaded"], json::array({"tiny"}));
}

TEST_F(ServeReloadOfAFolder, AModelLoadedAgainTranslatesAsBefore) {
  ASSERT_EQ(seen().before.status, 200) << seen().before.text;
  EXPECT_EQ(seen().after_replaced.body["results"], seen().before.body["results"]);
}

TEST_F(ServeReloadOfAFolder, AModelsFileThatDoesNotParseIs422SayingWhy) {
  const Answer& report = seen().unparsable;
  EXPECT_EQ(report.status, 422) << report.text;
  ASSERT_EQ(report.body["errors"].size(), 1u) << report.text;
  EXPECT_NE(report.body["errors"][0]["error"].get<std::string>().find("models.json: invalid JSON"), std::string::npos)
      << report.text;
}

TEST_F(ServeReloadOfAFolder, AModelsFileThatDoesNotParseChangesNothing) {
  ASSERT_EQ(seen().before.status, 200) << seen().before.text;
  EXPECT_EQ(seen().after_unparsable.body["results"], seen().before.body["results"]);
}

TEST_F(ServeReloadOfAFolder, MetricsCountTheReloadsThatWorked) {
  EXPECT_EQ(metric(seen().metrics, "ordo_reload_total{result=\"ok\"}"), 2);
}

// One server with per-key limits and an access log. Each test has keys of its own, so that
// no test's windows or counts depend on which tests ran before it.
class ServeKeyLimits : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    dir_->write("keys.txt",
                "# operator's keys\n"
                "secret-alpha-7f3e name=alpha req_limit=2\n"
                "secret-reset-52b1 name=reset req_limit=1\n"
                "secret-chars-6d0a name=chars char_limit=30\n"
                "secret-beta-91aa  name=beta daily_char_limit=20\n"
                "secret-once-e4c2 name=once req_limit=1\n"
                "secret-logged-3a9f name=logged\n"
                "secret-plain-0c4d\n");
    server_ = new ServerProcess({"--model", "en-de", "--threads", "1", "--api-keys", dir_->file("keys.txt"),
                                 "--access-log", log(), "--key-window-seconds", "3"});
    // The first translation builds the kernels; made with a key without limits, it does not
    // eat into a limited key's window on a slow machine.
    ASSERT_EQ(post(*server_, "/translate", request(), bearer("secret-plain-0c4d")).status, 200);
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
    delete dir_;
    dir_ = nullptr;
  }
  static const ServerProcess& server() { return *server_; }
  static std::string log() { return dir_->file("access.log"); }
  static json request() { return {{"q", "A dog."}, {"source", "en"}, {"target", "de"}}; }
  static httplib::Headers bearer(const std::string& key, const std::string& request_id = "") {
    httplib::Headers headers = {{"Authorization", "Bearer " + key}};
    if (!request_id.empty()) headers.insert({"X-Request-Id", request_id});
    return headers;
  }
  // The access log once it holds the line of `id` (bounded), and that line (null if never).
  static json logged_line(const std::string& id, std::string* text = nullptr) {
    std::string read;
    eventually(5, [&] { return log_line_with_id(read = read_file(log()), id).is_object(); });
    if (text) *text = read;
    return log_line_with_id(read, id);
  }
  static TempDir* dir_;
  static ServerProcess* server_;
};
TempDir* ServeKeyLimits::dir_ = nullptr;
ServerProcess* ServeKeyLimits::server_ = nullptr;

// The window of req_limit is 3 s here (--key-window-seconds): the second request after the
// first is over, or the third if a window ended in between.
TEST_F(ServeKeyLimits, RequestsOverTheLimitAre429WithRetryAfter) {
  const Answer first = post(server(), "/translate", request(), bearer("secret-alpha-7f3e", "limits-1"));
  ASSERT_EQ(first.status, 200) << first.text;
  EXPECT_EQ(first.header("X-Request-Id"), "limits-1");
  int admitted = 1;
  Answer over;
  for (int i = 0; i < 3 && (over = post(server(), "/translate", request(), bearer("secret-alpha-7f3e"))).status == 200;
       ++i)
    ++admitted;
  ASSERT_EQ(over.status, 429) << over.text;
  EXPECT_EQ(over.body, json({{"error", "Slowdown: 2 per 3 seconds (key alpha)"}}));
  const int retry_after = std::stoi(over.header("Retry-After"));
  EXPECT_GE(retry_after, 1);
  EXPECT_LE(retry_after, 3);
  const std::string metrics = get(server(), "/metrics").text;
  EXPECT_EQ(metric(metrics, "ordo_api_key_limited_total{key=\"alpha\",limit=\"req_limit\"}"), 1);
  EXPECT_EQ(metric(metrics, "ordo_api_key_requests_total{key=\"alpha\"}"), admitted);
}

// The server's own window has to pass: it has no clock a test could move (the windows
// themselves are tested with an injected clock in api_keys_test.cpp). This wait is the
// behaviour under test, not a guess at when something else happened.
TEST_F(ServeKeyLimits, TheWindowResetsWhenRetryAfterSays) {
  Answer over;
  for (int i = 0; i < 3 && (over = post(server(), "/translate", request(), bearer("secret-reset-52b1"))).status == 200;
       ++i) {
  }
  ASSERT_EQ(over.status, 429) << over.text;
  const int retry_after = std::stoi(over.header("Retry-After"));
  std::this_thread::sleep_for(std::chrono::milliseconds(retry_after * 1000 + 100));
  EXPECT_EQ(post(server(), "/translate", request(), bearer("secret-reset-52b1")).status, 200);
}

// Characters per request: LibreTranslate's 400.
TEST_F(ServeKeyLimits, ARequestOverTheKeysCharacterLimitIs400) {
  json long_request = request();
  long_request["q"] = std::string(31, 'a');
  long_request["api_key"] = "secret-chars-6d0a";
  EXPECT_EQ(post(server(), "/translate", long_request).body,
            json({{"error", "Invalid request: request (31) exceeds text limit (30)"}}));
  EXPECT_EQ(metric(get(server(), "/metrics").text, "ordo_api_key_limited_total{key=\"chars\",limit=\"char_limit\"}"),
            1);
}

// Characters per day: the second 12-character request is over 20.
TEST_F(ServeKeyLimits, CharactersOverTheDailyLimitAre429UntilTomorrow) {
  const json beta = {{"text", "Hello there."}, {"model", "en-de"}, {"api_key", "secret-beta-91aa"}};
  EXPECT_EQ(post(server(), "/v1/translate", beta).status, 200);
  const Answer daily = post(server(), "/v1/translate", beta);
  EXPECT_EQ(daily.status, 429) << daily.text;
  EXPECT_GT(std::stoi(daily.header("Retry-After")), 86000);
  EXPECT_EQ(daily.body["error"].get<std::string>().substr(0, 10), "Slowdown: ");
  const std::string metrics = get(server(), "/metrics").text;
  EXPECT_EQ(metric(metrics, "ordo_api_key_limited_total{key=\"beta\",limit=\"daily_char_limit\"}"), 1);
  EXPECT_EQ(metric(metrics, "ordo_api_key_window_characters{key=\"beta\"}"), 12);
}

TEST_F(ServeKeyLimits, AKeyWithoutLimitsIsNotLimited) {
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(post(server(), "/translate", request(), bearer("secret-plain-0c4d")).status, 200);
}

// /metrics: limits and use by key id, never a key.
TEST_F(ServeKeyLimits, MetricsShowEachKeysLimitsByItsName) {
  const std::string metrics = get(server(), "/metrics").text;
  EXPECT_EQ(metric(metrics, "ordo_api_key_limit{key=\"alpha\",limit=\"req_limit\"}"), 2);
  EXPECT_EQ(metric(metrics, "ordo_api_key_limit{key=\"beta\",limit=\"daily_char_limit\"}"), 20);
}

TEST_F(ServeKeyLimits, MetricsNeverShowAKey) {
  EXPECT_EQ(get(server(), "/metrics").text.find("secret-"), std::string::npos);
}

TEST_F(ServeKeyLimits, WithoutAnAdminKeyThereIsNoReloadRoute) {
  EXPECT_EQ(post(server(), "/admin/reload", json::object(), bearer("secret-plain-0c4d")).status, 404);
}

// A client's id that is not sane is replaced by a new one, in the header and in the log.
TEST_F(ServeKeyLimits, AnInsaneRequestIdIsReplacedByANewOne) {
  const Answer odd = post(server(), "/translate", request(), bearer("secret-plain-0c4d", "has spaces in it"));
  const std::string odd_id = odd.header("X-Request-Id");
  EXPECT_EQ(odd_id.size(), 16u) << odd_id;
  std::string text;
  EXPECT_TRUE(logged_line(odd_id, &text).is_object()) << text;
}

TEST_F(ServeKeyLimits, ARequestWithoutAnIdIsGivenOne) {
  EXPECT_EQ(get(server(), "/health").header("X-Request-Id").size(), 16u);
}

// The access log: one JSON line per request, in the file, without keys or texts.
TEST_F(ServeKeyLimits, TheAccessLogLineSaysWhatWasAnsweredToWhom) {
  ASSERT_EQ(post(server(), "/translate", request(), bearer("secret-logged-3a9f", "logged-1")).status, 200);
  std::string text;
  const json line = logged_line("logged-1", &text);
  ASSERT_TRUE(line.is_object()) << text;
  EXPECT_EQ(line["route"], "/translate");
  EXPECT_EQ(line["method"], "POST");
  EXPECT_EQ(line["status"], 200);
  EXPECT_EQ(line["chars"], 6);
  EXPECT_EQ(line["model"], "en-de");
  EXPECT_EQ(line["key"], "logged");
  EXPECT_TRUE(line["latency_ms"].is_number());
  EXPECT_GE(line["latency_ms"].get<double>(), 0);
  EXPECT_EQ(line["time"].get<std::string>().size(), 24u);
  EXPECT_FALSE(line.contains("text"));
}

TEST_F(ServeKeyLimits, TheAccessLogHoldsNeitherKeysNorTexts) {
  ASSERT_EQ(post(server(), "/translate", request(), bearer("secret-logged-3a9f", "logged-2")).status, 200);
  std::string text;
  ASSERT_TRUE(logged_line("logged-2", &text).is_object()) << text;
  EXPECT_GE(log_lines(text).size(), 2u);
  EXPECT_EQ(text.find("secret-"), std::string::npos);
  EXPECT_EQ(text.find("A dog."), std::string::npos);
}

TEST_F(ServeKeyLimits, ALimitedRequestIsLoggedWithItsStatus) {
  ASSERT_EQ(post(server(), "/translate", request(), bearer("secret-once-e4c2", "once-1")).status, 200);
  Answer over;
  std::string over_id;
  for (int i = 0; i < 3 && over.status != 429; ++i)
    over =
        post(server(), "/translate", request(), bearer("secret-once-e4c2", over_id = "once-" + std::to_string(i + 2)));
  ASSERT_EQ(over.status, 429) << over.text;
  std::string text;
  const json line = logged_line(over_id, &text);
  ASSERT_TRUE(line.is_object()) << text;
  EXPECT_EQ(line["status"], 429);
  EXPECT_EQ(line["key"], "once");
}

// A fatal signal (here sent from outside, as the kernel sends one for a bad access) ends the
// process as before (status 128 + SIGSEGV, so a supervisor sees the same thing), after one
// line naming it and the stack of the thread that took it (src/cli/crash_report.h). The
// sanitizer builds have no launcher, so no handler: their sanitizers report instead.
class ServeCrash : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
#ifndef ORDO_SANITIZER_ALLOCATOR
    ServerProcess server({"--model", ordo::testing::fixture_dir("marian_opus_en_mg"), "--threads", "1"});
    status_ = server.stop(SIGSEGV);
    stderr_ = new std::string(server.stderr_text());
#endif
  }
  static void TearDownTestSuite() {
    delete stderr_;
    stderr_ = nullptr;
  }
  void SetUp() override {
#ifdef ORDO_SANITIZER_ALLOCATOR
    GTEST_SKIP() << "sanitizer build: `ordo` has no launcher, the sanitizer handles the signal";
#endif
  }
  static const std::string& err() { return *stderr_; }
  static int status_;
  static std::string* stderr_;
};
int ServeCrash::status_ = -1;
std::string* ServeCrash::stderr_ = nullptr;

TEST_F(ServeCrash, TheProcessEndsWithTheSignalsStatus) { EXPECT_EQ(status_, 128 + SIGSEGV); }

TEST_F(ServeCrash, OneLineNamesTheSignalAndItsSender) {
  EXPECT_NE(err().find("ordo: fatal: SIGSEGV (invalid memory access) sent by process " + std::to_string(::getpid())),
            std::string::npos)
      << err();
}

// One frame per line, each "object(symbol+offset)[address]": libc's signal trampoline at
// least, and something of ordo's.
TEST_F(ServeCrash, TheStackOfTheThreadThatTookItIsPrinted) {
  const size_t stack = err().find("The stack of the thread that took it:\n");
  ASSERT_NE(stack, std::string::npos) << err();
  EXPECT_NE(err().find("libc.so", stack), std::string::npos) << err();
  EXPECT_NE(err().find("ordo", stack + 40), std::string::npos) << err();
}

}  // namespace
