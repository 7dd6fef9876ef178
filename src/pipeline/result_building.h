#pragma once
// The public results of a search: texts, pieces and scores from the tokenizer and, with
// return_attention, the cross-attention in the public layout and the source's pieces.
#include <cstdint>
#include <vector>

#include "ordo/options.h"
#include "search/search.h"
#include "text/tokenizer.h"

namespace ordo::pipeline {

// Hypothesis::id_pieces and token_positions of `hyp.ids` (return_attention's labels).
void label_ids(const text::Tokenizer& tokenizer, Hypothesis& hyp);

// `source`: the encoder input of this result (for attention: its length and pieces).
TranslationResult to_result(const text::Tokenizer& tokenizer, const std::vector<search::SearchHypothesis>& hyps,
                            const std::vector<int64_t>& source);

}  // namespace ordo::pipeline
