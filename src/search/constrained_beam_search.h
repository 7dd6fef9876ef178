// Constrained beam search: every output contains given target phrases (lexical constraints,
// glossaries). Token-identical to transformers 4.31's generate(force_words_ids=...), i.e.
// ConstrainedBeamSearchScorer with one PhrasalConstraint per phrase.
#pragma once

#include <cstdint>
#include <vector>

#include "search/generation_settings.h"
#include "search/search.h"

namespace ordo::search {

// Beam search over `model` (StepModel, as beam_search) whose hypotheses must contain each
// phrase of settings.force_words_ids. Each step, besides the 2 x beams best continuations, every
// beam proposes the tokens that advance its unmet phrases; the candidates are ranked in banks
// (how much of the phrases they hold) and the beams taken round-robin from the banks, best
// bank first. Finished hypotheses must hold every phrase; when fewer than n_best do at the
// length limit, the best unconstrained ones fill up (as transformers does; their score may be
// -inf). Needs num_beams > 1 and no sampling; throws ordo::Error otherwise.
std::vector<std::vector<SearchHypothesis>> constrained_beam_search(StepModel& model, int64_t batch_size,
                                                                   const GenerationSettings& settings);

}  // namespace ordo::search
