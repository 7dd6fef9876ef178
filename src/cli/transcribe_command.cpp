#include "cli/transcribe_command.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <set>

#include "cli/progress_bar.h"
#include "faces/model_location.h"
#include "faces/option_flags.h"
#include "faces/warnings.h"
#include "ordo/files.h"
#include "ordo/option_table.h"
#include "ordo/speech.h"

namespace ordo::cli {
namespace {

// The decoding options of the table that speech has no use for (the task and language are
// --task and --language, the temperature a list of its own) or that a transcript cannot show
// (n-best lists, alternatives).
const std::set<std::string> kNotForSpeech = {
    "task",     "source_lang", "target_lang", "force_words", "global_attention", "target_prefix", "return_alternatives",
    "use_vmap", "sample",      "temperature", "n_best"};

constexpr int kDefaultBeamSize = 5;  // openai-whisper's command and faster-whisper
constexpr size_t kMaxTemperatures = 64;

std::string trimmed(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// A number and nothing else ("0.2", "-1"); nullopt otherwise.
std::optional<double> number(const std::string& text) {
  const std::string t = trimmed(text);
  if (t.empty()) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(t.c_str(), &end);
  if (*end != '\0' || !std::isfinite(value)) return std::nullopt;
  return value;
}

// --temperature "0,0.2,0.4": the temperatures a window is decoded at, in turn.
std::vector<float> parse_temperatures(const std::string& text) {
  std::vector<float> out;
  size_t begin = 0;
  while (true) {
    const size_t end = text.find(',', begin);
    const std::string item = text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    const std::optional<double> value = number(item);
    if (!value || *value < 0 || *value > 100)
      throw Error("'" + trimmed(item) + "' must be a number from 0 to 100 (a list: 0,0.2,0.4)");
    out.push_back(static_cast<float>(*value));
    if (out.size() > kMaxTemperatures) throw Error("more than " + std::to_string(kMaxTemperatures) + " temperatures");
    if (end == std::string::npos) return out;
    begin = end + 1;
  }
}

// A threshold flag: a number, or "off" (none).
std::optional<float> parse_threshold(const std::string& text) {
  if (trimmed(text) == "off") return std::nullopt;
  const std::optional<double> value = number(text);
  if (!value) throw Error("'" + text + "' must be a number or off");
  return static_cast<float>(*value);
}

// `parse(text)`, its error naming `flag`.
template <class Parse>
auto parsed(const std::string& flag, const std::string& text, Parse parse) {
  try {
    return parse(text);
  } catch (const Error& e) {
    throw Error(flag + ": " + e.what());
  }
}

// A CLI11 check that runs `parse` on the flag's text: a bad value is the command line's
// one-line error at parse time (CLI11 names the flag).
template <class Parse>
CLI::Validator checked_by(Parse parse) {
  return CLI::Validator(
      [parse](std::string& text) {
        try {
          parse(text);
          return std::string();
        } catch (const Error& e) {
          return std::string(e.what());
        }
      },
      "");
}

const char* extension(TranscriptFormat format) {
  switch (format) {
    case TranscriptFormat::kText: return "txt";
    case TranscriptFormat::kJson:
    case TranscriptFormat::kVerboseJson: return "json";
    case TranscriptFormat::kSrt: return "srt";
    case TranscriptFormat::kVtt: return "vtt";
    case TranscriptFormat::kTsv: return "tsv";
  }
  return "txt";
}

std::string input_name(const std::string& input) { return input == "-" ? "stdin" : input; }

// Where each input's transcript goes: "" = stdout; -o FILE for one input; with several inputs
// (or -o naming a folder) the folder's <input's stem>.<format's extension>, the folder made when
// missing. Two inputs that would write one file are refused before the model loads.
std::vector<std::string> output_paths(const TranscribeArgs& args, TranscriptFormat format) {
  namespace fs = std::filesystem;
  if (args.output.empty() || args.output == "-") return std::vector<std::string>(args.inputs.size());
  std::error_code error;
  const bool folder = args.inputs.size() > 1 || fs::is_directory(args.output, error);
  if (!folder) return {args.output};
  if (fs::exists(args.output, error) && !fs::is_directory(args.output, error))
    throw Error("-o " + args.output + ": " + std::to_string(args.inputs.size()) +
                " inputs are written into a folder, and this is a file");
  fs::create_directories(args.output, error);
  if (error) throw Error(args.output + ": cannot create the output folder (" + error.message() + ")");
  std::vector<std::string> paths;
  for (size_t k = 0; k < args.inputs.size(); ++k) {
    const std::string stem = args.inputs[k] == "-" ? "stdin" : fs::path(args.inputs[k]).stem().string();
    paths.push_back((fs::path(args.output) / (stem + "." + extension(format))).string());
    for (size_t j = 0; j < k; ++j)
      if (paths[j] == paths[k])
        throw Error(args.inputs[j] + " and " + args.inputs[k] + " would both be written to " + paths[k] +
                    " (transcribe them into different folders)");
  }
  return paths;
}

// `message` naming `name` first, once.
std::string naming(const std::string& name, const std::string& message) {
  return message.compare(0, name.size() + 1, name + ":") == 0 ? message : name + ": " + message;
}

std::vector<float> read_input(const std::string& input, const AudioLimits& limits) {
  if (input != "-") return read_audio(input, limits);
  std::string bytes;
  try {
    bytes = read_file_bytes("/dev/stdin", static_cast<size_t>(limits.max_bytes));
  } catch (const Error& e) {
    throw Error("stdin: cannot read the audio (" + std::string(e.what()) + ")");
  }
  return decode_audio(bytes, "stdin", limits);
}

TranscribeOptions transcribe_options(const TranscribeArgs& args) {
  TranscribeOptions o = openai_whisper_options();
  o.task = args.task;
  o.language = args.language == "auto" ? "" : args.language;
  o.timestamps = !args.no_timestamps;
  o.word_timestamps = args.word_timestamps;
  o.initial_prompt = args.initial_prompt;
  o.condition_on_previous_text = !args.no_condition_on_previous_text;
  if (!args.temperatures.empty()) o.temperatures = parsed("--temperature", args.temperatures, parse_temperatures);
  if (!args.compression_ratio_threshold.empty())
    o.compression_ratio_threshold =
        parsed("--compression-ratio-threshold", args.compression_ratio_threshold, parse_threshold);
  if (!args.log_prob_threshold.empty())
    o.log_prob_threshold = parsed("--logprob-threshold", args.log_prob_threshold, parse_threshold);
  if (!args.no_speech_threshold.empty())
    o.no_speech_threshold = parsed("--no-speech-threshold", args.no_speech_threshold, parse_threshold);
  o.decode = args.decode;
  if (!o.decode.beam_size) o.decode.beam_size = kDefaultBeamSize;
  o.batching = args.batching;
  return o;
}

// --language a model does not know: refused before any audio is read, naming the flag.
void check_language(const SpeechRecognizer& model, const std::string& language) {
  if (language.empty()) return;
  const std::vector<std::string> known = model.languages();
  if (std::count(known.begin(), known.end(), language)) return;
  std::string list;
  for (const std::string& code : known) list += (list.empty() ? "" : " ") + code;
  throw Error("--language " + language + ": not a language of the model (auto, or one of: " + list + ")");
}

}  // namespace

CLI::App* add_transcribe_command(CLI::App& app, TranscribeArgs& args) {
  CLI::App* cmd = app.add_subcommand(
      "transcribe",
      "Transcribe speech with a Whisper model (or translate it into English text): any audio or video\n"
      "file FFmpeg reads (WAV, FLAC, OGG/Opus, MP3, M4A, ...), decoded to 16 kHz mono; long audio in\n"
      "30-second windows as openai-whisper does. The transcript of each file goes to stdout, or to -o.\n"
      "Defaults are openai-whisper's: beam size 5, temperature fallback 0,0.2,...,1.0 and its thresholds\n"
      "(transformers' generate(): --beam-size 1 --temperature 0 and the thresholds off).");
  cmd->add_option("-m,--model", args.model,
                  "Whisper model folder as downloaded (openai/whisper-*, distil-whisper/*: config.json,\n"
                  "model.safetensors, tokenizer files, preprocessor_config.json)")
      ->required();
  cmd->add_option("inputs", args.inputs, "Audio files ('-' = stdin)")->required();
  cmd->add_option("-o,--output", args.output,
                  "Output file (one input), or a folder that gets <input name>.<format's extension> for each\n"
                  "input (several inputs, or -o naming a folder). Default: stdout");
  cmd->add_option("--format", args.format,
                  "text (one segment per line), json ({\"text\"}), verbose_json (OpenAI's, with segments and\n"
                  "words), srt, vtt or tsv (start/end in milliseconds). Default: text")
      ->check(CLI::IsMember(transcript_format_names()));
  cmd->add_option("--task", args.task, "transcribe (the spoken language's text) or translate (English text)")
      ->check(CLI::IsMember({"transcribe", "translate"}));
  cmd->add_option("--language", args.language,
                  "The spoken language as a code the model knows (en, de, ...), or auto (default: detected on\n"
                  "the first 30 seconds)");
  cmd->add_flag("--word-timestamps", args.word_timestamps,
                "Time each word from the alignment heads' cross-attention (verbose_json's \"words\"; srt and vtt\n"
                "cues then run from a segment's first word to its last)");
  cmd->add_flag("--no-timestamps", args.no_timestamps,
                "No segment timestamps: 30 s windows every 20 s decoded together in batches (--batch-size),\n"
                "their overlaps merged (transformers' chunked pipeline); a segment per window");
  cmd->add_option("--initial-prompt", args.initial_prompt,
                  "Text the first window is given as context (names, spelling, style)");
  cmd->add_flag("--no-condition-on-previous-text", args.no_condition_on_previous_text,
                "Do not give each window the text decoded so far as its context");
  cmd->add_option("--temperature", args.temperatures,
                  "Temperatures a window is decoded at, in turn, while its text fails a threshold below\n"
                  "(0: beam search or greedy; above 0: sampling). Default: 0,0.2,0.4,0.6,0.8,1.0")
      ->type_name("T[,T...]")
      ->check(checked_by(parse_temperatures));
  cmd->add_option("--compression-ratio-threshold", args.compression_ratio_threshold,
                  "Decode again, hotter, when the text's zlib compression ratio is above this (default 2.4; off)")
      ->type_name("X|off")
      ->check(checked_by(parse_threshold));
  cmd->add_option("--logprob-threshold", args.log_prob_threshold,
                  "Decode again, hotter, when the average token log-probability is below this (default -1.0; off)")
      ->type_name("X|off")
      ->check(checked_by(parse_threshold));
  cmd->add_option("--no-speech-threshold", args.no_speech_threshold,
                  "A window whose no-speech probability is above this, and whose log-probability is below\n"
                  "--logprob-threshold, is silence: no segment (default 0.6; off)")
      ->type_name("X|off")
      ->check(checked_by(parse_threshold));
  faces::add_option_flags(cmd, decode_option_specs(), args.decode, nullptr, kNotForSpeech);
  faces::add_option_flags(cmd, batch_option_specs(), args.batching, nullptr, {"batch_tokens"});  // windows: one length
  faces::add_option_flags(cmd, model_option_specs(), args.model_options);
  cmd->add_flag("--no-weight-cache", args.no_weight_cache,
                "Pack the weights afresh, without reading or writing the packed weights cache");
  cmd->add_flag("--progress", args.progress,
                "Show progress on stderr even when it is not a terminal (a line per window)");
  cmd->add_flag("-q,--quiet", args.quiet, "No progress and no warnings");
  return cmd;
}

int run_transcribe(const TranscribeArgs& args) {
  const TranscriptFormat format = parse_transcript_format(args.format, "--format");
  TranscribeOptions options = transcribe_options(args);
  const std::vector<std::string> outputs = output_paths(args, format);
  for (size_t k = 0; k < args.inputs.size(); ++k) {
    std::error_code error;
    if (!outputs[k].empty() && args.inputs[k] != "-" && std::filesystem::equivalent(args.inputs[k], outputs[k], error))
      throw Error(outputs[k] +
                  ": the output file is the input file; writing it would erase the audio (choose "
                  "another --output)");
  }

  ModelOptions model_options = args.model_options;
  model_options.weight_cache = !args.no_weight_cache;
  if (!args.quiet) model_options.on_warning = faces::print_warning;
  const std::string model_dir = faces::resolve_model_dir(args.model, "");
  const SpeechRecognizer model(model_dir, model_options);
  check_language(model, options.language);

  const bool terminal = ::isatty(STDERR_FILENO);
  const bool show_progress = !args.quiet && (terminal || args.progress);
  const bool json = format == TranscriptFormat::kJson || format == TranscriptFormat::kVerboseJson;
  const AudioLimits limits;
  bool failed = false;
  for (size_t k = 0; k < args.inputs.size(); ++k) {
    const std::string name = input_name(args.inputs[k]);
    std::string text;
    try {
      const std::vector<float> samples = read_input(args.inputs[k], limits);
      std::optional<ProgressBar> bar;
      if (show_progress && terminal) {
        if (args.inputs.size() > 1) std::cerr << name << "\n";
        bar.emplace(true, "s");
      }
      options.on_progress = [&](double done, double total) {
        if (bar)
          bar->update(static_cast<uint64_t>(done), static_cast<uint64_t>(done * 1000),
                      static_cast<uint64_t>(total * 1000));
        else if (show_progress)
          std::fprintf(stderr, "ordo: %s: %.1f of %.1f s\n", name.c_str(), done, total);
        return true;
      };
      const Transcription transcription = model.transcribe(samples, options);
      text = write_transcript(transcription, format, options.task);
      if (json) text += '\n';
    } catch (const Error& e) {
      std::cerr << "ordo: error: " << naming(name, e.what()) << "\n";
      failed = true;
      continue;
    }
    if (outputs[k].empty()) {
      std::cout << text;
      std::cout.flush();
      if (!std::cout) throw Error("stdout: write error");
    } else {
      write_file_whole(outputs[k], text);  // renamed over it once whole
    }
  }
  return failed ? 1 : 0;
}

}  // namespace ordo::cli
