// y = x W^T + b, with W stored [out_features, in_features] as in PyTorch checkpoints.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>

#include "nn/module.h"
#include "nn/packed_gemm.h"

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

  // Inference only: packs the weights for `type` (see packed_gemm.h); forward() then runs
  // the packed GEMM, with `activation` applied inside it when given. The float32 weight is
  // released unless another module shares it (a tied output projection).
  void pack(GemmType type, std::optional<Activation> activation = std::nullopt);
  // Where pack() reads W when `weight` is undefined: slices of rows straight from a checkpoint
  // (models/seq2seq_model.cpp), so that packing a layer never holds its float32 weights whole.
  struct RowSource {
    PackedGemm::RowSource rows;
    int64_t out = 0, in = 0;
  };
  RowSource weight_rows;
  // Whether forward() already applies an activation (packed with one).
  bool applies_activation() const { return packed && fused_activation; }

  std::shared_ptr<const PackedGemm> packed;
  bool fused_activation = false;
};

// `parts` (same input size) as one Linear whose output is theirs side by side (W = [a; b; ...],
// biases likewise, none if no part has one), packed for `type`: one GEMM where they always run
// together (attention's [q; k; v], the gated feed-forward's [fc1; gate]). The parts are
// released. Weights still in the checkpoint (weight_rows) are fused as one source of rows.
Linear fuse_and_pack(std::initializer_list<Linear*> parts, GemmType type);

// Called once per Linear of a module with its name ("model.encoder.layers.0.self_attn.qkv_proj"),
// after packing too (the packed weights cache saves and restores them through it).
using LinearVisitor = std::function<void(const std::string& name, Linear& linear)>;

}  // namespace ordo::nn
