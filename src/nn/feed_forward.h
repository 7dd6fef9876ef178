// Position-wise feed-forward block: fc2(activation(fc1(x))).
#pragma once

#include <cstdint>
#include <string>

#include "nn/activation.h"
#include "nn/linear.h"

namespace ordo::nn {

struct FeedForward {
  Linear fc1, fc2;
  Activation activation = Activation::kRelu;

  FeedForward() = default;
  FeedForward(int64_t dim, int64_t hidden, Activation act)
      : fc1(dim, hidden), fc2(hidden, dim), activation(act) {}

  at::Tensor forward(const at::Tensor& x) const {
    const at::Tensor hidden = fc1.forward(x);
    return fc2.forward(fc1.applies_activation() ? hidden : apply(activation, hidden));
  }
  void pack(GemmType type) {
    fc1.pack(type, activation);
    fc2.pack(type);
  }
  void visit_linears(const std::string& prefix, const LinearVisitor& visitor) {
    visitor(join_name(prefix, "fc1"), fc1);
    visitor(join_name(prefix, "fc2"), fc2);
  }
  // Hugging Face names the two projections fc1/fc2 directly on the layer.
  void visit(const std::string& prefix, const ParamVisitor& visitor) {
    fc1.visit(join_name(prefix, "fc1"), visitor);
    fc2.visit(join_name(prefix, "fc2"), visitor);
  }
};

}  // namespace ordo::nn
