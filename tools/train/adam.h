// Adam (Kingma & Ba) with the Transformer schedule: linear warm-up, then inverse square root
// decay: lr(step) = peak * min(step / warmup, sqrt(warmup / step)).
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include <ATen/ATen.h>

namespace ordo::train {

struct AdamParam {
  std::string name;
  at::Tensor param, m, v;
};

class Adam {
 public:
  Adam(double peak_lr, int64_t warmup, double beta1 = 0.9, double beta2 = 0.98, double eps = 1e-9)
      : peak_(peak_lr), warmup_(warmup), beta1_(beta1), beta2_(beta2), eps_(eps) {}

  void add(const std::string& name, const at::Tensor& param) {
    params_.push_back({name, param, at::zeros_like(param), at::zeros_like(param)});
  }
  std::vector<AdamParam>& params() { return params_; }

  double learning_rate(int64_t step) const {
    const double s = static_cast<double>(std::max<int64_t>(step, 1));
    return peak_ * std::min(s / warmup_, std::sqrt(static_cast<double>(warmup_) / s));
  }

  // Scales gradients so their global norm is at most `max_norm`; returns the norm before.
  double clip_gradients(double max_norm) {
    at::NoGradGuard no_grad;
    double total = 0;
    for (AdamParam& p : params_)
      if (p.param.grad().defined()) total += p.param.grad().pow(2).sum().item<double>();
    const double norm = std::sqrt(total);
    if (norm > max_norm)
      for (AdamParam& p : params_)
        if (p.param.grad().defined()) p.param.grad().mul_(max_norm / (norm + 1e-6));
    return norm;
  }

  // One update with the learning rate of `step` (1-based); clears the gradients.
  void step(int64_t step) {
    at::NoGradGuard no_grad;
    const double lr = learning_rate(step);
    const double c1 = 1 - std::pow(beta1_, static_cast<double>(step));
    const double c2 = 1 - std::pow(beta2_, static_cast<double>(step));
    for (AdamParam& p : params_) {
      at::Tensor grad = p.param.grad();
      if (!grad.defined()) continue;
      p.m.mul_(beta1_).add_(grad, 1 - beta1_);
      p.v.mul_(beta2_).addcmul_(grad, grad, 1 - beta2_);
      const at::Tensor denom = (p.v / c2).sqrt_().add_(eps_);
      p.param.addcdiv_(p.m, denom, -lr / c1);
      grad.zero_();
    }
  }

 private:
  double peak_;
  int64_t warmup_;
  double beta1_, beta2_, eps_;
  std::vector<AdamParam> params_;
};

}  // namespace ordo::train
