// `ordo translate`: lines in, translations out.
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "ordo/options.h"

namespace ordo::cli {

struct TranslateArgs {
  std::string model;  // empty: the bundled default model
  std::string input;
  std::string output;
  bool json = false;
  bool quiet = false;
  int threads = 0;
  DecodeOptions decode;
};

// Registers the subcommand and its options on `app`; the returned args are filled on parse.
CLI::App* add_translate_command(CLI::App& app, TranslateArgs& args);
// Runs it; returns the process exit code. Throws ordo::Error for bad input.
int run_translate(const TranslateArgs& args);

}  // namespace ordo::cli
