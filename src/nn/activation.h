// The feed-forward activations named by Hugging Face's `activation_function`.
#pragma once

#include <string>

#include <ATen/ATen.h>

#include "kernels/activation.h"

namespace ordo::nn {

// The kernels name the activations (kernels/activation.h); the layers use the same enum.
using kernels::Activation;

// "relu", "gelu", "gelu_new"/"gelu_fast"/"gelu_pytorch_tanh", "swish"/"silu", "tanh".
// Throws ordo::Error listing the supported names.
Activation parse_activation(const std::string& name);

inline at::Tensor apply(Activation activation, const at::Tensor& x) {
  switch (activation) {
    case Activation::kRelu: return at::relu(x);
    case Activation::kGelu: return at::gelu(x);
    case Activation::kGeluTanh: return at::gelu(x, "tanh");
    case Activation::kSilu: return at::silu(x);
    case Activation::kTanh: return at::tanh(x);
  }
  return x;
}

}  // namespace ordo::nn
