#include "pipeline/loaded_model.h"

#include <sched.h>

#include <algorithm>
#include <exception>
#include <future>
#include <system_error>
#include <thread>

#include <ATen/Parallel.h>

#include "io/file.h"
#include "io/model_language.h"
#include "kernels/parallel.h"
#include "models/packed_cache.h"
#include "ordo/error.h"
#include "pipeline/heap.h"
#include "pipeline/tokenizer_loading.h"

namespace ordo::pipeline {
namespace {

io::GenerationConfig load_generation_defaults(const std::string& dir) {
  const std::string path = dir + "/generation_config.json";
  if (io::path_exists(path)) return io::load_generation_config(path);
  return io::generation_config_from_model_config(dir + "/config.json");
}

// More intra-op threads than cores never helps and, with OpenMP threads spinning for work,
// makes a run crawl (1024 threads on 2 cores). Capped at the cores this process may run on.
int usable_threads(int requested) {
  cpu_set_t set;
  int cores = static_cast<int>(std::thread::hardware_concurrency());
  if (::sched_getaffinity(0, sizeof set, &set) == 0) cores = CPU_COUNT(&set);
  return std::min(requested, std::max(cores, 1));
}

}  // namespace

void LoadedModel::load(const std::string& dir, const ModelOptions& options) {
  if (options.threads < 0) throw Error("invalid model option: threads must not be negative");
  if (options.inter_threads < 1) throw Error("invalid model option: inter_threads must be at least 1");
  if (options.inter_threads > ModelOptions::kMaxInterThreads)
    throw Error("invalid model option: inter_threads " + std::to_string(options.inter_threads) + " is more than " +
                std::to_string(ModelOptions::kMaxInterThreads) +
                " (each worker translates one batch at a time; more "
                "workers than cores only add memory)");
  threads = options.threads > 0 ? usable_threads(options.threads) : 0;
  // Loading (packing the weights) runs on the model's threads too, and leaves the caller's as they were.
  at::internal::lazy_init_num_threads();
  const kernels::ThreadCountScope load_threads(threads);
  if (options.inter_threads > 1) workers = std::make_unique<WorkerPool>(static_cast<size_t>(options.inter_threads));
  model_dir = dir;
  warn = options.on_warning;
  // Everything small is read and checked before the weights: a bad id or size in a JSON file
  // fails in milliseconds, naming the file and field, and nothing is allocated from it.
  io::ModelConfig config = io::load_model_config(dir + "/config.json");
  models::FamilySpec family = models::family_for(config);
  generation_defaults = load_generation_defaults(dir);
  io::check_generation_ids(generation_defaults, config);
  tasks = io::load_task_params(config.path);
  for (const io::TaskParams& task : tasks) io::check_generation_ids(task.settings, config);
  // The tokenizer loads on a thread of its own while the weights load here (SentencePiece builds
  // a trie of its whole vocabulary, a noticeable part of a start for Pegasus' 96k or NLLB's 256k
  // pieces). It is torch-free (text/), so it shares none of LibTorch's per-thread state with the
  // loading. Its errors (a missing or malformed tokenizer file, ids outside the vocabulary)
  // are reported once the weights are loaded, and before theirs if both fail.
  const auto read_tokenizer = [dir, family, config] { return pipeline::load_tokenizer(dir, family, config); };
  std::future<std::unique_ptr<text::Tokenizer>> loading;
  try {
    loading = std::async(std::launch::async, read_tokenizer);
  } catch (const std::system_error&) {  // no thread to be had: loaded here, now
    loading = std::async(std::launch::deferred, read_tokenizer);
  }
  const int64_t vocab_size = config.vocab_size;
  const std::string config_path = config.path;
  const auto check_tokenizer = [&] {
    tokenizer = loading.get();
    if (tokenizer->languages().empty()) pair_source = io::model_source_language(dir);
    const text::Tokenizer::IdRange ids = tokenizer->source_id_range();
    if (ids.limit > vocab_size)
      throw Error(ids.source + ": token ids reach " + std::to_string(ids.limit - 1) +
                  ", outside the model's vocabulary (" + config_path + ": vocab_size " + std::to_string(vocab_size) +
                  ")");
  };
  // Packed layer by layer while loading: peak memory is the packed model plus one layer.
  models::PackedCacheOptions cache;
  cache.enabled = options.weight_cache;
  cache.dir = options.weight_cache_dir;
  cache.warn = options.on_warning;
  cache.write_in_background = true;  // the first translation does not wait for the file
  // The libraries' start-up pages go before the weights arrive and again after (what loading
  // touched): neither peak, loading's nor decoding's, holds them (pipeline/heap.h).
  release_library_pages();
  std::exception_ptr weights_error;
  try {
    model = models::Seq2SeqModel::load(dir, std::move(config), std::move(family), options.compute_type, &cache);
  } catch (...) {
    weights_error = std::current_exception();
  }
  check_tokenizer();
  if (weights_error) std::rethrow_exception(weights_error);
  release_library_pages();
}

const VocabMap& LoadedModel::vocab_map() const {
  const std::lock_guard<std::mutex> lock(vmap_mutex_);
  if (!vmap_)
    vmap_ = std::make_shared<const VocabMap>(VocabMap::load(
        model_dir + "/vmap.txt", *tokenizer, model->config().vocab_size, model->config().decoder_vocab_size));
  return *vmap_;
}

}  // namespace ordo::pipeline
