// y = x W^T + b, with W stored [out_features, in_features] as in PyTorch checkpoints.
#pragma once

#include <cstdint>
#include <string>

#include "nn/module.h"

namespace ordo::nn {

struct Linear {
  at::Tensor weight;  // [out, in]
  at::Tensor bias;    // [out], may be undefined

  Linear() = default;
  Linear(int64_t in_features, int64_t out_features, bool with_bias = true);

  // x: [..., in] -> [..., out]. Inference in float32 runs the GEMM in oneDNN (the system BLAS
  // that LibTorch calls is often the slow reference one); anything that needs autograd goes
  // through at::linear.
  at::Tensor forward(const at::Tensor& x) const;
  void visit(const std::string& prefix, const ParamVisitor& visitor);
};

}  // namespace ordo::nn
