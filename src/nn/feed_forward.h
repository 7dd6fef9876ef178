// Position-wise feed-forward block: fc2(activation(fc1(x))), or gated (T5 v1.1, Flan-T5:
// "gated-gelu"): fc2(activation(fc1(x)) * gate(x)), Hugging Face's wo(act(wi_0 x) * wi_1 x).
// Packed, a gated block runs fc1 and gate as one GEMM and act(a) * b as one pass
// (kernels/fused_rows.h): at decoding shapes a GEMM call and an element-wise op cost about as
// much as their arithmetic.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/fused_rows.h"
#include "nn/activation.h"
#include "nn/linear.h"

namespace ordo::nn {

struct FeedForward {
  Linear fc1, fc2;
  Linear gate;  // gated only: the factor that is not activated
  // After pack(), gated with an activation fused_rows.h has: [fc1; gate] as one GEMM (out =
  // 2 x hidden); fc1 and gate are then released.
  Linear fc1_gate;
  Activation activation = Activation::kRelu;
  bool gated = false;

  FeedForward() = default;
  FeedForward(int64_t dim, int64_t hidden, Activation act, bool gated_ = false, bool bias = true)
      : fc1(dim, hidden, bias), fc2(hidden, dim, bias), activation(act), gated(gated_) {
    if (gated) gate = Linear(dim, hidden, bias);
  }

  at::Tensor forward(const at::Tensor& x) const {
    if (fc1_gate.packed) return fc2.forward(kernels::gated_rows(fc1_gate.forward(x), activation));
    at::Tensor hidden = fc1.forward(x);
    if (!fc1.applies_activation()) hidden = apply(activation, hidden);
    if (gated) hidden = hidden * gate.forward(x);
    return fc2.forward(hidden);
  }
  void pack(GemmType type) {
    if (gated && kernels::gated_rows_supported(activation)) {
      fc1_gate = fuse_and_pack({&fc1, &gate}, type);
    } else {
      fc1.pack(type, activation);
      if (gated) gate.pack(type);
    }
    fc2.pack(type);
  }
  void visit_linears(const std::string& prefix, const LinearVisitor& visitor) {
    visitor(join_name(prefix, "fc1"), fc1);
    visitor(join_name(prefix, "fc2"), fc2);
    if (gated) visitor(join_name(prefix, "gate"), gate);
    if (gated) visitor(join_name(prefix, "fc1_gate"), fc1_gate);
  }
  // Hugging Face names the two projections fc1/fc2 directly on the layer.
  void visit(const std::string& prefix, const ParamVisitor& visitor) {
    fc1.visit(join_name(prefix, "fc1"), visitor);
    fc2.visit(join_name(prefix, "fc2"), visitor);
    if (gated) gate.visit(join_name(prefix, "gate"), visitor);
  }
};

}  // namespace ordo::nn
