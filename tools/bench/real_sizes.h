// ordo-bench --shape: real model sizes (tc-big, NLLB-600M, Pegasus-large,
// BART-large-cnn, Flan-T5-base, mBART-large-50) with random weights, and the same checkpoints in CTranslate2 when --peer-python can import it.
// Each figure is printed for ordo, the peer and their ratio, measured interleaved in one run.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace ordo::bench {

struct RealSizeOptions {
  std::vector<std::string> shapes;         // train::big_shapes(): tc-big, nllb-600m, ..., mbart-large-50
  std::vector<std::string> compute_types;  // float32, bfloat16, int8
  std::vector<std::string> cells;          // 1, 2, 2x1
  std::vector<int> beams = {1, 4};
  std::vector<std::string> reports = {"throughput"};  // throughput, memory, startup, latency
  int runs = 3;
  int sentences = 8;            // throughput batch: sentences x 30 source tokens
  int tokens = 32;              // throughput: generated tokens per sentence (exactly)
  int source_tokens = 30;       // throughput: source ids per sentence (512: Pegasus's documents)
  float length_penalty = 1.0f;  // throughput: beam length penalty (pegasus-xsum: 0.6)
  // Every run, both engines: no n-gram of this size twice (0: off). Set explicitly, so that a
  // folder's generation_config.json (bart-large-cnn's 3) does not apply to ordo alone.
  int no_repeat_ngram = 0;
  int latency_sentences = 200;  // newstest lines, one at a time
  int memory_sentences = 10;    // newstest lines for the start-up / memory process
  int memory_tokens = 32;       // tokens generated per line in that process
  std::string work;             // where the random models and converted peers go
  std::string data;             // shared data folder (newstest/newstest2014.en)
  std::string fixtures;         // tests/data/hf
  std::string peer_python;      // "" = no peer column
  std::string peer_script;      // tools/bench/ct2_peer.py
  std::string ordo_binary;      // build/ordo
  // Shape "workload": the workload model in this folder (bench_main writes it), not a random
  // checkpoint of train::big_shapes().
  std::string workload_dir;
  // CTranslate2 at its best: each cell runs once per OMP_WAIT_POLICY (active, passive) x
  // CT2_FORCE_CPU_ISA (AVX2, AVX512) and the fastest is printed with its setting. Latency: the
  // four race on the first 20 sentences (p50), the fastest runs all of them.
  bool peer_best = false;
  // With peer_best: the four settings are tried on the first cell of each compute type only,
  // the fastest is kept for its other cells (--quick: 3 CTranslate2 processes fewer per cell).
  bool peer_best_once = false;
  // The Hugging Face transformers column (eager PyTorch, float32, 1 and 2 threads):
  // hf_script = tools/bench/hf_peer.py run by peer_python with hf_path prepended to PYTHONPATH.
  std::string hf_script;
  std::string hf_path;
};

int run_real_sizes(const RealSizeOptions& options);

// The first `limit` non-empty lines of newstest2014.en in the shared data folder: the data
// README's <data>/newstest/newstest2014.en, or <data>/newstest2014.en where a copy of the
// folder holds the files at its top; empty if neither exists.
std::vector<std::string> newstest_lines(const std::string& data, size_t limit);

// The paths newstest_lines looks at, for a message saying why a row was skipped.
std::string newstest_places(const std::string& data);

}  // namespace ordo::bench
