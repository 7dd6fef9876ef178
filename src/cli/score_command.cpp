#include "cli/score_command.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli/line_reader.h"
#include "faces/model_location.h"
#include "faces/option_flags.h"
#include "faces/warnings.h"
#include "ordo/option_table.h"
#include "ordo/ordo.h"

namespace ordo::cli {

CLI::App* add_score_command(CLI::App& app, ScoreArgs& args) {
  CLI::App* cmd = app.add_subcommand(
      "score",
      "Score given translations: the log-probability of each line of --targets given the same line of\n"
      "--input under the model (teacher forcing, the final </s> included), one total per line, or\n"
      "with --json one object per line: {\"score\", \"tokens\", \"log_probs\"}.\n\n"
      "  ordo translate --json -i src.txt | jq -r .text > hyp.txt && ordo score -i src.txt -r hyp.txt");
  cmd->add_option("-m,--model", args.model,
                  "Hugging Face model folder, or the name of a bundled model (default: en-de)");
  cmd->add_option("-i,--input", args.sources, "Source sentences, one per line (default: stdin)");
  cmd->add_option("-r,--targets", args.targets, "Target sentences, one per line, as many as the sources")->required();
  cmd->add_option("-o,--output", args.output, "Output file (default: stdout)");
  cmd->add_flag("--json", args.json, "One JSON object per line: score, tokens, log_probs");
  for (const auto member : {&DecodeOptions::source_lang, &DecodeOptions::target_lang, &DecodeOptions::task}) {
    const DecodeOptionSpec* spec = &decode_option_spec(member);
    cmd->add_option_function<std::string>(
        spec->flag, [spec, &args](const std::string& v) { spec->set_text(args.decode, v); }, spec->help);
  }
  faces::add_option_flags(cmd, batch_option_specs(), args.batching);
  faces::add_option_flags(cmd, model_option_specs(), args.model_options);
  cmd->add_flag("--no-weight-cache", args.no_weight_cache, "Pack the weights afresh (no packed weights cache)");
  return cmd;
}

namespace {

// One side of the pairs, its line count known before any score is written: a regular file is
// counted (one pass of its own) and read again as it is scored; stdin or a pipe, which cannot be
// read twice, is held whole.
class PairLines {
 public:
  explicit PairLines(const std::string& path) : reader_(path) {
    struct stat st;
    if (!path.empty() && path != "-" && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      LineReader counter(path);
      std::vector<std::string> lines;
      while (counter.read(4096, lines)) lines.clear();
      count_ = counter.lines_read();
    } else {
      held_ = true;
      reader_.read(SIZE_MAX, lines_);
      count_ = lines_.size();
    }
  }
  uint64_t count() const { return count_; }
  // Up to `max_lines` next lines into `lines`, as LineReader::read.
  bool read(size_t max_lines, std::vector<std::string>& lines) {
    if (!held_) return reader_.read(max_lines, lines);
    const size_t n = std::min(max_lines, lines_.size() - next_);
    for (size_t k = 0; k < n; ++k) lines.push_back(std::move(lines_[next_ + k]));
    next_ += n;
    return n > 0;
  }
  std::string where(uint64_t line_number) const { return reader_.where(line_number); }

 private:
  LineReader reader_;
  bool held_ = false;
  std::vector<std::string> lines_;
  size_t next_ = 0;
  uint64_t count_ = 0;
};

}  // namespace

int run_score(const ScoreArgs& args) {
  const std::string model_dir = faces::resolve_model_dir(args.model, "en-de");
  if (args.targets.empty() || args.targets == "-")
    throw Error("--targets: a file is needed (the sources may come from stdin, the targets cannot as well)");
  // Both line counts are checked before the model loads and before any output is written.
  PairLines sources(args.sources), targets(args.targets);
  const std::string source_name = args.sources.empty() || args.sources == "-" ? "stdin" : args.sources;
  if (sources.count() != targets.count())
    throw Error(args.targets + " has " + std::to_string(targets.count()) + " lines but " + source_name + " has " +
                std::to_string(sources.count()) + ": one target line per source line");
  ModelOptions model_options = args.model_options;
  model_options.weight_cache = !args.no_weight_cache;
  model_options.on_warning = faces::print_warning;
  const Translator model(model_dir, model_options);
  const DecodeOptions& options = args.decode;
  model.resolved_settings(options);  // an unknown language or task fails before any pair is scored
  const BatchOptions& batching = args.batching;

  std::ofstream file;
  if (!args.output.empty() && args.output != "-") {
    file.open(args.output, std::ios::binary | std::ios::trunc);
    if (!file) throw Error(args.output + ": cannot create the output file");
  }
  std::ostream& out = file.is_open() ? file : std::cout;
  const size_t chunk = static_cast<size_t>(batching.batch_size) * 8;
  uint64_t line = 0;  // lines done
  while (true) {
    std::vector<std::string> src, tgt;
    const bool more_sources = sources.read(chunk, src);
    const bool more_targets = targets.read(src.empty() ? 1 : src.size(), tgt);
    if (src.size() != tgt.size())  // counted equal: a file changed while it was scored
      throw Error(args.targets + " or " + source_name + " changed while it was read: the line counts no longer match");
    if (!more_sources && !more_targets) break;
    for (size_t k = 0; k < src.size(); ++k) {
      check_utf8(src[k], sources.where(line + k + 1));
      check_utf8(tgt[k], targets.where(line + k + 1));
    }
    std::vector<ScoreResult> scored;
    try {
      scored = model.score(src, tgt, options, batching);
    } catch (const Error& e) {
      // Name the line: the pairs one by one until the one at fault.
      for (size_t k = 0; k < src.size(); ++k) try {
          model.score({src[k]}, {tgt[k]}, options, batching);
        } catch (const Error& one) {
          throw Error(targets.where(line + k + 1) + ": " + one.what());
        }
      throw;
    }
    for (const ScoreResult& r : scored) {
      if (args.json) {
        nlohmann::ordered_json j{{"score", r.score}, {"tokens", r.tokens}, {"log_probs", r.log_probs}};
        out << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
      } else {
        out << nlohmann::json(r.score).dump() << "\n";
      }
    }
    out.flush();
    if (!out) throw Error((file.is_open() ? args.output : std::string("stdout")) + ": write error");
    line += src.size();
  }
  return 0;
}

}  // namespace ordo::cli
