// ordo-serve-load: a bounded load generator for `ordo serve` (tools/serve/bench.sh).
//
// C clients (one keep-alive connection each) send exactly N requests between them, each one
// sentence: request i carries sentence i of the file, so the N sentences served are the file's
// first N lines, the same ones `ordo translate` is timed on. Throughput is N / (time from the
// first request to the last answer), as for the offline run, so both include the same tail.
// (A fixed-duration load generator such as wrk loses the requests in flight at its deadline:
// with 64 clients and batches of 32 that is a whole batch, 10-20 % of a 15 s cell.)
//
//   ordo-serve-load --url http://127.0.0.1:5000 --clients 64 --requests 256 --sentences news.en
//
// Prints: ORDO_RESULT clients=.. requests=.. seconds=.. rps=.. p50_ms=.. p95_ms=.. p99_ms=.. errors=..
// (rps counts the answers with status 200 only; latencies are those of every request.)
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <mutex>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string url = "http://127.0.0.1:5000";
  int clients = 1;
  int requests = 16;
  int warmup = 0;
  std::string sentences;
  std::string api = "libre";  // "libre": POST /translate en->de; "v1": POST /v1/translate
  std::string model;
  int max_new_tokens = 0;
  int timeout_seconds = 600;
};

std::string body_for(const Options& o, const std::string& sentence) {
  if (o.api == "v1") {
    nlohmann::json j = {{"model", o.model}, {"text", sentence}};
    if (o.max_new_tokens > 0) j["max_new_tokens"] = o.max_new_tokens;
    return j.dump();
  }
  return nlohmann::json{{"q", sentence}, {"source", "en"}, {"target", "de"}}.dump();
}

struct Run {
  double seconds = 0;
  std::vector<double> latencies_ms;
  int errors = 0;
};

// Sends requests first..first+count-1 from `clients` threads.
Run run(const Options& o, const std::vector<std::string>& sentences, int first, int count) {
  std::atomic<int> next{0};
  std::mutex mutex;
  Run result;
  const char* path = o.api == "v1" ? "/v1/translate" : "/translate";
  const auto start = Clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < std::min(o.clients, count); ++c)
    threads.emplace_back([&] {
      httplib::Client client(o.url);
      client.set_keep_alive(true);
      client.set_connection_timeout(10);
      client.set_read_timeout(o.timeout_seconds);
      client.set_write_timeout(10);
      for (int i; (i = next++) < count;) {
        const std::string body = body_for(o, sentences[static_cast<size_t>(first + i) % sentences.size()]);
        const auto sent = Clock::now();
        const auto res = client.Post(path, body, "application/json");
        const double ms = std::chrono::duration<double, std::milli>(Clock::now() - sent).count();
        std::lock_guard<std::mutex> lock(mutex);
        if (!res || res->status != 200) {
          ++result.errors;
          if (result.errors <= 3)
            std::cerr << "ordo-serve-load: " << (res ? std::to_string(res->status) + " " + res->body : httplib::to_string(res.error()))
                      << "\n";
        }
        result.latencies_ms.push_back(ms);
      }
    });
  for (std::thread& t : threads) t.join();
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ordo-serve-load: N one-sentence requests from C concurrent clients to `ordo serve`"};
  Options o;
  app.add_option("--url", o.url, "Server (default http://127.0.0.1:5000)");
  app.add_option("--clients", o.clients, "Concurrent clients")->check(CLI::Range(1, 4096));
  app.add_option("--requests", o.requests, "Requests in all (sentences 0..N-1 of the file)")->check(CLI::Range(1, 1 << 24));
  app.add_option("--warmup", o.warmup, "Requests sent first and not counted (from the end of the file)")
      ->check(CLI::Range(0, 1 << 20));
  app.add_option("--sentences", o.sentences, "One sentence per line")->required();
  app.add_option("--api", o.api, "libre (POST /translate, en->de) or v1 (POST /v1/translate)")
      ->check(CLI::IsMember({"libre", "v1"}));
  app.add_option("--model", o.model, "Model name for --api v1");
  app.add_option("--max-new-tokens", o.max_new_tokens, "max_new_tokens for --api v1 (0: the model's)");
  app.add_option("--timeout", o.timeout_seconds, "Seconds one request may take")->check(CLI::Range(1, 86400));
  CLI11_PARSE(app, argc, argv);
  std::ifstream in(o.sentences);
  std::vector<std::string> sentences;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) sentences.push_back(line);
  if (sentences.empty()) {
    std::cerr << "ordo-serve-load: no sentences in " << o.sentences << "\n";
    return 1;
  }
  if (o.warmup > 0) run(o, sentences, static_cast<int>(sentences.size()) - o.warmup, o.warmup);
  const Run r = run(o, sentences, 0, o.requests);
  std::printf("ORDO_RESULT clients=%d requests=%d seconds=%.2f rps=%.2f p50_ms=%.0f p95_ms=%.0f p99_ms=%.0f errors=%d\n",
              o.clients, o.requests, r.seconds, (o.requests - r.errors) / r.seconds, percentile(r.latencies_ms, 50),
              percentile(r.latencies_ms, 95), percentile(r.latencies_ms, 99), r.errors);
  return r.errors == 0 ? 0 : 1;
}
