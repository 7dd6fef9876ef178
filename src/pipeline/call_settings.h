// A call's DecodeOptions as the search settings of one loaded model: the target language as
// its forced first token, the folder's task (its prefix and settings), the settings resolved
// and checked (search/generation_settings.h), target prefixes as ids, and every check of the
// options that needs the model (checked_settings: the one place a call's options are
// validated, before any input runs).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ordo/options.h"
#include "pipeline/loaded_model.h"
#include "search/generation_settings.h"
#include "search/search.h"

namespace ordo::pipeline {

class CallSettings {
 public:
  explicit CallSettings(const LoadedModel& model) : m_(model) {}

  // Every decoding setting for `options`, resolved (see generation_settings.h); with `trace`,
  // each with where it came from.
  search::GenerationSettings settings_for(const DecodeOptions& options,
                                          std::vector<ResolvedSetting>* trace = nullptr) const;
  // settings_for() and the checks of a call's options that need the model: force_words'
  // phrases and search, the vocabulary map (read now), the room a target_prefix leaves, the
  // options return_alternatives excludes. Translator::run and resolved_settings() both pass
  // here, so a face that resolves the settings once before its inputs (the command line, the
  // server) fails once, not once per input.
  search::GenerationSettings checked_settings(const DecodeOptions& options,
                                              std::vector<ResolvedSetting>* trace = nullptr) const;
  // A target prefix of `length` ids counts in the target's lengths, as generate()'s
  // decoder_input_ids do; throws when it leaves no room to generate.
  void fit_prefix(search::GenerationSettings& settings, int64_t length) const;
  // Per-input prefix ids from DecodeOptions::target_prefix (one text for all) or the per-input
  // texts; empty when neither is given.
  search::Prefixes prefixes_for(size_t inputs, const DecodeOptions& options,
                                const std::vector<std::string>& texts) const;
  // The text the task puts before each input ("summarize: "), "" without a task.
  std::string prefix_for(const DecodeOptions& options) const;

 private:
  DecodeOptions with_target_language(DecodeOptions options) const;
  void check_source_language(const DecodeOptions& options) const;
  const io::TaskParams* task_for(const DecodeOptions& options) const;
  std::vector<int64_t> prefix_ids(const std::string& text, const search::GenerationSettings& settings,
                                  const std::string& where) const;

  const LoadedModel& m_;
};

}  // namespace ordo::pipeline
