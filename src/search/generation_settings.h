// Every decoding parameter with its final value, resolved from (highest first) the caller's
// options, the model's generation_config.json (or config.json), and Hugging Face's defaults.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "io/model_config.h"
#include "ordo/options.h"

namespace ordo::search {

struct GenerationSettings {
  int64_t num_beams = 1;
  int64_t num_return_sequences = 1;
  int64_t max_length = 20;       // total target length, decoder start token included (HF)
  int64_t min_length = 0;        // likewise
  int64_t min_new_tokens = 0;
  double length_penalty = 1.0;
  bool early_stopping = false;
  int64_t no_repeat_ngram_size = 0;
  double repetition_penalty = 1.0;
  std::vector<std::vector<int64_t>> bad_words_ids;
  std::optional<int64_t> forced_bos_token_id;
  std::optional<int64_t> forced_eos_token_id;
  bool renormalize_logits = false;
  // Hugging Face's Marian: pad logit to -inf before the beam search log-softmax.
  bool beam_never_pad = false;

  int64_t pad_token_id = 0;
  int64_t eos_token_id = 0;
  int64_t decoder_start_token_id = 0;
};

// Throws ordo::Error for inconsistent values (n_best > beam size, non-positive sizes...).
GenerationSettings resolve_settings(const io::ModelConfig& model, const io::GenerationConfig& defaults,
                                    const DecodeOptions& options);

}  // namespace ordo::search
