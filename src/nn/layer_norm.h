#pragma once

#include <cstdint>
#include <string>

#include "kernels/fused_rows.h"
#include "kernels/parallel.h"
#include "nn/module.h"

namespace ordo::nn {

// torch.nn.LayerNorm, or with `rms` T5's norm (T5LayerNorm): x / sqrt(mean(x^2) + eps) * weight,
// no mean subtracted, no bias.
struct LayerNorm {
  at::Tensor weight, bias;  // [dim]; no bias when rms
  double eps = 1e-5;        // torch.nn.LayerNorm's default; T5's layer_norm_epsilon (1e-6)
  bool rms = false;

  LayerNorm() = default;
  explicit LayerNorm(int64_t dim, bool rms_ = false, double eps_ = 1e-5)
      : weight(at::empty({dim}, at::kFloat)),
        bias(rms_ ? at::Tensor() : at::empty({dim}, at::kFloat)),
        eps(eps_),
        rms(rms_) {}

  at::Tensor forward(const at::Tensor& x) const {
    // Inference in float32: one pass per row (kernels/fused_rows.h) instead of six LibTorch ops.
    if (rms && x.scalar_type() == at::kFloat && weight.scalar_type() == at::kFloat &&
        !(at::GradMode::is_enabled() && (x.requires_grad() || weight.requires_grad())))
      return kernels::rms_norm_rows(x, weight, eps);
    // A decoding step's few rows: one thread (kernels/parallel.h); a long input: LibTorch's split.
    kernels::SerialScope serial(x.numel() < 2 * kernels::kMinTaskWork);
    if (rms) {  // as T5LayerNorm: the variance in float32, then weight * (x * rsqrt(variance + eps))
      const at::Tensor variance = x.to(at::kFloat).pow(2).mean(-1, /*keepdim=*/true);
      return weight * (x * at::rsqrt(variance + eps));
    }
    return at::layer_norm(x, {weight.size(0)}, weight, bias, eps);
  }
  void visit(const std::string& prefix, const ParamVisitor& visitor) {
    visitor(join_name(prefix, "weight"), weight);
    if (!rms) visitor(join_name(prefix, "bias"), bias);
  }
};

}  // namespace ordo::nn
