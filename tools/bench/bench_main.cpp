// ordo-bench: the speed workload (a Marian 6+6 model of the opus-mt-en-de shape
// with random weights, 32 sentences x 30 source tokens, exactly 64 target tokens each), plus
// real sentences (newstest2014), start-up time and peak memory. Prints markdown tables.
//
//   build/ordo-bench                 # full run (a few minutes)
//   build/ordo-bench --runs 1        # quick look
//   build/ordo-bench --peer-python /usr/bin/python3 [--quick]   # the docs/benchmarks.md table:
//       the workload against CTranslate2 (at its best setting) and transformers eager, with
//       peak memory and start-up
//   build/ordo-bench --gemm          # the decoding-step GEMM kernel against the memory's read rate
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <thread>

#include <ATen/Parallel.h>
#include <dnnl.h>
#include <CLI/CLI.hpp>

#include "bench/background_load.h"
#include "bench/gemm_report.h"
#include "bench/real_sizes.h"
#include "bench/timing.h"
#include "cli/openmp_wait.h"
#include "models/family.h"
#include "ordo/ordo.h"
#include "train/marian_export.h"
#include "train/training_forward.h"

namespace {

using namespace ordo;
using bench::Clock;
using bench::median;
using bench::seconds_since;

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

void copy_file(const std::string& from, const std::string& to) {
  std::ifstream in(from, std::ios::binary);
  std::ofstream out(to, std::ios::binary);
  out << in.rdbuf();
}

// The workload model: opus-mt-en-de's shape (vocabulary 58,101, pad = 58,100), swish, random
// weights from a fixed seed; tokenizer files borrowed from the en-mg fixture so that real text
// can go through it too (its ids are all below 58,101).
std::string write_workload_model(const std::string& dir, const std::string& tokenizer_dir) {
  if (exists(dir + "/model.safetensors")) return dir;
  ::mkdir(dir.c_str(), 0755);
  train::MarianShape shape;
  shape.d_model = 512;
  shape.layers = 6;
  shape.heads = 8;
  shape.ffn_dim = 2048;
  shape.max_positions = 512;
  shape.activation = "swish";
  models::Seq2SeqModel model(train::marian_config(shape, 58101), models::marian_family());
  train::initialise(model, 1234);
  train::write_model_files(dir, model, shape, io::DType::F32, /*dropout=*/0.1);
  for (const char* f : {"source.spm", "target.spm", "vocab.json", "tokenizer_config.json"})
    copy_file(tokenizer_dir + "/" + f, dir + "/" + f);
  return dir;
}

// Single-precision GEMM peak of this machine through oneDNN (M = N = K = 1024).
double sgemm_gflops(int threads) {
  at::set_num_threads(threads);
  const int64_t n = 1024;
  std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n);
  std::vector<double> times;
  for (int r = 0; r < 6; ++r) {
    const auto start = Clock::now();
    dnnl_sgemm('N', 'N', n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
    times.push_back(seconds_since(start));
  }
  return 2.0 * n * n * n / median(times) / 1e9;
}

struct Workload {
  std::vector<std::vector<int64_t>> sources;
  DecodeOptions options;
  int64_t target_tokens = 0;
};

Workload make_workload(int beam) {
  Workload w;
  std::mt19937 rng(7);
  std::uniform_int_distribution<int64_t> id(2, 54000);
  for (int s = 0; s < 32; ++s) {
    std::vector<int64_t> ids;
    for (int t = 0; t < 29; ++t) ids.push_back(id(rng));
    ids.push_back(0);  // </s>
    w.sources.push_back(ids);
  }
  w.options.beam_size = beam;
  w.options.max_new_tokens = 64;
  w.options.min_new_tokens = 64;    // the 32 sentences are one batch (BatchOptions' default)
  w.options.return_scores = false;  // as the peer runs (CTranslate2's return_scores=False)
  w.target_tokens = 32 * 64;
  return w;
}

// Target tokens per second, median of `runs` (after one warm-up run).
double measure(const Translator& translator, const Workload& w, int runs, int parallel) {
  translator.translate_ids(w.sources, w.options);
  std::vector<double> rates;
  for (int r = 0; r < runs; ++r) {
    const auto start = Clock::now();
    std::vector<std::thread> workers;
    for (int p = 0; p < parallel; ++p)
      workers.emplace_back([&] {
        at::set_num_threads(1);
        translator.translate_ids(w.sources, w.options);
      });
    if (parallel == 0) translator.translate_ids(w.sources, w.options);
    for (auto& t : workers) t.join();
    rates.push_back(w.target_tokens * std::max(parallel, 1) / seconds_since(start));
  }
  return median(rates);
}

// --background-load: the cores shared with a niced build-like neighbour (docs/benchmarks.md, "Shared
// cores"). It ends with the benchmark, and by itself after two hours at most.
std::unique_ptr<bench::BackgroundLoad> start_background_load(bool on) {
  if (!on) return nullptr;
  auto load = std::make_unique<bench::BackgroundLoad>(2 * 3600.0);
  std::printf("background load: a busy loop at nice 10 on core %d (pid %d)\n", load->core(), load->pid());
  return load;
}

}  // namespace

int main(int argc, char** argv) {
  // The wait policy `ordo` runs with (cli/openmp_wait.h): GNU OpenMP has read its environment
  // already, so set it and start again (GOMP_SPINCOUNT=300000 measures libgomp's default).
  if (ordo::cli::choose_openmp_wait_policy()) ::execv("/proc/self/exe", argv);
  ordo::configure_process();  // as `ordo` does: the same allocator and oneDNN settings
  CLI::App app{"ordo-bench: decoding speed on the benchmark workload and on real sentences"};
  int runs = 5;
  std::string work = "runs/bench";
  std::string data = std::string(ORDO_SOURCE_DIR) + "/../shared/data";
  std::string bundled = std::string(ORDO_SOURCE_DIR) + "/models/en-de";
  int real_lines = 500;
  std::vector<std::string> compute_types = ordo::compute_type_names();
  std::vector<std::string> cells = {"1", "2", "2x1"};
  app.add_option("--runs", runs, "Timed runs per cell (median reported)");
  app.add_option("--work", work, "Folder for the generated workload model");
  app.add_option("--data", data, "Shared data folder (newstest/newstest2014.en or newstest2014.en)");
  app.add_option("--bundled-model", bundled, "Model for the real-sentence rows");
  app.add_option("--real-lines", real_lines, "Lines of newstest2014.en to translate");
  app.add_option("--compute-types", compute_types, "Compute types to measure (default: all)")->delimiter(',');
  app.add_option("--cells", cells, "Thread settings: 1, 2 (intra-op threads), 2x1 (two translations at once)")
      ->delimiter(',');
  bool model_only = false;
  app.add_flag("--model-only", model_only, "Write the workload model (<work>/marian-6x6-d512), print its folder, exit");
  bool background_load = false;
  app.add_flag("--background-load", background_load,
               "Measure with a neighbour: a niced (10) busy loop on the last core, for the whole run");
  bench::RealSizeOptions real;
  app.add_option("--shape", real.shapes,
                 "Real model sizes instead of the workload: tc-big, nllb-600m, pegasus-large, bart-large-cnn, "
                 "flan-t5-base, mbart-large-50, workload (the benchmark workload's model)")
      ->delimiter(',');
  app.add_option("--report", real.reports, "With --shape: throughput, memory, startup, latency")->delimiter(',');
  app.add_option("--beams", real.beams, "With --shape: beam sizes (1 = greedy)")->delimiter(',');
  app.add_option("--sentences", real.sentences, "With --shape: throughput batch (sentences x --source-tokens)");
  app.add_option("--tokens", real.tokens, "With --shape: tokens generated per sentence in the throughput batch");
  app.add_option("--source-tokens", real.source_tokens,
                 "With --shape: source ids per sentence in the throughput batch (512: summarization documents)")
      ->check(CLI::Range(2, 4096));
  app.add_option("--length-penalty", real.length_penalty,
                 "With --shape: beam length penalty in the throughput batch (pegasus-xsum: 0.6)");
  app.add_option("--no-repeat-ngram", real.no_repeat_ngram,
                 "With --shape: no n-gram of this size twice, both engines, every report (bart-large-cnn: 3; "
                 "default 0, whatever the folder's generation_config.json says)")
      ->check(CLI::Range(0, 1024));
  app.add_option("--latency-sentences", real.latency_sentences, "With --shape: newstest lines for latency");
  app.add_option("--memory-sentences", real.memory_sentences, "With --shape: newstest lines for the memory run");
  app.add_option("--peer-python", real.peer_python,
                 "Python with CTranslate2 importable (e.g. /usr/bin/python3, PYTHONPATH set): adds its column; "
                 "without --shape: the whole workload table (throughput, peak RSS, start-up) against it");
  app.add_flag("--peer-best", real.peer_best,
               "CTranslate2 once per OMP_WAIT_POLICY (active, passive) x CT2_FORCE_CPU_ISA (AVX2, AVX512), the "
               "fastest counts (always on in the workload table; latency: the fastest p50 on the first 20 "
               "sentences runs them all)");
  app.add_option("--hf-path", real.hf_path,
                 "PYTHONPATH entry holding transformers (e.g. /opt/peers/hf-pylib): adds a transformers eager "
                 "column (float32, 1 and 2 threads)");
  bool gemm = false;
  app.add_flag("--gemm", gemm,
               "The float32 decoding-step GEMM kernel (1, 4, 8 rows) at fc1/fc2 shapes against the machine's "
               "memory read rate, 1 and 2 threads");
  bool quick = false;
  app.add_flag("--quick", quick,
               "Workload table: 8 sentences instead of 32, 1 timed run, 10 memory lines instead of 100, "
               "CTranslate2's best setting chosen on the first cell of each compute type");
  CLI11_PARSE(app, argc, argv);
  if (gemm) return bench::run_gemm_report(runs);
  if (real.shapes.empty() && !real.peer_python.empty()) {
    ::mkdir("runs", 0755);
    ::mkdir(work.c_str(), 0755);
    // The table of docs/benchmarks.md: the workload (32 x 30 -> 64 tokens) as one more "shape".
    real.shapes = {"workload"};
    real.workload_dir = write_workload_model(work + "/marian-6x6-d512",
                                             std::string(ORDO_SOURCE_DIR) + "/tests/data/hf/marian_opus_en_mg");
    real.peer_best = true;
    real.peer_best_once = quick;
    if (!app.count("--report")) real.reports = {"throughput", "memory", "startup"};
    if (!app.count("--sentences")) real.sentences = quick ? 8 : 32;
    if (!app.count("--tokens")) real.tokens = 64;
    if (!app.count("--memory-sentences")) real.memory_sentences = quick ? 10 : 100;
    if (!app.count("--runs")) runs = quick ? 1 : 3;
  } else if (quick && !app.count("--runs")) {
    runs = 1;
  }
  if (std::find(real.shapes.begin(), real.shapes.end(), "workload") != real.shapes.end() && real.workload_dir.empty()) {
    ::mkdir("runs", 0755);  // --shape workload: the workload model through the --shape reports
    ::mkdir(work.c_str(), 0755);
    real.workload_dir = write_workload_model(work + "/marian-6x6-d512",
                                             std::string(ORDO_SOURCE_DIR) + "/tests/data/hf/marian_opus_en_mg");
  }
  if (!real.shapes.empty()) {
    try {
      real.compute_types = compute_types;
      real.cells = cells;
      real.runs = runs == 5 ? 3 : runs;
      real.work = work;
      real.data = data;
      real.fixtures = std::string(ORDO_SOURCE_DIR) + "/tests/data/hf";
      real.peer_script = std::string(ORDO_SOURCE_DIR) + "/tools/bench/ct2_peer.py";
      const bool throughput = std::find(real.reports.begin(), real.reports.end(), "throughput") != real.reports.end();
      if (throughput && (real.shapes == std::vector<std::string>{"workload"} || !real.hf_path.empty()))
        real.hf_script = std::string(ORDO_SOURCE_DIR) + "/tools/bench/hf_peer.py";
      char self[4096];
      const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
      const std::string exe = n > 0 ? std::string(self, static_cast<size_t>(n)) : std::string("ordo-bench");
      real.ordo_binary = exe.substr(0, exe.rfind('/') + 1) + "ordo";
      ::mkdir("runs", 0755);
      ::mkdir(work.c_str(), 0755);
      const std::unique_ptr<bench::BackgroundLoad> load = start_background_load(background_load);
      return bench::run_real_sizes(real);
    } catch (const std::exception& e) {
      std::cerr << "ordo-bench: error: " << e.what() << "\n";
      return 1;
    }
  }
  try {
    ::mkdir("runs", 0755);
    ::mkdir(work.c_str(), 0755);
    const auto start_all = Clock::now();
    const std::string model_dir = write_workload_model(
        work + "/marian-6x6-d512", std::string(ORDO_SOURCE_DIR) + "/tests/data/hf/marian_opus_en_mg");
    if (model_only) {
      std::printf("%s\n", model_dir.c_str());
      return 0;
    }
    const std::unique_ptr<bench::BackgroundLoad> load = start_background_load(background_load);
    const char* policy = std::getenv("OMP_WAIT_POLICY");
    const char* spin = std::getenv("GOMP_SPINCOUNT");
    std::printf("OpenMP: OMP_WAIT_POLICY=%s GOMP_SPINCOUNT=%s\n", policy ? policy : "(unset)", spin ? spin : "(unset)");
    const double peak1 = sgemm_gflops(1), peak2 = sgemm_gflops(2);
    std::printf("machine: %u cores; oneDNN sgemm 1024^3: %.0f GFLOPS (1 thread), %.0f GFLOPS (2 threads)\n\n",
                std::thread::hardware_concurrency(), peak1, peak2);

    // FLOPs of one workload batch (32 x 30 -> 64 tokens): 256 GFLOP greedy, 915 GFLOP beam 4.
    const double gflop_greedy = 256, gflop_beam = 915;
    std::printf(
        "| compute | threads | greedy tok/s | beam 4 tok/s | greedy GFLOPS (%% of sgemm peak) | beam GFLOPS (%% of "
        "peak) |\n");
    std::printf("|---|---|---|---|---|---|\n");
    for (const std::string& compute : compute_types) {
      ModelOptions model_options;
      model_options.compute_type = parse_compute_type(compute);
      const Translator translator(model_dir, model_options);
      for (const std::string& cell : cells) {
        const int threads = cell == "1" ? 1 : 2, parallel = cell == "2x1" ? 2 : 0;
        if (cell != "1" && cell != "2" && cell != "2x1") throw Error("--cells: unknown cell '" + cell + "'");
        at::set_num_threads(threads);
        const double greedy = measure(translator, make_workload(1), runs, parallel);
        const double beam = measure(translator, make_workload(4), runs, parallel);
        const double peak = threads == 1 ? peak1 : peak2;
        const double g_gflops = greedy / 2048 * gflop_greedy, b_gflops = beam / 2048 * gflop_beam;
        const std::string label =
            "ordo " + compute + (parallel ? ", 2 translations x 1 thread (two batches at once)" : "");
        std::printf("| %s | %d | %.0f | %.0f | %.0f (%.0f%%) | %.0f (%.0f%%) |\n", label.c_str(), threads, greedy, beam,
                    g_gflops, 100 * g_gflops / peak, b_gflops, 100 * b_gflops / peak);
        std::fflush(stdout);
      }
    }

    // Real sentences: generated tokens per second over the first lines of newstest2014.
    const auto lines = bench::newstest_lines(data, static_cast<size_t>(real_lines));
    std::printf(
        "\n| model | compute | sentences | threads | beam | generated tok/s | sentences/s | start-up to first line (s) "
        "|\n");
    std::printf("|---|---|---|---|---|---|---|---|\n");
    for (const auto& [name, dir] : std::vector<std::pair<std::string, std::string>>{{"bundled en-de", bundled},
                                                                                    {"workload 6+6 d512", model_dir}}) {
      if (!exists(dir + "/config.json") || lines.empty()) {
        std::printf("| %s | skipped: %s missing |\n", name.c_str(),
                    lines.empty() ? bench::newstest_places(data).c_str() : dir.c_str());
        continue;
      }
      for (const std::string& compute : compute_types) {
        at::set_num_threads(2);
        const auto start = Clock::now();
        ModelOptions model_options;
        model_options.compute_type = parse_compute_type(compute);
        model_options.inter_threads = 2;  // the best 2-core throughput (two batches at once)
        const Translator real(dir, model_options);
        DecodeOptions options;
        options.beam_size = 4;
        // The random-weight model never learned to stop: cap it at the workload's 64 tokens.
        options.max_new_tokens = dir == model_dir ? 64 : 256;
        real.translate({lines[0]}, options);
        const double startup = seconds_since(start);
        const auto t0 = Clock::now();
        int64_t generated = 0;
        for (const TranslationResult& r : real.translate(lines, options)) generated += r.hypotheses[0].ids.size();
        const double elapsed = seconds_since(t0);
        std::printf("| %s | %s | %zu | 2 (2 x 1) | 4 | %.0f | %.1f | %.2f |\n", name.c_str(), compute.c_str(),
                    lines.size(), generated / elapsed, lines.size() / elapsed, startup);
        std::fflush(stdout);
      }
    }
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    std::printf("\npeak resident memory: %.0f MB; total benchmark time %.0f s\n", usage.ru_maxrss / 1024.0,
                seconds_since(start_all));
  } catch (const std::exception& e) {
    std::cerr << "ordo-bench: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
