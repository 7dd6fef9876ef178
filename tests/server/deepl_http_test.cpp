// DeepL's API v2 on `ordo serve` as DeepL's clients call it (the real binary on 127.0.0.1, an
// ephemeral port, the bundled en-de, --api-keys): /v2/translate with a form or JSON, the key in
// "Authorization: DeepL-Auth-Key", languages in DeepL's codes, usage, glossaries kept per key
// and applied by glossary_id, documents translated in the background and downloaded once;
// errors as {"message": ...}. Every wait is bounded.
// ctest-label: integration
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "server/en_de_suite.h"

namespace {

using nlohmann::json;
using namespace ordo::testing;

const std::string kBicycle = "A man is riding a bicycle down the street.";
const std::string kDogs = "Two dogs play in the snow.";

httplib::Headers auth(const std::string& key) { return {{"Authorization", "DeepL-Auth-Key " + key}}; }

std::string form(const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string out;
  for (const auto& [name, value] : fields) {
    if (!out.empty()) out += '&';
    out += name + "=" + httplib::detail::encode_query_param(value);
  }
  return out;
}

class ServeDeepL : public EnDeSuite {
 protected:
  static void SetUpTestSuite() {
    start({"--api-keys", dir().write("keys.txt", "k-one name=one\nk-two name=two daily_char_limit=1000000\n")});
  }
  static Answer post_form(const std::string& path, const std::vector<std::pair<std::string, std::string>>& fields,
                          const std::string& key = "k-one") {
    return answer_of(
        server_->client()->Post(path.c_str(), auth(key), form(fields), "application/x-www-form-urlencoded"));
  }
  static Answer post_json(const std::string& path, const json& body, const std::string& key = "k-one") {
    return answer_of(server_->client()->Post(path.c_str(), auth(key), body.dump(), "application/json"));
  }
  static Answer get(const std::string& path, const std::string& key = "k-one") {
    return answer_of(server_->client()->Get(path.c_str(), auth(key)));
  }
  // What POST /translate answers (the same model, the same sentences).
  static std::vector<std::string> libre(const std::vector<std::string>& texts) {
    return libre_translated(texts, "k-one");
  }
  static Answer create_glossary(const std::string& entries, const std::string& key = "k-one",
                                const std::string& format = "tsv") {
    return post_form("/v2/glossaries",
                     {{"name", "bikes"},
                      {"source_lang", "en"},
                      {"target_lang", "de"},
                      {"entries", entries},
                      {"entries_format", format}},
                     key);
  }
};

TEST_F(ServeDeepL, TranslateTakesRepeatedTextFieldsOfAForm) {
  const Answer a =
      post_form("/v2/translate", {{"text", kBicycle}, {"text", kDogs}, {"source_lang", "EN"}, {"target_lang", "DE"}});
  ASSERT_EQ(a.status, 200) << a.text;
  ASSERT_EQ(a.body["translations"].size(), 2u) << a.text;
  const std::vector<std::string> expected = libre({kBicycle, kDogs});
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(a.body["translations"][i]["text"], expected[i]);
    EXPECT_EQ(a.body["translations"][i]["detected_source_language"], "EN");
  }
}

TEST_F(ServeDeepL, TranslateTakesAJsonBodyAndDetectsTheSource) {
  const Answer a = post_json("/v2/translate", {{"text", {kDogs}}, {"target_lang", "de"}});
  ASSERT_EQ(a.status, 200) << a.text;
  EXPECT_EQ(a.body["translations"][0]["text"], libre({kDogs})[0]);
  EXPECT_EQ(a.body["translations"][0]["detected_source_language"], "EN");
}

TEST_F(ServeDeepL, BilledCharactersAreAnsweredWhenAsked) {
  const Answer a =
      post_form("/v2/translate", {{"text", kDogs}, {"target_lang", "DE"}, {"show_billed_characters", "1"}});
  ASSERT_EQ(a.status, 200) << a.text;
  EXPECT_EQ(a.body["translations"][0]["billed_characters"], kDogs.size());
}

TEST_F(ServeDeepL, AMissingOrWrongKeyIsA403WithAMessage) {
  const Answer wrong = post_form("/v2/translate", {{"text", kDogs}, {"target_lang", "DE"}}, "k-wrong");
  EXPECT_EQ(wrong.status, 403);
  EXPECT_TRUE(wrong.body.contains("message")) << wrong.text;
  const Answer none = answer_of(server_->client()->Post("/v2/translate", form({{"text", kDogs}, {"target_lang", "DE"}}),
                                                        "application/x-www-form-urlencoded"));
  EXPECT_EQ(none.status, 403);
  EXPECT_NE(none.body.value("message", "").find("DeepL-Auth-Key"), std::string::npos) << none.text;
}

TEST_F(ServeDeepL, TheLegacyAuthKeyFieldIsAccepted) {
  const Answer a = answer_of(
      server_->client()->Post("/v2/translate", form({{"auth_key", "k-one"}, {"text", kDogs}, {"target_lang", "DE"}}),
                              "application/x-www-form-urlencoded"));
  EXPECT_EQ(a.status, 200) << a.text;
}

TEST_F(ServeDeepL, BadRequestsAre400sWithAMessage) {
  const Answer no_target = post_form("/v2/translate", {{"text", kDogs}});
  EXPECT_EQ(no_target.status, 400);
  EXPECT_EQ(no_target.body.value("message", ""), "Parameter 'target_lang' not specified.");
  const Answer no_text = post_form("/v2/translate", {{"target_lang", "DE"}});
  EXPECT_EQ(no_text.status, 400);
  EXPECT_EQ(no_text.body.value("message", ""), "Parameter 'text' not specified.");
  const Answer unserved = post_form("/v2/translate", {{"text", kDogs}, {"target_lang", "FR"}});
  EXPECT_EQ(unserved.status, 400);
  EXPECT_NE(unserved.body.value("message", "").find("target_lang"), std::string::npos) << unserved.text;
  const Answer xml =
      post_form("/v2/translate", {{"text", "<x>Hi</x>"}, {"target_lang", "DE"}, {"tag_handling", "xml"}});
  EXPECT_EQ(xml.status, 400);
  EXPECT_NE(xml.body.value("message", "").find("xml"), std::string::npos) << xml.text;
}

TEST_F(ServeDeepL, TagHandlingHtmlKeepsTheMarkup) {
  const Answer a = post_form("/v2/translate", {{"text", "<p>A man is riding a <b>bicycle</b> down the street.</p>"},
                                               {"source_lang", "EN"},
                                               {"target_lang", "DE"},
                                               {"tag_handling", "html"}});
  ASSERT_EQ(a.status, 200) << a.text;
  const std::string text = a.body["translations"][0]["text"];
  EXPECT_EQ(text.rfind("<p>", 0), 0u) << text;
  EXPECT_NE(text.find("<b>"), std::string::npos) << text;
}

TEST_F(ServeDeepL, FormalityIsAcceptedAndNamedAsIgnored) {
  const Answer a = post_form("/v2/translate", {{"text", kDogs}, {"target_lang", "DE"}, {"formality", "more"}});
  ASSERT_EQ(a.status, 200) << a.text;
  EXPECT_EQ(a.header("X-Ordo-Ignored"), "formality");
  EXPECT_EQ(a.body["translations"][0]["text"], libre({kDogs})[0]);
  const Answer bad = post_form("/v2/translate", {{"text", kDogs}, {"target_lang", "DE"}, {"formality", "polite"}});
  EXPECT_EQ(bad.status, 400) << bad.text;
}

TEST_F(ServeDeepL, LanguagesAreListedInDeepLsCodes) {
  const Answer sources = get("/v2/languages");
  ASSERT_EQ(sources.status, 200) << sources.text;
  EXPECT_EQ(sources.body, json::parse(R"([{"language": "EN", "name": "English"}])")) << sources.text;
  const Answer targets = get("/v2/languages?type=target");
  ASSERT_EQ(targets.status, 200) << targets.text;
  EXPECT_EQ(targets.body, json::parse(R"([{"language": "DE", "name": "German", "supports_formality": false}])"))
      << targets.text;
  EXPECT_EQ(get("/v2/languages?type=other").status, 400);
}

TEST_F(ServeDeepL, UsageCountsTheKeysCharactersInItsDay) {
  const Answer before = get("/v2/usage", "k-two");
  ASSERT_EQ(before.status, 200) << before.text;
  EXPECT_EQ(before.body["character_limit"], 1000000);
  ASSERT_EQ(post_form("/v2/translate", {{"text", kDogs}, {"target_lang", "DE"}}, "k-two").status, 200);
  const Answer after = get("/v2/usage", "k-two");
  EXPECT_EQ(after.body["character_count"].get<int64_t>() - before.body["character_count"].get<int64_t>(),
            static_cast<int64_t>(kDogs.size()));
  EXPECT_EQ(get("/v2/usage", "k-one").body["character_limit"], 1000000000000);
}

TEST_F(ServeDeepL, AGlossaryIsCreatedListedReadAppliedAndDeleted) {
  const Answer made = create_glossary("bicycle\tVelo\nstreet\tGasse\n");
  ASSERT_EQ(made.status, 201) << made.text;
  const std::string id = made.body["glossary_id"];
  EXPECT_EQ(made.body["name"], "bikes");
  EXPECT_EQ(made.body["ready"], true);
  EXPECT_EQ(made.body["source_lang"], "en");
  EXPECT_EQ(made.body["target_lang"], "de");
  EXPECT_EQ(made.body["entry_count"], 2);
  EXPECT_EQ(made.body["creation_time"].get<std::string>().back(), 'Z');

  const Answer list = get("/v2/glossaries");
  ASSERT_EQ(list.status, 200);
  bool listed = false;
  for (const json& g : list.body["glossaries"]) listed = listed || g["glossary_id"] == id;
  EXPECT_TRUE(listed) << list.text;
  EXPECT_EQ(get("/v2/glossaries/" + id).body, made.body);
  const Answer entries = get("/v2/glossaries/" + id + "/entries");
  EXPECT_EQ(entries.text, "bicycle\tVelo\nstreet\tGasse");
  EXPECT_EQ(entries.header("Content-Type").rfind("text/tab-separated-values", 0), 0u);

  const Answer translated = post_form(
      "/v2/translate", {{"text", kBicycle}, {"source_lang", "EN"}, {"target_lang", "DE"}, {"glossary_id", id}});
  ASSERT_EQ(translated.status, 200) << translated.text;
  EXPECT_NE(translated.body["translations"][0]["text"].get<std::string>().find("Velo"), std::string::npos)
      << translated.text;

  const Answer deleted = answer_of(server_->client()->Delete(("/v2/glossaries/" + id).c_str(), auth("k-one")));
  EXPECT_EQ(deleted.status, 204);
  EXPECT_EQ(get("/v2/glossaries/" + id).status, 404);
}

TEST_F(ServeDeepL, AGlossaryIsSeenOnlyByTheKeyThatMadeIt) {
  const Answer made = create_glossary("bicycle\tVelo");
  ASSERT_EQ(made.status, 201) << made.text;
  const std::string id = made.body["glossary_id"];
  EXPECT_EQ(get("/v2/glossaries/" + id, "k-two").status, 404);
  const Answer listed = get("/v2/glossaries", "k-two");  // kept: the loop reads into it
  for (const json& g : listed.body["glossaries"]) EXPECT_NE(g["glossary_id"], id);
  EXPECT_EQ(post_form("/v2/translate",
                      {{"text", kBicycle}, {"source_lang", "EN"}, {"target_lang", "DE"}, {"glossary_id", id}}, "k-two")
                .status,
            404);
}

TEST_F(ServeDeepL, ABadGlossaryEntryIsA400NamingItsLine) {
  const Answer no_tab = create_glossary("bicycle\tVelo\nstreet Gasse\n");
  EXPECT_EQ(no_tab.status, 400);
  EXPECT_NE(no_tab.body.value("message", "").find("entries line 2"), std::string::npos) << no_tab.text;
  const Answer twice = create_glossary("bicycle\tVelo\nbicycle\tRad\n");
  EXPECT_EQ(twice.status, 400);
  EXPECT_NE(twice.body.value("message", "").find("entries line 2"), std::string::npos) << twice.text;
  const Answer empty = create_glossary("bicycle\t \n");
  EXPECT_EQ(empty.status, 400);
  EXPECT_NE(empty.body.value("message", "").find("entries line 1"), std::string::npos) << empty.text;
}

TEST_F(ServeDeepL, ACsvGlossaryIsReadWithItsQuotes) {
  const Answer made = create_glossary("\"bicycle\",\"Velo\"\n\"street, main\",Hauptstrasse,en,de\n", "k-one", "csv");
  ASSERT_EQ(made.status, 201) << made.text;
  EXPECT_EQ(get("/v2/glossaries/" + made.body["glossary_id"].get<std::string>() + "/entries").text,
            "bicycle\tVelo\nstreet, main\tHauptstrasse");
}

TEST_F(ServeDeepL, AGlossaryNeedsTheSourceLanguage) {
  const Answer made = create_glossary("bicycle\tVelo");
  ASSERT_EQ(made.status, 201) << made.text;
  const Answer a = post_form("/v2/translate",
                             {{"text", kBicycle}, {"target_lang", "DE"}, {"glossary_id", made.body["glossary_id"]}});
  EXPECT_EQ(a.status, 400);
  EXPECT_NE(a.body.value("message", "").find("source_lang"), std::string::npos) << a.text;
}

TEST_F(ServeDeepL, GlossaryLanguagePairsAreTheServedPairs) {
  const Answer a = get("/v2/glossary-language-pairs");
  ASSERT_EQ(a.status, 200) << a.text;
  EXPECT_EQ(a.body, json::parse(R"({"supported_languages": [{"source_lang": "en", "target_lang": "de"}]})"));
}

// A document through the API as DeepL's clients drive it: upload, status until done, result.
class DocumentRun {
 public:
  DocumentRun(const ServerProcess& server, const std::string& name, const std::string& bytes,
              const std::string& key = "k-one")
      : server_(server), key_(key) {
    const httplib::MultipartFormDataItems items = {{"file", bytes, name, "application/octet-stream"},
                                                   {"source_lang", "EN", "", ""},
                                                   {"target_lang", "DE", "", ""}};
    upload = answer_of(server.client()->Post("/v2/document", auth(key), items));
    if (upload.status == 200) {
      id = upload.body["document_id"];
      document_key = upload.body["document_key"];
    }
  }
  Answer status() const { return post("/v2/document/" + id); }
  Answer result() const { return post("/v2/document/" + id + "/result"); }
  // The status, polled until it is done or error (at most `seconds`).
  Answer finished(double seconds = 120) const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(int64_t(seconds * 1000));
    Answer s;
    while (std::chrono::steady_clock::now() < deadline) {
      s = status();
      if (s.status != 200 || s.body["status"] == "done" || s.body["status"] == "error") return s;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return s;
  }
  Answer upload;
  std::string id, document_key;

 private:
  Answer post(const std::string& path) const {
    return answer_of(server_.client()->Post(path.c_str(), auth(key_), form({{"document_key", document_key}}),
                                            "application/x-www-form-urlencoded"));
  }
  const ServerProcess& server_;
  std::string key_;
};

TEST_F(ServeDeepL, ADocumentIsTranslatedInTheBackgroundAndDownloadedOnce) {
  const DocumentRun run(*server_, "hello.txt", kBicycle + "\n" + kDogs + "\n");
  ASSERT_EQ(run.upload.status, 200) << run.upload.text;
  EXPECT_EQ(run.document_key.size(), 64u);
  const Answer status = run.finished();
  ASSERT_EQ(status.status, 200) << status.text;
  ASSERT_EQ(status.body["status"], "done") << status.text;
  EXPECT_EQ(status.body["document_id"], run.id);
  EXPECT_EQ(status.body["billed_characters"], kBicycle.size() + kDogs.size());
  const Answer result = run.result();
  ASSERT_EQ(result.status, 200) << result.text;
  const std::vector<std::string> expected = libre({kBicycle, kDogs});
  EXPECT_EQ(result.text, expected[0] + "\n" + expected[1] + "\n");
  EXPECT_EQ(run.result().status, 404);  // once
}

TEST_F(ServeDeepL, ADocumentIsSeenOnlyWithItsKeyAndDocumentKey) {
  const DocumentRun run(*server_, "hello.txt", kDogs + "\n");
  ASSERT_EQ(run.upload.status, 200) << run.upload.text;
  const Answer wrong = answer_of(server_->client()->Post(("/v2/document/" + run.id).c_str(), auth("k-one"),
                                                         form({{"document_key", std::string(64, 'A')}}),
                                                         "application/x-www-form-urlencoded"));
  EXPECT_EQ(wrong.status, 404);
  const Answer other = answer_of(server_->client()->Post(("/v2/document/" + run.id).c_str(), auth("k-two"),
                                                         form({{"document_key", run.document_key}}),
                                                         "application/x-www-form-urlencoded"));
  EXPECT_EQ(other.status, 404);
  EXPECT_EQ(run.finished().body["status"], "done");
}

TEST_F(ServeDeepL, ADocumentOfAnUnknownTypeOrNotOfItsTypeIsA400) {
  const DocumentRun unknown(*server_, "notes.xyz", "text");
  EXPECT_EQ(unknown.upload.status, 400);
  EXPECT_NE(unknown.upload.body.value("message", "").find(".docx"), std::string::npos) << unknown.upload.text;
  const DocumentRun broken(*server_, "report.docx", "not a zip archive");
  EXPECT_EQ(broken.upload.status, 400) << broken.upload.text;
}

TEST_F(ServeDeepL, AWordDocumentComesBackAWordDocument) {
  const std::string path = data_dir() + "/files/report.docx";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is not there yet";
  const DocumentRun run(*server_, "report.docx", file_bytes(path));
  ASSERT_EQ(run.upload.status, 200) << run.upload.text;
  const Answer status = run.finished();
  ASSERT_EQ(status.body["status"], "done") << status.text;
  const Answer result = run.result();
  ASSERT_EQ(result.status, 200);
  EXPECT_EQ(result.text.substr(0, 2), "PK");
}

TEST(ServeDeepLStops, AServerStoppedWhileDocumentsAreTranslatedEndsInTime) {
  ServerProcess server(en_de_args("1"));
  std::string text;
  for (int copy = 0; copy < 3; ++copy)
    for (const std::string& line : read_lines(data_dir() + "/samples/multi30k_val100.en")) text += line + "\n";
  // One worker: the first runs, the others wait in the queue.
  for (int i = 0; i < 3; ++i) ASSERT_EQ(DocumentRun(server, "long.txt", text).upload.status, 200);
  EXPECT_EQ(server.stop(SIGTERM, 30), 0) << server.stderr_text();
}

}  // namespace
