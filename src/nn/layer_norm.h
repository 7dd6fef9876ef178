#pragma once

#include <cstdint>
#include <string>

#include "nn/module.h"
#include "kernels/parallel.h"

namespace ordo::nn {

struct LayerNorm {
  at::Tensor weight, bias;  // [dim]
  double eps = 1e-5;        // torch.nn.LayerNorm's default, used by every family here

  LayerNorm() = default;
  explicit LayerNorm(int64_t dim)
      : weight(at::empty({dim}, at::kFloat)), bias(at::empty({dim}, at::kFloat)) {}

  at::Tensor forward(const at::Tensor& x) const {
    // A decoding step's few rows: one thread (kernels/parallel.h); a long input: LibTorch's split.
    SerialScope serial(x.numel() < 2 * kMinTaskWork);
    return at::layer_norm(x, {weight.size(0)}, weight, bias, eps);
  }
  void visit(const std::string& prefix, const ParamVisitor& visitor) {
    visitor(join_name(prefix, "weight"), weight);
    visitor(join_name(prefix, "bias"), bias);
  }
};

}  // namespace ordo::nn
