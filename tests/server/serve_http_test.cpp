// `ordo serve` used as its clients use it: the real binary on 127.0.0.1 (ephemeral port),
// LibreTranslate's API and ordo's, answers compared with `ordo translate/summarize` on the same
// inputs, every error with its status and message, limits, access, SIGTERM. Every loop is
// bounded in count and time.
// ctest-label: integration
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "server/server_process.h"
#include "support/fixtures.h"
#include "support/temp_dir.h"

namespace {

using nlohmann::json;
using ordo::testing::cli_json;
using ordo::testing::ServerProcess;
using ordo::testing::TempDir;

using ordo::testing::Answer;
using ordo::testing::answer_of;
using ordo::testing::MetricsWatch;

Answer post(const ServerProcess& server, const std::string& path, const std::string& body,
            const std::string& type = "application/json", const httplib::Headers& headers = {}) {
  return answer_of(server.client()->Post(path.c_str(), headers, body, type.c_str()));
}

Answer post(const ServerProcess& server, const std::string& path, const json& body) {
  return post(server, path, body.dump());
}

Answer get(const ServerProcess& server, const std::string& path) {
  return answer_of(server.client()->Get(path.c_str()));
}

std::vector<std::string> sample_lines(size_t n, size_t skip = 0) {
  std::ifstream in(ordo::testing::data_dir() + "/samples/multi30k_val100.en");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line) && lines.size() < n + skip;) lines.push_back(line);
  return std::vector<std::string>(lines.begin() + static_cast<long>(skip), lines.end());
}

std::vector<std::string> texts_of(const std::vector<json>& lines) {
  std::vector<std::string> out;
  for (const json& line : lines) out.push_back(line["text"]);
  return out;
}

// Served /v1 results against `ordo ... --json` lines: the same texts, tokens and scores, bit
// for bit (the kernels are batch-invariant: tests/nn/batch_invariance_test.cpp).
void expect_same_results(const json& served, const std::vector<json>& cli) {
  ASSERT_EQ(served.size(), cli.size());
  for (size_t i = 0; i < cli.size(); ++i) {
    EXPECT_EQ(served[i]["text"], cli[i]["text"]) << i;
    EXPECT_EQ(served[i]["tokens"], cli[i]["tokens"]) << i;
    EXPECT_EQ(served[i]["score"], cli[i]["score"]) << i;  // bitwise: batch invariance
    ASSERT_EQ(served[i]["n_best"].size(), cli[i]["n_best"].size()) << i;
    for (size_t k = 0; k < cli[i]["n_best"].size(); ++k) {
      EXPECT_EQ(served[i]["n_best"][k]["text"], cli[i]["n_best"][k]["text"]) << i << "/" << k;
      EXPECT_EQ(served[i]["n_best"][k]["score"], cli[i]["n_best"][k]["score"]) << i << "/" << k;
    }
  }
}

double metric(const std::string& metrics_text, const std::string& sample) {
  const size_t at = metrics_text.find("\n" + sample + " ");
  if (at == std::string::npos) return -1;
  return std::stod(metrics_text.substr(at + sample.size() + 2));
}

std::string m2m100() { return ordo::testing::fixture_dir("m2m100"); }

const std::vector<std::string> kHtmlRuns = {"A man is sleeping on a couch.", "Two dogs & a cat play in the snow.",
                                            "A boy", "A man is riding a red bicycle."};

// `ordo translate -m en-de --json` on every sentence the tests below send with the default
// settings, in one run (each run of the binary costs a LibTorch start-up).
const json& reference(const std::string& sentence) {
  static const std::map<std::string, json> answers = [] {
    std::vector<std::string> inputs = sample_lines(5);
    for (const std::string& line : sample_lines(24, 20)) inputs.push_back(line);
    for (const std::string& run : kHtmlRuns) inputs.push_back(run);
    const std::vector<json> lines = cli_json("translate -m en-de", inputs);
    std::map<std::string, json> out;
    for (size_t i = 0; i < inputs.size(); ++i) out[inputs[i]] = lines[i];
    return out;
  }();
  const auto it = answers.find(sentence);
  if (it == answers.end()) throw std::runtime_error("no reference for " + sentence);
  return it->second;
}

std::vector<std::string> reference_texts(const std::vector<std::string>& sentences) {
  std::vector<std::string> out;
  for (const std::string& s : sentences) out.push_back(reference(s)["text"]);
  return out;
}

// One server for most tests: the bundled en-de and dialogsum, and the tiny M2M100 fixture.
class Serve : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new ServerProcess({"--model", "en-de", "--model", "dialogsum", "--model", m2m100(), "--threads", "2",
                                 "--inter-threads", "2", "--max-texts", "8", "--max-chars", "5000", "--max-body-bytes",
                                 "65536"});
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  static const ServerProcess& server() { return *server_; }
  static ServerProcess* server_;
};
ServerProcess* Serve::server_ = nullptr;

TEST_F(Serve, HealthSaysOk) { EXPECT_EQ(get(server(), "/health").body, json({{"status", "ok"}})); }

TEST_F(Serve, ReadySaysReadyOnceTheModelsAreLoaded) {
  EXPECT_EQ(get(server(), "/ready").body, json({{"status", "ready"}}));
}

TEST_F(Serve, V1ModelsDescribesEveryServedModel) {
  const Answer models = get(server(), "/v1/models");
  ASSERT_EQ(models.status, 200);
  std::map<std::string, json> by_name;
  for (const json& m : models.body["models"]) by_name[m["name"]] = m;
  ASSERT_EQ(by_name.size(), 3u);
  EXPECT_EQ(by_name["en-de"]["task"], "translate");
  EXPECT_EQ(by_name["en-de"]["source"], "en");
  EXPECT_EQ(by_name["en-de"]["target"], "de");
  EXPECT_EQ(by_name["dialogsum"]["task"], "summarize");
  EXPECT_EQ(by_name["m2m100"]["model_type"], "m2m_100");
  EXPECT_EQ(by_name["en-de"]["folder"], "en-de");  // the folder's name, no server path
  EXPECT_GT(by_name["m2m100"]["languages"].size(), 50u);
}

TEST_F(Serve, LanguagesNamesEachLanguageAndTheTargetsItTranslatesInto) {
  const Answer languages = get(server(), "/languages");
  ASSERT_EQ(languages.status, 200);
  ASSERT_TRUE(languages.body.is_array());
  json english, german;
  for (const json& l : languages.body) {
    EXPECT_TRUE(l.contains("code") && l.contains("name") && l["targets"].is_array()) << l;
    if (l["code"] == "en") english = l;
    if (l["code"] == "de") german = l;
  }
  EXPECT_EQ(english["name"], "English");
  EXPECT_NE(std::find(english["targets"].begin(), english["targets"].end(), "de"), english["targets"].end());
  EXPECT_EQ(german["name"], "German");
  EXPECT_NE(std::find(german["targets"].begin(), german["targets"].end(), "fr"), german["targets"].end());
}

TEST_F(Serve, LibreTranslateJsonEqualsTheCommandLine) {
  const std::vector<std::string> lines = sample_lines(3);
  const std::vector<std::string> expected = reference_texts(lines);
  Answer one = post(server(), "/translate", json{{"q", lines[0]}, {"source", "en"}, {"target", "de"}});
  ASSERT_EQ(one.status, 200) << one.text;
  EXPECT_EQ(one.body, json({{"translatedText", expected[0]}}));
  Answer many =
      post(server(), "/translate", json{{"q", lines}, {"source", "en"}, {"target", "de"}, {"format", "text"}});
  ASSERT_EQ(many.status, 200) << many.text;
  EXPECT_EQ(many.body, json({{"translatedText", expected}}));
  // Lines of one text are translated one by one, blank lines and line ends kept.
  Answer text = post(server(), "/translate",
                     json{{"q", lines[1] + "\n\n" + lines[2] + "\r\n"}, {"source", "en"}, {"target", "de"}});
  EXPECT_EQ(text.body["translatedText"], expected[1] + "\n\n" + expected[2] + "\r\n");
  // A paragraph is cut into sentences and rejoined, as `ordo translate --split-sentences` does.
  const std::vector<std::string> paragraphs = {
      "Mr. Smith is sleeping on a couch. Two dogs play in the snow.  A boy sits on a bench.",
      "A woman rides a bike. She wears a red helmet."};
  const std::vector<std::string> split = texts_of(cli_json("translate -m en-de --split-sentences", paragraphs));
  Answer paragraph = post(server(), "/translate",
                          json{{"q", paragraphs[0] + "\n" + paragraphs[1]}, {"source", "en"}, {"target", "de"}});
  EXPECT_EQ(paragraph.body["translatedText"], split[0] + "\n" + split[1]);
  EXPECT_NE(split[0].find("  "), std::string::npos);  // the spacing between sentences is the input's
  // Empty texts in an array come back empty.
  Answer empty = post(server(), "/translate", json{{"q", {"", lines[0]}}, {"source", "en"}, {"target", "de"}});
  EXPECT_EQ(empty.body["translatedText"], json({"", expected[0]}));
}

TEST_F(Serve, LibreTranslateFormFields) {
  const std::vector<std::string> lines = sample_lines(2, 3);
  const std::vector<std::string> expected = reference_texts(lines);
  auto client = server().client();
  httplib::Params form = {{"q", lines[0]}, {"source", "en"}, {"target", "de"}};
  Answer urlencoded = answer_of(client->Post("/translate", form));
  ASSERT_EQ(urlencoded.status, 200) << urlencoded.text;
  EXPECT_EQ(urlencoded.body, json({{"translatedText", expected[0]}}));
  httplib::MultipartFormDataItems items = {
      {"q", lines[0], "", ""}, {"q", lines[1], "", ""}, {"source", "en", "", ""}, {"target", "de", "", ""}};
  Answer multipart = answer_of(client->Post("/translate", items));
  ASSERT_EQ(multipart.status, 200) << multipart.text;
  EXPECT_EQ(multipart.body, json({{"translatedText", expected}}));  // a repeated field is an array
  // Longer than httplib's own 8 KB cap on urlencoded bodies.
  std::string long_text;
  for (int i = 0; i < 60; ++i) long_text += lines[0] + "\n";
  Answer long_form =
      answer_of(client->Post("/translate", httplib::Params{{"q", long_text}, {"source", "en"}, {"target", "de"}}));
  ASSERT_EQ(long_form.status, 200) << long_form.text;
  EXPECT_EQ(long_form.body["translatedText"].get<std::string>().substr(0, expected[0].size() + 1), expected[0] + "\n");
}

TEST_F(Serve, AlternativesAreTheNBestTranslations) {
  const std::vector<std::string> lines = sample_lines(2, 5);
  // alternatives=2 asks for 3 hypotheses; the model's beam (4) is kept.
  const std::vector<json> nbest = cli_json("translate -m en-de -b 4 -n 3", lines);
  Answer a = post(server(), "/translate", json{{"q", lines}, {"source", "en"}, {"target", "de"}, {"alternatives", 2}});
  ASSERT_EQ(a.status, 200) << a.text;
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(a.body["translatedText"][i], nbest[i]["text"]);
    json expected = json::array();
    for (size_t k = 1; k < nbest[i]["n_best"].size(); ++k) {
      const json& t = nbest[i]["n_best"][k]["text"];
      if (t != nbest[i]["text"] && std::find(expected.begin(), expected.end(), t) == expected.end())
        expected.push_back(t);
    }
    EXPECT_EQ(a.body["alternatives"][i], expected);
  }
  Answer single =
      post(server(), "/translate", json{{"q", lines[0]}, {"source", "en"}, {"target", "de"}, {"alternatives", 1}});
  ASSERT_TRUE(single.body["alternatives"].is_array());
  EXPECT_LE(single.body["alternatives"].size(), 1u);
  EXPECT_FALSE(post(server(), "/translate", json{{"q", lines[0]}, {"source", "en"}, {"target", "de"}})
                   .body.contains("alternatives"));
}

std::string html_escaped(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : std::string(1, c);
  return out;
}

// A document of kHtmlRuns' first three in markup, and what translating it must give.
const std::string kHtmlDocument =
    "<div class=\"card\" data-x='1'>\n  <p>A man is sleeping on a couch.</p><!-- not text -->\n"
    "  <ul><li title=\"A title\">Two dogs &amp; a cat play in the snow.</li></ul>"
    "<script>var s = \"A dog\";</script> | <img src=x.png alt=\"a dog\"><br/><em>A boy</em></div>";
std::string translated_html_document() {
  const std::vector<std::string> t = reference_texts(kHtmlRuns);
  // <br> ends a sentence; the full stop the model adds to "A boy" stays outside <em>, which did
  // not cover one in the source.
  EXPECT_EQ(t[2].back(), '.') << t[2];
  return "<div class=\"card\" data-x='1'>\n  <p>" + html_escaped(t[0]) +
         "</p><!-- not text -->\n"
         "  <ul><li title=\"A title\">" +
         html_escaped(t[1]) +
         "</li></ul>"
         "<script>var s = \"A dog\";</script> | <img src=x.png alt=\"a dog\"><br/><em>" +
         html_escaped(t[2].substr(0, t[2].size() - 1)) + "</em>.</div>";
}

TEST_F(Serve, HtmlKeepsTheMarkupAndTranslatesTheText) {
  Answer a =
      post(server(), "/translate", json{{"q", kHtmlDocument}, {"source", "en"}, {"target", "de"}, {"format", "html"}});
  ASSERT_EQ(a.status, 200) << a.text;
  EXPECT_EQ(a.body["translatedText"], translated_html_document());
}

TEST_F(Serve, AnHtmlDocumentGetsNoAlternatives) {
  Answer alts =
      post(server(), "/translate",
           json{{"q", {kHtmlDocument}}, {"source", "en"}, {"target", "de"}, {"format", "html"}, {"alternatives", 1}});
  EXPECT_EQ(alts.body, json({{"translatedText", {translated_html_document()}}, {"alternatives", {json::array()}}}));
}

// A sentence with an inline tag is translated whole (the same words as without the tag), and
// the tag goes around some of them (placed by the word alignment).
TEST_F(Serve, AnInlineTagGoesAroundSomeWordsOfTheWholeSentencesTranslation) {
  Answer inline_tag = post(server(), "/translate",
                           json{{"q", "<p>A man is riding a <b>red</b> bicycle.</p>"},
                                {"source", "en"},
                                {"target", "de"},
                                {"format", "html"}});
  ASSERT_EQ(inline_tag.status, 200) << inline_tag.text;
  std::string answer = inline_tag.body["translatedText"];
  const size_t open = answer.find("<b>"), close = answer.find("</b>");
  ASSERT_TRUE(open != std::string::npos && close != std::string::npos && open + 3 < close) << answer;
  answer.erase(close, 4);
  answer.erase(open, 3);
  EXPECT_EQ(answer, "<p>" + html_escaped(reference_texts(kHtmlRuns)[3]) + "</p>");
}

TEST_F(Serve, MultilingualModelsServeEveryPairTheyKnow) {
  const std::vector<std::string> lines = sample_lines(2);
  const std::vector<std::string> expected =
      texts_of(cli_json("translate -m '" + m2m100() + "' --source-lang en --target-lang fr", lines));
  Answer a = post(server(), "/translate", json{{"q", lines}, {"source", "en"}, {"target", "fr"}});
  ASSERT_EQ(a.status, 200) << a.text;
  EXPECT_EQ(a.body["translatedText"], json(expected));
  // The same through /v1, choosing the model by its languages.
  Answer v1 = post(server(), "/v1/translate", json{{"text", lines}, {"source_lang", "en"}, {"target_lang", "fr"}});
  ASSERT_EQ(v1.status, 200) << v1.text;
  EXPECT_EQ(v1.body["model"], "m2m100");
  EXPECT_EQ(v1.body["results"][1]["text"], expected[1]);
}

TEST_F(Serve, V1TranslateTakesEveryDecodingOption) {
  const std::vector<std::string> lines = sample_lines(3, 8);
  const json options = {{"beam_size", 3},
                        {"n_best", 2},
                        {"max_new_tokens", 12},
                        {"min_new_tokens", 2},
                        {"length_penalty", 0.8},
                        {"no_repeat_ngram_size", 2},
                        {"repetition_penalty", 1.1},
                        {"early_stopping", true}};
  json request = options;
  request["model"] = "en-de";
  request["text"] = lines;
  Answer a = post(server(), "/v1/translate", request);
  ASSERT_EQ(a.status, 200) << a.text;
  EXPECT_EQ(a.body["model"], "en-de");
  expect_same_results(a.body["results"],
                      cli_json("translate -m en-de -b 3 -n 2 --max-length 12 --min-length 2 --length-penalty 0.8 "
                               "--no-repeat-ngram-size 2 --repetition-penalty 1.1 --early-stopping true",
                               lines));
  // Sampling: the same seed gives the command line's samples, batched or not.
  const json sampling = {{"model", "en-de"}, {"text", lines}, {"sample", true},    {"seed", 7},
                         {"top_k", 20},      {"top_p", 0.9},  {"temperature", 0.8}};
  Answer s = post(server(), "/v1/translate", sampling);
  ASSERT_EQ(s.status, 200) << s.text;
  expect_same_results(
      s.body["results"],
      cli_json("translate -m en-de --sample true --seed 7 --top-k 20 --top-p 0.9 --temperature 0.8", lines));
  // A string text, an empty text, no text.
  Answer one = post(server(), "/v1/translate", json{{"model", "en-de"}, {"text", ""}});
  EXPECT_EQ(one.body["results"],
            json::parse(R"([{"text":"","tokens":[],"score":0.0,"n_best":[{"text":"","tokens":[],"score":0.0}]}])"));
  EXPECT_EQ(post(server(), "/v1/translate", json{{"model", "en-de"}, {"text", json::array()}}).body,
            json({{"model", "en-de"}, {"results", json::array()}}));
}

// An input with no text (spaces, a NUL) gives an empty output on every route,
// by the library's one policy (ordo::has_text), never text the model made up.
TEST_F(Serve, BlankInputGivesEmptyOutputOnEveryRoute) {
  const json empty =
      json::parse(R"([{"text":"","tokens":[],"score":0.0,"n_best":[{"text":"","tokens":[],"score":0.0}]}])");
  for (const std::string blank : {std::string("   "), std::string("\t  "), std::string(1, '\0')}) {
    SCOPED_TRACE(json(blank).dump());
    Answer t = post(server(), "/v1/translate", json{{"model", "en-de"}, {"text", blank}});
    ASSERT_EQ(t.status, 200) << t.text;
    EXPECT_EQ(t.body["results"], empty);
    Answer s = post(server(), "/v1/summarize", json{{"text", blank}});
    ASSERT_EQ(s.status, 200) << s.text;
    EXPECT_EQ(s.body["results"], empty);
  }
  Answer lt = post(server(), "/translate", json{{"q", "   "}, {"source", "en"}, {"target", "de"}});
  ASSERT_EQ(lt.status, 200) << lt.text;
  EXPECT_EQ(lt.body["translatedText"].get<std::string>().find_first_not_of(" \t\n"), std::string::npos)
      << lt.body.dump();
}

TEST_F(Serve, V1SummarizeEqualsOrdoSummarize) {
  std::ifstream in(ordo::testing::data_dir() + "/samples/dialogsum_dev30.jsonl");
  std::string line;
  std::getline(in, line);
  const std::string dialogue = json::parse(line)["dialogue"];
  const std::vector<json> cli = cli_json("summarize -m dialogsum --document", {dialogue});
  Answer a = post(server(), "/v1/summarize", json{{"text", dialogue}});  // the only summarizer
  ASSERT_EQ(a.status, 200) << a.text;
  EXPECT_EQ(a.body["model"], "dialogsum");
  expect_same_results(a.body["results"], cli);
  EXPECT_EQ(post(server(), "/v1/summarize", json{{"text", "x"}, {"model", "en-de"}}).body["error"],
            "Invalid request: unknown summarize model 'en-de' (served: dialogsum)");
}

// Five dialogues joined (3,990 characters: under the shared server's limit), about 1,000
// tokens for a model of 512 positions.
std::string long_document() {
  std::ifstream in(ordo::testing::data_dir() + "/samples/dialogsum_dev30.jsonl");
  std::string document;
  int row = 0;
  for (std::string line; std::getline(in, line) && row < 18; ++row)
    if (row >= 13) document += (document.empty() ? "" : "\n\n") + json::parse(line)["dialogue"].get<std::string>();
  return document;
}

TEST_F(Serve, V1SummarizeALongDocumentInPartsAsOrdoSummarize) {
  const std::string document = long_document();
  const std::vector<json> cli = cli_json("summarize -m dialogsum --document", {document});
  const Answer a = post(server(), "/v1/summarize", json{{"text", document}});
  ASSERT_EQ(a.status, 200) << a.text;
  expect_same_results(a.body["results"], cli);
  EXPECT_FALSE(a.body["results"][0].contains("truncated_tokens")) << a.text;
  // Its last dialogue (Sara packing, her ID card) is in the summary.
  EXPECT_NE(a.body["results"][0]["text"].get<std::string>().find("Sara"), std::string::npos) << a.text;
}

TEST_F(Serve, V1SummarizeLongInputRefuseAndBadChunkTokensAre400s) {
  const std::string document = long_document();
  const Answer refused = post(server(), "/v1/summarize", json{{"text", document}, {"long_input", "refuse"}});
  EXPECT_EQ(refused.status, 400) << refused.text;
  EXPECT_NE(refused.text.find("more than the 512 the model takes"), std::string::npos) << refused.text;
  const Answer small = post(server(), "/v1/summarize", json{{"text", document}, {"chunk_tokens", 5}});
  EXPECT_EQ(small.status, 400) << small.text;
  EXPECT_NE(small.text.find("chunk_tokens 5: a chunk holds from 32 to 512 tokens"), std::string::npos) << small.text;
  const Answer unknown = post(server(), "/v1/summarize", json{{"text", document}, {"long_input", "cut"}});
  EXPECT_EQ(unknown.status, 400) << unknown.text;
  EXPECT_NE(unknown.text.find("field 'long_input' is 'cut'"), std::string::npos) << unknown.text;
  const Answer streamed = post(server(), "/v1/summarize", json{{"text", document}, {"stream", true}});
  EXPECT_EQ(streamed.status, 400) << streamed.text;
  EXPECT_NE(streamed.text.find("does not stream"), std::string::npos) << streamed.text;
  const Answer translate = post(server(), "/v1/translate", json{{"text", "x"}, {"long_input", "chunk"}});
  EXPECT_EQ(translate.status, 400) << translate.text;
}

TEST(ServeFamilies, BartFoldersSummarizeOnV1SummarizeAsTheCommandLine) {
  // The bart fixture as it is, and a copy whose config.json has a T5-style summarization task.
  TempDir dir;
  const std::string bart = ordo::testing::fixture_dir("bart");
  const std::string tasks = dir.file("bart_tasks");
  json config = json::parse(std::ifstream(bart + "/config.json"));
  config["task_specific_params"] = {
      {"summarization", {{"prefix", "summarize: "}, {"num_beams", 2}, {"max_length", 10}}}};
  std::filesystem::create_directories(tasks);
  ordo::testing::copy_dir(bart, tasks);
  std::ofstream(tasks + "/config.json") << config.dump(2);
  ServerProcess server({"--model", bart, "--model", tasks, "--threads", "1"});

  std::map<std::string, json> by_name;
  const Answer models = get(server, "/v1/models");
  for (const json& m : models.body["models"]) by_name[m["name"]] = m;
  EXPECT_EQ(by_name["bart"]["task"], "summarize");  // model_type bart: a summarizer
  EXPECT_EQ(by_name["bart_tasks"]["task"], "summarize");

  const std::vector<std::string> texts = {
      "The tower is 324 metres tall, about the same height as an 81-storey building.",
      "It was the first structure to reach a height of 300 metres."};
  for (const std::string& folder : {bart, tasks}) {
    const std::string name = folder == bart ? "bart" : "bart_tasks";
    const std::vector<json> cli = cli_json("summarize -m '" + folder + "'", texts);
    const Answer a = post(server, "/v1/summarize", json{{"text", texts}, {"model", name}});
    ASSERT_EQ(a.status, 200) << a.text;
    expect_same_results(a.body["results"], cli);
  }
  // The task's prefix is really applied: the served summary is the plain folder's of the prefixed text.
  const Answer prefixed =
      post(server, "/v1/summarize",
           json{{"text", "summarize: " + texts[0]}, {"model", "bart"}, {"beam_size", 2}, {"max_length", 10}});
  const Answer with_task = post(server, "/v1/summarize", json{{"text", texts[0]}, {"model", "bart_tasks"}});
  ASSERT_EQ(prefixed.status, 200) << prefixed.text;
  EXPECT_EQ(with_task.body["results"][0]["text"], prefixed.body["results"][0]["text"]);
  EXPECT_EQ(with_task.body["results"][0]["score"], prefixed.body["results"][0]["score"]);
  // A task the folder lacks is the request's mistake.
  const Answer unknown =
      post(server, "/v1/summarize", json{{"text", "x"}, {"model", "bart"}, {"task", "summarization"}});
  EXPECT_EQ(unknown.status, 400) << unknown.text;
  EXPECT_NE(unknown.body["error"].get<std::string>().find("no task_specific_params"), std::string::npos)
      << unknown.text;
}

// Bad requests to the shared server: each gets its status and {"error": message} alone, as
// LibreTranslate answers (the whole message, or its start when it ends with "...").
struct BadRequest {
  std::string path, type, body;
  int status;
  std::string error;
};
const std::string kLanguagePair = R"("source": "en", "target": "de")";
void expect_refused(const ServerProcess& server, const std::vector<BadRequest>& cases) {
  for (const BadRequest& c : cases) {
    const Answer a = post(server, c.path, c.body, c.type);
    EXPECT_EQ(a.status, c.status) << c.body.substr(0, 200) << "\n" << a.text;
    ASSERT_TRUE(a.body.is_object() && a.body["error"].is_string()) << a.text;
    const std::string error = a.body["error"];
    if (c.error.size() > 3 && c.error.compare(c.error.size() - 3, 3, "...") == 0)
      EXPECT_EQ(error.substr(0, c.error.size() - 3), c.error.substr(0, c.error.size() - 3)) << error;
    else
      EXPECT_EQ(error, c.error);
    EXPECT_EQ(a.body.size(), 1u) << a.text;
  }
}

TEST_F(Serve, AMissingFieldIsNamed) {
  expect_refused(server(), {
                               {"/translate", "application/json", "{" + kLanguagePair + "}", 400,
                                "Invalid request: missing q parameter"},
                               {"/translate", "application/json", R"({"q": "", )" + kLanguagePair + "}", 400,
                                "Invalid request: missing q parameter"},
                               {"/translate", "application/json", R"({"q": "Hi", "target": "de"})", 400,
                                "Invalid request: missing source parameter"},
                               {"/translate", "application/json", R"({"q": "Hi", "source": "en"})", 400,
                                "Invalid request: missing target parameter"},
                               {"/v1/translate", "application/json", R"({"text": "Hi"})", 400,
                                "Invalid request: field 'model' is required (served translate models: en-de, m2m100)"},
                               {"/v1/translate", "application/json", R"({"model": "en-de"})", 400,
                                "Invalid request: field 'text' is required (a string or an array of strings)"},
                               {"/translate", "application/json", R"({"q": [], )" + kLanguagePair + "}", 400,
                                "Invalid request: missing q parameter"},
                           });
}

TEST_F(Serve, AFieldOfTheWrongTypeOrOutOfRangeIsNamedWithWhatItMustBe) {
  expect_refused(
      server(),
      {
          {"/translate", "application/json", R"({"q": 5, )" + kLanguagePair + "}", 400,
           "Invalid request: field 'q' must be a string or an array of strings, not number"},
          {"/translate", "application/json", R"({"q": ["a", null], )" + kLanguagePair + "}", 400,
           "Invalid request: field 'q' must be a string or an array of strings (element 1 is null)"},
          {"/translate", "application/json", R"({"q": "a", "source": 1, "target": "de"})", 400,
           "Invalid request: field 'source' must be a string"},
          {"/translate", "application/json", R"({"q": "Hi", )" + kLanguagePair + R"(, "alternatives": "two"})", 400,
           "Invalid request: field 'alternatives' must be an integer from 0 to 15"},
          {"/translate", "application/json", R"({"q": "Hi", )" + kLanguagePair + R"(, "alternatives": 99})", 400,
           "Invalid request: field 'alternatives' must be an integer from 0 to 15"},
          {"/v1/translate", "application/json", R"({"model": "en-de", "text": "Hi", "beam_size": "4"})", 400,
           "Invalid request: field 'beam_size' must be an integer from 1 to 16"},
          {"/v1/translate", "application/json", R"({"model": "en-de", "text": "Hi", "temperature": 0})", 400,
           "Invalid request: field 'temperature' must be a number from 0.001 to 100"},
      });
}

TEST_F(Serve, DecodingOptionsThatContradictEachOtherAreNamed) {
  expect_refused(server(), {
                               {"/v1/translate", "application/json",
                                R"({"model": "en-de", "text": "Hi", "beam_size": 2, "n_best": 3})", 400,
                                "Invalid request: invalid decoding option: n-best (3) cannot exceed the beam size (2)"},
                           });
}

TEST_F(Serve, AnUnsupportedLanguageOrFormatIsNamed) {
  expect_refused(
      server(),
      {
          {"/translate", "application/json", R"({"q": "Hi", )" + kLanguagePair + R"(, "format": "pdf"})", 400,
           "pdf format is not supported (text, html)"},
          {"/translate", "application/json", R"({"q": "Hi", "source": "en", "target": "xx"})", 400,
           "xx is not supported (served languages: en, de, ..."},
          {"/translate", "application/json", R"({"q": "Hi", "source": "yy", "target": "de"})", 400,
           "yy is not supported (served languages: ..."},
          {"/translate", "application/json", R"({"q": "12345", "source": "auto", "target": "de"})", 400,
           "source 'auto': the language of q could not be detected, and 99 source languages translate into de (en, "
           "..."},
          {"/v1/translate", "application/json", R"({"model": "en-de", "text": "Hi", "target_lang": "fr"})", 400,
           "Invalid request: field 'target_lang': model 'en-de' translates en into de, not 'fr'"},
          {"/v1/translate", "application/json", R"({"model": "m2m100", "text": "Hi", "target_lang": "xx"})", 400,
           "Invalid request: field 'target_lang': model 'm2m100' does not know language 'xx' (known: ..."},
          {"/translate", "application/json", "{\"q\": \"Hi\", \"source\": \"e\\u0000n\", \"target\": \"de\"}", 400,
           "e\\u0000n is not supported (served languages: ..."},
          {"/translate", "application/json",
           R"({"q": "Hi", "source": ")" + std::string(60000, 's') + R"(", "target": "de"})", 400,
           std::string(64, 's') + "... is not supported (served languages: ..."},
          {"/translate", "application/json",
           "{\"q\": \"Hi\", \"target\": \"de\", \"source\": \"\xC3\xA9\xC3\xA9" + std::string(70, 'x') + "\"}", 400,
           "\xC3\xA9\xC3\xA9" + std::string(62, 'x') + "... is not supported (served languages: ..."},
      });
}

TEST_F(Serve, AnUnknownFieldOrModelIsNamedWithWhatIsKnown) {
  expect_refused(
      server(),
      {
          {"/v1/translate", "application/json", R"({"model": "en-de", "text": "Hi", "beam": 2})", 400,
           "Invalid request: unknown field 'beam' (known: model, text, api_key, beam_size, ..."},
          {"/v1/translate", "application/json", R"({"model": "xx", "text": "Hi"})", 400,
           "Invalid request: unknown translate model 'xx' (served: en-de, m2m100)"},
          {"/v1/translate", "application/json", "{\"model\": \"en-de\", \"text\": \"Hi\", \"be\\u0000am\": 1}", 400,
           "Invalid request: unknown field 'be\\u0000am' (known: ..."},
      });
}

TEST_F(Serve, ABodyThatIsNotValidJsonIsInvalidJsonFormatSayingWhy) {
  expect_refused(
      server(),
      {
          {"/translate", "application/json", R"({"q": "Hi", )", 400,
           "Invalid JSON format: parse error at line 1, column 13: ..."},
          {"/translate", "application/json", "[1, 2]", 400, "Invalid JSON format: the body must be a JSON object"},
          {"/translate", "application/json", "{\"q\": \"a\xff\", " + kLanguagePair + "}", 400,
           "Invalid JSON format: parse error at line 1, column 9: syntax error while parsing value - invalid string: "
           "ill-formed UTF-8 byte..."},
          {"/translate", "application/json", R"({"q": )" + std::string(30000, '[') + std::string(30000, ']') + "}", 400,
           "Invalid JSON format: nested deeper than 32 levels"},
          {"/translate", "application/json", R"({"q": ["Hi"], "x": {"y": [1e400]}, )" + kLanguagePair + "}", 400,
           "Invalid JSON format: number overflow parsing '1e400'"},
          {"/translate", "application/json", R"({"q": "Hi", "x": -1e999999999999, )" + kLanguagePair + "}", 400,
           "Invalid JSON format: number overflow parsing '-1e999999999999'"},
          {"/v1/translate", "application/json", R"({"model": "en-de", "text": "Hi", "beam_size": 1e400})", 400,
           "Invalid JSON format: number overflow parsing '1e400'"},
      });
}

TEST_F(Serve, AFormFieldThatIsNotValidIsNamed) {
  expect_refused(server(), {
                               {"/translate", "application/x-www-form-urlencoded", "q=a%FF&source=en&target=de", 400,
                                "Invalid request: q: invalid UTF-8 at byte 2..."},
                               {"/translate", "application/x-www-form-urlencoded", "q=a&q=b%C0%80&source=en&target=de",
                                400, "Invalid request: q[1]: invalid UTF-8 at byte 2..."},
                               {"/translate", "application/x-www-form-urlencoded", "q=a%ZZ&source=en&target=de", 400,
                                "Invalid request: malformed %-escape in form field 'q'"},
                               {"/v1/translate", "application/x-www-form-urlencoded", "model=en-de&text=Hi", 400,
                                "Invalid JSON format: parse error at line 1, column 1: ..."},
                           });
}

TEST_F(Serve, ARequestOverTheServersLimitsIsRefusedNamingTheLimit) {
  expect_refused(
      server(),
      {
          {"/translate", "application/json", R"({"q": ["1","2","3","4","5","6","7","8","9"], )" + kLanguagePair + "}",
           400, "Invalid request: request (9) exceeds text limit (8)"},
          {"/translate", "application/json", R"({"q": ")" + std::string(5001, 'a') + R"(", )" + kLanguagePair + "}",
           400, "Invalid request: request (5001) exceeds text limit (5000)"},
          {"/translate", "application/json",
           R"({"q": ["a", ")" + std::string(4000, 'a') + "\xC3\xA9\xC3\xA9" + std::string(1000, 'a') + R"("], )" +
               kLanguagePair + "}",
           400, "Invalid request: request (5002) exceeds text limit (5000)"},
          {"/translate", "application/json", R"({"q": ")" + std::string(65536, 'a') + R"(", )" + kLanguagePair + "}",
           413, "Request body larger than 65536 bytes"},
      });
}

TEST_F(Serve, APostToAnUnknownPathIs404) {
  expect_refused(server(), {
                               {"/nowhere", "application/json", "{}", 404, "Not Found: POST /nowhere"},
                           });
}

// The parser's worst cases do not leave the server unable to answer.
TEST_F(Serve, StillServesAfterBadRequests) {
  expect_refused(server(), {{"/translate", "application/json", R"({"q": "Hi", )", 400, "Invalid JSON format: ..."},
                            {"/translate", "application/json", R"({"q": )" + std::string(30000, '[') + "}", 400,
                             "Invalid JSON format: ..."}});
  EXPECT_EQ(post(server(), "/translate", json{{"q", "Hi"}, {"source", "en"}, {"target", "de"}}).status, 200);
}

TEST_F(Serve, AGetOfAnUnknownPathIs404) { EXPECT_EQ(get(server(), "/nowhere").status, 404); }

// Exactness through batching: concurrent clients' sentences are batched together and each
// still gets what `ordo translate` gives for it.
TEST_F(Serve, ConcurrentClientsGetTheCommandLinesAnswers) {
  const std::vector<std::string> lines = sample_lines(24, 20);
  std::vector<json> cli;
  for (const std::string& line : lines) cli.push_back(reference(line));
  const std::string before = server().client()->Get("/metrics")->body;
  const double batches_before = metric(before, R"(ordo_batch_sentences_count{model="en-de"})");
  const double sentences_before = metric(before, R"(ordo_batch_sentences_sum{model="en-de"})");
  constexpr int kClients = 8;
  std::vector<json> served(lines.size());
  std::vector<std::thread> clients;
  std::atomic<int> failures{0};
  for (int c = 0; c < kClients; ++c)
    clients.emplace_back([&, c] {
      for (size_t i = static_cast<size_t>(c); i < lines.size(); i += kClients) {
        // Half through LibreTranslate's API, half through ordo's.
        Answer a = i % 2 ? post(server(), "/translate", json{{"q", lines[i]}, {"source", "en"}, {"target", "de"}})
                         : post(server(), "/v1/translate", json{{"model", "en-de"}, {"text", lines[i]}});
        if (a.status != 200) {
          ++failures;
          continue;
        }
        served[i] = i % 2 ? json{{"text", a.body["translatedText"]}} : a.body["results"][0];
      }
    });
  for (std::thread& t : clients) t.join();
  ASSERT_EQ(failures.load(), 0);
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(served[i]["text"], cli[i]["text"]) << lines[i];
    if (i % 2 == 0) expect_same_results(json::array({served[i]}), {cli[i]});
  }
  const std::string after = server().client()->Get("/metrics")->body;
  const double batches = metric(after, R"(ordo_batch_sentences_count{model="en-de"})") - std::max(0.0, batches_before);
  const double sentences =
      metric(after, R"(ordo_batch_sentences_sum{model="en-de"})") - std::max(0.0, sentences_before);
  EXPECT_EQ(sentences, 24);
  EXPECT_LT(batches, sentences) << "no two requests shared a batch";
  EXPECT_GT(metric(after, R"(ordo_http_requests_total{route="/translate",status="200"})"), 0);
  EXPECT_GT(metric(after, R"(ordo_generated_tokens_total{model="en-de"})"), 0);
}

// Sampling requests share batches too, and each still gets the command line's samples for
// its seed (one random generator per hypothesis).
// 16 sampling requests from 8 clients at once, made once for the tests below: what each got,
// what `ordo translate` gives for the same settings, and the server's batch counts meanwhile.
struct ConcurrentSampling {
  std::vector<json> served, cli;
  int failures = 0;
  double batches = 0, sentences = 0;
};
const ConcurrentSampling& concurrent_sampling(const ServerProcess& server) {
  static const ConcurrentSampling run = [&] {
    ConcurrentSampling out;
    const std::vector<std::string> lines = sample_lines(16, 30);
    out.cli = cli_json("translate -m en-de --sample true --seed 11 --top-k 30 --temperature 1.2 -n 2", lines);
    const std::string before = server.client()->Get("/metrics")->body;
    const double batches_before = metric(before, R"(ordo_batch_sentences_count{model="en-de"})");
    const double sentences_before = metric(before, R"(ordo_batch_sentences_sum{model="en-de"})");
    constexpr int kClients = 8;
    out.served.resize(lines.size());
    std::vector<std::thread> clients;
    std::atomic<int> failures{0};
    for (int c = 0; c < kClients; ++c)
      clients.emplace_back([&, c] {
        for (size_t i = static_cast<size_t>(c); i < lines.size(); i += kClients) {
          Answer a = post(server, "/v1/translate",
                          json{{"model", "en-de"},
                               {"text", lines[i]},
                               {"sample", true},
                               {"seed", 11},
                               {"top_k", 30},
                               {"temperature", 1.2},
                               {"n_best", 2}});
          if (a.status != 200) {
            ++failures;
            continue;
          }
          out.served[i] = a.body["results"][0];
        }
      });
    for (std::thread& t : clients) t.join();
    out.failures = failures;
    const std::string after = server.client()->Get("/metrics")->body;
    out.batches = metric(after, R"(ordo_batch_sentences_count{model="en-de"})") - std::max(0.0, batches_before);
    out.sentences = metric(after, R"(ordo_batch_sentences_sum{model="en-de"})") - std::max(0.0, sentences_before);
    return out;
  }();
  return run;
}

TEST_F(Serve, ConcurrentSamplingRequestsKeepTheirSamples) {
  const ConcurrentSampling& run = concurrent_sampling(server());
  ASSERT_EQ(run.failures, 0);
  for (size_t i = 0; i < run.cli.size(); ++i) expect_same_results(json::array({run.served[i]}), {run.cli[i]});
}

TEST_F(Serve, ConcurrentSamplingRequestsShareBatches) {
  const ConcurrentSampling& run = concurrent_sampling(server());
  ASSERT_EQ(run.failures, 0);
  EXPECT_EQ(run.sentences, 16);
  EXPECT_LT(run.batches, run.sentences) << "no two sampling requests shared a batch";
}

// `n` long sentences (three captions each, full stops dropped).
std::vector<std::string> long_lines(size_t n) {
  std::vector<std::string> captions = sample_lines(99);
  for (std::string& c : captions) c.erase(std::remove(c.begin(), c.end(), '.'), c.end());
  std::vector<std::string> lines;
  for (size_t i = 0; lines.size() < n; i = (i + 3) % 99)
    lines.push_back(captions[i] + " and " + captions[i + 1] + " and " + captions[i + 2]);
  return lines;
}

// A queue of 6 sentences, filled once for the suite: six long sentences translated one at a
// time; while two or more wait, six more are over.
class ServeFullQueue : public ::testing::Test {
 protected:
  struct Seen {
    bool queued = false;
    Answer first, full, too_many;
  };
  static void SetUpTestSuite() {
    seen_ = new Seen;
    Seen& seen = *seen_;
    ServerProcess server({"--model", "en-de", "--threads", "1", "--batch-size", "1", "--max-queue", "6"});
    std::thread busy([&] {
      seen.first = post(server, "/translate", json{{"q", long_lines(6)}, {"source", "en"}, {"target", "de"}});
    });
    // Until the server holds the first request's sentences in its queue.
    MetricsWatch watch(server.port());
    seen.queued = watch.wait_until(
        "ordo_queue_sentences", [](double n) { return n >= 2; }, 60);
    seen.full =
        post(server, "/translate", json{{"q", {"a", "b", "c", "d", "e", "f"}}, {"source", "en"}, {"target", "de"}});
    busy.join();
    seen.too_many = post(server, "/translate",
                         json{{"q", {"1", "2", "3", "4", "5", "6", "7"}}, {"source", "en"}, {"target", "de"}});
  }
  static void TearDownTestSuite() {
    delete seen_;
    seen_ = nullptr;
  }
  static const Seen& seen() { return *seen_; }
  static Seen* seen_;
};
ServeFullQueue::Seen* ServeFullQueue::seen_ = nullptr;

TEST_F(ServeFullQueue, MoreWorkIs503SayingTheServerIsBusy) {
  ASSERT_TRUE(seen().queued) << "the first request's sentences were never queued";
  EXPECT_EQ(seen().full.status, 503) << seen().full.text;
  EXPECT_EQ(seen().full.body["error"].get<std::string>().substr(0, 20), "the server is busy: ");
}

TEST_F(ServeFullQueue, A503SaysWhenToRetry) {
  int retry_after = 0;
  for (const auto& [name, value] : seen().full.headers)
    if (name == "Retry-After") retry_after = std::stoi(value);
  EXPECT_GE(retry_after, 1);
}

TEST_F(ServeFullQueue, TheQueuedRequestIsAnswered) { EXPECT_EQ(seen().first.status, 200) << seen().first.text; }

TEST_F(ServeFullQueue, ARequestLargerThanTheWholeQueueIs400) {
  EXPECT_EQ(seen().too_many.body["error"],
            "Invalid request: 7 sentences in one request, more than the queue holds (6)");
}

// A request of 48 long sentences, one at a time: seconds of work on any machine, far more
// than the 0.5 s --timeout. Made once for the suite; the tests look at what followed.
class ServeTimeout : public ::testing::Test {
 protected:
  struct Seen {
    Answer first;
    int health = 0;
    bool queue_emptied = false;
    double queued = -1;
    Answer again;
  };
  static void SetUpTestSuite() {
    seen_ = new Seen;
    Seen& seen = *seen_;
    ServerProcess server(
        {"--model", "en-de", "--threads", "1", "--batch-size", "1", "--max-queue", "64", "--timeout", "0.5"});
    seen.first = post(server, "/translate", json{{"q", long_lines(48)}, {"source", "en"}, {"target", "de"}});
    seen.health = get(server, "/health").status;
    MetricsWatch watch(server.port());
    seen.queue_emptied = watch.wait_until(
        "ordo_queue_sentences", [](double n) { return n == 0; }, 10, &seen.queued);
    // Once the sentence being translated when the first one timed out is done: each attempt
    // that comes too soon waits out its own 0.5 s.
    for (int i = 0; i < 20 && seen.again.status != 200; ++i)
      seen.again = post(server, "/translate", json{{"q", "Hi"}, {"source", "en"}, {"target", "de"}});
  }
  static void TearDownTestSuite() {
    delete seen_;
    seen_ = nullptr;
  }
  static const Seen& seen() { return *seen_; }
  static Seen* seen_;
};
ServeTimeout::Seen* ServeTimeout::seen_ = nullptr;

TEST_F(ServeTimeout, ARequestPastTheTimeoutIs504) {
  EXPECT_EQ(seen().first.status, 504) << seen().first.text;
  EXPECT_EQ(seen().first.body["error"].get<std::string>().substr(0, 10), "Timed out:");
}

TEST_F(ServeTimeout, TheServerStaysHealthy) { EXPECT_EQ(seen().health, 200); }

TEST_F(ServeTimeout, ATimedOutRequestsSentencesLeaveTheQueue) {
  EXPECT_TRUE(seen().queue_emptied) << seen().queued << " sentences still queued";
}

TEST_F(ServeTimeout, AShortRequestIsAnsweredAgainAfterwards) {
  EXPECT_EQ(seen().again.status, 200) << seen().again.text;
}

// One server for the access tests: API keys from a file (a comment after a key is no part of
// it), models from a file (names, languages given for a folder, compute type, threads), and
// one allowed CORS origin.
class ServeAccess : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    const std::string keys =
        dir_->write("keys.txt", "# clients\nkey-one\n  key-two  \n\nkey-three # the note is no part of it\n");
    const std::string models =
        dir_->write("models.json",
                    R"({"models": [{"name": "english-german", "path": "en-de", "compute_type": "float32", "threads": 1},
                                      {"name": "tiny", "path": ")" +
                        ordo::testing::fixture_dir("marian_opus_en_mg") + R"(", "source": "en", "target": "xx"}]})");
    server_ = new ServerProcess({"--models", models, "--api-keys", keys, "--cors-origin", "https://app.example"});
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
    delete dir_;
    dir_ = nullptr;
  }
  static const ServerProcess& server() { return *server_; }
  // A translation without a key, and with one in the api_key field.
  static json request() { return {{"q", "Hello"}, {"source", "en"}, {"target", "de"}}; }
  static json with_key(json request, const std::string& key = "key-two") {
    request["api_key"] = key;
    return request;
  }
  static Answer post_with_header(const std::string& path, const json& body, const std::string& authorization) {
    return post(server(), path, body.dump(), "application/json", {{"Authorization", authorization}});
  }
  static TempDir* dir_;
  static ServerProcess* server_;
};
TempDir* ServeAccess::dir_ = nullptr;
ServerProcess* ServeAccess::server_ = nullptr;

TEST_F(ServeAccess, ATranslationWithoutAKeyIs403SayingHowToGiveOne) {
  const Answer none = post(server(), "/translate", request());
  EXPECT_EQ(none.status, 403);
  EXPECT_EQ(none.body["error"],
            "Invalid API key: this server needs one (the api_key field or an Authorization: Bearer header)");
}

TEST_F(ServeAccess, AKeyWithTheFilesCommentIsAWrongKey) {
  const Answer wrong = post(server(), "/translate", with_key(request(), "key-three # the note is no part of it"));
  EXPECT_EQ(wrong.status, 403);
  EXPECT_EQ(wrong.body, json({{"error", "Invalid API key"}}));
}

TEST_F(ServeAccess, AKeyInTheApiKeyFieldIsAccepted) {
  EXPECT_EQ(post(server(), "/translate", with_key(request())).status, 200);
}

TEST_F(ServeAccess, AKeyInABearerHeaderIsAccepted) {
  EXPECT_EQ(post_with_header("/translate", request(), "Bearer key-one").status, 200);
}

// The scheme in any case (RFC 9110); a comment after a key in the file is no part of it.
TEST_F(ServeAccess, TheBearerSchemeIsReadInAnyCase) {
  EXPECT_EQ(post_with_header("/translate", request(), "bearer key-three").status, 200);
  EXPECT_EQ(post_with_header("/translate", request(), "BEARER  key-two ").status, 200);
}

TEST_F(ServeAccess, AKeyInAFormFieldIsAccepted) {
  const httplib::Params form = {{"q", "Hello"}, {"source", "en"}, {"target", "de"}, {"api_key", "key-one"}};
  EXPECT_EQ(answer_of(server().client()->Post("/translate", form)).status, 200);
}

TEST_F(ServeAccess, AModelOfTheModelsFileTranslatesUnderItsName) {
  const Answer tiny = post_with_header(
      "/v1/translate", json{{"model", "tiny"}, {"text", "Hello"}, {"max_new_tokens", 3}}, "Bearer key-one");
  EXPECT_EQ(tiny.status, 200) << tiny.text;
  EXPECT_LE(tiny.body["results"][0]["tokens"].size(), 3u);  // at most 3 generated, </s> not shown
}

TEST_F(ServeAccess, V1TranslateNeedsAKey) {
  EXPECT_EQ(post(server(), "/v1/translate", json{{"model", "tiny"}, {"text", "Hello"}}).status, 403);
}

TEST_F(ServeAccess, LanguagesNeedsNoKeyAsOnLibreTranslate) { EXPECT_EQ(get(server(), "/languages").status, 200); }

// A header, or the api_key parameter.
TEST_F(ServeAccess, V1ModelsNeedsAKey) {
  EXPECT_EQ(get(server(), "/v1/models").status, 403);
  EXPECT_EQ(get(server(), "/v1/models?api_key=key-nine").status, 403);
  EXPECT_EQ(get(server(), "/v1/models?api_key=key-two").status, 200);
}

TEST_F(ServeAccess, V1ModelsShowsTheModelsFileWithoutServerPaths) {
  const Answer m = answer_of(server().client()->Get("/v1/models", {{"Authorization", "Bearer key-one"}}));
  ASSERT_EQ(m.status, 200) << m.text;
  for (const json& model : m.body["models"])
    EXPECT_EQ(model["folder"].get<std::string>().find('/'), std::string::npos) << model;
  EXPECT_EQ(m.body["models"][1]["folder"], "marian_opus_en_mg");
  EXPECT_EQ(m.body["models"][0]["name"], "english-german");
  EXPECT_EQ(m.body["models"][0]["compute_type"], "float32");
  EXPECT_EQ(m.body["models"][0]["threads"], 1);
  EXPECT_EQ(m.body["models"][1]["target"], "xx");
}

// "auto" detects the language (tests/server/detect_http_test.cpp).
TEST_F(ServeAccess, AnAutoSourceIsDetected) {
  json automatic = with_key(request());
  automatic["source"] = "auto";
  const Answer a = post(server(), "/translate", automatic);
  EXPECT_EQ(a.status, 200) << a.text;
  EXPECT_EQ(a.body["detectedLanguage"]["language"], "en");
}

TEST_F(ServeAccess, AnAutoSourceWithNothingServedIntoTheTargetNamesTheServedPairs) {
  json automatic = with_key(request());
  automatic["source"] = "auto";
  automatic["target"] = "en";
  EXPECT_EQ(post(server(), "/translate", automatic).body["error"],
            "source 'auto': no served language translates into English (en) (served pairs: en->de, en->xx)");
}

TEST_F(ServeAccess, AnAutoSourceOfAnEmptyTextIsAMissingQ) {
  json automatic = with_key(request());
  automatic["source"] = "auto";
  automatic["target"] = "xx";
  automatic["q"] = "";
  EXPECT_EQ(post(server(), "/translate", automatic).body["error"], "Invalid request: missing q parameter");
}

TEST_F(ServeAccess, DetectNeedsAKey) {
  EXPECT_EQ(post(server(), "/detect", json{{"q", "Hello"}}).status, 403);
  EXPECT_EQ(post(server(), "/detect", json{{"q", "Hello"}, {"api_key", "key-two"}}).status, 200);
}

// A browser at the allowed origin: preflight and answer carry the CORS headers; others do not.
TEST_F(ServeAccess, APreflightFromTheAllowedOriginIs204WithTheCorsHeaders) {
  auto preflight = server().client()->Options(
      "/translate", {{"Origin", "https://app.example"}, {"Access-Control-Request-Method", "POST"}});
  ASSERT_TRUE(preflight);
  EXPECT_EQ(preflight->status, 204);
  EXPECT_EQ(preflight->get_header_value("Access-Control-Allow-Origin"), "https://app.example");
  EXPECT_NE(preflight->get_header_value("Access-Control-Allow-Headers").find("Authorization"), std::string::npos);
}

TEST_F(ServeAccess, AnAnswerToTheAllowedOriginAllowsIt) {
  auto allowed = server().client()->Get("/languages", {{"Origin", "https://app.example"}});
  ASSERT_TRUE(allowed);
  EXPECT_EQ(allowed->get_header_value("Access-Control-Allow-Origin"), "https://app.example");
}

TEST_F(ServeAccess, AnAnswerToAnotherOriginAllowsNothing) {
  auto other = server().client()->Get("/languages", {{"Origin", "https://evil.example"}});
  ASSERT_TRUE(other);
  EXPECT_FALSE(other->has_header("Access-Control-Allow-Origin"));
}

// SIGTERM while a request of 8 sentences is in flight, sent once for the suite.
class ServeShutdown : public ::testing::Test {
 protected:
  struct Seen {
    std::vector<std::string> expected;
    bool in_flight_at_signal = false;
    int exit_status = -1;
    Answer in_flight;
    std::string stderr_text;
    bool still_listening = true;
  };
  static void SetUpTestSuite() {
    seen_ = new Seen;
    Seen& seen = *seen_;
    ServerProcess server({"--model", "en-de", "--threads", "1", "--batch-size", "2"});
    const std::vector<std::string> lines = sample_lines(8, 20);
    seen.expected = reference_texts(lines);
    std::thread client([&] {
      seen.in_flight = post(server, "/translate", json{{"q", lines}, {"source", "en"}, {"target", "de"}});
    });
    {
      MetricsWatch watch(server.port());  // its connection closed before the signal
      seen.in_flight_at_signal = watch.wait_until(
          "ordo_http_requests_in_flight", [](double n) { return n >= 1; }, 60);
    }
    seen.exit_status = server.stop(SIGTERM);
    client.join();
    seen.stderr_text = server.stderr_text();
    httplib::Client gone("127.0.0.1", server.port());
    gone.set_connection_timeout(2);
    seen.still_listening = static_cast<bool>(gone.Get("/health"));
  }
  static void TearDownTestSuite() {
    delete seen_;
    seen_ = nullptr;
  }
  static const Seen& seen() { return *seen_; }
  static Seen* seen_;
};
ServeShutdown::Seen* ServeShutdown::seen_ = nullptr;

TEST_F(ServeShutdown, SigtermExitsZero) { EXPECT_EQ(seen().exit_status, 0) << seen().stderr_text; }

TEST_F(ServeShutdown, TheRequestInFlightIsAnsweredWhole) {
  ASSERT_TRUE(seen().in_flight_at_signal) << "the request was never in flight";
  ASSERT_EQ(seen().in_flight.status, 200) << seen().in_flight.text;
  EXPECT_EQ(seen().in_flight.body["translatedText"], json(seen().expected));
}

TEST_F(ServeShutdown, ItSaysItIsFinishingTheRequestsInFlight) {
  EXPECT_NE(seen().stderr_text.find("SIGTERM: finishing the requests in flight"), std::string::npos)
      << seen().stderr_text;
}

TEST_F(ServeShutdown, NothingListensAfterwards) { EXPECT_FALSE(seen().still_listening); }

TEST(ServeStartup, AModelThatDoesNotLoadIsAnErrorNamingIt) {
  const auto bad = ordo::testing::run_ordo("serve --port 0 --model /nonexistent/model");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("ordo: error: "), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("/nonexistent/model"), std::string::npos) << bad.err;
}

TEST(ServeStartup, ABadModelsFileIsAnErrorNamingTheField) {
  TempDir dir;
  const std::string models =
      dir.write("models.json", R"({"models": [{"name": "a", "path": "en-de", "threads": 2000}]})");
  const auto file = ordo::testing::run_ordo("serve --port 0 --models '" + models + "'");
  EXPECT_EQ(file.exit_code, 1);
  EXPECT_NE(file.err.find("models[0]: field 'threads' must be an integer from 0 to 1024"), std::string::npos)
      << file.err;
}

TEST(ServeStartup, AFolderGivenAsTheApiKeysFileIsAnError) {
  TempDir dir;
  const auto keys = ordo::testing::run_ordo("serve --port 0 --api-keys '" + dir.path() + "'");
  EXPECT_EQ(keys.exit_code, 1);
  EXPECT_NE(keys.err.find(dir.path() + ": the API keys file is not a regular file (a directory?)"), std::string::npos)
      << keys.err;
}

TEST_F(Serve, ABusyPortIsAnError) {
  const auto busy = ordo::testing::run_ordo("serve --port " + std::to_string(server().port()) + " --model en-de");
  EXPECT_EQ(busy.exit_code, 1);
  EXPECT_NE(busy.err.find("cannot listen on 127.0.0.1:" + std::to_string(server().port())), std::string::npos)
      << busy.err;
}

}  // namespace
