#pragma once
// The one place ordo asks the CPU what it runs: every kernel with a body per instruction set
// (attention, log-softmax, top-k in kernels/lanes.h; int8 quantization in packed_gemm.cpp) picks it
// with best_isa(), so that all of them agree on a machine and a fallback is never skipped.
// Detected, never assumed from the vendor or the build machine.

namespace ordo::nn {

enum class Isa { kAvx512, kAvx2, kBaseline };

// The widest of AVX-512 (F, VL, BW, DQ) / AVX2 + FMA / baseline x86-64 this CPU runs.
inline Isa best_isa() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq"))
    return Isa::kAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::kAvx2;
  return Isa::kBaseline;
}

}  // namespace ordo::nn
