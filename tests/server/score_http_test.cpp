// Scoring in `ordo serve` (the real binary on 127.0.0.1, an ephemeral port): POST /v1/score
// equals `ordo score --json` and transformers' teacher-forced log-probabilities, and the
// target_prefix field of /v1/translate equals `ordo translate --target-prefix-file`.
// ctest-label: integration
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <tuple>

#include "server/server_process.h"
#include "support/fixtures.h"
#include "support/temp_dir.h"

namespace {

using nlohmann::json;
using ordo::testing::ServerProcess;
using ordo::testing::TempDir;

using ordo::testing::load_interactive;
std::pair<int, json> post(const ServerProcess& server, const std::string& path, const json& body) {
  const auto res = server.client()->Post(path.c_str(), body.dump(), "application/json");
  if (!res) return {0, json()};
  try {
    return {res->status, json::parse(res->body)};
  } catch (...) {
    return {res->status, json(res->body)};
  }
}

class ServeInteractive : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new ServerProcess({"--model", ordo::testing::fixture_dir("m2m100"), "--model",
                                 ordo::testing::fixture_dir("marian_opus_en_mg"), "--threads", "2"});
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  static const ServerProcess& server() { return *server_; }
  static ServerProcess* server_;
};
ServerProcess* ServeInteractive::server_ = nullptr;

// The golden teacher-forced pairs of the m2m100 fixture, scored by the server (into German).
struct ServedScores {
  json golden, sources = json::array(), targets = json::array();
  int status = 0;
  json body;
};
ServedScores served_scores(const ServerProcess& server) {
  ServedScores s;
  s.golden = load_interactive("m2m100");
  for (const json& c : s.golden["teacher_forced"]) {
    s.sources.push_back(c["source"]);
    s.targets.push_back(c["target"]);
  }
  std::tie(s.status, s.body) = post(
      server, "/v1/score", {{"model", "m2m100"}, {"source", s.sources}, {"target", s.targets}, {"target_lang", "de"}});
  return s;
}

TEST_F(ServeInteractive, ScoreEqualsTeacherForcing) {
  const ServedScores s = served_scores(server());
  ASSERT_EQ(s.status, 200) << s.body.dump();
  EXPECT_EQ(s.body["model"], "m2m100");
  ASSERT_EQ(s.body["results"].size(), s.sources.size());
  for (size_t i = 0; i < s.sources.size(); ++i) {
    const json& served = s.body["results"][i];
    const json& c = s.golden["teacher_forced"][i];
    EXPECT_EQ(served["tokens"], c["tokens"]) << i;
    EXPECT_NEAR(served["score"].get<double>(), c["score"].get<double>(),
                1e-4 * std::max(1.0, std::abs(c["score"].get<double>())));
  }
}

TEST_F(ServeInteractive, ScoreEqualsTheCommandLineBitForBit) {
  const ServedScores s = served_scores(server());
  ASSERT_EQ(s.status, 200) << s.body.dump();
  ASSERT_EQ(s.body["results"].size(), s.sources.size());
  TempDir dir;
  std::string src, tgt;
  for (size_t i = 0; i < s.sources.size(); ++i) {
    src += s.sources[i].get<std::string>() + "\n";
    tgt += s.targets[i].get<std::string>() + "\n";
  }
  const auto cli = ordo::testing::run_ordo(
      "score --json -m " + ordo::testing::fixture_dir("m2m100") + " --target-lang de -r " + dir.write("t.txt", tgt),
      src);
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  std::istringstream lines(cli.out);
  for (size_t i = 0; i < s.sources.size(); ++i) {
    std::string line;
    ASSERT_TRUE(static_cast<bool>(std::getline(lines, line)));
    EXPECT_EQ(s.body["results"][i], json::parse(line)) << i;
  }
}

TEST_F(ServeInteractive, ScoringAStringPairGivesOneResult) {
  const auto [status, one] =
      post(server(), "/v1/score", {{"model", "m2m100"}, {"source", "Hello"}, {"target", "Hallo"}});
  ASSERT_EQ(status, 200) << one.dump();
  EXPECT_EQ(one["results"].size(), 1u);
}

TEST_F(ServeInteractive, ScoreHasItsOwnRouteLabelInTheMetrics) {
  ASSERT_EQ(post(server(), "/v1/score", {{"model", "m2m100"}, {"source", "Hello"}, {"target", "Hallo"}}).first, 200);
  const auto metrics = server().client()->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("route=\"/v1/score\""), std::string::npos);
}

TEST_F(ServeInteractive, ScoreRefusesBadRequestsNamingTheField) {
  const auto shape = post(server(), "/v1/score", {{"model", "m2m100"}, {"source", {"a", "b"}}, {"target", {"x"}}});
  EXPECT_EQ(shape.first, 400);
  EXPECT_NE(shape.second.dump().find("'source' and 'target' must have the same shape"), std::string::npos)
      << shape.second;
  const auto missing = post(server(), "/v1/score", {{"model", "m2m100"}, {"source", "a"}});
  EXPECT_EQ(missing.first, 400);
  EXPECT_NE(missing.second.dump().find("field 'target' is required"), std::string::npos) << missing.second;
  const auto unknown =
      post(server(), "/v1/score", {{"model", "m2m100"}, {"source", "a"}, {"target", "b"}, {"beam_size", 2}});
  EXPECT_EQ(unknown.first, 400);
  EXPECT_NE(unknown.second.dump().find("unknown field 'beam_size'"), std::string::npos) << unknown.second;
  const auto language =
      post(server(), "/v1/score", {{"model", "m2m100"}, {"source", "a"}, {"target", "b"}, {"target_lang", "xx"}});
  EXPECT_EQ(language.first, 400);
  EXPECT_NE(language.second.dump().find("target_lang"), std::string::npos) << language.second;
}

// "target_prefix" in /v1/translate: transformers' generate() with that prefix (greedy, beam 4).
TEST_F(ServeInteractive, TranslateTargetPrefixFieldEqualsGenerate) {
  const json golden = load_interactive("marian_opus_en_mg");
  int checked = 0;
  for (const json& c : golden["target_prefix"]) {
    if (c["sentence_index"] != 2) continue;
    const json request = {{"model", "marian_opus_en_mg"},
                          {"text", {c["source"]}},
                          {"target_prefix", c["prefix"]},
                          {"max_new_tokens", 20},
                          {"beam_size", c["kwargs"]["num_beams"]}};
    const auto [status, body] = post(server(), "/v1/translate", request);
    ASSERT_EQ(status, 200) << body.dump();
    EXPECT_EQ(body["results"][0]["text"], c["texts"][0]) << c["case"] << " " << c["prefix"];
    ++checked;
  }
  EXPECT_EQ(checked, 6);
  const auto bad =
      post(server(), "/v1/translate", {{"model", "marian_opus_en_mg"}, {"text", "a"}, {"target_prefix", 3}});
  EXPECT_EQ(bad.first, 400);
  EXPECT_NE(bad.second.dump().find("target_prefix"), std::string::npos) << bad.second;
}

}  // namespace
