#include "nn/activation.h"

#include "ordo/error.h"

namespace ordo::nn {

Activation parse_activation(const std::string& name) {
  if (name == "relu") return Activation::kRelu;
  if (name == "gelu") return Activation::kGelu;
  if (name == "gelu_new" || name == "gelu_fast" || name == "gelu_pytorch_tanh") return Activation::kGeluTanh;
  if (name == "swish" || name == "silu") return Activation::kSilu;
  if (name == "tanh") return Activation::kTanh;
  throw Error("unsupported activation_function '" + name +
              "' (supported: relu, gelu, gelu_new, gelu_fast, gelu_pytorch_tanh, swish, silu, tanh)");
}

}  // namespace ordo::nn
