// The ordo::DecodeOptions equivalent to the generate() kwargs of a golden case.
#pragma once

#include <nlohmann/json.hpp>

#include "ordo/options.h"

namespace ordo::testing {

inline DecodeOptions options_for(const nlohmann::json& kwargs) {
  DecodeOptions options;
  options.beam_size = kwargs["num_beams"].get<int>();
  if (kwargs.contains("num_return_sequences")) options.n_best = kwargs["num_return_sequences"].get<int>();
  options.max_new_tokens = kwargs["max_new_tokens"].get<int>();
  if (kwargs.contains("no_repeat_ngram_size")) options.no_repeat_ngram_size = kwargs["no_repeat_ngram_size"].get<int>();
  if (kwargs.contains("length_penalty")) options.length_penalty = kwargs["length_penalty"].get<float>();
  if (kwargs.contains("forced_bos_token_id"))
    options.forced_bos_token_id = kwargs["forced_bos_token_id"].get<int64_t>();
  return options;
}

}  // namespace ordo::testing
