// Checkpoint averaging: the element-wise mean of a model's last N saved parameter sets
// (Vaswani et al., 2017; Marian's exponential smoothing plays the same part). The average of
// neighbouring states lies nearer the middle of the basin the optimizer is circling than any
// one of them, which usually gives +0.5-1 BLEU over the last single checkpoint for free.
//
// ordo-train keeps the parameters of each validation step in <work>/checkpoints/ (float32,
// model.safetensors' names), deleting all but the newest N, and averages them at the end.
#pragma once

#include <string>
#include <vector>

#include "models/seq2seq_model.h"

namespace ordo::train {

// Saves every parameter of `model` (float32) as `<dir>/step-<step>.safetensors` (written to a
// temporary name and renamed), then deletes the oldest such files of `dir` beyond `keep`.
// Returns the files kept, oldest first.
std::vector<std::string> save_checkpoint(const std::string& dir, int64_t step, models::Seq2SeqModel& model,
                                         int64_t keep);

// The step-*.safetensors files of `dir`, oldest (lowest step) first; [] if none or no folder.
std::vector<std::string> list_checkpoints(const std::string& dir);

// Sets every parameter of `model` to the mean of its values in `files` (accumulated in
// float64). Throws ordo::Error naming the file when one lacks a parameter or has it in
// another shape; `model` is unchanged then.
void average_checkpoints(const std::vector<std::string>& files, models::Seq2SeqModel& model);

}  // namespace ordo::train
