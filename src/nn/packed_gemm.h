// y = act(x W^T + b) on oneDNN's matmul with W reordered ONCE, at load, into the blocked
// layout its JIT kernels read ("prepacked"). dnnl_sgemm re-packs W on every call: at decode
// shapes (M = 32 rows, K = 512) that halves the GEMM speed, and for the 58k-vocabulary output
// projection it means copying 119 MB per step. The kernels' measured speeds are in
// docs/benchmarks.md, "The decoding-step GEMM kernel".
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include <ATen/ATen.h>

#include "nn/activation.h"
#include "ordo/options.h"

namespace ordo::nn {

// How the GEMMs of a loaded model compute: the public ComputeType itself (one enum, not a
// mirror to keep in step). Chosen once per model (weights are packed for it). kFloat32 gives
// the reference's results up to summation order; kBFloat16 rounds weights and activations to
// bfloat16, accumulating and writing float32; kInt8 has int8 weights per output channel and
// int8 activations per row (dynamic), int32 accumulation, rescaled to float32.
using GemmType = ComputeType;

// Whether oneDNN has a kernel for `type` on this CPU (bfloat16 needs AVX-512; int8 runs
// fastest with AVX-512 VNNI). float32 is always supported.
bool gemm_type_supported(GemmType type);

// oneDNN picks a GEMM's kernel by its row count, and on CPUs with AMX (Intel Xeon since
// Sapphire Rapids) runs bfloat16 GEMMs of 2+ rows on AMX tiles but one row on AVX-512: the two
// sum in different orders, so a row's bits would depend on its batch. Capping oneDNN at AVX-512
// with bfloat16 and VNNI (what the CPUs without AMX have) runs every row count on the same
// arithmetic. It must come before oneDNN is first asked for its instruction set: every oneDNN
// user in ordo calls this first (idempotent). A user's ONEDNN_MAX_CPU_ISA is left in force.
void cap_onednn_isa();

class PackedGemm {
 public:
  // weight [out, in] float32, bias [out] float32 or undefined. `activation`, when given, is
  // applied to the output inside the GEMM (oneDNN post-op).
  PackedGemm(const at::Tensor& weight, const at::Tensor& bias, GemmType type,
             std::optional<Activation> activation = std::nullopt);
  // The same with W supplied in slices of rows (rows(begin, count) -> [count, in] float32):
  // a large W (a 256k-vocabulary output projection read from a checkpoint) then never sits in
  // memory whole in float32, only in the packed type (and once more while it is reordered).
  // `rows` is called from several threads at once (slices are filled in parallel).
  using RowSource = std::function<at::Tensor(int64_t begin, int64_t count)>;
  PackedGemm(const RowSource& rows, int64_t out, int64_t in, const at::Tensor& bias, GemmType type,
             std::optional<Activation> activation = std::nullopt);
  ~PackedGemm();
  PackedGemm(const PackedGemm&) = delete;
  PackedGemm& operator=(const PackedGemm&) = delete;

  // x [..., in] float32 -> [..., out] float32. Thread-safe.
  at::Tensor forward(const at::Tensor& x) const;

  // For a search that needs only each row's largest output (greedy search without scores):
  // `values` [..., out] holds forward()'s own bits where `exact` is true, which includes every
  // column that can be its row's largest, and elsewhere an upper bound of forward()'s value
  // (never below it), from an int8 copy of W (a quarter of the bytes to stream) and a rigorous
  // bound on its error. So the largest of `values` is forward()'s largest whenever it lands on
  // an exact column, ties resolved the same. `exact` undefined: every value is forward()'s
  // (float32 where the small-rows kernel runs, any number of rows; no activation; finite
  // inputs). The int8 copy is made at the first call.
  struct Bounded {
    at::Tensor values;
    at::Tensor exact;  // bool, shaped as values
  };
  Bounded forward_bounded(const at::Tensor& x) const;

  // Rows of W read back out of the packed copy: ids (any shape, int64) -> [..., in] float32
  // (bfloat16 rows widened exactly; int8 rows dequantized, W_q * scale). A tied embedding
  // table is looked up here instead of being kept beside its output projection (1 GB for
  // NLLB's 256k x 1024 in float32). Only when rows_readable(): the packed layout is one oneDNN
  // describes as plain blocks, and rows read back equal the weights packed (checked at
  // packing). Throws ordo::Error for an id outside [0, out).
  bool rows_readable() const;
  at::Tensor rows(const at::Tensor& ids) const;

  // The packed weights as they are in memory, and what is needed to use them again without
  // packing (models/packed_cache.h keeps them in a file).
  struct Image {
    GemmType type = GemmType::kFloat32;
    int64_t in = 0, out = 0;
    std::optional<Activation> activation;
    std::vector<uint8_t> layout;    // oneDNN's memory descriptor of the packed weights, as bytes
    const void* weights = nullptr;  // the packed weights
    size_t weight_bytes = 0;
    std::vector<float> weight_scales;  // int8: per output channel
    std::vector<float> bias;           // empty: none
    bool rows_readable = false;
  };
  Image image() const;
  // A PackedGemm that uses image.weights where they are (a mapped file that `owner` keeps
  // alive; they are only read). nullptr when oneDNN would lay the weights out differently
  // here (another CPU or oneDNN version): the caller packs afresh.
  static std::shared_ptr<const PackedGemm> from_image(const Image& image, std::shared_ptr<const void> owner);

  // oneDNN kernels kept for reuse (one per recent (row count, threads) shape; see Impl).
  static constexpr size_t kMaxCachedKernels = 4;
  size_t cached_kernels() const;

  // Whether forward() runs `rows` rows on kernels/small_gemm.h: 1-16 rows; float32 where a
  // panel layout and oneDNN's bits (checked once per shape) allow; int8 on AVX-512 VNNI where
  // the layout is VNNI panels and a probe found oneDNN's bits (once per process).
  bool small_rows_kernel(int64_t rows) const;

  int64_t in_features() const;
  int64_t out_features() const;
  GemmType type() const;

 private:
  PackedGemm();
  // `float32_whole`, when defined: W itself (float32, contiguous), packed without a copy.
  PackedGemm(const RowSource& rows, int64_t out, int64_t in, const at::Tensor& bias, GemmType type,
             std::optional<Activation> activation, const at::Tensor& float32_whole);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ordo::nn
