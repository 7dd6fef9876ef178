// `ordo transcribe`: speech to text with a Whisper folder (ordo/speech.h), one audio file after
// another, each transcript printed or written in a format of its own (text, json, verbose_json,
// srt, vtt, tsv). Its defaults are openai-whisper's command's (beam size 5, temperature fallback
// 0, 0.2, ... 1.0 with its thresholds), not the library's bare generate() ones.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "ordo/options.h"

namespace ordo::cli {

struct TranscribeArgs {
  std::string model;
  std::vector<std::string> inputs;  // audio files; "-" = stdin
  std::string output;               // a file (one input) or a folder (several); "" = stdout
  std::string format = "text";
  std::string task = "transcribe";
  std::string language;  // "" or "auto": detected
  bool word_timestamps = false, no_timestamps = false, no_condition_on_previous_text = false;
  std::string initial_prompt;
  // Kept as given and read by run_transcribe (a list; "off" for a threshold); "" = openai-whisper's
  // (ordo::openai_whisper_options()).
  std::string temperatures;
  std::string compression_ratio_threshold, log_prob_threshold, no_speech_threshold;
  bool progress = false, quiet = false, no_weight_cache = false;
  ModelOptions model_options;
  BatchOptions batching;
  DecodeOptions decode;
};

// Registers the subcommand with its options; `args` is filled when the command line is parsed.
CLI::App* add_transcribe_command(CLI::App& app, TranscribeArgs& args);
// Runs it; returns the exit code (1 when an input failed: its error is printed and the other
// inputs are still transcribed). Throws ordo::Error on bad options or a bad model.
int run_transcribe(const TranscribeArgs& args);

}  // namespace ordo::cli
