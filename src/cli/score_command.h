// `ordo score`: the log-probability of given translations under a model (Translator::score),
// one line per source/target pair: for filtering parallel corpora and quality estimation.
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

namespace ordo::cli {

struct ScoreArgs {
  std::string model, sources, targets, output;
  std::optional<std::string> source_lang, target_lang, task;
  bool json = false;
  int threads = 0;
  int batch_size = 32;
  std::string compute_type = "float32";
  bool no_weight_cache = false;
};

CLI::App* add_score_command(CLI::App& app, ScoreArgs& args);
// Returns the exit code. Throws ordo::Error on bad input (naming the file and line).
int run_score(const ScoreArgs& args);

}  // namespace ordo::cli
