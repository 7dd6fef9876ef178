#include "nn/audio_frontend.h"

namespace ordo::nn {

AudioFrontEnd::AudioFrontEnd(int64_t mel_bins, int64_t dim)
    : conv1_weight(at::empty({dim, mel_bins, 3}, at::kFloat)),
      conv1_bias(at::empty({dim}, at::kFloat)),
      conv2_weight(at::empty({dim, dim, 3}, at::kFloat)),
      conv2_bias(at::empty({dim}, at::kFloat)) {}

at::Tensor AudioFrontEnd::forward(const at::Tensor& features) const {
  // As WhisperEncoder: gelu(conv1(x)), gelu(conv2(.)), then time before channels.
  const at::Tensor h = at::gelu(at::conv1d(features.contiguous(), conv1_weight, conv1_bias, /*stride=*/1,
                                           /*padding=*/1));
  const at::Tensor out = at::gelu(at::conv1d(h, conv2_weight, conv2_bias, /*stride=*/2, /*padding=*/1));
  return out.transpose(1, 2).contiguous();
}

void AudioFrontEnd::visit(const std::string& prefix, const ParamVisitor& visitor) {
  visitor(join_name(prefix, "conv1.weight"), conv1_weight);
  visitor(join_name(prefix, "conv1.bias"), conv1_bias);
  visitor(join_name(prefix, "conv2.weight"), conv2_weight);
  visitor(join_name(prefix, "conv2.bias"), conv2_bias);
}

}  // namespace ordo::nn
