// `ordo score`: the log-probability of given translations under a model (Translator::score),
// one line per source/target pair: for filtering parallel corpora and quality estimation.
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "ordo/options.h"

namespace ordo::cli {

struct ScoreArgs {
  std::string model, sources, targets, output;
  DecodeOptions decode;        // the languages and the task only
  ModelOptions model_options;  // the flags of the table of model options
  BatchOptions batching;       // and of batching options
  bool json = false;
  bool no_weight_cache = false;
};

CLI::App* add_score_command(CLI::App& app, ScoreArgs& args);
// Returns the exit code. Throws ordo::Error on bad input (naming the file and line).
int run_score(const ScoreArgs& args);

}  // namespace ordo::cli
