// Issue 14 in `ordo serve` (the real binary on 127.0.0.1, an ephemeral port): POST /v1/score
// equals `ordo score --json` and transformers' teacher-forced log-probabilities, and the
// target_prefix field of /v1/translate equals `ordo translate --target-prefix-file`.
// ctest-label: integration
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

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

TEST_F(ServeInteractive, ScoreEqualsTeacherForcingAndTheCommandLine) {
  const json golden = load_interactive("m2m100");
  json sources = json::array(), targets = json::array();
  for (const json& c : golden["teacher_forced"]) {
    sources.push_back(c["source"]);
    targets.push_back(c["target"]);
  }
  const auto [status, body] =
      post(server(), "/v1/score", {{"model", "m2m100"}, {"source", sources}, {"target", targets}, {"target_lang", "de"}});
  ASSERT_EQ(status, 200) << body.dump();
  EXPECT_EQ(body["model"], "m2m100");
  ASSERT_EQ(body["results"].size(), sources.size());
  TempDir dir;
  std::string src, tgt;
  for (size_t i = 0; i < sources.size(); ++i) {
    src += sources[i].get<std::string>() + "\n";
    tgt += targets[i].get<std::string>() + "\n";
  }
  const auto cli = ordo::testing::run_ordo("score --json -m " + ordo::testing::fixture_dir("m2m100") +
                                               " --target-lang de -r " + dir.write("t.txt", tgt),
                                           src);
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  std::istringstream lines(cli.out);
  for (size_t i = 0; i < sources.size(); ++i) {
    const json& served = body["results"][i];
    const json& c = golden["teacher_forced"][i];
    EXPECT_EQ(served["tokens"], c["tokens"]) << i;
    EXPECT_NEAR(served["score"].get<double>(), c["score"].get<double>(), 1e-4 * std::max(1.0, std::abs(c["score"].get<double>())));
    std::string line;
    ASSERT_TRUE(static_cast<bool>(std::getline(lines, line)));
    EXPECT_EQ(served, json::parse(line)) << i;  // the command line's, bit for bit
  }
  // A string pair gives one result.
  const auto [one_status, one] = post(server(), "/v1/score", {{"model", "m2m100"}, {"source", "Hello"}, {"target", "Hallo"}});
  ASSERT_EQ(one_status, 200) << one.dump();
  EXPECT_EQ(one["results"].size(), 1u);
  // Its own label in the metrics.
  const auto metrics = server().client()->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("route=\"/v1/score\""), std::string::npos);
}

TEST_F(ServeInteractive, ScoreRefusesBadRequestsNamingTheField) {
  const auto shape = post(server(), "/v1/score", {{"model", "m2m100"}, {"source", {"a", "b"}}, {"target", {"x"}}});
  EXPECT_EQ(shape.first, 400);
  EXPECT_NE(shape.second.dump().find("'source' and 'target' must have the same shape"), std::string::npos) << shape.second;
  const auto missing = post(server(), "/v1/score", {{"model", "m2m100"}, {"source", "a"}});
  EXPECT_EQ(missing.first, 400);
  EXPECT_NE(missing.second.dump().find("field 'target' is required"), std::string::npos) << missing.second;
  const auto unknown = post(server(), "/v1/score", {{"model", "m2m100"}, {"source", "a"}, {"target", "b"}, {"beam_size", 2}});
  EXPECT_EQ(unknown.first, 400);
  EXPECT_NE(unknown.second.dump().find("unknown field 'beam_size'"), std::string::npos) << unknown.second;
  const auto language = post(server(), "/v1/score", {{"model", "m2m100"}, {"source", "a"}, {"target", "b"}, {"target_lang", "xx"}});
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
  const auto bad = post(server(), "/v1/translate", {{"model", "marian_opus_en_mg"}, {"text", "a"}, {"target_prefix", 3}});
  EXPECT_EQ(bad.first, 400);
  EXPECT_NE(bad.second.dump().find("target_prefix"), std::string::npos) << bad.second;
}

}  // namespace
