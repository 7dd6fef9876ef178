// The feed-forward activations a kernel can apply (fused_rows.h) or hand to oneDNN
// (nn/packed_gemm.h). Only the names: reading them from a config and applying them with LibTorch
// is nn/activation.h, one layer up.
#pragma once

namespace ordo::kernels {

enum class Activation { kRelu, kGelu, kGeluTanh, kSilu, kTanh };

}  // namespace ordo::kernels
