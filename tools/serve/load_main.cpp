// ordo-serve-load: a bounded load generator for `ordo serve` (tools/serve/bench.sh, soak.sh,
// failover.sh).
//
// C clients (one keep-alive connection each) send exactly N requests between them, each one
// sentence: request i carries sentence i of the file, so the N sentences served are the file's
// first N lines, the same ones `ordo translate` is timed on. Throughput is N / (time from the
// first request to the last answer), as for the offline run, so both include the same tail.
// (A fixed-duration load generator such as wrk loses the requests in flight at its deadline:
// with 64 clients and batches of 32 that is a whole batch, a large part of a short cell.)
//
//   ordo-serve-load --url http://127.0.0.1:5000 --clients 64 --requests 256 --sentences news.en
//
// Prints: ORDO_RESULT clients=.. requests=.. seconds=.. rps=.. p50_ms=.. p95_ms=.. p99_ms=.. errors=..
// (rps counts the answers with status 200 only; latencies are those of every request.)
//
// --mix (soak.sh, failover.sh): request i is the i-th of a fixed cycle of ten kinds instead:
// LibreTranslate /translate (a sentence, a six-sentence paragraph, html, alternatives) and /v1
// (a sentence, four texts, beam 4 with 3-best) and one bad request (malformed JSON, an unknown
// field, a missing field, an unknown language: 400 expected, counted apart, not as an error).
// --rate R paces the requests (request i is due R^-1 * i s after the start; its latency counts
// from when it was due, so a server that falls behind shows it); --seconds S stops sending after
// S seconds (and --requests N after N). --report-every T prints a line every T seconds with that
// interval's counts and latencies, and with --pid P the server's RSS, open fds and threads
// (/proc/P), also written as a CSV row with --csv FILE:
//   ORDO_INTERVAL t_s=.. sent=.. ok=.. bad_request_400=.. errors_5xx=.. errors_other=.. p50_ms=.. p99_ms=..
//                 rss_mb=.. fds=.. threads=.. load1=..   (load1: the machine's load average, /proc/loadavg)
// An error is an answer other than the one expected (a 5xx, a 4xx for a good request, 200 for a
// bad one) or no answer (connection refused or dropped, timeout).
#include <dirent.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;

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
  bool mix = false;
  double rate = 0;          // requests per second; 0: as fast as the clients go
  double seconds = 0;       // stop sending after this long; 0: no limit
  double report_every = 0;  // seconds between ORDO_INTERVAL lines; 0: none
  int pid = 0;
  std::string csv;
};

struct Request {
  std::string path, body;
  int expect = 200;
};

std::string body_for(const Options& o, const std::string& sentence) {
  if (o.api == "v1") {
    Json j = {{"model", o.model}, {"text", sentence}};
    if (o.max_new_tokens > 0) j["max_new_tokens"] = o.max_new_tokens;
    return j.dump();
  }
  return Json{{"q", sentence}, {"source", "en"}, {"target", "de"}}.dump();
}

// The i-th request of the fixed mix (see the header), sentences taken in turn from the file.
Request mix_request(const Options& o, const std::vector<std::string>& sentences, size_t i) {
  const auto s = [&](size_t k) { return sentences[(i * 7 + k) % sentences.size()]; };
  const std::string model = o.model.empty() ? "en-de" : o.model;
  const Json libre = {{"source", "en"}, {"target", "de"}};
  Json j;
  switch (i % 10) {
    case 0:
    case 1:
    case 8:  // a sentence, LibreTranslate's way (the most common request)
      j = libre, j["q"] = s(0);
      return {"/translate", j.dump()};
    case 2: {  // a paragraph of six sentences: split, translated, put back
      std::string paragraph;
      for (size_t k = 0; k < 6; ++k) paragraph += (k ? " " : "") + s(k);
      j = libre, j["q"] = paragraph;
      return {"/translate", j.dump()};
    }
    case 3:  // html: markup kept, inline tags put back
      j = libre, j["format"] = "html";
      j["q"] = "<p class=\"a\">" + s(0) + "</p>\n<p><b>" + s(1) + "</b> <i>" + s(2) + "</i></p>";
      return {"/translate", j.dump()};
    case 4:  // LibreTranslate's alternatives (n-best)
      j = libre, j["q"] = s(0), j["alternatives"] = 3;
      return {"/translate", j.dump()};
    case 5: return {"/v1/translate", Json{{"model", model}, {"text", s(0)}}.dump()};
    case 6: return {"/v1/translate", Json{{"model", model}, {"text", {s(0), s(1), s(2), s(3)}}}.dump()};
    case 7: return {"/v1/translate", Json{{"model", model}, {"text", s(0)}, {"beam_size", 4}, {"n_best", 3}}.dump()};
    default:  // 9: a bad request of one of four kinds, 400 expected
      switch ((i / 10) % 4) {
        case 0: return {"/translate", "{\"q\": \"" + s(0) + "\", \"source\": ", 400};
        case 1: return {"/v1/translate", Json{{"model", model}, {"text", s(0)}, {"beam_sise", 2}}.dump(), 400};
        case 2: return {"/translate", Json{{"source", "en"}, {"target", "de"}}.dump(), 400};
        default: return {"/translate", Json{{"q", s(0)}, {"source", "en"}, {"target", "xx"}}.dump(), 400};
      }
  }
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

// Counts of a run or of one interval of it.
struct Tally {
  std::vector<double> latencies_ms;
  int ok = 0, bad_request = 0, errors_5xx = 0, errors_other = 0;
  int errors() const { return errors_5xx + errors_other; }
  int sent() const { return static_cast<int>(latencies_ms.size()); }
};

struct Run {
  double seconds = 0;
  Tally total;
};

// The server's resident memory (MB), open descriptors and threads, from /proc/PID.
struct ProcessSample {
  double rss_mb = -1;
  int fds = -1, threads = -1;
};
double load_average() {
  std::ifstream in("/proc/loadavg");
  double load = -1;
  in >> load;
  return load;
}
ProcessSample sample_process(int pid) {
  ProcessSample out;
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    std::istringstream in(line.substr(line.find(':') + 1));
    if (line.rfind("VmRSS:", 0) == 0) {
      double kb = 0;
      in >> kb;
      out.rss_mb = kb / 1024.0;
    } else if (line.rfind("Threads:", 0) == 0) {
      in >> out.threads;
    }
  }
  if (DIR* dir = ::opendir(("/proc/" + std::to_string(pid) + "/fd").c_str())) {
    out.fds = 0;
    while (const dirent* entry = ::readdir(dir))
      if (entry->d_name[0] != '.') ++out.fds;
    ::closedir(dir);
  }
  return out;
}

// Prints (and appends to the CSV) one interval's line every o.report_every seconds.
class Reporter {
 public:
  Reporter(const Options& o, Clock::time_point start) : o_(o), start_(start) {
    if (!o_.csv.empty()) {
      csv_.open(o_.csv);
      csv_ << "t_s,sent,ok,bad_request_400,errors_5xx,errors_other,p50_ms,p99_ms,rss_mb,fds,threads,load1\n";
    }
  }
  void add(double ms, int status, int expect) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (Tally* t : {&interval_, &total_}) {
      t->latencies_ms.push_back(ms);
      if (status == expect && expect != 200)
        ++t->bad_request;
      else if (status == expect)
        ++t->ok;
      else if (status >= 500)
        ++t->errors_5xx;
      else
        ++t->errors_other;
    }
  }
  // Runs until stop(): one line per interval, and the last (partial) one.
  void loop() {
    if (o_.report_every <= 0) return;
    std::unique_lock<std::mutex> lock(mutex_);
    for (int k = 1;; ++k) {
      const bool stopped = stop_cv_.wait_until(
          lock,
          start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(k * o_.report_every)),
          [&] { return stopping_; });
      print(lock);
      if (stopped) return;
    }
  }
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    stop_cv_.notify_all();
  }
  Tally total() {
    std::lock_guard<std::mutex> lock(mutex_);
    return total_;
  }

 private:
  void print(std::unique_lock<std::mutex>&) {
    const double t = std::chrono::duration<double>(Clock::now() - start_).count();
    const ProcessSample p = o_.pid > 0 ? sample_process(o_.pid) : ProcessSample{};
    const Tally& i = interval_;
    char line[512];
    const double load = load_average();
    std::snprintf(line, sizeof(line), "%.0f,%d,%d,%d,%d,%d,%.1f,%.1f,%.1f,%d,%d,%.2f", t, i.sent(), i.ok, i.bad_request,
                  i.errors_5xx, i.errors_other, percentile(i.latencies_ms, 50), percentile(i.latencies_ms, 99),
                  p.rss_mb, p.fds, p.threads, load);
    std::printf(
        "ORDO_INTERVAL t_s=%.0f sent=%d ok=%d bad_request_400=%d errors_5xx=%d errors_other=%d p50_ms=%.1f "
        "p99_ms=%.1f rss_mb=%.1f fds=%d threads=%d load1=%.2f\n",
        t, i.sent(), i.ok, i.bad_request, i.errors_5xx, i.errors_other, percentile(i.latencies_ms, 50),
        percentile(i.latencies_ms, 99), p.rss_mb, p.fds, p.threads, load);
    std::fflush(stdout);
    if (csv_.is_open()) csv_ << line << "\n" << std::flush;
    interval_ = Tally{};
  }

  const Options& o_;
  const Clock::time_point start_;
  std::ofstream csv_;
  std::mutex mutex_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  Tally interval_, total_;
};

// Sends requests first..first+count-1 (of the mix, or sentence by sentence) from `clients`
// threads, paced by o.rate and cut at o.seconds when they are set.
Run run(const Options& o, const std::vector<std::string>& sentences, int first, int count, bool report) {
  std::atomic<int> next{0};
  std::atomic<int> shown{0};
  const auto start = Clock::now();
  Options quiet = o;
  if (!report) quiet.report_every = 0, quiet.csv.clear();
  Reporter reporter(quiet, start);
  std::thread reporting([&] { reporter.loop(); });
  const auto due = [&](int i) {
    return start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(i / o.rate));
  };
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(o.seconds > 0 ? o.seconds : 1e9));
  std::vector<std::thread> threads;
  for (int c = 0; c < std::min(o.clients, count); ++c)
    threads.emplace_back([&] {
      httplib::Client client(o.url);
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);  // headers and body in two writes: no 40 ms delayed-ACK wait
      client.set_connection_timeout(10);
      client.set_read_timeout(o.timeout_seconds);
      client.set_write_timeout(10);
      for (int i; (i = next++) < count;) {
        const auto when = o.rate > 0 ? due(i) : Clock::now();
        if (when >= deadline || Clock::now() >= deadline) break;
        std::this_thread::sleep_until(when);
        const size_t n = static_cast<size_t>(first + i);
        const Request request = o.mix ? mix_request(o, sentences, n)
                                      : Request{o.api == "v1" ? "/v1/translate" : "/translate",
                                                body_for(o, sentences[n % sentences.size()])};
        const auto res = client.Post(request.path, request.body, "application/json");
        const double ms = std::chrono::duration<double, std::milli>(Clock::now() - when).count();
        const int status = res ? res->status : 0;
        reporter.add(ms, status, request.expect);
        if (status != request.expect && shown++ < 3)
          std::cerr << "ordo-serve-load: " << request.path << ": "
                    << (res ? std::to_string(res->status) + " " + res->body.substr(0, 200)
                            : httplib::to_string(res.error()))
                    << "\n";
      }
    });
  for (std::thread& t : threads) t.join();
  Run result;
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  reporter.stop();
  reporting.join();
  result.total = reporter.total();
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ordo-serve-load: N requests from C concurrent clients to `ordo serve`"};
  Options o;
  app.add_option("--url", o.url, "Server (default http://127.0.0.1:5000)");
  app.add_option("--clients", o.clients, "Concurrent clients")->check(CLI::Range(1, 4096));
  app.add_option("--requests", o.requests, "Requests in all (sentences 0..N-1 of the file)")
      ->check(CLI::Range(1, 1 << 24));
  app.add_option("--warmup", o.warmup, "Requests sent first and not counted (from the end of the file)")
      ->check(CLI::Range(0, 1 << 20));
  app.add_option("--sentences", o.sentences, "One sentence per line")->required();
  app.add_option("--api", o.api, "libre (POST /translate, en->de) or v1 (POST /v1/translate)")
      ->check(CLI::IsMember({"libre", "v1"}));
  app.add_option("--model", o.model, "Model name for --api v1 and the /v1 requests of --mix (default en-de)");
  app.add_option("--max-new-tokens", o.max_new_tokens, "max_new_tokens for --api v1 (0: the model's)");
  app.add_option("--timeout", o.timeout_seconds, "Seconds one request may take")->check(CLI::Range(1, 86400));
  app.add_flag("--mix", o.mix, "A fixed mix of LibreTranslate and /v1 requests, bad ones included (see the source)");
  app.add_option("--rate", o.rate, "Requests per second, paced (default: as fast as the clients go)")
      ->check(CLI::Range(0.0, 1e6));
  app.add_option("--seconds", o.seconds, "Stop sending after this many seconds (default: no limit)")
      ->check(CLI::Range(0.0, 1e7));
  app.add_option("--report-every", o.report_every, "Print an ORDO_INTERVAL line every this many seconds")
      ->check(CLI::Range(0.0, 1e6));
  app.add_option("--pid", o.pid, "The server's process: its RSS, fds and threads in each interval line")
      ->check(CLI::Range(1, 1 << 30));
  app.add_option("--csv", o.csv, "Also write the interval lines to this CSV file");
  CLI11_PARSE(app, argc, argv);
  std::ifstream in(o.sentences);
  std::vector<std::string> sentences;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) sentences.push_back(line);
  if (sentences.empty()) {
    std::cerr << "ordo-serve-load: no sentences in " << o.sentences << "\n";
    return 1;
  }
  if (!o.csv.empty() && o.report_every <= 0) {
    std::cerr << "ordo-serve-load: --csv needs --report-every\n";
    return 1;
  }
  if (o.warmup > 0) {
    Options warm = o;
    warm.rate = 0, warm.seconds = 0;
    run(warm, sentences, static_cast<int>(sentences.size()) - o.warmup, o.warmup, false);
  }
  const Run r = run(o, sentences, 0, o.requests, true);
  const Tally& t = r.total;
  std::printf("ORDO_RESULT clients=%d requests=%d seconds=%.2f rps=%.2f p50_ms=%.0f p95_ms=%.0f p99_ms=%.0f errors=%d",
              o.clients, t.sent(), r.seconds, (t.ok + t.bad_request) / r.seconds, percentile(t.latencies_ms, 50),
              percentile(t.latencies_ms, 95), percentile(t.latencies_ms, 99), t.errors());
  if (o.mix)
    std::printf(" bad_request_400=%d errors_5xx=%d errors_other=%d", t.bad_request, t.errors_5xx, t.errors_other);
  std::printf("\n");
  return t.errors() == 0 ? 0 : 1;
}
