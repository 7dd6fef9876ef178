// "stream": true on POST /v1/translate and /v1/summarize, read as a client reads it: the real
// `ordo serve` on 127.0.0.1 (ephemeral port), the server-sent events off a raw socket, chunk
// by chunk. Events come in order, each text's token events build its final text, the done
// event is the non-streamed answer, and a client that hangs up mid-stream frees the worker
// (its decoding stops). Every read is bounded in time.
// ctest-label: integration
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <thread>

#include "server/server_process.h"
#include "support/fixtures.h"

namespace {

using nlohmann::json;
using ordo::testing::ServerProcess;

struct SseEvent {
  std::string name;
  json data;
};

// A connected socket to the server with `request` sent (HTTP/1.1, Connection: close).
int send_request(const ServerProcess& server, const std::string& path, const json& body) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(server.port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) throw std::runtime_error("connect failed");
  const std::string text = body.dump();
  const std::string request = "POST " + path +
                              " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                              "Connection: close\r\nContent-Length: " +
                              std::to_string(text.size()) + "\r\n\r\n" + text;
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size()))
    throw std::runtime_error("send failed");
  return fd;
}

// Reads from `fd` until `enough(bytes so far)` or the end (at most `seconds`).
std::string read_until(int fd, const std::function<bool(const std::string&)>& enough, double seconds = 60) {
  std::string bytes;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  char buffer[4096];
  while (!enough(bytes) && std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    bytes.append(buffer, static_cast<size_t>(n));
  }
  return bytes;
}

// The head and the de-chunked body of an HTTP/1.1 answer.
std::pair<std::string, std::string> split_answer(const std::string& bytes) {
  const size_t end = bytes.find("\r\n\r\n");
  if (end == std::string::npos) return {bytes, ""};
  const std::string head = bytes.substr(0, end);
  std::string body;
  for (size_t at = end + 4; at < bytes.size();) {
    const size_t line = bytes.find("\r\n", at);
    if (line == std::string::npos) break;
    const size_t size = std::stoul(bytes.substr(at, line - at), nullptr, 16);
    if (size == 0) break;
    body += bytes.substr(line + 2, size);
    at = line + 2 + size + 2;
  }
  return {head, body};
}

std::vector<SseEvent> parse_events(const std::string& body) {
  std::vector<SseEvent> events;
  size_t at = 0;
  for (size_t end; (end = body.find("\n\n", at)) != std::string::npos; at = end + 2) {
    const std::string block = body.substr(at, end - at);
    SseEvent e;
    const size_t newline = block.find('\n');
    EXPECT_EQ(block.compare(0, 7, "event: "), 0) << block;
    EXPECT_EQ(block.compare(newline + 1, 6, "data: "), 0) << block;
    e.name = block.substr(7, newline - 7);
    e.data = json::parse(block.substr(newline + 7));
    events.push_back(std::move(e));
  }
  EXPECT_EQ(at, body.size()) << "a partial event at the end";
  return events;
}

double generated_tokens(const ServerProcess& server) {
  const auto res = server.client()->Get("/metrics");
  if (!res) return -1;
  const std::string& text = res->body;
  const size_t at = text.find("\nordo_generated_tokens_total{");
  if (at == std::string::npos) return 0;
  const size_t space = text.find(' ', text.find('}', at));
  return std::stod(text.substr(space + 1));
}

json post_json(const ServerProcess& server, const std::string& path, const json& body) {
  const auto res = server.client()->Post(path.c_str(), body.dump(), "application/json");
  if (!res) return json();
  return json::parse(res->body);
}

// One server for the event tests (a translation and a summarization fixture); each route is
// asked once per beam size, plainly and streamed, and the answers kept for the tests.
class ServeStreamingEvents : public ::testing::Test {
 protected:
  struct Streamed {
    json plain;        // the non-streamed answer
    std::string head;  // the streamed answer's head
    std::vector<SseEvent> events;
  };
  static void SetUpTestSuite() {
    server_ = new ServerProcess({"--model", ordo::testing::fixture_dir("marian_opus_en_mg"), "--model",
                                 ordo::testing::fixture_dir("pegasus"), "--threads", "1"});
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
    answers().clear();
  }
  static std::map<std::pair<std::string, int>, Streamed>& answers() {
    static std::map<std::pair<std::string, int>, Streamed> kept;
    return kept;
  }
  // The second text is empty.
  static const Streamed& streamed(const std::string& path, int beams) {
    auto& kept = answers();
    const auto key = std::make_pair(path, beams);
    if (const auto it = kept.find(key); it != kept.end()) return it->second;
    const json texts = {"My neighbour planted three apple trees in the garden last spring.", "",
                        "Where is the train station?"};
    const json request = {{"text", texts}, {"beam_size", beams}, {"max_new_tokens", 40}};
    Streamed out;
    out.plain = post_json(*server_, path, request);
    json streaming = request;
    streaming["stream"] = true;
    const int fd = send_request(*server_, path, streaming);
    const auto [head, body] = split_answer(read_until(fd, [](const std::string&) { return false; }));
    ::close(fd);
    out.head = head;
    out.events = parse_events(body);
    return kept[key] = out;
  }
  // The token events of a stream that ended with "done": the text of each one's index so far.
  struct Tokens {
    std::map<size_t, std::string> joined;
    size_t count = 0;
  };
  static Tokens tokens_of(const Streamed& s, const std::string& path) {
    Tokens t;
    for (size_t k = 0; k + 1 < s.events.size(); ++k) {
      EXPECT_EQ(s.events[k].name, "token") << path << " event " << k;
      const json& d = s.events[k].data;
      const size_t index = d["index"];
      t.joined[index] += d["delta"].get<std::string>();
      EXPECT_EQ(d["text"], t.joined[index]) << path << " event " << k;  // in order
      ++t.count;
    }
    return t;
  }
  static const std::vector<std::string>& paths() {
    static const std::vector<std::string> both = {"/v1/translate", "/v1/summarize"};
    return both;
  }
  static ServerProcess* server_;
};
ServerProcess* ServeStreamingEvents::server_ = nullptr;

TEST_F(ServeStreamingEvents, AStreamIsAnEventStream) {
  for (const std::string& path : paths())
    EXPECT_NE(streamed(path, 1).head.find("Content-Type: text/event-stream"), std::string::npos)
        << streamed(path, 1).head;
}

TEST_F(ServeStreamingEvents, TheLastEventIsDoneWithTheNonStreamedAnswer) {
  for (const std::string& path : paths())
    for (const int beams : {1, 2}) {
      const Streamed& s = streamed(path, beams);
      ASSERT_TRUE(s.plain.contains("results")) << path << ": " << s.plain.dump();
      ASSERT_FALSE(s.events.empty()) << path << " " << s.head;
      EXPECT_EQ(s.events.back().name, "done") << path;
      EXPECT_EQ(s.events.back().data, s.plain) << path << " beams " << beams;
    }
}

TEST_F(ServeStreamingEvents, EachTokenEventsTextIsItsDeltasSoFar) {
  for (const std::string& path : paths()) {
    const Tokens t = tokens_of(streamed(path, 1), path);
    EXPECT_GT(t.count, 0u) << path;
  }
}

TEST_F(ServeStreamingEvents, AnEmptyTextGetsNoTokenEvents) {
  for (const std::string& path : paths()) EXPECT_EQ(tokens_of(streamed(path, 1), path).joined.count(1), 0u) << path;
}

// One event per generated token (</s> included), each text a prefix of the answer's.
TEST_F(ServeStreamingEvents, GreedyDecodingStreamsEveryGeneratedToken) {
  for (const std::string& path : paths()) {
    const Streamed& s = streamed(path, 1);
    ASSERT_TRUE(s.plain.contains("results")) << path << ": " << s.plain.dump();
    Tokens t = tokens_of(s, path);
    size_t generated = 0;
    for (size_t i : {size_t(0), size_t(2)}) {
      const std::string answer = s.plain["results"][i]["text"];
      EXPECT_EQ(answer.compare(0, t.joined[i].size(), t.joined[i]), 0) << path << ": " << t.joined[i];
      generated += s.plain["results"][i]["tokens"].size();
    }
    EXPECT_GE(t.count, generated) << path;
  }
}

TEST_F(ServeStreamingEvents, BeamSearchStreamsOnlyTheDoneEvent) {
  for (const std::string& path : paths()) {
    const Streamed& s = streamed(path, 2);
    ASSERT_FALSE(s.events.empty()) << path;
    EXPECT_EQ(s.events.size(), 1u) << path << ": beam search streams only the done event";
  }
}

TEST_F(ServeStreamingEvents, ABadStreamFieldIsNamed) {
  const auto bad =
      server_->client()->Post("/v1/translate", json{{"text", "x"}, {"stream", "yes"}}.dump(), "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(bad->body.find("stream"), std::string::npos) << bad->body;
}

TEST(ServeStreaming, AClientThatHangsUpMidStreamFreesTheWorker) {
  // One worker, one sentence per batch: while a request decodes, the next one waits.
  ServerProcess server(
      {"--model", ordo::testing::fixture_dir("marian_opus_en_mg"), "--threads", "1", "--batch-size", "1"});
  // Four texts of 500 tokens each (batched one by one): about 2 s of decoding.
  const json long_request = {{"text", {"Where is the train station?", "Line one.", "Hello world.", "How are you?"}},
                             {"beam_size", 1},
                             {"min_new_tokens", 500},
                             {"max_new_tokens", 500}};
  // The whole decoding, for comparison: its tokens.
  const double before = generated_tokens(server);
  ASSERT_TRUE(post_json(server, "/v1/translate", long_request).contains("results"));
  const double full_tokens = generated_tokens(server) - before;
  ASSERT_GE(full_tokens, 2000);

  json streaming = long_request;
  streaming["stream"] = true;
  const int fd = send_request(server, "/v1/translate", streaming);
  const std::string first =
      read_until(fd, [](const std::string& b) { return b.find("event: token") != std::string::npos; });
  ASSERT_NE(first.find("event: token"), std::string::npos) << first;
  ::close(fd);  // gone mid-stream
  const json next =
      post_json(server, "/v1/translate", json{{"text", "Hello."}, {"beam_size", 1}, {"max_new_tokens", 5}});
  ASSERT_TRUE(next.contains("results")) << next.dump();
  // The stopped request generated far fewer tokens than the whole decoding: the worker, which
  // `next` waited for, did not run it to its end. (One worker: the stopped batch was done and
  // counted before `next` ran; `next` adds <= 6.) Tokens, not seconds: a busy machine's clock
  // tells nothing here.
  const double stopped_tokens = generated_tokens(server) - before - full_tokens;
  EXPECT_LT(stopped_tokens, full_tokens / 2) << "tokens after the hang-up: the decoding was not stopped";
}

}  // namespace
