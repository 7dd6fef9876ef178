// What a model folder gives a Translator, loaded once and then shared read-only by every call:
// the model, its tokenizer, its generation defaults and tasks, the threads that run it, and
// the vocabulary map, read at its first use. Calls plan with CallSettings (call_settings.h),
// decode with decode_batches (batch_decoder.h) and score with score_targets (scoring.h).
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "io/model_config.h"
#include "models/seq2seq_model.h"
#include "ordo/options.h"
#include "pipeline/vocab_map.h"
#include "pipeline/worker_pool.h"
#include "text/tokenizer.h"

namespace ordo::pipeline {

struct LoadedModel {
  std::string model_dir;
  std::shared_ptr<models::Seq2SeqModel> model;
  io::GenerationConfig generation_defaults;
  std::vector<io::TaskParams> tasks;  // config.json task_specific_params
  std::unique_ptr<text::Tokenizer> tokenizer;
  std::string pair_source;  // a one-pair model's source language (tokenizer_config.json), "" if not named
  int threads = 0;          // intra-op threads of each call (ModelOptions::threads), 0 = as the caller's thread has
  std::unique_ptr<WorkerPool> workers;           // ModelOptions::inter_threads > 1
  std::function<void(const std::string&)> warn;  // ModelOptions::on_warning

  // Reads and checks the folder (the small files first, then the weights with the tokenizer
  // loading beside them). Throws ordo::Error naming the file and field at fault.
  void load(const std::string& dir, const ModelOptions& options);

  // DecodeOptions::use_vmap: the folder's vmap.txt, read at its first use (a failed read is
  // tried again by the next call that asks).
  const VocabMap& vocab_map() const;

 private:
  mutable std::mutex vmap_mutex_;
  mutable std::shared_ptr<const VocabMap> vmap_;
};

}  // namespace ordo::pipeline
