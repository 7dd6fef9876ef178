// LED's global attention (Longformer): the source positions that every position attends to and
// that attend to every position. transformers' LED summarization examples put it on the first
// token, and so does ordo unless DecodeOptions::global_attention names others (a question's
// tokens, for instance). Other families have no such positions: the option is refused there.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "models/seq2seq_model.h"
#include "ordo/options.h"

namespace ordo::pipeline {

// The positions `spec` names: "first" = {0}, "none" = {}, else 0-based source token positions
// (special tokens counted) and ranges, comma-separated: "0,4-7". Sorted, without repeats.
// Throws ordo::Error naming `field`.
std::vector<int64_t> global_positions(const std::string& spec, const std::string& field);

// Checks options.global_attention for `model` (ordo::Error when it is malformed or the model
// has no Longformer attention).
void check_global_attention(const models::Seq2SeqModel& model, const DecodeOptions& options);

// The global_mask of a batch whose padding `mask` is [rows, len] (1 = token): 1 at the named
// positions of each row that has them (a position past a row's end is none of its). Undefined
// when the option is unset (the model's default) or the model has no Longformer attention.
at::Tensor global_attention_mask(const models::Seq2SeqModel& model, const DecodeOptions& options,
                                 const at::Tensor& mask);

}  // namespace ordo::pipeline
