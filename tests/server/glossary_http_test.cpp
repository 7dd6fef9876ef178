// Glossaries in `ordo serve` (the real binary on 127.0.0.1, an ephemeral port): the "glossary"
// object of /v1/translate forces a term's target in the texts that contain the term and leaves
// the others as they are; a bad glossary is a 400 naming the field; LibreTranslate's /translate
// ignores a glossary field, as LibreTranslate ignores fields it does not know.
// ctest-label: integration
#include <gtest/gtest.h>

#include <string>

#include "server/server_process.h"
#include "support/fixtures.h"

namespace {

using nlohmann::json;
using ordo::testing::ServerProcess;

std::pair<int, json> post(const ServerProcess& server, const std::string& path, const json& body) {
  const auto res = server.client()->Post(path.c_str(), body.dump(), "application/json");
  if (!res) return {0, json()};
  try {
    return {res->status, json::parse(res->body)};
  } catch (...) {
    return {res->status, json(res->body)};
  }
}

const std::string kNeighbour = "My neighbour planted three apple trees in the garden last spring.";
const std::string kStation = "Where is the train station?";

TEST(ServeGlossary, TermForcedWhereFoundOthersUnchangedBadFieldsNamedLibreTranslateIgnoresIt) {
  const ServerProcess server({"--model", ordo::testing::fixture_dir("marian_opus_en_mg"), "--threads", "2"});
  const json base = {{"model", "marian_opus_en_mg"}, {"beam_size", 4}, {"max_new_tokens", 20}};
  json with = base;
  with["text"] = {kNeighbour, kStation};
  with["glossary"] = {{"NEIGHBOUR", "trano"}, {"railway station", "fiaran-dalamby"}};
  const auto [status, body] = post(server, "/v1/translate", with);
  ASSERT_EQ(status, 200) << body.dump();
  json without = base;
  without["text"] = {kNeighbour, kStation};
  const auto [plain_status, plain] = post(server, "/v1/translate", without);
  ASSERT_EQ(plain_status, 200) << plain.dump();
  json forced = base;
  forced["text"] = kNeighbour;
  forced["force_words"] = "trano";
  const auto [forced_status, one] = post(server, "/v1/translate", forced);
  ASSERT_EQ(forced_status, 200) << one.dump();

  const std::string text = body["results"][0]["text"];
  EXPECT_NE(text.find("trano"), std::string::npos) << text;
  EXPECT_EQ(body["results"][0], one["results"][0]);
  EXPECT_NE(body["results"][0]["text"], plain["results"][0]["text"]);
  EXPECT_EQ(body["results"][1], plain["results"][1]);  // no term in it: as without the glossary

  for (const auto& [value, part] : std::vector<std::pair<json, std::string>>{
           {"neighbour=trano", "field 'glossary' must be a JSON object of strings"},
           {json{{"neighbour", 3}}, "the value of neighbour is number"},
           {json{{" ", "trano"}}, "field 'glossary': the source term is empty"},
           {json{{"neighbour", "a|b"}}, "contains '|'"}}) {
    json bad = base;
    bad["text"] = kNeighbour;
    bad["glossary"] = value;
    const auto [bad_status, answer] = post(server, "/v1/translate", bad);
    EXPECT_EQ(bad_status, 400) << value.dump();
    EXPECT_NE(answer.dump().find(part), std::string::npos) << answer.dump();
  }
  json greedy = with;
  greedy["beam_size"] = 1;
  const auto [greedy_status, greedy_answer] = post(server, "/v1/translate", greedy);
  EXPECT_EQ(greedy_status, 400);
  EXPECT_NE(greedy_answer.dump().find("force_words needs beam search"), std::string::npos) << greedy_answer.dump();

  const json libre = {{"q", kNeighbour}, {"source", "en"}, {"target", "mg"}};
  json libre_glossary = libre;
  libre_glossary["glossary"] = {{"neighbour", "trano"}};
  const auto [l1, a1] = post(server, "/translate", libre);
  const auto [l2, a2] = post(server, "/translate", libre_glossary);
  ASSERT_EQ(l1, 200) << a1.dump();
  ASSERT_EQ(l2, 200) << a2.dump();
  EXPECT_EQ(a1, a2);
}

}  // namespace
