// Whisper's audio front end: what a speech encoder has instead of a token embedding. Log-mel
// frames (10 ms each) go through two 1-D convolutions of kernel 3, each followed by GELU; the
// second has stride 2, so 3,000 frames (30 s) become 1,500 positions of d_model. The
// convolutions run in LibTorch (at::conv1d, oneDNN underneath): at Whisper's sizes they cost a
// few percent of the encoder, and measured on 2 cores no faster as an im2col GEMM. They stay in
// float32 whatever the compute type (ModelOptions::compute_type packs the layers' GEMMs only).
#pragma once

#include <cstdint>
#include <string>

#include "nn/module.h"

namespace ordo::nn {

struct AudioFrontEnd {
  at::Tensor conv1_weight, conv1_bias;  // [dim, mel_bins, 3], [dim]; padding 1
  at::Tensor conv2_weight, conv2_bias;  // [dim, dim, 3], [dim]; stride 2, padding 1

  AudioFrontEnd() = default;
  AudioFrontEnd(int64_t mel_bins, int64_t dim);

  bool defined() const { return conv1_weight.defined(); }

  // features: float32 [batch, mel_bins, frames] -> [batch, (frames - 1) / 2 + 1, dim] (time-major,
  // as the layers take it). The caller checks the shape (Seq2SeqModel::encode_features).
  at::Tensor forward(const at::Tensor& features) const;
  // conv1.weight, conv1.bias, conv2.weight, conv2.bias under `prefix` ("model.encoder").
  void visit(const std::string& prefix, const ParamVisitor& visitor);
};

}  // namespace ordo::nn
