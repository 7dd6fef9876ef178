// Connects a loaded model to the searches: one batch's decoder state behind search::StepModel,
// and the cancellation check every search of the pipeline runs behind.
#pragma once

#include <functional>

#include "models/seq2seq_model.h"
#include "ordo/error.h"
#include "search/search.h"

namespace ordo::pipeline {

class ModelStep : public search::StepModel {
 public:
  ModelStep(const models::Seq2SeqModel& model, nn::DecoderState state) : model_(model), state_(std::move(state)) {}
  at::Tensor next_logits(const at::Tensor& tokens) override {
    return shortlist_.ids.defined() ? model_.next_logits(tokens, state_, shortlist_)
                                    : model_.next_logits(tokens, state_);
  }
  // Without a shortlist: the output projection bounded (Seq2SeqModel::project_bounded), the
  // step's hidden state kept for its exact logits.
  search::BoundedLogits next_logits_bounded(const at::Tensor& tokens) override {
    if (shortlist_.ids.defined()) return {next_logits(tokens), {}, {}};
    const at::Tensor hidden = model_.next_hidden(tokens, state_);
    nn::PackedGemm::Bounded logits = model_.project_bounded(hidden);
    const models::Seq2SeqModel& model = model_;
    return {std::move(logits.values), std::move(logits.exact), [&model, hidden] { return model.project(hidden); }};
  }
  // A vocabulary shortlist (DecodeOptions::use_vmap): logits computed for its ids only.
  void restrict_output(models::Shortlist shortlist) { shortlist_ = std::move(shortlist); }
  void select(const at::Tensor& rows) override { state_.select(rows); }
  // One new position per row: per layer [rows, heads, 1, src] -> [rows, layers, heads, src].
  at::Tensor step_attention() override {
    std::vector<at::Tensor> layers;
    for (const at::Tensor& layer : state_.cross_attention) layers.push_back(layer.select(2, 0));
    return at::stack(layers, 1);
  }
  void record_attention() { state_.record_cross_attention = true; }

 private:
  const models::Seq2SeqModel& model_;
  nn::DecoderState state_;
  models::Shortlist shortlist_;
};

// Asks DecodeOptions::cancelled (when set) before each step and throws "cancelled".
class CancellableStep : public search::ForwardingStep {
 public:
  CancellableStep(search::StepModel& step, const std::function<bool()>& cancelled)
      : ForwardingStep(step), cancelled_(cancelled) {}
  at::Tensor next_logits(const at::Tensor& tokens) override {
    check();
    return inner_.next_logits(tokens);
  }
  search::BoundedLogits next_logits_bounded(const at::Tensor& tokens) override {
    check();
    return inner_.next_logits_bounded(tokens);
  }

 private:
  void check() const {
    if (cancelled_ && cancelled_()) throw Error("cancelled");
  }
  const std::function<bool()>& cancelled_;
};

}  // namespace ordo::pipeline
