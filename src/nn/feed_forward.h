// Position-wise feed-forward block: fc2(activation(fc1(x))), or gated (T5 v1.1, Flan-T5:
// "gated-gelu"): fc2(activation(fc1(x)) * gate(x)), Hugging Face's wo(act(wi_0 x) * wi_1 x).
#pragma once

#include <cstdint>
#include <string>

#include "nn/activation.h"
#include "nn/linear.h"

namespace ordo::nn {

struct FeedForward {
  Linear fc1, fc2;
  Linear gate;  // gated only: the factor that is not activated
  Activation activation = Activation::kRelu;
  bool gated = false;

  FeedForward() = default;
  FeedForward(int64_t dim, int64_t hidden, Activation act, bool gated_ = false, bool bias = true)
      : fc1(dim, hidden, bias), fc2(hidden, dim, bias), activation(act), gated(gated_) {
    if (gated) gate = Linear(dim, hidden, bias);
  }

  at::Tensor forward(const at::Tensor& x) const {
    at::Tensor hidden = fc1.forward(x);
    if (!fc1.applies_activation()) hidden = apply(activation, hidden);
    if (gated) hidden = hidden * gate.forward(x);
    return fc2.forward(hidden);
  }
  void pack(GemmType type) {
    fc1.pack(type, activation);
    if (gated) gate.pack(type);
    fc2.pack(type);
  }
  void visit_linears(const std::string& prefix, const LinearVisitor& visitor) {
    visitor(join_name(prefix, "fc1"), fc1);
    visitor(join_name(prefix, "fc2"), fc2);
    if (gated) visitor(join_name(prefix, "gate"), gate);
  }
  // Hugging Face names the two projections fc1/fc2 directly on the layer.
  void visit(const std::string& prefix, const ParamVisitor& visitor) {
    fc1.visit(join_name(prefix, "fc1"), visitor);
    fc2.visit(join_name(prefix, "fc2"), visitor);
    if (gated) gate.visit(join_name(prefix, "gate"), visitor);
  }
};

}  // namespace ordo::nn
