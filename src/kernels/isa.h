#pragma once
// The one place ordo asks the CPU what it runs: every kernel with a body per instruction set
// (attention, log-softmax, top-k, fused rows, int8 quantization) picks it with pick_for_isa()
// below, so that all of them agree on a machine and a fallback is never skipped.
// Detected, never assumed from the vendor or the build machine.
#include <cstdlib>
#include <cstring>

namespace ordo::kernels {

enum class Isa { kAvx512, kAvx2, kBaseline };

// The widest of AVX-512 (F, VL, BW, DQ) / AVX2 + FMA / baseline x86-64 this CPU runs.
inline Isa detected_isa() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq"))
    return Isa::kAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::kAvx2;
  return Isa::kBaseline;
}

// The ORDO_ISA environment variable (avx512 | avx2 | baseline) as a cap, or nothing: a CPU that
// runs AVX-512 as two 256-bit halves (AMD Zen 4) may be as fast on the AVX2 bodies, so the
// choice can be measured and fixed per machine. It caps ordo's own kernels only; oneDNN's GEMMs
// have their own cap (ONEDNN_MAX_CPU_ISA=AVX2), which on a Zen 4 costs far more (docs/
// benchmarks.md, "Instruction sets: ORDO_ISA"). Any other value is ignored (the detected set stays).
inline bool isa_cap(Isa* cap) {
  const char* forced = std::getenv("ORDO_ISA");
  if (!forced) return false;
  if (std::strcmp(forced, "avx512") == 0)
    *cap = Isa::kAvx512;
  else if (std::strcmp(forced, "avx2") == 0)
    *cap = Isa::kAvx2;
  else if (std::strcmp(forced, "baseline") == 0)
    *cap = Isa::kBaseline;
  else
    return false;
  return true;
}

// The set the kernels run: the detected one, capped by ORDO_ISA (never wider than the CPU).
inline Isa best_isa() {
  const Isa detected = detected_isa();
  Isa cap = detected;
  if (!isa_cap(&cap)) return detected;
  return static_cast<int>(cap) > static_cast<int>(detected) ? cap : detected;  // kBaseline is the largest value
}

// The one dispatch of every kernel with a body per instruction set: of its AVX-512, AVX2 and
// baseline x86-64 bodies (function pointers, or a struct of them), the one for best_isa()
// (ORDO_ISA honoured). A kernel without a body of its own for a set passes the next narrower
// one there (quantize: the scalar body for AVX2). Kernels call it once and keep the result.
template <class T>
T pick_for_isa(T avx512, T avx2, T baseline) {
  switch (best_isa()) {
    case Isa::kAvx512: return avx512;
    case Isa::kAvx2: return avx2;
    case Isa::kBaseline: break;
  }
  return baseline;
}

}  // namespace ordo::kernels
