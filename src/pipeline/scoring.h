// Translator::score: the log-probability of each target given its source, Hugging Face's
// teacher-forced forward pass, batched as translations are (batch_plan.h), one decoder step per
// target position over the step cache.
#pragma once

#include <string>
#include <vector>

#include "ordo/options.h"
#include "pipeline/call_settings.h"
#include "pipeline/loaded_model.h"

namespace ordo::pipeline {

std::vector<ScoreResult> score_targets(const LoadedModel& model, const CallSettings& call,
                                       const std::vector<std::string>& sources, const std::vector<std::string>& targets,
                                       const DecodeOptions& options, const BatchOptions& batching);

}  // namespace ordo::pipeline
