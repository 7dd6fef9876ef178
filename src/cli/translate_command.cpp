#include "cli/translate_command.h"

#include <iostream>

#include "cli/line_reader.h"
#include "cli/model_location.h"
#include "cli/output_writer.h"
#include "cli/progress_bar.h"
#include "ordo/ordo.h"

namespace ordo::cli {
namespace {

// The default model when --model is not given (a small en->de model shipped in models/).
constexpr const char* kDefaultTranslationModel = "en-de";

// CLI11 fills plain values; DecodeOptions uses optionals so that unset flags fall back to the
// model's generation_config.json.
template <class T>
void add_optional(CLI::App* cmd, const std::string& name, std::optional<T>& target, const std::string& help,
                  const CLI::Validator& range) {
  cmd->add_option_function<T>(name, [&target](const T& value) { target = value; }, help)->check(range);
}

}  // namespace

CLI::App* add_translate_command(CLI::App& app, TranslateArgs& args) {
  CLI::App* cmd = app.add_subcommand("translate",
                                     "Translate text, one sentence per line, from stdin or --input.\n"
                                     "Empty lines give empty lines; output lines follow input order.");
  cmd->add_option("-m,--model", args.model,
                  "Hugging Face model folder (config.json, model.safetensors, source.spm, ...),\n"
                  "e.g. a downloaded Helsinki-NLP/opus-mt-* folder. Default: the bundled en-de model");
  cmd->add_option("-i,--input", args.input, "Input text file, one sentence per line (default: stdin)");
  cmd->add_option("-o,--output", args.output, "Output file (default: stdout); created after the model has loaded");
  add_optional(cmd, "-b,--beam-size", args.decode.beam_size,
               "Beam width; 1 = greedy (default: the model's generation_config.json, else 1)", CLI::Range(1, 1024));
  add_optional(cmd, "-n,--n-best", args.decode.n_best,
               "Hypotheses per sentence (<= beam size); printed as 'line ||| text ||| score'", CLI::Range(1, 1024));
  add_optional(cmd, "--max-length", args.decode.max_new_tokens,
               "Generate at most N target tokens (like Hugging Face max_new_tokens)", CLI::Range(1, 1 << 20));
  add_optional(cmd, "--min-length", args.decode.min_new_tokens,
               "Generate at least N target tokens before the end token is allowed", CLI::Range(0, 1 << 20));
  add_optional(cmd, "--length-penalty", args.decode.length_penalty,
               "Beam score = log-prob sum / length^P (default: model's, else 1.0)", CLI::Range(-100.0, 100.0));
  add_optional(cmd, "--no-repeat-ngram-size", args.decode.no_repeat_ngram_size,
               "Never repeat an n-gram of this size (0 = off)", CLI::Range(0, 1024));
  add_optional(cmd, "--repetition-penalty", args.decode.repetition_penalty,
               "Penalize already generated tokens (1.0 = off)", CLI::Range(0.01, 100.0));
  cmd->add_option("--batch-size", args.decode.batch_size, "Sentences translated together (default: 32)")
      ->check(CLI::Range(1, 1 << 16));
  cmd->add_option("-t,--threads", args.threads, "CPU threads (default: all cores)")->check(CLI::Range(0, 1024));
  cmd->add_flag("--json", args.json,
                "Write JSON lines: {\"text\", \"tokens\", \"score\", \"n_best\": [{text, tokens, score}...]}");
  cmd->add_flag("-q,--quiet", args.quiet, "No progress bar");
  return cmd;
}

int run_translate(const TranslateArgs& args) {
  const std::string model_dir = args.model.empty() ? bundled_model_dir(kDefaultTranslationModel) : args.model;

  LineReader reader(args.input);
  ModelOptions model_options;
  model_options.threads = args.threads;
  const Translator translator(model_dir, model_options);

  const OutputFormat format = args.json ? OutputFormat::kJson
                              : args.decode.n_best.value_or(1) > 1 ? OutputFormat::kNBest
                                                                   : OutputFormat::kText;
  OutputWriter writer(args.output, format);
  ProgressBar progress(!args.quiet && !args.input.empty() && args.input != "-");

  // Read a few batches at a time so the translator can sort them by length, and write each
  // chunk as soon as it is done (a long file shows output early; an error keeps what is done).
  const size_t chunk = static_cast<size_t>(args.decode.batch_size) * 8;
  std::vector<std::string> lines;
  uint64_t first_line = 0;  // 0-based index of lines[0]
  while (true) {
    lines.clear();
    first_line = reader.lines_read();
    if (!reader.read(chunk, lines)) break;

    // Validate before translating; on a bad line, translate and write the good ones before it.
    size_t valid = lines.size();
    std::optional<Error> bad_line;
    for (size_t i = 0; i < lines.size(); ++i) {
      try {
        check_utf8(lines[i], reader.where(first_line + i + 1));
      } catch (const Error& e) {
        valid = i;
        bad_line = e;
        break;
      }
    }

    std::vector<std::string> sentences;
    std::vector<size_t> positions;  // index in `lines` of each non-empty sentence
    for (size_t i = 0; i < valid; ++i) {
      if (lines[i].empty()) continue;
      sentences.push_back(lines[i]);
      positions.push_back(i);
    }
    const std::vector<TranslationResult> results = translator.translate(sentences, args.decode);
    // An empty line is not run through the model: it gets one empty hypothesis with score 0.
    std::vector<TranslationResult> by_line(valid, TranslationResult{{Hypothesis{}}});
    for (size_t k = 0; k < positions.size(); ++k) by_line[positions[k]] = results[k];
    for (size_t i = 0; i < valid; ++i) writer.write(first_line + i, by_line[i]);
    writer.flush();
    if (bad_line) throw *bad_line;
    progress.update(reader.lines_read(), reader.bytes_read(), reader.total_bytes());
  }
  writer.flush();
  return 0;
}

}  // namespace ordo::cli
