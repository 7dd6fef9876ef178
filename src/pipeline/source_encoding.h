#pragma once
// A sentence's encoder input: its ids from the tokenizer, bounded by what the model takes.
//
// Tokenizing a long line whole takes many times its size in memory, and all but the first
// max_position_embeddings tokens are cut anyway. So a long text is tokenized from a
// prefix that surely holds more tokens than the model takes (64 bytes per position, as no
// SentencePiece piece is longer; doubled while it yields too few, e.g. for runs of spaces),
// cut at a space so the pieces before the cut are those of the whole text, and the rest is
// only counted, in chunks of the same size, for the truncation report.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "text/tokenizer.h"

namespace ordo::pipeline {

// The ids of `text` (with source language `lang` on multilingual models) as the encoder gets
// them, and in `dropped` the number of tokens after the prefix that was tokenized.
std::vector<int64_t> encode_source(const text::Tokenizer& tokenizer, const std::string& text,
                                   const std::optional<std::string>& lang, int64_t max_positions, int64_t& dropped);

// Cuts every source longer than `max_positions` (keeping its last `keep_last` ids: the final
// </s>, and mbart-large-cc25's source code after it), as Hugging Face's tokenizer does with
// truncation=True; returns, per source, the tokens dropped in all (`dropped_before[i]`, from
// encode_source, included).
std::vector<int64_t> truncate_sources(std::vector<std::vector<int64_t>>& sources,
                                      const std::vector<int64_t>& dropped_before, int64_t max_positions,
                                      size_t keep_last = 1);

}  // namespace ordo::pipeline
