// POST /detect and source "auto" of `ordo serve` as LibreTranslate's clients use them: the real
// binary on 127.0.0.1 (ephemeral port) serving the bundled en-de and de-en, JSON and form
// bodies, German, English, mixed and unserved (French) text, bad requests, and /translate with
// source "auto" translating as the command line does from the detected language.
// ctest-label: integration
#include <gtest/gtest.h>

#include <set>

#include "server/server_process.h"

namespace {

using nlohmann::json;
using ordo::testing::cli_json;
using ordo::testing::ServerProcess;

const std::string kGerman = "Ein Mann fährt mit dem Fahrrad die Straße entlang.";
const std::string kEnglish = "A woman in a red dress is playing the guitar on the street.";
const std::string kFrench = "Un homme descend la rue à vélo pendant que les enfants jouent dans le parc.";

using ordo::testing::Answer;
using ordo::testing::answer_of;

class ServeDetect : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new ServerProcess({"--model", "en-de", "--model", "de-en", "--threads", "2"});
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  static Answer post(const std::string& path, const json& body) {
    return answer_of(server_->client()->Post(path.c_str(), body.dump(), "application/json"));
  }
  static Answer post(const std::string& path, const std::string& body, const std::string& type) {
    return answer_of(server_->client()->Post(path.c_str(), body, type.c_str()));
  }
  static ServerProcess* server_;
};
ServerProcess* ServeDetect::server_ = nullptr;

// One detection as LibreTranslate answers it: a list of {confidence, language}, best first.
void expect_detections(const json& list, const json& language, double at_least) {
  ASSERT_TRUE(list.is_array()) << list;
  ASSERT_FALSE(list.empty());
  EXPECT_EQ(list[0]["language"], language) << list;
  EXPECT_GE(list[0]["confidence"].get<double>(), at_least) << list;
  for (size_t i = 0; i < list.size(); ++i) {
    EXPECT_EQ(list[i].size(), 2u) << list[i];  // confidence and language, nothing else
    EXPECT_GE(list[i]["confidence"].get<double>(), 0) << list;
    EXPECT_LE(list[i]["confidence"].get<double>(), 100) << list;
    if (i > 0) EXPECT_GE(list[i - 1]["confidence"].get<double>(), list[i]["confidence"].get<double>()) << list;
  }
}

TEST_F(ServeDetect, GermanIsDetected) {
  const Answer de = post("/detect", json{{"q", kGerman}});
  ASSERT_EQ(de.status, 200) << de.text;
  expect_detections(de.body, "de", 80);
}

TEST_F(ServeDetect, EnglishIsDetected) {
  const Answer en = post("/detect", json{{"q", kEnglish}});
  ASSERT_EQ(en.status, 200) << en.text;
  expect_detections(en.body, "en", 80);
}

// As LibreTranslate's page and most clients send it: a form, urlencoded or multipart.
TEST_F(ServeDetect, AnUrlencodedFormIsAnsweredAsJson) {
  const Answer form = answer_of(server_->client()->Post("/detect", httplib::Params{{"q", kGerman}}));
  ASSERT_EQ(form.status, 200) << form.text;
  EXPECT_EQ(form.body, post("/detect", json{{"q", kGerman}}).body);
}

TEST_F(ServeDetect, AMultipartFormIsAnsweredAsJson) {
  const Answer multipart =
      answer_of(server_->client()->Post("/detect", httplib::MultipartFormDataItems{{"q", kEnglish, "", ""}}));
  ASSERT_EQ(multipart.status, 200) << multipart.text;
  EXPECT_EQ(multipart.body, post("/detect", json{{"q", kEnglish}}).body);
}

TEST_F(ServeDetect, MixedTextGivesBothLanguages) {
  const std::string mixed =
      "Das Wetter ist heute sehr schön, und wir gehen am Nachmittag in den Park spazieren. "
      "Die Kinder spielen den ganzen Tag mit dem Hund auf der großen Wiese. "
      "The weather is very nice today, and we are going for a walk in the park.";
  const Answer a = post("/detect", json{{"q", mixed}});
  ASSERT_EQ(a.status, 200) << a.text;
  // Both, best first; which one leads is CLD2's estimate of their shares (here about 65/34
  // for English: its scores weigh a language's chunks, not only their bytes).
  ASSERT_EQ(a.body.size(), 2u) << a.body;
  expect_detections(a.body, a.body[0]["language"], 20);
  EXPECT_EQ(std::set<std::string>({a.body[0]["language"], a.body[1]["language"]}), std::set<std::string>({"de", "en"}));
  EXPECT_GT(a.body[1]["confidence"].get<double>(), 20) << a.body;
  EXPECT_LE(a.body[0]["confidence"].get<double>() + a.body[1]["confidence"].get<double>(), 100) << a.body;
}

TEST_F(ServeDetect, ArrayOfTextsGivesOneListEach) {
  const Answer a = post("/detect", json{{"q", {kGerman, kEnglish, kGerman}}});
  ASSERT_EQ(a.status, 200) << a.text;
  ASSERT_TRUE(a.body.is_array() && a.body.size() == 3) << a.body;
  expect_detections(a.body[0], "de", 80);
  expect_detections(a.body[1], "en", 80);
  EXPECT_EQ(a.body[2], a.body[0]);
  // A repeated form field is a list too.
  const Answer form = answer_of(server_->client()->Post("/detect", httplib::Params{{"q", kEnglish}, {"q", kGerman}}));
  ASSERT_EQ(form.status, 200) << form.text;
  ASSERT_EQ(form.body.size(), 2u) << form.body;
  EXPECT_EQ(form.body[0], a.body[1]);
  EXPECT_EQ(form.body[1], a.body[0]);
}

TEST_F(ServeDetect, OnlyServedLanguagesElseEnglishWithConfidenceZero) {
  // French is not served: as LibreTranslate when it detects none of its languages.
  const json nothing = json::array({{{"confidence", 0.0}, {"language", "en"}}});
  EXPECT_EQ(post("/detect", json{{"q", kFrench}}).body, nothing);
  EXPECT_EQ(post("/detect", json{{"q", "12345 !!!"}}).body, nothing);
  // Control characters and noncharacters do not hide the language around them.
  const Answer controls =
      post("/detect", json{{"q", "Ein Mann fährt\u0001 mit dem Fahrrad \ufffe die Straße entlang."}});
  ASSERT_EQ(controls.status, 200) << controls.text;
  expect_detections(controls.body, "de", 50);
}

TEST_F(ServeDetect, AnEmptyOrInvalidQuestionIs400NamingWhatIsWrong) {
  const struct {
    std::string body, type, error;
  } cases[] = {
      {R"({"q": ""})", "application/json", "Invalid request: missing q parameter"},
      {R"({"q": []})", "application/json", "Invalid request: missing q parameter"},
      {R"({})", "application/json", "Invalid request: missing q parameter"},
      {"q=", "application/x-www-form-urlencoded", "Invalid request: missing q parameter"},
      {R"({"q": 5})", "application/json",
       "Invalid request: field 'q' must be a string or an array of strings, not number"},
      {R"({"q": ["a", 1]})", "application/json",
       "Invalid request: field 'q' must be a string or an array of strings (element 1 is number)"},
      {"q=a%FF", "application/x-www-form-urlencoded", "Invalid request: q: invalid UTF-8 at byte 2"},
      {"q=Hallo&q=b%C0%80", "application/x-www-form-urlencoded", "Invalid request: q[1]: invalid UTF-8 at byte 2"},
      {R"({"q": "a)", "application/json", "Invalid JSON format: "},
  };
  for (const auto& c : cases) {
    const Answer a = post("/detect", c.body, c.type);
    EXPECT_EQ(a.status, 400) << c.body << ": " << a.text;
    ASSERT_TRUE(a.body.is_object() && a.body.contains("error")) << c.body << ": " << a.text;
    EXPECT_EQ(a.body["error"].get<std::string>().rfind(c.error, 0), 0u) << c.body << ": " << a.body;
  }
}

TEST_F(ServeDetect, MoreTextsThanTranslateTakesAre400) {
  const Answer many = post("/detect", json{{"q", std::vector<std::string>(300, "Hallo")}});
  EXPECT_EQ(many.status, 400) << many.text;
}

TEST_F(ServeDetect, TranslateWithSourceAutoTranslatesFromTheDetectedLanguage) {
  const std::vector<json> de_en = cli_json("translate -m de-en", {kGerman});
  const std::vector<json> en_de = cli_json("translate -m en-de", {kEnglish});
  const Answer de = post("/translate", json{{"q", kGerman}, {"source", "auto"}, {"target", "en"}});
  ASSERT_EQ(de.status, 200) << de.text;
  EXPECT_EQ(de.body["translatedText"], de_en[0]["text"]);
  ASSERT_TRUE(de.body["detectedLanguage"].is_object()) << de.body;
  EXPECT_EQ(de.body["detectedLanguage"]["language"], "de");
  EXPECT_GE(de.body["detectedLanguage"]["confidence"].get<double>(), 80);
  // The same confidence /detect gives.
  EXPECT_EQ(de.body["detectedLanguage"], post("/detect", json{{"q", kGerman}}).body[0]);

  const Answer en = post("/translate", json{{"q", kEnglish}, {"source", "auto"}, {"target", "de"}});
  ASSERT_EQ(en.status, 200) << en.text;
  EXPECT_EQ(en.body["translatedText"], en_de[0]["text"]);
  EXPECT_EQ(en.body["detectedLanguage"]["language"], "en");

  // A list: the texts are detected together (as LibreTranslate), one detectedLanguage per text.
  const Answer list = post("/translate", json{{"q", {kGerman, kGerman}}, {"source", "auto"}, {"target", "en"}});
  ASSERT_EQ(list.status, 200) << list.text;
  EXPECT_EQ(list.body["translatedText"], json({de_en[0]["text"], de_en[0]["text"]}));
  ASSERT_TRUE(list.body["detectedLanguage"].is_array() && list.body["detectedLanguage"].size() == 2) << list.body;
  EXPECT_EQ(list.body["detectedLanguage"][0]["language"], "de");
  EXPECT_EQ(list.body["detectedLanguage"][1], list.body["detectedLanguage"][0]);

  // A form, as LibreTranslate's page sends it.
  const Answer form = answer_of(
      server_->client()->Post("/translate", httplib::Params{{"q", kGerman}, {"source", "auto"}, {"target", "en"}}));
  ASSERT_EQ(form.status, 200) << form.text;
  EXPECT_EQ(form.body, de.body);

  // Without "auto" there is no detectedLanguage.
  const Answer named = post("/translate", json{{"q", kGerman}, {"source", "de"}, {"target", "en"}});
  ASSERT_EQ(named.status, 200) << named.text;
  EXPECT_FALSE(named.body.contains("detectedLanguage"));
}

TEST_F(ServeDetect, SourceAutoRefusesWhatCannotBeTranslated) {
  // German text into German: the detection is reliable, no model does de -> de.
  const Answer same = post("/translate", json{{"q", kGerman}, {"source", "auto"}, {"target", "de"}});
  EXPECT_EQ(same.status, 400);
  EXPECT_EQ(same.body["error"],
            "source 'auto': q is German (de), which is not available as a source language for German (de) "
            "(sources: en); name the source language");
  // French text: reliably French, which this server does not translate from.
  const Answer french = post("/translate", json{{"q", kFrench}, {"source", "auto"}, {"target", "de"}});
  EXPECT_EQ(french.status, 400);
  EXPECT_EQ(french.body["error"],
            "source 'auto': q is French (fr), which this server does not translate from (served languages: en, de)");
  // Nothing to detect, and one language translates into de: that one, with confidence 0.
  const Answer digits = post("/translate", json{{"q", "12345"}, {"source", "auto"}, {"target", "de"}});
  ASSERT_EQ(digits.status, 200) << digits.text;
  EXPECT_EQ(digits.body["detectedLanguage"], json({{"confidence", 0.0}, {"language", "en"}}));
}

}  // namespace
