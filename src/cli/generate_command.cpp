#include "cli/generate_command.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <set>

#include "cli/output_writer.h"
#include "cli/progress_bar.h"
#include "faces/model_location.h"
#include "faces/option_flags.h"
#include "faces/resolved_settings.h"
#include "faces/warnings.h"
#include "ordo/option_table.h"
#include "ordo/ordo.h"
#include "plot/plot.h"

namespace ordo::cli {
namespace {

// A unit's UTF-8, checked line by line so that an error names the input line of the bad byte
// (a paragraph's second line is not its first).
void check_unit_utf8(const Unit& unit, const LineReader& lines) {
  for (size_t k = 0; k < unit.line_starts.size(); ++k) {
    const size_t begin = unit.line_starts[k];
    const size_t end = k + 1 < unit.line_starts.size() ? unit.line_starts[k + 1] : unit.text.size();
    check_utf8(unit.text.substr(begin, end - begin), lines.where(unit.first_line + k));
  }
  if (unit.line_starts.empty()) check_utf8(unit.text, lines.where(unit.first_line));
}

// --min-length above the maximum length would be cut at the maximum without a word: refused,
// naming both.
void check_min_length(const GenerateArgs& args, const std::vector<ResolvedSetting>& settings) {
  if (!args.decode.min_new_tokens) return;
  const std::string name = decode_option_spec(&DecodeOptions::max_length).name;
  for (const ResolvedSetting& s : settings) {
    if (s.name != name) continue;
    const long long max_new = std::stoll(s.value) - 1;
    if (*args.decode.min_new_tokens <= max_new) return;
    throw Error("--min-length " + std::to_string(*args.decode.min_new_tokens) + " is above " +
                (args.decode.max_new_tokens && *args.decode.max_new_tokens <= max_new
                     ? "--max-length " + std::to_string(*args.decode.max_new_tokens)
                     : "the maximum length of " + std::to_string(max_new) + " new tokens (max_length " + s.value +
                           ", " + s.source + ")") +
                "; an output cannot be both");
  }
}

// `-o` naming the input file (directly, through a link, or as the file stdin reads) would be
// truncated before a line of it is read: refused before anything is opened for writing.
void refuse_output_over_input(const std::string& input, const std::string& output) {
  if (output.empty() || output == "-") return;
  struct stat out;
  if (::stat(output.c_str(), &out) != 0 || !S_ISREG(out.st_mode)) return;
  struct stat in;
  const bool reads_stdin = input.empty() || input == "-";
  if ((reads_stdin ? ::fstat(0, &in) : ::stat(input.c_str(), &in)) != 0) return;
  if (in.st_dev == out.st_dev && in.st_ino == out.st_ino)
    throw Error(output + ": the output file is the input " + (reads_stdin ? "(stdin reads it)" : "file") +
                "; writing it would erase the input before it is read (choose another --output)");
}

// `run(inputs, 0)` for a chunk, in order (`run(in, k)`: `in` starts at inputs[k]). One input
// that fails must not lose the others: on an error the chunk is retried input by input, a
// failing input is reported with its line and gets `empty` (so output lines stay aligned with
// input lines), and `failed` is set.
template <class Result, class Run>
std::vector<Result> translate_each(const std::vector<std::string>& inputs, const std::vector<std::string>& where,
                                   const Run& run, const Result& empty, bool& failed) {
  try {
    return run(inputs, 0);
  } catch (const Error& e) {
    if (inputs.size() == 1) throw Error(where[0] + ": " + e.what());
  }
  std::vector<Result> results;
  for (size_t k = 0; k < inputs.size(); ++k) {
    try {
      results.push_back(run({inputs[k]}, k).at(0));
    } catch (const Error& e) {
      std::cerr << "ordo: error: " << where[k] << ": " << e.what() << "\n";
      results.push_back(empty);
      failed = true;
    }
  }
  return results;
}

// What an input that is not run (empty) or that failed gets: one empty hypothesis, score 0.
TranslationResult empty_result() {
  TranslationResult result;
  result.hypotheses.emplace_back();
  return result;
}

// The best hypothesis' averaged attention as a heatmap: target pieces down, source pieces
// across (special tokens included, so the mass on </s> shows).
void plot_attention(const TranslationResult& result, const std::string& path) {
  if (result.hypotheses.empty() || result.hypotheses[0].attention.empty()) return;
  const Hypothesis& hyp = result.hypotheses[0];
  const Attention& a = hyp.attention;
  plot::HeatmapSpec spec;
  spec.title = "Cross-attention: decoder layer " + std::to_string(a.alignment_layer) + ", mean of " +
               std::to_string(a.heads) + " heads";
  spec.x_label = "source";
  spec.y_label = "target";
  spec.legend_label = "weight";
  spec.x_labels = result.source_tokens;
  spec.y_labels = hyp.id_pieces;
  spec.scale = plot::ColorScale::kSequential;
  spec.low = 0;
  spec.high = 1;
  plot::draw_heatmap(a.averaged, a.target_length, a.source_length, spec, path);
}

// --format html and the file formats (ordo/files.h): the whole input is one file, written back
// translated; what works on lines or on whole results is refused, naming the option.
void check_file_options(const GenerateArgs& args, const std::string& format) {
  const auto refuse = [&](const std::string& option, const std::string& why) {
    throw Error(option + " cannot be combined with --format " + format + " (" + why + ")");
  };
  if (args.whole_document || args.paragraphs)
    refuse(args.whole_document ? "--document" : "--paragraphs",
           "the whole input is one file; its own paragraphs and blocks are the units");
  if (args.split_sentences || args.no_split_sentences)
    refuse(args.split_sentences ? "--split-sentences" : "--no-split-sentences",
           "a file's texts are always split into sentences");
  if (args.json) refuse("--json", "the output is the translated file");
  if (args.decode.n_best.value_or(1) > 1) refuse("--n-best", "a file is rebuilt from the best translation");
  if (args.attention || !args.alignment.empty() || !args.attention_plot.empty())
    refuse(args.attention            ? "--attention"
           : !args.alignment.empty() ? "--alignment"
                                     : "--attention-plot",
           "alignments are used to place the inline markup");
}

// --stream writes each input's plain text line as its words come; what is only whole at the
// end of an input is refused, naming the option.
void check_stream_options(const GenerateArgs& args, bool split) {
  const auto refuse = [](const std::string& option, const std::string& why) {
    throw Error("--stream cannot be combined with " + option + " (" + why + ")");
  };
  if (!args.format.empty() && args.format != "text")
    refuse("--format " + args.format, "a file is rebuilt once all its sentences are translated");
  if (args.json) refuse("--json", "a JSON line is written once its input is done");
  if (args.decode.n_best.value_or(1) > 1) refuse("--n-best", "an n-best list is written once its input is done");
  if (!args.alignment.empty()) refuse("--alignment", "the alignment follows the finished line");
  if (split)
    refuse(args.split_sentences  ? "--split-sentences"
           : args.whole_document ? "--document"
                                 : "--paragraphs",
           "a unit is rejoined once all its sentences are translated; add --no-split-sentences");
}

// The whole input, refused once it passes `max_bytes` (`what` has that many; `limit` names the
// limit: an HTML page's HtmlLimits::max_bytes, a file's FileLimits::max_file_bytes) instead of
// being read into memory whole.
std::string read_all(const std::string& input, size_t max_bytes, const std::string& what, const std::string& limit) {
  const bool from_stdin = input.empty() || input == "-";
  std::ifstream file;
  if (!from_stdin) {
    file.open(input, std::ios::binary);
    if (!file) throw Error(input + ": cannot open the input file");
  }
  std::istream& in = from_stdin ? std::cin : file;
  const std::string name = from_stdin ? "stdin" : input;
  std::string text;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<size_t>(in.gcount()));
    if (text.size() > max_bytes)
      throw Error(name + ": " + what + " more than " + std::to_string(max_bytes) + " bytes (limit " + limit + " " +
                  std::to_string(max_bytes) + ")");
  }
  if (in.bad()) throw Error(name + ": read error");
  return text;
}

void write_all(const std::string& output, const std::string& text) {
  if (output.empty() || output == "-") {
    std::cout << text;
    std::cout.flush();
    if (!std::cout) throw Error("stdout: write error");
    return;
  }
  write_file_whole(output, text);  // renamed over it once whole: a failed write leaves it as it was
}

void warn_truncated(const TranslationResult& result, const std::string& where, const std::string& unit_name) {
  if (result.truncated_tokens > 0)
    std::cerr << "ordo: warning: " << where << ": " << unit_name << " longer than the model accepts; "
              << result.truncated_tokens << " tokens dropped\n";
}

ModelOptions model_options_of(const GenerateArgs& args) {
  ModelOptions o = args.model_options;
  o.weight_cache = !args.no_weight_cache;
  o.on_warning = faces::print_warning;
  return o;
}

// --print-config: the decoding settings the model runs with and where each comes from (the
// Translator's resolution), then the table's other options that are set (seed, languages...),
// then how inputs are batched; true if printed.
bool print_config(const GenerateArgs& args, const std::string& model_dir, const Translator& model,
                  const DecodeOptions& decode, const BatchOptions& batching,
                  const std::vector<std::string>& preset_batching) {
  if (!args.print_config) return false;
  std::cout << "model: " << model_dir << "\n";
  std::set<std::string> shown;
  for (const ResolvedSetting& s : model.resolved_settings(decode)) {
    // A task no flag named is the one `ordo summarize` picks itself (run_generate).
    const bool picked = s.name == decode_option_spec(&DecodeOptions::task).name && !args.decode.task;
    std::cout << s.name << " = " << s.value << "  (" << (picked ? "ordo summarize: the folder's own" : s.source)
              << ")\n";
    shown.insert(s.name);
  }
  for (const DecodeOptionSpec& spec : decode_option_specs()) {
    if (shown.count(spec.name)) continue;
    if (const auto value = spec.text(decode))
      std::cout << spec.name << " = " << *value << "  (option)\n";
    else if (const auto preset = decode.preset ? spec.text(*decode.preset) : std::nullopt)
      std::cout << spec.name << " = " << *preset << "  (preset)\n";
  }
  const auto source = [&](bool option, const char* name) {
    if (option) return "option";
    return std::count(preset_batching.begin(), preset_batching.end(), name) ? "preset" : "default";
  };
  for (const BatchOptionSpec& spec : batch_option_specs()) {
    const bool option = std::count(args.batching_given.begin(), args.batching_given.end(), spec.name) > 0;
    std::cout << spec.name << " = " << spec.text(batching).value_or("") << "  (" << source(option, spec.name) << ")\n";
  }
  return true;
}

}  // namespace

Task translate_task() { return {"translate", "en-de", "translation", "sentence"}; }
Task summarize_task() { return {"summarize", "dialogsum", "summarization", "document"}; }

CLI::App* add_generate_command(CLI::App& app, const Task& task, GenerateArgs& args) {
  const bool summarize = task.name == "summarize";
  CLI::App* cmd = app.add_subcommand(
      task.name, summarize ? "Summarize documents: one per line (default), per blank-line-separated paragraph\n"
                             "(--paragraphs), or the whole input (--document)."
                           : "Translate text, one sentence per line, from stdin or --input.\n"
                             "Empty lines give empty lines; output lines follow input order.");
  cmd->add_option("-m,--model", args.model,
                  "Hugging Face model folder (config.json, model.safetensors, tokenizer files),\n"
                  "e.g. a downloaded " +
                      std::string(summarize ? "google/pegasus-*" : "Helsinki-NLP/opus-mt-*") +
                      " folder, or the name of a bundled model (en-de, de-en, dialogsum).\n"
                      "Default: the bundled " +
                      task.default_model + " model");
  cmd->add_option("-i,--input", args.input, "Input text file (default: stdin)");
  cmd->add_option("-o,--output", args.output, "Output file (default: stdout); created after the model has loaded");
  if (summarize) {
    cmd->add_flag("--document", args.whole_document, "The whole input is one document");
    cmd->add_flag("--paragraphs", args.paragraphs, "Blank-line-separated paragraphs are the documents");
    cmd->add_option("--long-input", args.long_input,
                    "A document longer than the model's positions: chunk (default: summarized in parts cut at\n"
                    "sentences, their summaries joined), truncate (cut, with a warning) or refuse (an error)")
        ->check(CLI::IsMember({"chunk", "truncate", "refuse"}));
    cmd->add_option("--chunk-tokens", args.chunk_tokens,
                    "With --long-input chunk: source tokens per chunk, from 32 to the model's positions\n"
                    "(default: the model's positions)");
  } else {
    cmd->add_flag("--document", args.whole_document,
                  "The whole input is one unit, split into sentences and rejoined (line structure kept)");
    cmd->add_flag("--paragraphs", args.paragraphs,
                  "Blank-line-separated paragraphs are the units, split into sentences and rejoined");
    cmd->add_flag("--split-sentences", args.split_sentences,
                  "Split each unit into sentences (ICU rules of the source language), translate them as\n"
                  "one stream and rejoin them; on by default with --paragraphs and --document");
    cmd->add_flag("--no-split-sentences", args.no_split_sentences,
                  "With --paragraphs or --document: give each unit to the model whole");
    cmd->add_flag("--attention", args.attention,
                  "With --json: each hypothesis gets \"attention\" [layer][head][target][source] (its\n"
                  "cross-attention weights) and \"id_pieces\"; each line \"source_tokens\"");
    cmd->add_option("--alignment", args.alignment,
                    "Word alignment from the attention: hard (Pharaoh 'src-tgt' pairs) or soft (a matrix),\n"
                    "after ' ||| ' in text output and as \"alignment\" in --json")
        ->check(CLI::IsMember({"hard", "soft"}));
    cmd->add_flag("--alignment-words", args.alignment_words, "Hard alignment between words instead of pieces");
    cmd->add_option("--attention-plot", args.attention_plot,
                    "Draw each input's attention (target x source pieces) into DIR/<line>.png");
    cmd->add_option("--attention-plot-format", args.attention_plot_format, "png (default) or svg")
        ->check(CLI::IsMember({"png", "svg"}));
    cmd->add_option("--glossary", args.glossary,
                    "TSV file, one 'source term<TAB>target term' per line: where a sentence holds a source term\n"
                    "(any case, whole words), its target term takes the place of the model's own word for it");
    std::vector<std::string> formats = {"text"};
    for (const FileFormatInfo& info : file_formats()) formats.push_back(info.name);
    cmd->add_option("--format", args.format,
                    "text (lines; the default for -i FILE.txt and stdin) or a file: txt (paragraphs), html,\n"
                    "docx, pptx, xlsx, odt, odp, ods, epub, srt, vtt, po, xliff, json (the default for -i FILE\n"
                    "with that extension). A file is translated whole, its texts sentence by sentence, and written\n"
                    "back with its layout, markup and everything else kept (docs/files.md)")
        ->type_name("FORMAT")
        ->check(CLI::IsMember(formats).description(""));  // the help lists them
    cmd->add_option("--target-prefix-file", args.target_prefix_file,
                    "One target prefix per input line (an empty line: none): each translation starts with\n"
                    "its line's prefix and continues it (the output keeps it)");
  }
  cmd->add_option("--preset", args.preset,
                  "Decoding defaults: a name from configs/ (translation, summarization) or a JSON file.\n"
                  "Default: " +
                      task.default_preset + ". Precedence: flags > model's generation_config.json > preset");
  cmd->add_flag("--print-config", args.print_config, "Print the resolved decoding settings and where each comes from");
  faces::add_option_flags(cmd, decode_option_specs(), args.decode);
  faces::add_option_flags(cmd, batch_option_specs(), args.batching, &args.batching_given);
  faces::add_option_flags(cmd, model_option_specs(), args.model_options);
  cmd->add_flag("--no-weight-cache", args.no_weight_cache,
                "Pack the weights afresh, without reading or writing the packed weights cache "
                "(~/.cache/ordo, $ORDO_CACHE_DIR; checkpoints of 64 MB or more)");
  cmd->add_flag("--json", args.json,
                "Write JSON lines: {\"text\", \"tokens\", \"score\", \"n_best\": [{text, tokens, score}...]}");
  cmd->add_flag("-q,--quiet", args.quiet, "No progress bar and no warnings");
  cmd->add_flag("--stream", args.stream,
                "Write each " + std::string(summarize ? "summary" : "translation") +
                    "'s words as they are generated, one input at a time (plain text output; the\n"
                    "output is the same as without it). Greedy search or sampling only: with beam search a\n"
                    "line appears when it is done (add --beam-size 1)");
  return cmd;
}

// A file (ordo/files.h) read whole, translated, and written whole: to -o, which may name the
// input (it is read before anything is written, and replaced only once the translation is
// whole), or to stdout unless that is a terminal and the file is an archive.
int translate_one_file(const GenerateArgs& args, FileFormat format, const std::string& model_dir,
                       const DecodeOptions& decode, const BatchOptions& batching,
                       const std::vector<std::string>& preset_batching) {
  const FileFormatInfo& info = file_format_info(format);
  const bool to_stdout = args.output.empty() || args.output == "-";
  if (to_stdout && info.archive && ::isatty(STDOUT_FILENO))
    throw Error("--format " + info.name + ": the translated file is a zip archive; give -o FILE" + info.extensions[0]);
  FileOptions file_options;
  const std::string bytes = read_all(args.input, file_options.limits.max_file_bytes, "the file has", "max_file_bytes");
  const std::string where = args.input.empty() || args.input == "-" ? "stdin" : args.input;
  const Translator model(model_dir, model_options_of(args));
  if (print_config(args, model_dir, model, decode, batching, preset_batching)) return 0;
  check_min_length(args, model.resolved_settings(decode));  // bad decoding options fail before the file is read
  ProgressBar progress(!args.quiet, "sentences");
  file_options.on_progress = [&progress](size_t done, size_t total) { progress.update(done, done, total); };
  std::string translated;
  try {
    translated = translate_file(model, bytes, format, decode, file_options, batching);
  } catch (const Error& e) {
    throw Error(where + ": " + e.what());
  }
  write_all(args.output, translated);
  return 0;
}

int run_generate(const Task& task, const GenerateArgs& args) {
  const std::string model_dir = faces::resolve_model_dir(args.model, task.default_model);
  if (args.whole_document && args.paragraphs) throw Error("--document and --paragraphs exclude each other");
  // The input's format: --format, else -i's extension (.txt, stdin and unknown ones: lines).
  std::optional<FileFormat> file_format;
  if (!args.format.empty() && args.format != "text") {
    file_format = parse_file_format(args.format, "--format");
  } else if (args.format.empty() && !args.input.empty() && args.input != "-") {
    file_format = file_format_of(args.input);
    if (file_format == FileFormat::kText) file_format.reset();
  }
  const bool html = file_format == FileFormat::kHtml;
  if (file_format) check_file_options(args, file_format_info(*file_format).name);
  DecodeOptions decode = args.decode;
  const std::string preset = faces::preset_file(args.preset.empty() ? task.default_preset : args.preset);
  decode.preset = std::make_shared<DecodeOptions>(load_preset(preset));
  std::vector<std::string> preset_batching;  // the batching keys the preset sets
  BatchOptions batching = load_preset_batching(preset, &preset_batching);
  faces::copy_given(batch_option_specs(), args.batching_given, args.batching, batching);

  const InputUnit unit = args.whole_document ? InputUnit::kDocument
                         : args.paragraphs   ? InputUnit::kParagraph
                                             : InputUnit::kLine;
  const bool translating = task.name == "translate";
  const bool split = translating && !args.no_split_sentences && (args.split_sentences || unit != InputUnit::kLine);
  if (args.split_sentences && args.no_split_sentences)
    throw Error("--split-sentences and --no-split-sentences exclude each other");
  if (split && args.decode.n_best.value_or(1) > 1)
    throw Error(
        "--n-best cannot be combined with sentence splitting (a unit is rejoined from the best "
        "translation of each sentence); use --no-split-sentences");
  const bool wants_attention = args.attention || !args.alignment.empty() || !args.attention_plot.empty();
  if (args.attention && !args.json) throw Error("--attention needs --json (the weights are written as JSON)");
  if (args.alignment_words && args.alignment != "hard") throw Error("--alignment-words needs --alignment hard");
  if (split && wants_attention)
    throw Error("--attention, --alignment and --attention-plot work on whole units: add --no-split-sentences");
  decode.return_attention = wants_attention;
  if (!args.glossary.empty()) decode.glossary = std::make_shared<const Glossary>(Glossary::read_tsv(args.glossary));
  if (args.stream) check_stream_options(args, split);
  // --target-prefix-file: line k's prefix is the file's line k.
  std::vector<std::string> target_prefixes;
  std::optional<LineReader> prefix_lines;
  if (!args.target_prefix_file.empty()) {
    if (html || unit != InputUnit::kLine || split)
      throw Error("--target-prefix-file works on lines translated whole: it cannot be combined with " +
                  std::string(file_format           ? "--format " + file_format_info(*file_format).name
                              : args.whole_document ? "--document"
                              : args.paragraphs     ? "--paragraphs"
                                                    : "--split-sentences"));
    prefix_lines.emplace(args.target_prefix_file);
    if (!prefix_lines->read(SIZE_MAX, target_prefixes)) target_prefixes.clear();
    for (size_t k = 0; k < target_prefixes.size(); ++k) check_utf8(target_prefixes[k], prefix_lines->where(k + 1));
  }
  if (!args.attention_plot.empty()) {
    std::error_code error;
    std::filesystem::create_directories(args.attention_plot, error);
    if (error)
      throw Error(args.attention_plot + ": cannot create the folder for --attention-plot (" + error.message() + ")");
  }
  if (file_format && !html) return translate_one_file(args, *file_format, model_dir, decode, batching, preset_batching);
  refuse_output_over_input(args.input, args.output);
  if (html) {
    const std::string page = read_all(args.input, HtmlLimits().max_bytes, "HTML input: the page has", "max_bytes");
    check_utf8(page, args.input.empty() || args.input == "-" ? "stdin" : args.input);
    const Translator model(model_dir, model_options_of(args));
    if (print_config(args, model_dir, model, decode, batching, preset_batching)) return 0;
    check_min_length(args, model.resolved_settings(decode));  // bad decoding options fail before the page is run
    write_all(args.output, translate_html(model, page, decode));
    return 0;
  }
  // Summarized units keep their line breaks here, so that a document longer than the model
  // takes can be cut at its paragraphs; the model gets the lines joined with spaces otherwise.
  DocumentReader reader(args.input, unit, '\n');
  const Translator model(model_dir, model_options_of(args));
  // `ordo summarize` on a folder with a summarization task (T5's task_specific_params) runs it
  // as transformers' summarization pipeline does: its prefix, its settings below the flags.
  const std::vector<std::string> tasks = model.tasks();
  if (!translating && !decode.task && std::count(tasks.begin(), tasks.end(), "summarization"))
    decode.task = "summarization";
  if (print_config(args, model_dir, model, decode, batching, preset_batching)) return 0;

  // Bad decoding options fail here, once, before any input is read.
  const std::vector<ResolvedSetting> settings = model.resolved_settings(decode);
  if (!target_prefixes.empty()) {  // the longest prefix line must leave room to generate
    const auto longest =
        std::max_element(target_prefixes.begin(), target_prefixes.end(),
                         [](const std::string& a, const std::string& b) { return a.size() < b.size(); });
    DecodeOptions with_prefix = decode;
    with_prefix.target_prefix = *longest;
    try {
      model.resolved_settings(with_prefix);
    } catch (const Error& e) {
      throw Error(prefix_lines->where(static_cast<uint64_t>(longest - target_prefixes.begin()) + 1) + ": " + e.what());
    }
  }
  check_min_length(args, settings);
  const std::optional<int64_t> max_length = faces::resolved_int(settings, &DecodeOptions::max_length);
  if (args.decode.max_new_tokens && !args.quiet && max_length && *max_length < *args.decode.max_new_tokens + 1)
    std::cerr << "ordo: warning: --max-length " << *args.decode.max_new_tokens << " is beyond the model's "
              << "positions; at most " << *max_length - 1 << " tokens are generated\n";
  const std::optional<int64_t> beams = faces::resolved_int(settings, &DecodeOptions::beam_size);
  if (args.stream && !args.quiet && beams && *beams > 1 && !decode.sample.value_or(false))
    std::cerr << "ordo: warning: --stream with beam search (" << *beams << " beams): no word is final before the "
              << "search ends, so each line appears when it is done; add --beam-size 1 to see the words as they come\n";

  const OutputFormat format = args.json                            ? OutputFormat::kJson
                              : args.decode.n_best.value_or(1) > 1 ? OutputFormat::kNBest
                                                                   : OutputFormat::kText;
  // A summarized document longer than the model's positions (ordo/document.h): in parts, with
  // a line on stderr per chunk (a long report takes minutes).
  LongInputOptions long_input;
  long_input.mode = parse_long_input(args.long_input, "--long-input");
  long_input.chunk_tokens = args.chunk_tokens;
  if (args.chunk_tokens != 0 && (args.chunk_tokens < 32 || args.chunk_tokens > model.max_source_tokens()))
    throw Error("--chunk-tokens " + std::to_string(args.chunk_tokens) + ": a chunk holds from 32 to " +
                std::to_string(model.max_source_tokens()) + " tokens (the model's positions)");
  if (!args.quiet)
    long_input.on_progress = [](const ChunkProgress& p) {
      std::cerr << "ordo: summarizing in parts: "
                << (p.round == 1 ? "chunk " : "round " + std::to_string(p.round) + ", chunk ") << p.done << " of "
                << p.total << "\n";
    };
  OutputWriter writer(args.output, format);
  writer.set_blank_line_between_units(translating && unit == InputUnit::kParagraph);
  writer.set_extras({args.attention, args.alignment, args.alignment_words});
  ProgressBar progress(!args.quiet && !args.input.empty() && args.input != "-");
  if (args.stream)
    decode.on_token = [&writer](const TokenEvent& event) {
      if (event.done) return true;  // the line's rest comes with writer.write
      try {
        writer.stream(event.delta);
        return true;
      } catch (const Error&) {
        return false;  // a closed output: stop decoding; the next flush reports it
      }
    };

  // Read a few batches at a time so the translator can sort them by length, and write each
  // chunk as soon as it is done (a long file shows output early; an error keeps what is done).
  const size_t chunk = args.stream ? 1 : static_cast<size_t>(batching.batch_size) * 8;
  std::vector<Unit> units;
  uint64_t index = 0;  // 0-based index of units[0]
  bool failed = false;
  while (true) {
    units.clear();
    if (!reader.read(chunk, units)) break;

    // Validate before running; on a bad unit, process and write the good ones before it.
    size_t valid = units.size();
    std::optional<Error> bad;
    for (size_t i = 0; i < units.size(); ++i) {
      try {
        check_unit_utf8(units[i], reader.lines());
      } catch (const Error& e) {
        valid = i;
        bad = e;
        break;
      }
    }
    std::vector<std::string> inputs, where;
    std::vector<size_t> positions;  // index in `units` of each non-empty input
    for (size_t i = 0; i < valid; ++i) {
      if (units[i].text.empty()) continue;
      inputs.push_back(units[i].text);
      where.push_back(reader.lines().where(units[i].first_line));
      positions.push_back(i);
    }
    if (split) {
      // The sentences of the whole chunk go to the model as one stream (ordo/document.h).
      const auto run = [&](const std::vector<std::string>& in, size_t) {
        return translate_documents(model, in, decode, "", batching);
      };
      const std::vector<DocumentTranslation> docs = translate_each(inputs, where, run, DocumentTranslation{}, failed);
      std::vector<DocumentTranslation> by_unit(valid);
      for (size_t k = 0; k < positions.size(); ++k) {
        by_unit[positions[k]] = docs[k];
        for (const TranslationResult& sentence : docs[k].results)
          if (!args.quiet) warn_truncated(sentence, where[k], "a sentence");
      }
      for (size_t i = 0; i < valid; ++i) writer.write(index + i, by_unit[i], units[i].text, units[i].crlf);
    } else {
      std::vector<std::string> prefixes;  // --target-prefix-file: each input's
      if (prefix_lines)
        for (size_t k = 0; k < positions.size(); ++k) {
          const uint64_t line = units[positions[k]].first_line;
          if (line > target_prefixes.size())
            throw Error(args.target_prefix_file + " has " + std::to_string(target_prefixes.size()) +
                        " lines, fewer than the input (" + where[k] + "): one prefix line per input line");
          prefixes.push_back(target_prefixes[line - 1]);
        }
      const auto run = [&](const std::vector<std::string>& in, size_t first) {
        std::vector<std::string> texts = in;
        if (!translating) {
          for (std::string& text : texts) {
            std::string spaced = text;
            std::replace(spaced.begin(), spaced.end(), '\n', ' ');
            if (long_input.mode != LongInput::kChunk ||
                model.encode(spaced, decode).size() <= static_cast<size_t>(model.max_source_tokens()))
              text = std::move(spaced);
          }
          if (prefixes.empty()) return summarize_documents(model, texts, decode, long_input, batching);
        }
        if (prefixes.empty()) return model.translate(texts, decode, batching);
        const auto begin = prefixes.begin() + static_cast<std::ptrdiff_t>(first);
        return model.translate(texts, decode, batching,
                               std::vector<std::string>(begin, begin + static_cast<std::ptrdiff_t>(in.size())));
      };
      const std::vector<TranslationResult> results = translate_each(inputs, where, run, empty_result(), failed);
      // An empty input is not run through the model: it gets one empty hypothesis, score 0.
      std::vector<TranslationResult> by_unit(valid, empty_result());
      for (size_t k = 0; k < positions.size(); ++k) {
        by_unit[positions[k]] = results[k];
        if (!args.quiet) warn_truncated(results[k], where[k], task.unit_name);
        if (!args.attention_plot.empty())
          plot_attention(results[k], args.attention_plot + "/" + std::to_string(units[positions[k]].first_line) + "." +
                                         args.attention_plot_format);
      }
      for (size_t i = 0; i < valid; ++i) writer.write(index + i, by_unit[i]);
    }
    writer.flush();
    if (bad) throw *bad;
    index += units.size();
    progress.update(reader.lines().lines_read(), reader.lines().bytes_read(), reader.lines().total_bytes());
  }
  writer.flush();
  if (prefix_lines && reader.lines().lines_read() < target_prefixes.size())
    throw Error(args.target_prefix_file + " has " + std::to_string(target_prefixes.size()) + " lines, more than the " +
                std::to_string(reader.lines().lines_read()) + " input lines: one prefix line per input line");
  return failed ? 1 : 0;
}

}  // namespace ordo::cli
