#include "bench/real_sizes.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <thread>

#include <ATen/Parallel.h>
#include <nlohmann/json.hpp>

#include "bench/timing.h"
#include "io/model_config.h"
#include "ordo/ordo.h"
#include "train/random_checkpoint.h"

namespace ordo::bench {
namespace {

using Ids = std::vector<std::vector<int64_t>>;

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

// A child process: seconds to its first stdout line, in all, its peak resident set and output.
struct ProcessRun {
  double first_line_s = 0, total_s = 0, peak_mb = 0;
  int status = -1;
  std::string output;
};

// Peak memory comes from GNU time when it is installed: a child forked from this process
// starts with this process's resident set as its high-water mark (the kernel copies it at fork
// and keeps it across exec), so wait4's ru_maxrss would never be below ordo-bench's own size.
const char* kTime = "/usr/bin/time";

// `env`: "NAME=value" settings for the child on top of this process's environment.
ProcessRun run_process(std::vector<std::string> argv, const std::string& stdin_path,
                       const std::vector<std::string>& env = {}) {
  std::vector<std::string> environment = env;  // built before fork: the child only execs
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e, name = entry.substr(0, entry.find('=') + 1);
    if (std::none_of(env.begin(), env.end(), [&](const std::string& s) { return s.rfind(name, 0) == 0; }))
      environment.push_back(entry);
  }
  std::vector<char*> envp;
  for (std::string& e : environment) envp.push_back(e.data());
  envp.push_back(nullptr);
  const std::string peak_file = "/tmp/ordo-bench-peak-" + std::to_string(::getpid());
  const bool timed = exists(kTime);
  if (timed) argv.insert(argv.begin(), {kTime, "-f", "%M", "-o", peak_file});
  int out_pipe[2];
  if (::pipe(out_pipe) != 0) throw Error("ordo-bench: pipe failed");
  const auto start = Clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) throw Error("ordo-bench: fork failed");
  if (pid == 0) {
    ::dup2(out_pipe[1], 1);
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    const int in = ::open(stdin_path.empty() ? "/dev/null" : stdin_path.c_str(), O_RDONLY);
    if (in >= 0) ::dup2(in, 0);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execve(args[0], args.data(), envp.data());
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ProcessRun run;
  char buffer[65536];
  bool first = true;
  for (ssize_t n; (n = ::read(out_pipe[0], buffer, sizeof buffer)) > 0;) {
    run.output.append(buffer, static_cast<size_t>(n));
    if (first && run.output.find('\n') != std::string::npos) {
      run.first_line_s = seconds_since(start);
      first = false;
    }
  }
  ::close(out_pipe[0]);
  rusage usage{};
  ::wait4(pid, &run.status, 0, &usage);
  run.total_s = seconds_since(start);
  run.peak_mb = usage.ru_maxrss / 1024.0;
  if (timed) {
    std::ifstream peak(peak_file);
    std::string line, last;
    while (std::getline(peak, line))
      if (!line.empty()) last = line;  // "Command exited with non-zero status" comes first
    run.peak_mb = last.empty() ? 0 : std::atof(last.c_str()) / 1024.0;
    std::remove(peak_file.c_str());
  }
  return run;
}

// The last line of a peer command's output, as JSON (null when the command failed).
nlohmann::json peer_json(const ProcessRun& run) {
  if (run.status != 0) return nullptr;
  std::istringstream lines(run.output);
  std::string line, last;
  while (std::getline(lines, line))
    if (!line.empty() && line[0] == '{') last = line;
  return last.empty() ? nlohmann::json(nullptr) : nlohmann::json::parse(last, nullptr, false);
}

std::string write_ids(const std::string& path, const Ids& ids) {
  std::ofstream out(path);
  out << nlohmann::json(ids).dump() << "\n";
  if (!out) throw Error(path + ": cannot write");
  return path;
}

std::string ratio(double ordo, double peer, bool higher_is_better) {
  if (peer <= 0 || ordo <= 0) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", higher_is_better ? ordo / peer : peer / ordo);
  return text;
}

std::string fmt(double v, const char* f) {
  if (v <= 0) return "n/a";
  char text[32];
  std::snprintf(text, sizeof text, f, v);
  return text;
}

// "AMD EPYC (family 25, model 17), 2 cores; ordo kernels: avx512" from /proc/cpuinfo.
std::string machine_description() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, name = "unknown CPU", family = "?", model = "?";
  const auto value = [&] { return line.substr(line.find(':') + 2); };
  while (std::getline(in, line) && line.find("flags") != 0) {
    if (line.rfind("model name", 0) == 0)
      name = value();
    else if (line.rfind("cpu family", 0) == 0)
      family = value();
    else if (line.rfind("model\t", 0) == 0)
      model = value();
  }
  const char* isa = std::getenv("ORDO_ISA");
  return name + " (family " + family + ", model " + model + "), " +
         std::to_string(std::thread::hardware_concurrency()) + " cores" +
         (isa ? std::string("; ORDO_ISA=") + isa : std::string());
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  return text;
}

// "NAME=value" settings a child process gets on top of this process's environment.
using Env = std::vector<std::string>;

// The name of a CTranslate2 setting in the tables: "AVX512, active"; "as set" for none.
std::string setting_name(const Env& env) {
  std::string name;
  for (const std::string& e : env) name += (name.empty() ? "" : ", ") + e.substr(e.find('=') + 1);
  return name.empty() ? "as set" : name;
}

struct Peer {
  const RealSizeOptions* options = nullptr;
  bool available = false;
  std::vector<std::string> compute_types;  // what the peer supports on this CPU

  std::vector<std::string> command(std::vector<std::string> args) const {
    args.insert(args.begin(), {options->peer_python, options->peer_script});
    return args;
  }
  bool supports(const std::string& compute) const {
    return available && std::find(compute_types.begin(), compute_types.end(), compute) != compute_types.end();
  }
  // The checkpoint converted by CTranslate2's converter for `compute` (once; kept in work/).
  std::string converted(const std::string& hf_dir, const std::string& compute) const {
    const std::string dir = hf_dir + "-ct2-" + compute;
    if (exists(dir + "/model.bin")) return dir;
    const auto start = Clock::now();
    const ProcessRun run = run_process(command({"convert", hf_dir, dir, compute}), "");
    if (run.status != 0) throw Error("ct2_peer.py convert " + hf_dir + " failed:\n" + run.output);
    std::printf("(converted %s for CTranslate2 %s in %.0f s)\n", hf_dir.c_str(), compute.c_str(), seconds_since(start));
    return dir;
  }
  // The settings a cell tries: the environment as it is, or (best: --peer-best) each
  // CT2_FORCE_CPU_ISA (AVX2, AVX512) x OMP_WAIT_POLICY (active, passive), so that the peer is
  // compared at its best, not at its defaults.
  static std::vector<Env> settings(bool best) {
    if (!best) return {{}};
    std::vector<Env> all;
    for (const char* isa : {"AVX2", "AVX512"})
      for (const char* wait : {"active", "passive"})
        all.push_back({std::string("CT2_FORCE_CPU_ISA=") + isa, std::string("OMP_WAIT_POLICY=") + wait});
    return all;
  }
  // ct2_peer.py `args` once per setting; the run whose JSON scores highest (score > 0) wins.
  struct Best {
    nlohmann::json result;  // null when no setting ran
    double score = 0;
    Env env;
    std::string name = "-";
  };
  Best fastest(const std::vector<std::string>& args, const std::vector<Env>& settings,
               const std::function<double(const nlohmann::json&)>& score) const {
    Best best;
    for (const Env& env : settings) {
      const nlohmann::json j = peer_json(run_process(command(args), "", env));
      if (!j.is_object() || score(j) <= best.score) continue;
      best = {j, score(j), env, setting_name(env)};
    }
    return best;
  }
};

// Latency with --peer-best: the four settings race on this many first sentences, the fastest
// by p50 runs them all (four full runs would take most of the report's time).
constexpr size_t kLatencyProbeSentences = 20;

}  // namespace

int run_real_sizes(const RealSizeOptions& o) {
  Peer peer;
  peer.options = &o;
  if (!o.peer_python.empty()) {
    const ProcessRun check = run_process({o.peer_python, o.peer_script, "check"}, "");
    const nlohmann::json j = peer_json(check);
    if (j.is_object()) {
      peer.available = true;
      peer.compute_types = j["compute_types"].get<std::vector<std::string>>();
      std::printf("peer: CTranslate2 %s (compute types %s) through %s\n", j["version"].get<std::string>().c_str(),
                  j["compute_types"].dump().c_str(), o.peer_python.c_str());
    } else {
      std::printf("peer column skipped: %s cannot import ctranslate2 (%s)\n", o.peer_python.c_str(),
                  check.output.empty() ? "no output" : check.output.substr(0, 200).c_str());
    }
  }
  // The packed weights cache of the ordo processes measured: the benchmark's own folder, so
  // that its files (several GB for the big shapes) do not land in the user's ~/.cache.
  if (!std::getenv("ORDO_CACHE_DIR")) ::setenv("ORDO_CACHE_DIR", (o.work + "/cache").c_str(), 1);
  if (!exists(kTime))
    std::printf("note: %s missing (Debian package time): peak RSS figures include ordo-bench's own size\n", kTime);
  // The Hugging Face column: available when hf_peer.py check imports transformers.
  std::vector<std::string> hf_env;
  bool hf = false;
  if (!o.hf_script.empty() && !o.peer_python.empty()) {
    const char* path = std::getenv("PYTHONPATH");
    if (!o.hf_path.empty())
      hf_env = {"PYTHONPATH=" + o.hf_path + (path ? std::string(":") + path : ""), "HF_HUB_OFFLINE=1"};
    const nlohmann::json j = peer_json(run_process({o.peer_python, o.hf_script, "check"}, "", hf_env));
    hf = j.is_object();
    if (hf)
      std::printf("peer: Hugging Face transformers %s (eager, torch %s), float32, 1 and 2 threads\n",
                  j["version"].get<std::string>().c_str(), j["torch"].get<std::string>().c_str());
    else
      std::printf("transformers column skipped: %s cannot import transformers (PYTHONPATH %s)\n", o.peer_python.c_str(),
                  o.hf_path.c_str());
  }
  std::printf("machine: %s; %s; load average at start %s\n\n", machine_description().c_str(), utc_now().c_str(),
              load_average().c_str());
  const std::vector<std::string> news =
      newstest_lines(o.data, static_cast<size_t>(std::max(o.latency_sentences, o.memory_sentences)));
  const bool wants_news = std::any_of(o.reports.begin(), o.reports.end(), [](const std::string& r) {
    return r == "memory" || r == "startup" || r == "latency";
  });
  if (wants_news && news.empty())
    std::printf("note: memory, start-up and latency skipped: no newstest2014.en at %s\n\n",
                newstest_places(o.data).c_str());

  for (const std::string& shape_name : o.shapes) {
    const bool workload = shape_name == "workload";
    train::BigShape shape;
    if (!workload) shape = train::big_shape(shape_name);
    const std::string dir = workload ? o.workload_dir : o.work + "/" + shape.name;
    auto start = Clock::now();
    if (!workload) train::write_random_model(dir, shape, o.fixtures);
    const io::ModelConfig config = io::load_model_config(dir + "/config.json");
    if (workload) {
      shape.name = "workload";
      shape.layers = config.encoder_layers;
      shape.d_model = config.d_model;
      shape.ffn_dim = config.encoder_ffn_dim;
      shape.heads = config.encoder_attention_heads;
      shape.vocab_size = config.vocab_size;
    }
    std::printf("## %s: %lld+%lld layers, d %lld, ffn %lld, %lld heads, vocabulary %lld (%s; ready in %.0f s)\n\n",
                shape.name.c_str(), static_cast<long long>(shape.layers), static_cast<long long>(shape.layers),
                static_cast<long long>(shape.d_model), static_cast<long long>(shape.ffn_dim),
                static_cast<long long>(shape.heads), static_cast<long long>(shape.vocab_size), dir.c_str(),
                seconds_since(start));
    std::fflush(stdout);
    const auto has = [&](const std::string& r) {
      return std::find(o.reports.begin(), o.reports.end(), r) != o.reports.end();
    };

    // Random source ids away from the special tokens, ending with </s>.
    Ids batch;
    std::mt19937 rng(7);
    std::uniform_int_distribution<int64_t> id(110, 2000);
    for (int s = 0; s < o.sentences; ++s) {
      std::vector<int64_t> ids;
      for (int t = 0; t + 1 < o.source_tokens; ++t) ids.push_back(id(rng));
      ids.push_back(config.eos_token_id);
      batch.push_back(ids);
    }
    const std::string batch_file = write_ids(dir + "/bench_batch.json", batch);

    if (has("throughput")) {
      std::printf(
          "| %s throughput (tok/s, %d sentences x %d -> %d tokens, length penalty %g, median of %d%s) | compute | "
          "threads | beam | ordo | CTranslate2 | ordo/CT2 | CTranslate2 setting | transformers eager | "
          "ordo/transformers | load avg |\n",
          shape.name.c_str(), o.sentences, o.source_tokens, o.tokens, o.length_penalty, o.runs,
          peer.available ? "; ordo's: as many before and after CTranslate2's" : "");
      std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
      for (const std::string& compute : o.compute_types) {
        ModelOptions model_options;
        model_options.compute_type = parse_compute_type(compute);
        const Translator translator(dir, model_options);
        const std::string peer_dir = peer.supports(compute) ? peer.converted(dir, compute) : "";
        std::vector<std::string> peer_chosen;  // peer_best_once: the setting of this compute type's first cell
        for (const std::string& cell : o.cells) {
          if (cell != "1" && cell != "2" && cell != "2x1") throw Error("--cells: unknown cell '" + cell + "'");
          const int threads = cell == "1" ? 1 : 2, parallel = cell == "2x1" ? 2 : 0;
          for (int beam : o.beams) {
            DecodeOptions options;
            options.beam_size = beam;
            options.max_new_tokens = options.min_new_tokens = o.tokens;
            options.return_scores = false;  // as the peer runs (CTranslate2's return_scores=False)
            options.length_penalty = o.length_penalty;
            options.no_repeat_ngram_size = o.no_repeat_ngram;
            BatchOptions batching;  // each call's sentences are one batch
            batching.batch_size = parallel ? (o.sentences + 1) / 2 : o.sentences;
            const Ids halves[2] = {Ids(batch.begin(), batch.begin() + (o.sentences + 1) / 2),
                                   Ids(batch.begin() + (o.sentences + 1) / 2, batch.end())};
            const auto once = [&] {
              if (!parallel) {
                at::set_num_threads(threads);
                translator.translate_ids(batch, options, batching);
                return;
              }
              std::vector<std::thread> workers;
              for (int p = 0; p < 2; ++p)
                workers.emplace_back([&, p] {
                  at::set_num_threads(1);
                  translator.translate_ids(halves[p], options, batching);
                });
              for (auto& t : workers) t.join();
            };
            once();
            std::vector<double> rates;
            const auto timed_runs = [&] {
              for (int r = 0; r < o.runs; ++r) {
                const auto t0 = Clock::now();
                once();
                rates.push_back(o.sentences * o.tokens / seconds_since(t0));
              }
            };
            timed_runs();
            // CTranslate2 right after ordo, once per setting (peer_best: both OpenMP wait policies
            // and both kernel sets); the fastest is the column.
            double peer_rate = 0;
            std::string peer_setting = "-";
            if (!peer_dir.empty()) {
              std::vector<Env> settings = Peer::settings(o.peer_best);
              if (o.peer_best && o.peer_best_once && !peer_chosen.empty()) settings = {peer_chosen};
              const Peer::Best best =
                  peer.fastest({"throughput", peer_dir, batch_file, "--compute-type", compute, "--intra",
                                std::to_string(parallel ? 1 : threads), "--inter", std::to_string(parallel ? 2 : 1),
                                "--beam", std::to_string(beam), "--tokens", std::to_string(o.tokens), "--runs",
                                std::to_string(o.runs), "--length-penalty", std::to_string(o.length_penalty),
                                "--no-repeat-ngram", std::to_string(o.no_repeat_ngram)},
                               settings, [](const nlohmann::json& j) { return j["tokens_per_s"].get<double>(); });
              peer_rate = best.score;
              peer_setting = best.name;
              if (o.peer_best && best.result.is_object()) peer_chosen = best.env;
              // ordo's runs again after the peer's: its figure, the median of both sets, spans
              // the minutes the peer's does on a host whose speed drifts.
              timed_runs();
            }
            const double ordo_rate = median(rates);
            double hf_rate = 0;
            if (hf && compute == "float32" && !parallel) {
              const nlohmann::json j = peer_json(run_process(
                  {o.peer_python, o.hf_script, "throughput", dir, batch_file, "--intra", std::to_string(threads),
                   "--beam", std::to_string(beam), "--tokens", std::to_string(o.tokens), "--runs",
                   std::to_string(o.runs), "--length-penalty", std::to_string(o.length_penalty), "--no-repeat-ngram",
                   std::to_string(o.no_repeat_ngram)},
                  "", hf_env));
              if (j.is_object()) hf_rate = j["tokens_per_s"].get<double>();
            }
            std::printf("| | %s | %s | %d | %.1f | %s | %s | %s | %s | %s | %s |\n", compute.c_str(),
                        parallel ? "2 x 1" : cell.c_str(), beam, ordo_rate, fmt(peer_rate, "%.1f").c_str(),
                        ratio(ordo_rate, peer_rate, true).c_str(), peer_setting.c_str(), fmt(hf_rate, "%.1f").c_str(),
                        ratio(ordo_rate, hf_rate, true).c_str(), load_average().c_str());
            std::fflush(stdout);
          }
        }
      }
      std::printf("\n");
    }

    if ((has("memory") || has("startup")) && !news.empty()) {
      // One `ordo translate` process (and one peer process) per compute type: peak resident set
      // over `memory_sentences` newstest lines (beam 4, 1 thread, exactly memory_tokens tokens
      // each), and start-up = process start to the first output line with one line (2 threads).
      const std::vector<std::string> lines(news.begin(),
                                           news.begin() + std::min<size_t>(news.size(), o.memory_sentences));
      const std::string text_file = dir + "/bench_lines.txt", one_file = dir + "/bench_one_line.txt";
      {
        std::ofstream t(text_file), one(one_file);
        for (const std::string& l : lines) t << l << "\n";
        one << lines[0] << "\n";
      }
      Ids line_ids, one_ids;
      {
        const Translator tokenizer_only(dir);  // float32 load; only its tokenizer is used
        for (const std::string& l : lines) line_ids.push_back(tokenizer_only.encode(l));
      }
      one_ids.push_back(line_ids[0]);
      const std::string ids_file = write_ids(dir + "/bench_lines.json", line_ids);
      const std::string one_ids_file = write_ids(dir + "/bench_one_line.json", one_ids);
      const std::string tokens = std::to_string(o.memory_tokens);
      std::printf("| %s | compute | ordo | CTranslate2 | CT2/ordo (>1: ordo better) | load avg |\n",
                  shape.name.c_str());
      std::printf("|---|---|---|---|---|---|\n");
      for (const std::string& compute : o.compute_types) {
        const std::string peer_dir = peer.supports(compute) ? peer.converted(dir, compute) : "";
        // Packing at load (cold) unless `cached`: then the packed weights cache (runs/bench/cache
        // unless ORDO_CACHE_DIR says otherwise), filled by an earlier run.
        const auto ordo_cmd = [&](int threads, int beam, bool cached = false) {
          std::vector<std::string> argv{o.ordo_binary,
                                        "translate",
                                        "-m",
                                        dir,
                                        "--compute-type",
                                        compute,
                                        "-t",
                                        std::to_string(threads),
                                        "-b",
                                        std::to_string(beam),
                                        "--max-length",
                                        tokens,
                                        "--min-length",
                                        tokens,
                                        "--no-repeat-ngram-size",
                                        std::to_string(o.no_repeat_ngram),
                                        "--batch-size",
                                        "1",
                                        "-q"};
          if (!cached) argv.push_back("--no-weight-cache");
          return argv;
        };
        const auto peer_cmd = [&](const std::string& ids, int threads, int beam) {
          return peer.command({"lines", peer_dir, ids, "--compute-type", compute, "--intra", std::to_string(threads),
                               "--beam", std::to_string(beam), "--tokens", tokens, "--no-repeat-ngram",
                               std::to_string(o.no_repeat_ngram)});
        };
        if (has("memory")) {
          const ProcessRun mine = run_process(ordo_cmd(1, 4), text_file);
          if (mine.status != 0) throw Error("ordo translate failed on " + dir + " (" + compute + ")");
          ProcessRun theirs;
          if (!peer_dir.empty()) theirs = run_process(peer_cmd(ids_file, 1, 4), "");
          const double peer_mb = theirs.status == 0 ? theirs.peak_mb : 0;
          std::printf("| peak RSS (MB), %zu lines, beam 4, 1 thread | %s | %.0f | %s | %s | %s |\n", lines.size(),
                      compute.c_str(), mine.peak_mb, fmt(peer_mb, "%.0f").c_str(),
                      ratio(mine.peak_mb, peer_mb, false).c_str(), load_average().c_str());
          std::fflush(stdout);
        }
        if (has("startup")) {
          const ProcessRun mine = run_process(ordo_cmd(2, 1), one_file);
          if (mine.status != 0) throw Error("ordo translate failed on " + dir + " (" + compute + ")");
          ProcessRun theirs;
          if (!peer_dir.empty()) theirs = run_process(peer_cmd(one_ids_file, 2, 1), "");
          const double peer_s = theirs.status == 0 ? theirs.first_line_s : 0;
          std::printf(
              "| start-up to first line (s), 1 line, greedy, 2 threads, packing (no cache) | %s | %.2f | %s | %s | %s "
              "|\n",
              compute.c_str(), mine.first_line_s, fmt(peer_s, "%.2f").c_str(),
              ratio(mine.first_line_s, peer_s, false).c_str(), load_average().c_str());
          std::fflush(stdout);
          // A user's first run: the cache on and empty (packing at load, the cache file written
          // by a thread of its own meanwhile; the process ends once it is written: total in brackets).
          const std::string empty_cache = dir + "/bench_empty_cache";
          std::filesystem::remove_all(empty_cache);
          const ProcessRun first = run_process(ordo_cmd(2, 1, true), one_file, {"ORDO_CACHE_DIR=" + empty_cache});
          std::filesystem::remove_all(empty_cache);
          if (first.status != 0) throw Error("ordo translate failed on " + dir + " (" + compute + ")");
          std::printf(
              "| start-up to first line (s), the same, first run: empty cache, written in the background (process end) "
              "| %s | %.2f (%.2f) | %s | %s | %s |\n",
              compute.c_str(), first.first_line_s, first.total_s, fmt(peer_s, "%.2f").c_str(),
              ratio(first.first_line_s, peer_s, false).c_str(), load_average().c_str());
          std::fflush(stdout);
          if (run_process(ordo_cmd(2, 1, true), one_file).status != 0)  // fills the cache if empty
            throw Error("ordo translate failed on " + dir + " (" + compute + ")");
          const ProcessRun cached = run_process(ordo_cmd(2, 1, true), one_file);
          std::printf("| start-up to first line (s), the same, packed weights cache | %s | %.2f | %s | %s | %s |\n",
                      compute.c_str(), cached.first_line_s, fmt(peer_s, "%.2f").c_str(),
                      ratio(cached.first_line_s, peer_s, false).c_str(), load_average().c_str());
          std::fflush(stdout);
        }
      }
      std::printf("\n");
    }

    if (has("latency") && !news.empty()) {
      // Batch 1, one newstest sentence at a time, exactly as many target tokens as source ids.
      std::printf(
          "| %s latency (ms, batch 1, %d newstest sentences) | compute | threads | beam | ordo p50 | CT2 p50 | ordo "
          "p95 | CT2 p95 | p50 CT2/ordo | p95 CT2/ordo | CT2 setting | load avg |\n",
          shape.name.c_str(), o.latency_sentences);
      std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
      for (const std::string& compute : o.compute_types) {
        ModelOptions model_options;
        model_options.compute_type = parse_compute_type(compute);
        const Translator translator(dir, model_options);
        Ids ids;
        for (size_t i = 0; i < news.size() && static_cast<int>(i) < o.latency_sentences; ++i)
          ids.push_back(translator.encode(news[i]));
        const std::string ids_file = write_ids(dir + "/bench_latency.json", ids);
        const bool probe = o.peer_best && ids.size() > kLatencyProbeSentences;
        const std::string probe_file =
            probe ? write_ids(dir + "/bench_latency_probe.json",
                              Ids(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(kLatencyProbeSentences)))
                  : ids_file;
        const std::string peer_dir = peer.supports(compute) ? peer.converted(dir, compute) : "";
        for (const std::string& cell : o.cells) {
          if (cell == "2x1") continue;
          const int threads = cell == "1" ? 1 : 2;
          for (int beam : o.beams) {
            at::set_num_threads(threads);
            std::vector<double> ms;
            for (size_t i = 0; i <= ids.size(); ++i) {
              const std::vector<int64_t>& src = ids[i == 0 ? 0 : i - 1];  // the first run warms up
              DecodeOptions options;
              options.beam_size = beam;
              options.max_new_tokens = options.min_new_tokens = static_cast<int>(src.size());
              options.return_scores = false;  // as the peer runs
              options.no_repeat_ngram_size = o.no_repeat_ngram;
              const auto t0 = Clock::now();
              translator.translate_ids({src}, options);
              if (i > 0) ms.push_back(1000 * seconds_since(t0));
            }
            double p50 = 0, p95 = 0;
            std::string setting = "-";
            if (!peer_dir.empty()) {
              std::vector<std::string> args = {"latency",
                                               peer_dir,
                                               probe_file,
                                               "--compute-type",
                                               compute,
                                               "--intra",
                                               std::to_string(threads),
                                               "--beam",
                                               std::to_string(beam),
                                               "--no-repeat-ngram",
                                               std::to_string(o.no_repeat_ngram)};
              const auto by_p50 = [](const nlohmann::json& j) { return 1 / j["p50"].get<double>(); };
              // --peer-best: the setting fastest on the first sentences runs them all (with no more
              // sentences than that, probe_file is ids_file and the four full runs are the race).
              std::vector<Env> settings = Peer::settings(o.peer_best);
              if (probe) settings = {peer.fastest(args, settings, by_p50).env};
              args[2] = ids_file;
              const Peer::Best best = peer.fastest(args, settings, by_p50);
              if (best.result.is_object()) {
                p50 = 1000 * best.result["p50"].get<double>();
                p95 = 1000 * best.result["p95"].get<double>();
                setting = best.name;
              }
            }
            const double mine50 = percentile(ms, 0.5), mine95 = percentile(ms, 0.95);
            std::printf("| | %s | %d | %d | %.0f | %s | %.0f | %s | %s | %s | %s | %s |\n", compute.c_str(), threads,
                        beam, mine50, fmt(p50, "%.0f").c_str(), mine95, fmt(p95, "%.0f").c_str(),
                        ratio(mine50, p50, false).c_str(), ratio(mine95, p95, false).c_str(), setting.c_str(),
                        load_average().c_str());
            std::fflush(stdout);
          }
        }
      }
      std::printf("\n");
    }
  }
  return 0;
}

std::vector<std::string> newstest_lines(const std::string& data, size_t limit) {
  for (const std::string& path : {data + "/newstest/newstest2014.en", data + "/newstest2014.en"}) {
    std::ifstream in(path);
    if (!in) continue;
    std::vector<std::string> lines;
    for (std::string line; lines.size() < limit && std::getline(in, line);)
      if (!line.empty()) lines.push_back(line);
    return lines;
  }
  return {};
}

std::string newstest_places(const std::string& data) {
  return data + "/newstest/newstest2014.en or " + data + "/newstest2014.en";
}

}  // namespace ordo::bench
