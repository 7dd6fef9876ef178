// `ordo serve` against clients that try to take it down: bytes trickled one at a
// time (slowloris), more connections than the per-address cap, pipelined requests, framing
// that lies, requests that ask for too much work and requests abandoned by their client. The
// real binary on 127.0.0.1 (ephemeral port), raw sockets; every loop bounded in count and time.
// ctest-label: integration
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <thread>
#include <vector>

#include <sys/stat.h>

#include "server/server_process.h"
#include "support/fixtures.h"
#include "support/sanitizer.h"
#include "support/temp_dir.h"

namespace {

using nlohmann::json;
using ordo::testing::kTimeScale;
using ordo::testing::MetricsWatch;
using ordo::testing::RawSocket;
using ordo::testing::ServerProcess;
using ordo::testing::split_answers;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// GET /health on a new connection: its status and how long it took (-1 status: no answer).
std::pair<int, double> probe_health(const ServerProcess& server) {
  const auto start = Clock::now();
  auto client = server.client(5);
  const auto res = client->Get("/health");
  return {res ? res->status : -1, seconds_since(start)};
}

std::string post_request(const std::string& path, const std::string& body, const std::string& extra_headers = "") {
  return "POST " + path + " HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n" + extra_headers +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

// Item 2: 30 clients trickling a request a byte at a time hold no request thread (the server
// has 2): /health and a translation answer meanwhile, promptly; each trickler gets 408 and is
// closed once its request is not whole after --read-timeout (1.5 s), although it never stops
// sending. Then the per-address cap: the oldest idle connection makes room for a new one.
// The trickling runs once for the suite (it takes seconds by design); the tests look at what
// it gave, and the cap is tested on the same server after it.
class ServeTricklingClients : public ::testing::Test {
 protected:
  static constexpr int kTricklers = 30;
  struct Seen {
    int probes = 0, probe_failures = 0;
    double worst_probe = 0;
    bool translated = false;
    int timed_out = 0, closed = 0;
    double seconds = 0;   // from the first byte trickled to the last trickler closed
    std::string metrics;  // after the tricklers were closed
  };

  static void SetUpTestSuite() {
    server_ = new ServerProcess({"--model", "en-de", "--threads", "1", "--http-threads", "2", "--read-timeout", "1.5",
                                 "--max-client-connections", "40"});
    seen_ = new Seen;
    // A first translation builds the kernels, so that the one in the loop below is not the cold one.
    const auto warm = server_->client(60)->Post(
        "/translate", json{{"q", "Hi"}, {"source", "en"}, {"target", "de"}}.dump(), "application/json");
    ASSERT_TRUE(warm && warm->status == 200);
    trickle(*server_, *seen_);
  }
  static void TearDownTestSuite() {
    delete seen_;
    seen_ = nullptr;
    delete server_;
    server_ = nullptr;
  }

  // The deliberately slow clients: each sends its request one byte per 100 ms, for 2 s (well
  // past the 1.5 s deadline); that pace is what is under test, not a wait for something.
  static void trickle(const ServerProcess& server, Seen& seen) {
    std::vector<std::unique_ptr<RawSocket>> tricklers;
    for (int i = 0; i < kTricklers; ++i) tricklers.push_back(std::make_unique<RawSocket>(server.port()));
    const std::string request = post_request("/translate", R"({"q": "Hello", "source": "en", "target": "de"})");
    const auto start = Clock::now();
    std::vector<size_t> sent(kTricklers, 0);
    for (int round = 0; round < 20; ++round) {
      for (int i = 0; i < kTricklers; ++i)
        if (sent[i] < request.size() - 1 && tricklers[i]->send(request.substr(sent[i], 1))) ++sent[i];
      if (round % 4 == 1) {
        const auto [status, seconds] = probe_health(server);
        ++seen.probes;
        if (status != 200) ++seen.probe_failures;
        seen.worst_probe = std::max(seen.worst_probe, seconds);
      }
      if (round == 5) {
        auto client = server.client(10);
        const auto res = client->Post("/translate", json{{"q", "Hello"}, {"source", "en"}, {"target", "de"}}.dump(),
                                      "application/json");
        seen.translated = res && res->status == 200;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    // Each trickler: 408 and closed (bounded: 3 s for all of them together).
    for (auto& t : tricklers) {
      bool closed = false;
      const std::string answer = t->read_until_closed(std::max(0.05, 4.5 - seconds_since(start)), &closed);
      seen.timed_out += answer.rfind("HTTP/1.1 408 ", 0) == 0;
      seen.closed += closed;
    }
    seen.seconds = seconds_since(start);
    const auto metrics = server.client()->Get("/metrics");
    if (metrics) seen.metrics = metrics->body;
  }
  static const ServerProcess& server() { return *server_; }
  static const Seen& seen() { return *seen_; }
  static ServerProcess* server_;
  static Seen* seen_;
};
ServerProcess* ServeTricklingClients::server_ = nullptr;
ServeTricklingClients::Seen* ServeTricklingClients::seen_ = nullptr;

TEST_F(ServeTricklingClients, HealthAnswersPromptlyWhileTheyTrickle) {
  EXPECT_EQ(seen().probe_failures, 0);
  EXPECT_LT(seen().worst_probe, 1.0 * kTimeScale)
      << "GET /health took " << seen().worst_probe << " s with " << kTricklers << " tricklers";
  EXPECT_GE(seen().probes, 5);
}

TEST_F(ServeTricklingClients, ATranslationIsAnsweredWhileTheyTrickle) {
  EXPECT_TRUE(seen().translated) << "a translation was not answered while clients trickled";
}

TEST_F(ServeTricklingClients, EachGets408AtTheReadDeadline) { EXPECT_EQ(seen().timed_out, kTricklers); }

TEST_F(ServeTricklingClients, EachIsClosedSoonAfterTheReadDeadline) {
  EXPECT_EQ(seen().closed, kTricklers);
  EXPECT_LT(seen().seconds, 6.0 * kTimeScale);
}

TEST_F(ServeTricklingClients, MetricsCountEachAsDroppedAtTheReadTimeout) {
  EXPECT_NE(seen().metrics.find("ordo_http_connections_dropped_total{reason=\"read_timeout\"} 30\n"), std::string::npos)
      << seen().metrics;
}

TEST_F(ServeTricklingClients, MetricsShowTheOpenConnections) {
  EXPECT_NE(seen().metrics.find("\nordo_http_connections "), std::string::npos) << seen().metrics;
}

// The per-address cap (40): 40 idle connections, then a 41st with a request is answered and
// the oldest idle one is closed. The tricklers have hung up (their refusals linger, counted
// at the cap, until then): the server's open connections are then the watch's own alone, and
// 41 of them mean that it has seen all 40 idle ones.
TEST_F(ServeTricklingClients, AtThePerAddressCapTheOldestIdleConnectionMakesRoom) {
  MetricsWatch watch(server().port());
  double open = 0;
  ASSERT_TRUE(watch.wait_until(
      "ordo_http_connections", [](double n) { return n <= 1; }, 30 * kTimeScale, &open))
      << open << " connections still open after the tricklers hung up";
  const double evicted_before =
      ordo::testing::metric_value(watch.text(), "ordo_http_connections_dropped_total{reason=\"evicted\"}");
  std::vector<std::unique_ptr<RawSocket>> idle;
  for (int i = 0; i < 40; ++i) idle.push_back(std::make_unique<RawSocket>(server().port()));
  ASSERT_TRUE(watch.wait_until(
      "ordo_http_connections", [](double n) { return n >= 41; }, 30 * kTimeScale, &open))
      << "the server saw " << open << " connections of the 40 idle ones and the watch's";
  RawSocket fresh(server().port());
  ASSERT_TRUE(fresh.send("GET /health HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n"));
  const auto answers = split_answers(fresh.read_until_closed(3));
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_EQ(answers[0].status, 200);
  bool oldest_closed = false;
  idle[0]->read_until_closed(2, &oldest_closed);
  EXPECT_TRUE(oldest_closed) << "the oldest idle connection of the address was not closed at the cap";
  bool newest_closed = true;
  idle[39]->read_until_closed(0.2, &newest_closed);
  EXPECT_FALSE(newest_closed);
  // /metrics tells what happened (no eviction counted before this test: NaN, no sample yet).
  const double evicted =
      ordo::testing::metric_value(watch.text(), "ordo_http_connections_dropped_total{reason=\"evicted\"}");
  EXPECT_EQ(evicted - (std::isnan(evicted_before) ? 0 : evicted_before), 1) << evicted_before << " -> " << evicted;
}

// Item 7: three requests in one write get three answers, in order; a request with a second one
// appended after its body loses neither.
TEST(ServeHostileClients, PipelinedRequestsAreAllAnsweredInOrder) {
  ServerProcess server({"--model", "en-de", "--threads", "1"});
  const std::vector<std::string> texts = {"Hello.", "A dog runs.", "Good morning."};
  std::vector<std::string> expected;
  for (const std::string& text : texts) {
    auto res = server.client()->Post("/translate", json{{"q", text}, {"source", "en"}, {"target", "de"}}.dump(),
                                     "application/json");
    ASSERT_TRUE(res && res->status == 200);
    expected.push_back(json::parse(res->body)["translatedText"]);
  }
  {
    RawSocket socket(server.port());
    std::string three;
    for (size_t i = 0; i < texts.size(); ++i)
      three += post_request("/translate", json{{"q", texts[i]}, {"source", "en"}, {"target", "de"}}.dump(),
                            i + 1 == texts.size() ? "Connection: close\r\n" : "");
    ASSERT_TRUE(socket.send(three));
    const auto answers = split_answers(socket.read_until_closed(20));
    ASSERT_EQ(answers.size(), 3u);
    for (size_t i = 0; i < texts.size(); ++i) {
      EXPECT_EQ(answers[i].status, 200);
      EXPECT_EQ(json::parse(answers[i].body)["translatedText"], expected[i]) << i;
    }
  }
  {
    RawSocket socket(server.port());
    ASSERT_TRUE(
        socket.send(post_request("/translate", json{{"q", texts[1]}, {"source", "en"}, {"target", "de"}}.dump()) +
                    "GET /health HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n"));
    const auto answers = split_answers(socket.read_until_closed(20));
    ASSERT_EQ(answers.size(), 2u);
    EXPECT_EQ(json::parse(answers[0].body)["translatedText"], expected[1]);
    EXPECT_EQ(answers[1].status, 200);
    EXPECT_EQ(json::parse(answers[1].body), json({{"status", "ok"}}));
  }
  // A chunked body is read whole before a thread gets it, and what follows it is kept.
  {
    RawSocket socket(server.port());
    const std::string body = json{{"q", texts[2]}, {"source", "en"}, {"target", "de"}}.dump();
    const auto hex = [](size_t n) {
      char text[32];
      std::snprintf(text, sizeof(text), "%zx", n);
      return std::string(text);
    };
    ASSERT_TRUE(socket.send(
        "POST /translate HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\n\r\n" +
        hex(10) + "\r\n" + body.substr(0, 10) + "\r\n" + hex(body.size() - 10) + ";x=y\r\n" + body.substr(10) +
        "\r\n0\r\n\r\n" + "GET /health HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n"));
    const auto answers = split_answers(socket.read_until_closed(20));
    ASSERT_EQ(answers.size(), 2u);
    EXPECT_EQ(answers[0].status, 200) << answers[0].body;
    EXPECT_EQ(json::parse(answers[0].body)["translatedText"], expected[2]);
    EXPECT_EQ(answers[1].status, 200);
  }
  // Expect: 100-continue is answered once, before the body comes.
  {
    RawSocket socket(server.port());
    const std::string body = json{{"q", texts[0]}, {"source", "en"}, {"target", "de"}}.dump();
    ASSERT_TRUE(
        socket.send("POST /translate HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
                    "Expect: 100-continue\r\nConnection: close\r\nContent-Length: " +
                    std::to_string(body.size()) + "\r\n\r\n"));
    const std::string interim = socket.read_until_closed(5, nullptr, "\r\n\r\n");
    EXPECT_EQ(interim, "HTTP/1.1 100 Continue\r\n\r\n");
    ASSERT_TRUE(socket.send(body));
    const auto answers = split_answers(interim + socket.read_until_closed(20));
    ASSERT_EQ(answers.size(), 2u);
    EXPECT_EQ(answers[0].status, 100);
    EXPECT_EQ(answers[1].status, 200);
    EXPECT_EQ(json::parse(answers[1].body)["translatedText"], expected[0]);
  }
  // Framing that lies is refused, never guessed (item 10): 400 and the connection closed.
  for (const std::string& head :
       {std::string("Content-Length: 2\r\nContent-Length: 2\r\n"),
        std::string("Content-Length: 2\r\nContent-Length: 40\r\n"), std::string("Content-Length: -1\r\n"),
        std::string("Transfer-Encoding: chunked\r\nContent-Length: 2\r\n")}) {
    RawSocket socket(server.port());
    ASSERT_TRUE(socket.send("POST /translate HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n" + head +
                            "\r\n{}GET /health HTTP/1.1\r\n\r\n"));
    bool closed = false;
    const auto answers = split_answers(socket.read_until_closed(5, &closed));
    ASSERT_EQ(answers.size(), 1u) << head;
    EXPECT_EQ(answers[0].status, 400) << head;
    EXPECT_EQ(json::parse(answers[0].body)["error"].get<std::string>().substr(0, 13), "Bad Request: ") << head;
    EXPECT_TRUE(closed) << head;
  }
}

// Bytes of unfinished requests have a budget (64 x --max-body-bytes, at least 16 MiB and two
// uploads of --max-file-bytes or --max-audio-bytes): 80
// clients each holding a 250 KB body one byte short of whole (20 MB) make the server refuse the
// ones read longest with 503; it answers the others meanwhile.
TEST(ServeHostileClients, UnfinishedBodiesHaveAMemoryBudget) {
  ServerProcess server({"--model", "en-de", "--threads", "1", "--max-body-bytes", "262144", "--max-file-bytes",
                        "262144", "--max-audio-bytes", "131072", "--max-client-connections", "0"});
  std::vector<std::unique_ptr<RawSocket>> holders;
  const std::string body(249999, ' ');
  for (int i = 0; i < 80; ++i) {
    holders.push_back(std::make_unique<RawSocket>(server.port()));
    ASSERT_TRUE(
        holders.back()->send("POST /translate HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
                             "Content-Length: 250000\r\n\r\n" +
                             body));
  }
  EXPECT_EQ(probe_health(server).first, 200);
  int refused = 0;
  for (auto& h : holders) refused += h->read_until_closed(0.05).rfind("HTTP/1.1 503 ", 0) == 0;
  EXPECT_GE(refused, 8);
  EXPECT_LE(refused, 20);
  auto res = server.client()->Post("/translate", json{{"q", "Hello."}, {"source", "en"}, {"target", "de"}}.dump(),
                                   "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

// Item 3: a request past --timeout gets 504 and its decoding stops (the next request is answered
// at once, not after the abandoned one); a client that hangs up has its work dropped too; a
// request asking for more than --max-request-cost gets 400 naming the limit.
// One request thread: while the huge request holds it, /health must still answer. The huge
// request runs into its timeout once for the suite; the tests look at what that gave.
class ServeAbandonedWork : public ::testing::Test {
 protected:
  struct Seen {
    bool in_flight = false;        // the huge request was being answered before the probes
    bool still_in_flight = false;  // and still after them
    int probe_failures = 0;
    double worst_probe = 0;
    int huge_status = 0;
    std::string huge_body;
    double huge_seconds = 0;
    int next_status = 0;
    std::string next_body;
    double next_seconds = 0;
  };

  // 8 texts x 16 beams x 1000 forced tokens: minutes of work on two cores.
  static json huge() {
    return {{"model", "en-de"},       {"text", std::vector<std::string>(8, "A man is sleeping on a couch.")},
            {"beam_size", 16},        {"n_best", 16},
            {"min_new_tokens", 1000}, {"max_new_tokens", 1000}};
  }
  static json small() { return {{"model", "en-de"}, {"text", "Hello."}}; }

  static void SetUpTestSuite() {
    server_ = new ServerProcess({"--model", "en-de", "--threads", "2", "--inter-threads", "1", "--timeout", "2",
                                 "--max-request-cost", "100000000", "--http-threads", "1"});
    seen_ = new Seen;
    Seen& seen = *seen_;
    const ServerProcess& server = *server_;
    auto start = Clock::now();
    std::thread busy([&] {
      const auto answer = server.client(30)->Post("/v1/translate", huge().dump(), "application/json");
      seen.huge_status = answer ? answer->status : -1;
      seen.huge_body = answer ? answer->body : "";
      seen.huge_seconds = seconds_since(start);
    });
    // The huge request holds the one request thread (it is being answered) before /health is probed.
    MetricsWatch watch(server.port());
    seen.in_flight = watch.wait_until(
        "ordo_http_requests_in_flight", [](double n) { return n >= 1; }, 30 * kTimeScale);
    for (int i = 0; i < 5; ++i) {
      const auto [status, seconds] = probe_health(server);
      if (status != 200) ++seen.probe_failures;
      seen.worst_probe = std::max(seen.worst_probe, seconds);
    }
    seen.still_in_flight = ordo::testing::metric_value(watch.text(), "ordo_http_requests_in_flight") >= 1;
    busy.join();
    start = Clock::now();
    const auto next = server.client(30)->Post("/v1/translate", small().dump(), "application/json");
    seen.next_seconds = seconds_since(start);
    seen.next_status = next ? next->status : -1;
    seen.next_body = next ? next->body : "";
  }
  static void TearDownTestSuite() {
    delete seen_;
    seen_ = nullptr;
    delete server_;
    server_ = nullptr;
  }
  static const ServerProcess& server() { return *server_; }
  static const Seen& seen() { return *seen_; }
  static ServerProcess* server_;
  static Seen* seen_;
};
ServerProcess* ServeAbandonedWork::server_ = nullptr;
ServeAbandonedWork::Seen* ServeAbandonedWork::seen_ = nullptr;

TEST_F(ServeAbandonedWork, HealthAnswersWhileAHugeRequestHoldsTheOnlyRequestThread) {
  ASSERT_TRUE(seen().in_flight) << "the huge request was not being answered";
  EXPECT_TRUE(seen().still_in_flight) << "the probes were not made while the huge request held the request thread";
  EXPECT_EQ(seen().probe_failures, 0);
  EXPECT_LT(seen().worst_probe, 1.0 * kTimeScale) << "GET /health waited for the busy request thread";
}

TEST_F(ServeAbandonedWork, ARequestPastTheTimeoutIs504) {
  EXPECT_EQ(seen().huge_status, 504) << seen().huge_body;
  EXPECT_LT(seen().huge_seconds, 4.0 * kTimeScale);
}

TEST_F(ServeAbandonedWork, TheDecodingOfATimedOutRequestStops) {
  EXPECT_EQ(seen().next_status, 200) << seen().next_body;
  EXPECT_LT(seen().next_seconds, 1.5 * kTimeScale) << "the timed-out request's decoding went on";
}

// A client that sends the huge request and hangs up once it is being answered.
TEST_F(ServeAbandonedWork, TheDecodingOfARequestWhoseClientHungUpStops) {
  MetricsWatch watch(server().port());
  {
    RawSocket socket(server().port());
    ASSERT_TRUE(socket.send(post_request("/v1/translate", huge().dump())));
    EXPECT_TRUE(watch.wait_until(
        "ordo_http_requests_in_flight", [](double n) { return n >= 1; }, 30 * kTimeScale))
        << "the huge request of the client about to hang up was not being answered";
  }
  const auto start = Clock::now();
  const auto res = server().client(30)->Post("/v1/translate", small().dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  EXPECT_LT(seconds_since(start), 1.5 * kTimeScale) << "the decoding of a request whose client hung up went on";
}

// 1 x 4 beams x 255 tokens is within 10000; 4 x 8 x 400 is not.
TEST(ServeHostileClients, OnlyARequestOverMaxRequestCostIsRefusedNamingTheLimit) {
  ServerProcess bounded({"--model", "en-de", "--threads", "1", "--max-request-cost", "10000"});
  auto res = bounded.client()->Post("/v1/translate",
                                    json{{"model", "en-de"},
                                         {"text", {"a", "b", "c", "d"}},
                                         {"beam_size", 8},
                                         {"min_new_tokens", 400},
                                         {"max_new_tokens", 400}}
                                        .dump(),
                                    "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(json::parse(res->body)["error"],
            "Invalid request: too much decoding work: 4 sentences x 8 beams x 400 new tokens = 12800, more than this "
            "server's limit of 10000 (--max-request-cost); send fewer texts, a smaller beam_size or fewer new tokens");
  res = bounded.client()->Post("/translate", json{{"q", "Hello."}, {"source", "en"}, {"target", "de"}}.dump(),
                               "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
}

// Texts of about 1,400 characters: each fills the en-de model's 256 source positions.
std::vector<std::string> long_texts(size_t count) {
  std::string text;
  while (text.size() < 1400)
    text += "A man in a red jacket is riding a bicycle down the busy street near the old market. ";
  return std::vector<std::string>(count, text);
}

// "attention": true on 16 long texts with 250 forced tokens: 16 x 1 x 24 x 255 x 256+ weights,
// past the default limit of 2^24: refused before decoding, naming the limit.
TEST(ServeAttentionLimits, ARequestForMoreWeightsThanTheLimitIs400NamingIt) {
  ServerProcess server({"--model", "en-de", "--threads", "1"});
  const json request = {{"model", "en-de"},      {"text", long_texts(16)}, {"beam_size", 1},
                        {"min_new_tokens", 250}, {"max_new_tokens", 255},  {"attention", true}};
  const auto res = server.client(120)->Post("/v1/translate", request.dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400) << res->body.substr(0, 300);
  const std::string error = json::parse(res->body)["error"];
  EXPECT_NE(
      error.find("too many attention weights: 16 sentences x 1 hypotheses x 24 layers and heads x 255 new tokens"),
      std::string::npos)
      << error;
  EXPECT_NE(error.find("(--max-attention-values)"), std::string::npos) << error;
}

// The beams a search holds count, not only the hypotheses returned: what fits with one beam
// is refused with eight.
TEST(ServeAttentionLimits, EveryBeamOfTheSearchCounts) {
  // 1 sentence x 24 x 256 tokens x ~13 source tokens = ~80,000 weights per hypothesis.
  ServerProcess server({"--model", "en-de", "--threads", "1", "--max-attention-values", "200000"});
  json request = {{"model", "en-de"}, {"text", "A man is riding a bicycle down the street."}, {"attention", true}};
  request["beam_size"] = 1;
  auto res = server.client(60)->Post("/v1/translate", request.dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body.substr(0, 300);
  request["beam_size"] = 8;
  res = server.client(60)->Post("/v1/translate", request.dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400) << res->body.substr(0, 300);
  EXPECT_NE(res->body.find("1 sentences x 8 hypotheses"), std::string::npos) << res->body;
}

// format=html needs the weights too (its tags are placed by word alignment): the same limit.
TEST(ServeAttentionLimits, HtmlTranslationCountsAgainstTheLimit) {
  ServerProcess server({"--model", "en-de", "--threads", "1", "--max-attention-values", "1000"});
  const json request = {
      {"q", "<p>A man is <b>riding</b> a bicycle.</p>"}, {"source", "en"}, {"target", "de"}, {"format", "html"}};
  const auto res = server.client(60)->Post("/translate", request.dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400) << res->body;
  EXPECT_NE(res->body.find("--max-attention-values"), std::string::npos) << res->body;
}

// An answer inside the limit is whole: every hypothesis' weights, [layer][head][target][source],
// as many target rows as its id_pieces and source columns as source_tokens.
TEST(ServeAttentionLimits, AnAnswerInsideTheLimitHoldsEveryWeight) {
  ServerProcess server({"--model", "en-de", "--threads", "1"});
  const json request = {{"model", "en-de"},      {"text", long_texts(2)}, {"beam_size", 2},   {"n_best", 2},
                        {"min_new_tokens", 100}, {"max_new_tokens", 120}, {"attention", true}};
  const auto res = server.client(300)->Post("/v1/translate", request.dump(), "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body.substr(0, 300);
  const json answer = json::parse(res->body);
  ASSERT_EQ(answer["results"].size(), 2u);
  for (const json& result : answer["results"]) {
    const size_t source = result["source_tokens"].size();
    EXPECT_EQ(source, 256u);
    ASSERT_EQ(result["n_best"].size(), 2u);
    for (const json& h : result["n_best"]) {
      const json& a = h["attention"];
      ASSERT_EQ(a.size(), 6u);
      ASSERT_EQ(a[5].size(), 4u);
      ASSERT_EQ(a[5][3].size(), h["id_pieces"].size());
      EXPECT_GE(h["id_pieces"].size(), 100u);
      for (const json& row : a[5][3]) ASSERT_EQ(row.size(), source);
    }
    EXPECT_EQ(result["attention"], result["n_best"][0]["attention"]);
  }
}

// A FIFO named vmap.txt is refused at once with a 400 naming it: the request's thread never
// waits for a writer (it used to, past --timeout, holding an HTTP thread).
TEST(ServeVocabularyMap, AFifoNamedVmapIs400AtOnce) {
  ordo::testing::TempDir dir;
  ordo::testing::copy_dir(ordo::testing::fixture_dir("marian_opus_en_mg"), dir.path());
  ASSERT_EQ(::mkfifo(dir.file("vmap.txt").c_str(), 0644), 0);
  ServerProcess server({"--model", dir.path(), "--threads", "1", "--timeout", "600"});
  const json request = {{"text", "Where is the train station?"}, {"use_vmap", true}};
  const auto res = server.client(60)->Post("/v1/translate", request.dump(), "application/json");
  ASSERT_TRUE(res) << "no answer within 60 s";
  EXPECT_EQ(res->status, 400) << res->body;
  EXPECT_NE(res->body.find("vmap.txt: is a FIFO, not a regular file"), std::string::npos) << res->body;
}

}  // namespace
