// `ordo translate` and `ordo summarize`: one engine, two tasks. Each task differs only in its
// default model, its default preset (configs/), how input is split into units, and wording.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "cli/document_reader.h"
#include "ordo/options.h"

namespace ordo::cli {

struct Task {
  std::string name;            // "translate"
  std::string default_model;   // bundled model under models/
  std::string default_preset;  // configs/<name>.json
  std::string unit_name;       // "sentence", "document": for messages
};

struct GenerateArgs {
  std::string model, input, output, preset;
  bool json = false, quiet = false, print_config = false;
  bool whole_document = false, paragraphs = false;
  bool split_sentences = false, no_split_sentences = false;  // translate only
  bool attention = false, alignment_words = false;           // translate only
  std::string alignment, attention_plot, attention_plot_format = "png";
  std::string format;              // translate only: text, or a file format (ordo/files.h); "" = by -i's extension
  std::string target_prefix_file;  // translate only: a prefix per input line
  ModelOptions model_options;      // the flags of the table of model options
  bool no_weight_cache = false;
  bool stream = false;                      // --stream: each line's words as they are generated
  std::string glossary;                     // translate only: --glossary FILE.tsv (source term TAB target term)
  std::string long_input = "chunk";         // summarize only: chunk, truncate or refuse
  int64_t chunk_tokens = 0;                 // summarize only: tokens per chunk (0: the model's positions)
  BatchOptions batching;                    // the batching flags given, over the preset's:
  std::vector<std::string> batching_given;  // their names
  DecodeOptions decode;
};

Task translate_task();
Task summarize_task();

// Registers the subcommand with its options; `args` is filled when the command line is parsed.
CLI::App* add_generate_command(CLI::App& app, const Task& task, GenerateArgs& args);
// Runs it; returns the exit code. Throws ordo::Error on bad input.
int run_generate(const Task& task, const GenerateArgs& args);

}  // namespace ordo::cli
