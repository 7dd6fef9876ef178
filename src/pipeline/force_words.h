// DecodeOptions::force_words as target ids for GenerationSettings::force_words_ids.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "text/tokenizer.h"

namespace ordo::pipeline {

// Each '|'-separated phrase encoded as target text without special tokens (transformers'
// tokenizer(text_target=phrase, add_special_tokens=False)). Throws ordo::Error naming
// force_words for an empty phrase, one with no target tokens or ids outside the vocabulary.
std::vector<std::vector<int64_t>> force_words_ids(const text::Tokenizer& tokenizer, const std::string& force_words,
                                                  int64_t vocab_size);

}  // namespace ordo::pipeline
