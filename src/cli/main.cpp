// The `ordo` command line: subcommands over the public library API (include/ordo/). Built as
// libordo_cli.so, loaded and run by the `ordo` launcher (launcher.cpp) once OpenMP's wait policy
// is set. `ordo serve` is listed here by its summary only: the launcher runs it from a module of
// its own (src/server/serve_main.cpp).
#include <CLI/CLI.hpp>

#include "cli/generate_command.h"
#include "cli/positions_command.h"
#include "cli/score_command.h"
#include "cli/transcribe_command.h"
#include "faces/command_main.h"
#include "faces/serve_summary.h"
#include "ordo/ordo.h"

namespace {

// The command's description: the families come from the library's own list, so that a family
// added there is named here (and in the man page, made from this help) without a second list.
std::string description() {
  std::string types;
  for (const std::string& type : ordo::supported_model_types()) types += (types.empty() ? "" : ", ") + type;
  return "ordo: translation, summarization and speech recognition with encoder-decoder transformers\n"
         "loaded from Hugging Face model folders whose config.json model_type is one of:\n"
         "  " +
         types +
         "\n\n"
         "  echo \"The cat sat on the mat.\" | ordo translate\n"
         "  ordo translate -m opus-mt-en-de -i input.txt -o output.txt --beam-size 4\n"
         "  ordo summarize -m pegasus-xsum --document -i article.txt\n"
         "  ordo transcribe -m whisper-small talk.mp3 --format srt -o talk.srt\n"
         "  ordo serve --model en-de --model de-en --port 5000\n";
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int ordo_cli_main(int argc, char** argv) {
  CLI::App app{description(), "ordo"};
  app.set_version_flag("--version", std::string("ordo ") + ordo::version());
  app.require_subcommand(1);

  const ordo::cli::Task translate_task = ordo::cli::translate_task();
  const ordo::cli::Task summarize_task = ordo::cli::summarize_task();
  ordo::cli::GenerateArgs translate_args, summarize_args;
  CLI::App* translate = ordo::cli::add_generate_command(app, translate_task, translate_args);
  CLI::App* summarize = ordo::cli::add_generate_command(app, summarize_task, summarize_args);
  ordo::cli::PositionsArgs positions_args;
  CLI::App* positions = ordo::cli::add_positions_command(app, positions_args);
  ordo::cli::ScoreArgs score_args;
  CLI::App* score = ordo::cli::add_score_command(app, score_args);
  ordo::cli::TranscribeArgs transcribe_args;
  CLI::App* transcribe = ordo::cli::add_transcribe_command(app, transcribe_args);
  // Listed in `ordo --help` after score; its options and its run are the server module's.
  CLI::App* serve = app.add_subcommand("serve", ordo::faces::kServeSummary);
  serve->allow_extras();

  return ordo::faces::run_command_line(app, argc, argv, [&] {
    if (*translate) return ordo::cli::run_generate(translate_task, translate_args);
    if (*summarize) return ordo::cli::run_generate(summarize_task, summarize_args);
    if (*positions) return ordo::cli::run_positions(positions_args, *positions);
    if (*serve) throw ordo::Error("`ordo serve` runs from libordo_serve.so, which the `ordo` launcher loads");
    if (*score) return ordo::cli::run_score(score_args);
    if (*transcribe) return ordo::cli::run_transcribe(transcribe_args);
    return 0;
  });
}
