// src/server/ pieces without a model: HTML (ordo::HtmlDocument, shared with the CLI) and line layouts, request fields, Prometheus text.
// ctest-label: unit
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "ordo/document.h"
#include "server/metrics.h"
#include "server/request_context.h"
#include "server/request_fields.h"

namespace {

using ordo::HtmlDocument;
using ordo::LineBreaks;
using ordo::SentenceLayout;
using ordo::server::ApiError;
using ordo::server::RequestFields;

// Replaces each sentence by "[sentence]" so that every replaced byte is visible (no word
// alignments: inline tags are placed by relative position).
std::vector<ordo::AlignedTranslation> marked(const std::vector<std::string>& runs) {
  std::vector<ordo::AlignedTranslation> out;
  for (const std::string& r : runs) out.push_back({"[" + r + "]", {}, 0, 0});
  return out;
}

std::vector<ordo::AlignedTranslation> plain(const std::vector<std::string>& texts) {
  std::vector<ordo::AlignedTranslation> out;
  for (const std::string& t : texts) out.push_back({t, {}, 0, 0});
  return out;
}

// A page of every kind of markup: blocks, inline tags, entities, comments, and elements whose
// text is not translated.
const std::string kHtmlPage =
    "<!DOCTYPE html>\n<html lang=\"en\"><head><title>A title</title>"
    "<style>p { color: red; }</style><script>var s = \"a <b> string\";</script></head>\n"
    "<body class='x'  data-n=1>\n  <p>Hello <b>brave</b> new world.</p><!-- a comment -->"
    "<p>Tom &amp; Jerry &lt;3</p><img src=\"a.png\" alt=\"not translated\">  |  <br/>"
    "<noscript>Enable scripts</noscript><template><p>later</p></template>"
    "<table><tr><td>Cell one</td></tr></table></body></html>";

// A sentence with inline tags is one sentence.
TEST(HtmlDocument, TheSentencesAreTheBlocksTextWithEntitiesDecoded) {
  EXPECT_EQ(HtmlDocument(kHtmlPage, "en").sentences(),
            (std::vector<std::string>{"A title", "Hello brave new world.", "Tom & Jerry <3", "Cell one"}));
}

TEST(HtmlDocument, TheMarkupAroundTheTranslatedBlocksIsKeptByteForByte) {
  const HtmlDocument layout(kHtmlPage, "en");
  const std::string expected =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><title>[A title]</title>"
      "<style>p { color: red; }</style><script>var s = \"a <b> string\";</script></head>\n"
      "<body class='x'  data-n=1>\n  <p>[Hello <b>brave</b> new world.]</p><!-- a comment -->"
      "<p>[Tom &amp; Jerry &lt;3]</p><img src=\"a.png\" alt=\"not translated\">  |  <br/>"
      "<noscript>Enable scripts</noscript><template><p>later</p></template>"
      "<table><tr><td>[Cell one]</td></tr></table></body></html>";
  EXPECT_EQ(layout.rebuild(marked(layout.sentences())), expected);
}

TEST(HtmlDocument, AnInlineTagGoesAroundTheSameWordsOfAnUnchangedSentence) {
  EXPECT_EQ(HtmlDocument("<p>a <i>b</i></p>", "en").rebuild(plain({"a b"})), "<p>a <i>b</i></p>");
}

TEST(HtmlDocument, TextWithoutTagsIsOneFragment) {
  EXPECT_EQ(HtmlDocument("Just text, no tags.", "en").rebuild(plain({"X"})), "X");
}

TEST(HtmlDocument, LinesInAParagraphAreSentencesAndKeepTheDocumentsLineEnds) {
  const HtmlDocument lines("<p>\n  First line.\r\n  Second line.\n</p>", "en");
  EXPECT_EQ(lines.sentences(), (std::vector<std::string>{"First line.", "Second line."}));
  EXPECT_EQ(lines.rebuild(plain({"1", "2"})), "<p>\r\n  1\r\n  2\r\n</p>");
}

TEST(HtmlDocument, OddInputRebuildsWithoutThrowing) {
  for (const std::string odd :
       {std::string(""), std::string("<"), std::string("</p></div>"), std::string("<p unclosed=\"a>b"),
        std::string("<table>stray<tr>text</table>"), std::string("a\0b", 3), std::string("<p>\xff\xfe</p>")}) {
    const HtmlDocument layout(odd, "en");
    EXPECT_NO_THROW(layout.rebuild(marked(layout.sentences())));
  }
}

TEST(HtmlDocument, BlocksOfPunctuationAloneAreNoSentences) {
  EXPECT_TRUE(HtmlDocument("<p> · </p><p>—</p><p>123</p>", "en").sentences() == std::vector<std::string>{"123"});
}

// 5000 nested <div>s around one sentence.
std::string deeply_nested() {
  std::string deep;
  for (int i = 0; i < 5000; ++i) deep += "<div>";
  return deep + "Deep text.";
}

TEST(HtmlDocument, NestingDeeperThanTheLimitIsRefused) {
  EXPECT_THROW(HtmlDocument(deeply_nested(), "en"), ordo::Error);  // deeper than HtmlLimits::max_depth
}

TEST(HtmlDocument, NestingWithinARaisedLimitIsTranslated) {
  const std::string deep = deeply_nested();
  ordo::HtmlLimits deeper;
  deeper.max_depth = 6000;
  const HtmlDocument layout(deep, "en", deeper);
  EXPECT_EQ(layout.sentences(), std::vector<std::string>{"Deep text."});
  EXPECT_EQ(layout.rebuild(plain({"X"})), deep.substr(0, deep.size() - 10) + "X");
}

TEST(HtmlDocument, TheTagCountCountsTagsAlone) {
  EXPECT_EQ(ordo::server::html_tag_count(deeply_nested()), 5000u);
  EXPECT_EQ(ordo::server::html_tag_count("a < b, <p>x</p> <!-- c --> <3"), 1u);
}

TEST(LineText, LinesBlankLinesAndCrLf) {
  const SentenceLayout text("First.\n\n  \nSecond.\r\nThird.", "en", LineBreaks::kEndLine);
  EXPECT_EQ(text.sentences(), (std::vector<std::string>{"First.", "Second.", "Third."}));
  EXPECT_EQ(text.rebuild({"1", "2", "3"}), "1\n\n  \n2\r\n3");
  EXPECT_EQ(SentenceLayout("One sentence.", "en", LineBreaks::kEndLine).rebuild({"x"}), "x");
}

// Each line is cut into sentences (ICU's rules, abbreviations of the language known) and
// rebuilt around the text between them; in HTML a line break inside a paragraph is a soft wrap.
TEST(LineText, SentencesOfALine) {
  const SentenceLayout text("Mr. Smith went to Washington. He arrived on Monday.  Then?\nNext line", "en",
                            LineBreaks::kEndLine);
  EXPECT_EQ(text.sentences(),
            (std::vector<std::string>{"Mr. Smith went to Washington.", "He arrived on Monday.", "Then?", "Next line"}));
  EXPECT_EQ(text.rebuild({"1", "2", "3", "4"}), "1 2  3\n4");
  const HtmlDocument html("<p>A sentence that\nwraps. &lt;Second&gt; one.</p><p>|</p>", "en");
  EXPECT_EQ(html.sentences(), (std::vector<std::string>{"A sentence that wraps.", "<Second> one."}));
  EXPECT_EQ(html.rebuild(plain({"A & B.", "C."})), "<p>A &amp; B. C.</p><p>|</p>");
}

int status_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ApiError& e) {
    return e.status;
  }
  return 0;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ApiError& e) {
    return e.what();
  }
  return "";
}

// A JSON body of one field of each type.
class RequestFieldsOfJson : public ::testing::Test {
 protected:
  const RequestFields f_ = RequestFields::from_json(
      R"({"q": ["a", "b"], "source": "en", "n": 3, "x": 2.5, "flag": true, "s": "3", "nul": null})");
  bool list_ = false;
};

TEST_F(RequestFieldsOfJson, EachFieldReadsAsItsType) {
  EXPECT_EQ(*f_.texts("q", list_), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(list_);
  EXPECT_EQ(*f_.string("source"), "en");
  EXPECT_EQ(*f_.integer("n", 0, 5), 3);
  EXPECT_DOUBLE_EQ(*f_.number("x", 0, 5), 2.5);
  EXPECT_EQ(*f_.boolean("flag"), true);
}

TEST_F(RequestFieldsOfJson, NullAndAbsentFieldsHaveNoValue) {
  EXPECT_FALSE(f_.string("nul").has_value());
  EXPECT_FALSE(f_.string("absent").has_value());
}

TEST_F(RequestFieldsOfJson, AnIntegerOutOfRangeIsNamedWithTheRange) {
  EXPECT_EQ(message_of([&] { f_.integer("n", 4, 5); }), "Invalid request: field 'n' must be an integer from 4 to 5");
}

TEST_F(RequestFieldsOfJson, AFieldOfAnotherTypeIsNamedWithTheTypeWanted) {
  EXPECT_EQ(message_of([&] { f_.integer("s", 0, 5); }), "Invalid request: field 's' must be an integer from 0 to 5");
  EXPECT_EQ(message_of([&] { f_.string("n"); }), "Invalid request: field 'n' must be a string");
  EXPECT_EQ(message_of([&] { f_.boolean("s"); }), "Invalid request: field 's' must be true or false");
  EXPECT_EQ(message_of([&] { f_.texts("n", list_); }),
            "Invalid request: field 'n' must be a string or an array of strings, not number");
}

TEST_F(RequestFieldsOfJson, ATextListElementOfAnotherTypeIsNamedByItsIndex) {
  EXPECT_EQ(message_of([&] { RequestFields::from_json(R"({"q": ["a", 1]})").texts("q", list_); }),
            "Invalid request: field 'q' must be a string or an array of strings (element 1 is number)");
}

TEST(RequestFields, ABodyThatIsNotJsonIs400) {
  EXPECT_EQ(status_of([] { RequestFields::from_json("{\"q\": "); }), 400);
}

TEST(RequestFields, ABodyThatIsNoJsonObjectIsInvalidJson) {
  EXPECT_EQ(message_of([] { RequestFields::from_json("[1]"); }), "Invalid JSON format: the body must be a JSON object");
}

TEST(RequestFields, InvalidUtf8IsInvalidJson) {
  EXPECT_NE(message_of([] { RequestFields::from_json("{\"q\": \"\xff\"}"); }).find("Invalid JSON format"),
            std::string::npos);
}

TEST(RequestFields, FormsAsLibreTranslateClientsSendThem) {
  const RequestFields f = RequestFields::from_urlencoded("q=Hello+world%21&source=en&target=de&alternatives=2&q=Two");
  bool list = false;
  EXPECT_EQ(*f.texts("q", list), (std::vector<std::string>{"Hello world!", "Two"}));
  EXPECT_TRUE(list);
  EXPECT_EQ(*f.integer("alternatives", 0, 3), 2);
  const RequestFields one = RequestFields::from_urlencoded("q=x%C3%A9&flag=false");
  EXPECT_EQ(*one.texts("q", list), std::vector<std::string>{"x\xC3\xA9"});
  EXPECT_FALSE(list);
  EXPECT_EQ(*one.boolean("flag"), false);
  EXPECT_EQ(status_of([] { RequestFields::from_urlencoded("q=%G1"); }), 400);
  EXPECT_EQ(status_of([] { RequestFields::from_urlencoded("q=%4"); }), 400);
  EXPECT_EQ(message_of([] { RequestFields::from_urlencoded("alternatives=two").integer("alternatives", 0, 3); }),
            "Invalid request: field 'alternatives' must be an integer from 0 to 3");
}

TEST(RequestFields, DecodeOptionsByTheirNames) {
  const RequestFields f = RequestFields::from_json(
      R"({"beam_size": 3, "n_best": 2, "max_new_tokens": 40, "length_penalty": 0.6, "early_stopping": true,
          "no_repeat_ngram_size": 3, "repetition_penalty": 1.2, "sample": false, "temperature": 0.7,
          "top_k": 10, "top_p": 0.9, "seed": 42, "min_new_tokens": 2, "target_lang": "de"})");
  const ordo::DecodeOptions o = ordo::server::decode_options(f, 16, 1024);
  EXPECT_EQ(*o.beam_size, 3);
  EXPECT_EQ(*o.n_best, 2);
  EXPECT_EQ(*o.max_new_tokens, 40);
  EXPECT_FLOAT_EQ(*o.length_penalty, 0.6f);
  EXPECT_TRUE(*o.early_stopping);
  EXPECT_EQ(*o.seed, 42u);
  EXPECT_EQ(*o.target_lang, "de");
  EXPECT_FALSE(o.max_length.has_value());
  EXPECT_EQ(
      message_of([] { ordo::server::decode_options(RequestFields::from_json(R"({"beam_size": 17})"), 16, 1024); }),
      "Invalid request: field 'beam_size' must be an integer from 1 to 16");
  EXPECT_EQ(message_of([] { ordo::server::decode_options(RequestFields::from_json(R"({"top_p": 2})"), 16, 1024); }),
            "Invalid request: field 'top_p' must be a number from 0.000001 to 1");
  EXPECT_EQ(message_of([] { ordo::server::decode_options(RequestFields::from_json(R"({"sample": 1})"), 16, 1024); }),
            "Invalid request: field 'sample' must be true or false");
}

TEST(RequestFields, AGlossaryTermWithANulByteIsA400NamingTheField) {
  const RequestFields f = RequestFields::from_json(R"({"glossary": {"Ver\u0000trag": "contract"}})");
  try {
    ordo::server::decode_options(f, 16, 1024);
    FAIL() << "no error";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 400);
    EXPECT_STREQ(e.what(), "Invalid request: field 'glossary': the source term contains a NUL byte");
  }
}

TEST(RequestFields, Utf8Length) {
  EXPECT_EQ(ordo::server::utf8_length("abc"), 3u);
  EXPECT_EQ(ordo::server::utf8_length("\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"), 3u);
}

// The exposition rules a scraper relies on (text format 0.0.4): HELP and TYPE once per family
// before its samples, sample lines "name{labels} value", histogram buckets cumulative with a
// +Inf bucket equal to _count, counters named *_total.
TEST(Metrics, PrometheusTextFormat) {
  ordo::server::Metrics metrics;
  metrics.request("/translate", 200, 0.02);
  metrics.request("/translate", 200, 0.3);
  metrics.request("/translate", 400, 0.001);
  metrics.request("other", 404, -1);
  metrics.queue_depth(7);
  metrics.in_flight(2);
  metrics.batch_done("en-de", 5, 60, 40, 0.1);
  metrics.batch_done("en-de", 1, 12, 9, 0.02);
  const std::string text = metrics.text();
  const std::regex sample(
      R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="[^"]*",?)*\})? (-?[0-9.e+\-]+|\+Inf|NaN)( [0-9]+)?$)");
  std::map<std::string, std::string> types;
  std::map<std::string, double> values;
  std::set<std::string> helped;
  std::stringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    if (line.rfind("# HELP ", 0) == 0) {
      helped.insert(line.substr(7, line.find(' ', 7) - 7));
      continue;
    }
    if (line.rfind("# TYPE ", 0) == 0) {
      std::stringstream s(line.substr(7));
      std::string name, type;
      s >> name >> type;
      EXPECT_FALSE(types.count(name)) << "TYPE twice: " << name;
      types[name] = type;
      continue;
    }
    std::smatch m;
    ASSERT_TRUE(std::regex_match(line, m, sample)) << line;
    std::string family = m[1];
    for (const char* suffix : {"_bucket", "_sum", "_count"})
      if (!types.count(family) && family.size() > strlen(suffix) &&
          family.compare(family.size() - strlen(suffix), strlen(suffix), suffix) == 0)
        family = family.substr(0, family.size() - strlen(suffix));
    EXPECT_TRUE(types.count(family)) << "sample before its TYPE: " << line;
    EXPECT_TRUE(helped.count(family)) << "no HELP: " << line;
    values[m[1].str() + m[2].str()] = std::stod(m[4].str() == "+Inf" ? "inf" : m[4].str());
  }
  for (const auto& [name, type] : types)
    if (type == "counter") EXPECT_EQ(name.substr(name.size() - 6), "_total") << name;
  EXPECT_EQ(types["ordo_http_requests_total"], "counter");
  EXPECT_EQ(types["ordo_http_request_duration_seconds"], "histogram");
  EXPECT_EQ(types["ordo_queue_sentences"], "gauge");
  EXPECT_EQ(values[R"(ordo_http_requests_total{route="/translate",status="200"})"], 2);
  EXPECT_EQ(values[R"(ordo_http_requests_total{route="other",status="404"})"], 1);
  EXPECT_EQ(values["ordo_queue_sentences"], 7);
  EXPECT_EQ(values["ordo_http_requests_in_flight"], 2);
  EXPECT_EQ(values[R"(ordo_generated_tokens_total{model="en-de"})"], 49);
  EXPECT_EQ(values[R"(ordo_translated_sentences_total{model="en-de"})"], 6);
  // Latency histogram of /translate: 3 observations, cumulative buckets.
  EXPECT_EQ(values[R"(ordo_http_request_duration_seconds_count{route="/translate"})"], 3);
  EXPECT_EQ(values[R"(ordo_http_request_duration_seconds_bucket{route="/translate",le="0.005"})"], 1);
  EXPECT_EQ(values[R"(ordo_http_request_duration_seconds_bucket{route="/translate",le="0.025"})"], 2);
  EXPECT_EQ(values[R"(ordo_http_request_duration_seconds_bucket{route="/translate",le="+Inf"})"], 3);
  EXPECT_EQ(values[R"(ordo_batch_sentences_bucket{model="en-de",le="4"})"], 1);
  EXPECT_EQ(values[R"(ordo_batch_sentences_bucket{model="en-de",le="+Inf"})"], 2);
  EXPECT_DOUBLE_EQ(values[R"(ordo_batch_sentences_sum{model="en-de"})"], 6);
  // Cumulative: in the order printed, each bucket of a series is >= the one before.
  std::stringstream again(text);
  std::string last_series;
  double previous = 0;
  for (std::string line; std::getline(again, line);) {
    const size_t le = line.find(",le=\"");
    if (line[0] == '#' || le == std::string::npos) continue;
    const std::string series = line.substr(0, le);
    const double v = std::stod(line.substr(line.rfind(' ') + 1));
    if (series == last_series) EXPECT_GE(v, previous) << line;
    last_series = series;
    previous = v;
  }
  EXPECT_STREQ(ordo::server::Metrics::content_type(), "text/plain; version=0.0.4; charset=utf-8");
}

// The access log's totals (access_log.h) become one counter family by reason, brought up to
// each scrape's totals without counting a line twice.
TEST(Metrics, AccessLogDropsAreOneCounterByReason) {
  ordo::server::Metrics metrics;
  metrics.access_log_dropped(2, 5);
  metrics.access_log_dropped(3, 5);
  const std::string text = metrics.text();
  const auto value = [&](const std::string& series) {
    const size_t at = text.find("\n" + series + " ");
    return at == std::string::npos ? -1.0 : std::stod(text.substr(at + series.size() + 2));
  };
  EXPECT_NE(text.find("# TYPE ordo_access_log_dropped_lines_total counter"), std::string::npos) << text;
  EXPECT_EQ(value(R"(ordo_access_log_dropped_lines_total{reason="queue_full"})"), 3);
  EXPECT_EQ(value(R"(ordo_access_log_dropped_lines_total{reason="write_failed"})"), 5);
}

// A request's context (request_context.h) is found by its httplib::Request while its Scope
// lasts, and not after; whether its client has gone is asked of the real socket.
// A request's context (received 5 s ago, its client on one end of a socket pair) registered
// for the scope of a request being answered.
class RequestContextsScope : public ::testing::Test {
 protected:
  using RequestContext = ordo::server::RequestContext;
  using RequestContexts = ordo::server::RequestContexts;
  void SetUp() override {
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds_), 0);
    context_.received = std::chrono::steady_clock::now() - std::chrono::seconds(5);
    context_.client_fd = fds_[0];
  }
  void TearDown() override {
    for (int fd : fds_)
      if (fd >= 0) ::close(fd);
  }
  int fds_[2] = {-1, -1};
  RequestContext context_;
  RequestContexts contexts_;
  httplib::Request req_, other_;
};

TEST_F(RequestContextsScope, ARegisteredRequestsContextIsFound) {
  RequestContexts::Scope scope(contexts_);
  scope.add(&req_, &context_);
  EXPECT_EQ(contexts_.of(req_).client_fd, fds_[0]);
  EXPECT_EQ(contexts_.of(req_).received, context_.received);
}

TEST_F(RequestContextsScope, AnotherRequestHasNoClientAndWasReceivedNow) {
  RequestContexts::Scope scope(contexts_);
  scope.add(&req_, &context_);
  EXPECT_EQ(contexts_.of(other_).client_fd, -1);
  EXPECT_GT(contexts_.of(other_).received, context_.received + std::chrono::seconds(4));
}

TEST_F(RequestContextsScope, ClientGoneIsTrueOnceTheClientHungUp) {
  RequestContexts::Scope scope(contexts_);
  scope.add(&req_, &context_);
  EXPECT_FALSE(contexts_.of(req_).client_gone());
  ::close(fds_[1]);
  fds_[1] = -1;
  EXPECT_TRUE(contexts_.of(req_).client_gone());
}

TEST_F(RequestContextsScope, NothingIsFoundOnceTheScopeEnded) {
  {
    RequestContexts::Scope scope(contexts_);
    scope.add(&req_, &context_);
    ::close(fds_[1]);  // the client hangs up: still no context to say so after the scope
    fds_[1] = -1;
  }
  EXPECT_EQ(contexts_.of(req_).client_fd, -1);
  EXPECT_FALSE(contexts_.of(req_).client_gone());
}

}  // namespace
