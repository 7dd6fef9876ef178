// Glossaries in `ordo serve` (the real binary on 127.0.0.1, an ephemeral port, the bundled
// en-de): the "glossary" object of /v1/translate puts a term's target where the model's own
// word for it stands in the texts that contain the term and leaves the others as they are; a
// bad glossary is a 400 naming the field; LibreTranslate's /translate ignores a glossary field,
// as LibreTranslate ignores fields it does not know.
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

const std::string kBicycle = "A man is riding a bicycle down the street.";
const std::string kDogs = "Two dogs play in the snow.";

class ServeGlossary : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new ServerProcess({"--model", std::string(ORDO_SOURCE_DIR) + "/models/en-de", "--threads", "2"});
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  static json request(const json& text, const json& glossary = nullptr) {
    json r = {{"model", "en-de"}, {"text", text}};
    if (!glossary.is_null()) r["glossary"] = glossary;
    return r;
  }
  static ServerProcess* server_;
};
ServerProcess* ServeGlossary::server_ = nullptr;

TEST_F(ServeGlossary, ATermTakesThePlaceOfTheModelsWordAndOtherTextsStayAsTheyAre) {
  const auto [status, body] = post(*server_, "/v1/translate", request({kBicycle, kDogs}, {{"Bicycle", "Velo"}}));
  ASSERT_EQ(status, 200) << body.dump();
  const auto [plain_status, plain] = post(*server_, "/v1/translate", request({kBicycle, kDogs}));
  ASSERT_EQ(plain_status, 200) << plain.dump();
  EXPECT_EQ(plain["results"][0]["text"], "Ein Mann fährt auf einem Fahrrad die Straße entlang.");
  EXPECT_EQ(body["results"][0]["text"], "Ein Mann fährt auf einem Velo die Straße entlang.");
  EXPECT_EQ(body["results"][1], plain["results"][1]);  // no term in it: as without the glossary
}

TEST_F(ServeGlossary, GreedySearchAndAlignmentsWorkWithAGlossary) {
  json r = request(kBicycle, {{"bicycle", "Velo"}});
  r["beam_size"] = 1;
  r["alignment"] = "hard";
  const auto [status, body] = post(*server_, "/v1/translate", r);
  ASSERT_EQ(status, 200) << body.dump();
  EXPECT_NE(body["results"][0]["text"].get<std::string>().find("Velo"), std::string::npos) << body.dump();
  EXPECT_FALSE(body["results"][0]["alignment"].empty()) << body.dump();
}

TEST_F(ServeGlossary, AStreamedTextWithATermGetsNoTokenEventsOnlyTheDoneAnswer) {
  json r = request({kBicycle, kDogs}, {{"bicycle", "Velo"}});
  r["beam_size"] = 1;
  r["stream"] = true;
  const auto res = server_->client()->Post("/v1/translate", r.dump(), "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  size_t tokens_of_term_text = 0, tokens_of_other_text = 0;
  json done;
  std::string event;
  size_t at = 0;
  while (at < res->body.size()) {
    size_t end = res->body.find('\n', at);
    if (end == std::string::npos) end = res->body.size();
    const std::string line = res->body.substr(at, end - at);
    at = end + 1;
    if (line.rfind("event: ", 0) == 0) event = line.substr(7);
    if (line.rfind("data: ", 0) != 0) continue;
    const json data = json::parse(line.substr(6));
    if (event == "token") (data["index"] == 0 ? tokens_of_term_text : tokens_of_other_text) += 1;
    if (event == "done") done = data;
  }
  EXPECT_EQ(tokens_of_term_text, 0u);
  EXPECT_GT(tokens_of_other_text, 0u);
  ASSERT_TRUE(done.contains("results")) << res->body;
  EXPECT_NE(done["results"][0]["text"].get<std::string>().find("Velo"), std::string::npos) << done.dump();
}

TEST_F(ServeGlossary, ABadGlossaryIsA400NamingTheField) {
  for (const auto& [value, part] : std::vector<std::pair<json, std::string>>{
           {"bicycle=Velo", "field 'glossary' must be a JSON object of strings"},
           {json{{"bicycle", 3}}, "the value of bicycle is number"},
           {json{{" ", "Velo"}}, "field 'glossary': the source term is empty"},
           {json{{"bicycle", " "}}, "field 'glossary': the target term of 'bicycle' is empty"}}) {
    const auto [status, answer] = post(*server_, "/v1/translate", request(kBicycle, value));
    EXPECT_EQ(status, 400) << value.dump();
    EXPECT_NE(answer.dump().find(part), std::string::npos) << answer.dump();
  }
}

TEST_F(ServeGlossary, LibreTranslateIgnoresAGlossaryField) {
  const json libre = {{"q", kBicycle}, {"source", "en"}, {"target", "de"}};
  json libre_glossary = libre;
  libre_glossary["glossary"] = {{"bicycle", "Velo"}};
  const auto [l1, a1] = post(*server_, "/translate", libre);
  const auto [l2, a2] = post(*server_, "/translate", libre_glossary);
  ASSERT_EQ(l1, 200) << a1.dump();
  ASSERT_EQ(l2, 200) << a2.dump();
  EXPECT_EQ(a1, a2);
}

}  // namespace
