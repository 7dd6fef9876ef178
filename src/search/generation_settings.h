// Every decoding parameter with its final value, resolved from (highest first) the caller's
// options, the task's settings in config.json (task_specific_params), the model's
// generation_config.json (or config.json), a task preset, and Hugging Face's defaults.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "io/model_config.h"
#include "ordo/options.h"
#include "ordo/preset.h"

namespace ordo::search {

// Whisper's timestamp rules (transformers 4.31's WhisperTimeStampLogitsProcessor), set by
// apply_whisper_rules() (search/whisper_rules.h). Lengths count the decoder start.
struct WhisperTimestampRules {
  int64_t no_timestamps_token_id = 0;  // never picked
  int64_t timestamp_begin = 0;         // <|0.00|>: every id from it on is a timestamp
  // The first length the pairing rules read the tokens from (HF: len(forced_decoder_ids) + 2,
  // less 1 when the last forced token is <|notimestamps|>). At length begin_index - 1 the
  // next token is <|0.00|>.
  int64_t begin_index = 0;
  // At length begin_index, no timestamp after <|0.00|> + this; unset: no limit.
  std::optional<int64_t> max_initial_timestamp_index;
  int64_t eos_token_id = 0;  // the ids below it are text
  // openai-whisper's further rule (its decoding, which its long-form loop relies on to move
  // forward): a timestamp never precedes the last one, and a segment's end is after its start.
  // transformers 4.31 has no such rule: off for generate() parity.
  bool monotonic = false;
};

struct GenerationSettings {
  int64_t num_beams = 1;
  int64_t num_return_sequences = 1;
  int64_t max_length = 20;  // total target length, decoder start token included (HF)
  // max_length came from max_new_tokens: a target prefix widens it (HF counts new tokens
  // after decoder_input_ids), where a max_length proper counts the prefix.
  bool max_from_new_tokens = false;
  int64_t min_length = 0;  // likewise
  int64_t min_new_tokens = 0;
  double length_penalty = 1.0;
  bool early_stopping = false;
  int64_t no_repeat_ngram_size = 0;
  double repetition_penalty = 1.0;
  std::vector<std::vector<int64_t>> bad_words_ids;
  // Phrases (target ids) every output must contain: transformers' force_words_ids, searched by
  // constrained_beam_search() (search/constrained_beam_search.h). Empty = unconstrained.
  std::vector<std::vector<int64_t>> force_words_ids;
  std::optional<int64_t> forced_bos_token_id;
  std::optional<int64_t> forced_eos_token_id;
  // Never picked (HF SuppressTokensLogitsProcessor), and not picked at the first free step,
  // length begin_suppress_index() (SuppressTokensAtBeginLogitsProcessor).
  std::vector<int64_t> suppress_tokens;
  std::vector<int64_t> begin_suppress_tokens;
  // HF ForceTokensLogitsProcessor: at each length (decoder start included) its token, or a
  // free step; a later pair for the same length wins. The generation config's, or Whisper's
  // language / task / <|notimestamps|> (and prompt) from apply_whisper_rules().
  io::ForcedDecoderIds forced_decoder_ids;
  std::optional<WhisperTimestampRules> timestamp_rules;
  bool renormalize_logits = false;
  // Hugging Face's Marian: pad logit to -inf before the beam search log-softmax.
  bool beam_never_pad = false;
  // Carry each hypothesis' cross-attention weights (StepModel::step_attention).
  bool return_attention = false;
  // DecodeOptions::return_scores. Off, greedy search leaves scores and log-probabilities 0 and
  // asks the model for bounded logits (StepModel::next_logits_bounded) where its logits
  // processors allow (LogitsProcessorList::order_preserving).
  bool need_scores = true;
  // DecodeOptions::return_alternatives: > 0 asks alternatives_search() for this many next
  // tokens after each input's prefix instead of whole outputs (search/search.h).
  int64_t alternatives = 0;

  // Sampling (HF do_sample): logits processors, then temperature, top-k, top-p warpers.
  bool do_sample = false;
  double temperature = 1.0;
  int64_t top_k = 50;  // HF's default; 0 = off
  double top_p = 1.0;
  uint64_t seed = 0;  // the same seed gives the same samples

  int64_t pad_token_id = 0;
  int64_t eos_token_id = 0;
  int64_t decoder_start_token_id = 0;
};

// The length at which begin_suppress_tokens apply, as generate() computes it: after the decoder
// start, the forced BOS if any, and the last forced_decoder_ids entry's length.
int64_t begin_suppress_index(const GenerationSettings& settings);

// Throws ordo::Error for inconsistent values (n_best > beam size, non-positive sizes...).
// `trace`, when given, receives each user-visible setting with its source. `task`, when given
// (DecodeOptions::task), lays its settings between the options and `defaults`.
GenerationSettings resolve_settings(const io::ModelConfig& model, const io::GenerationConfig& defaults,
                                    const DecodeOptions& options, std::vector<ResolvedSetting>* trace = nullptr,
                                    const io::TaskParams* task = nullptr);

}  // namespace ordo::search
