// The decoding of a call: its sources (checked ids, cut to the model's positions) sorted by
// length into batches (batch_plan.h), each encoded once and searched (search::search) behind
// the model's StepModel with the call's cancellation, vocabulary shortlist and token stream
// wrapped around it, the batches spread over the model's inter_threads workers. What a call
// decodes and how the results are put back in order is Translator's (translator.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "ordo/options.h"
#include "pipeline/loaded_model.h"
#include "search/generation_settings.h"
#include "search/search.h"

namespace ordo::pipeline {

// One result per source, in order. `prefixes`: none, or one per source, all of one length.
std::vector<TranslationResult> decode_batches(const LoadedModel& model,
                                              const std::vector<std::vector<int64_t>>& sources,
                                              const search::GenerationSettings& settings,
                                              const search::Prefixes& prefixes, const DecodeOptions& options,
                                              const BatchOptions& batching);

}  // namespace ordo::pipeline
