#include "nn/packed_gemm.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <ATen/Parallel.h>
#include <dnnl.hpp>

#include "kernels/isa.h"
#include "kernels/pack.h"
#include "kernels/parallel.h"
#include "kernels/quantize.h"
#include "kernels/screen_bounds.h"
#include "kernels/small_gemm.h"
#include "ordo/error.h"

namespace ordo::nn {
namespace {

using dnnl::memory;
using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

// oneDNN's process-wide kernel cache is the program's to size (ordo::configure_process);
// each PackedGemm keeps its own recent kernels (Impl::kernels) besides.
const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine = [] {
    cap_onednn_isa();
    return dnnl::engine(dnnl::engine::kind::cpu, 0);
  }();
  return engine;
}

dnnl::algorithm eltwise_of(Activation activation, float* alpha) {
  *alpha = 0.0f;
  switch (activation) {
    case Activation::kRelu: return dnnl::algorithm::eltwise_relu;
    case Activation::kGelu: return dnnl::algorithm::eltwise_gelu_erf;
    case Activation::kGeluTanh: return dnnl::algorithm::eltwise_gelu_tanh;
    case Activation::kSilu: *alpha = 1.0f; return dnnl::algorithm::eltwise_swish;
    case Activation::kTanh: return dnnl::algorithm::eltwise_tanh;
  }
  throw Error("unsupported activation for a fused GEMM");
}

dt source_type(GemmType type) {
  switch (type) {
    case GemmType::kFloat32: return dt::f32;
    case GemmType::kBFloat16: return dt::bf16;
    case GemmType::kInt8: return dt::s8;
  }
  return dt::f32;
}

// y[r] = y[r] * scales[r] + bias, then max(y, 0) if `relu`, in one pass.
void rescale_rows(at::Tensor& y, const at::Tensor& scales, const at::Tensor& bias, bool relu) {
  const int64_t rows = y.size(0), cols = y.size(1);
  float* data = y.data_ptr<float>();
  const float* scale = scales.data_ptr<float>();
  const float* b = bias.defined() ? bias.data_ptr<float>() : nullptr;
  kernels::parallel_for(0, rows, kernels::grain_for(cols), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      float* row = data + r * cols;
      const float s = scale[r];
      if (b)
        for (int64_t j = 0; j < cols; ++j) row[j] = row[j] * s + b[j];
      else
        for (int64_t j = 0; j < cols; ++j) row[j] *= s;
      if (relu)
        for (int64_t j = 0; j < cols; ++j) row[j] = std::max(row[j], 0.0f);
    }
  });
}

size_t direct_bytes(const dnnl_memory_desc_t& d);

// ORDO_SMALL_GEMM=0: oneDNN for every row count (to compare it with the small-rows kernels).
bool small_gemm_wanted() {
  const char* chosen = std::getenv("ORDO_SMALL_GEMM");
  return !(chosen && std::strcmp(chosen, "0") == 0);
}

// A probe's values: t filled with uniform values in [-1, 1) from `state` (a fixed sequence).
at::Tensor probe_values(at::Tensor t, uint32_t& state) {
  float* v = t.data_ptr<float>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    state = state * 1664525u + 1013904223u;
    v[i] = static_cast<float>(static_cast<int32_t>(state)) * (1.0f / 2147483648.0f);
  }
  return t;
}

}  // namespace

struct PackedGemm::Impl {
  GemmType type;
  int64_t in = 0, out = 0;
  std::optional<Activation> activation;
  memory::desc weights_md;           // the packed layout; the same for every M (checked at creation)
  memory weights;                    // packed weights (owned by oneDNN)
  at::Tensor bias;                   // [1, out] float32, or undefined
  std::vector<float> weight_scales;  // int8: per output channel, W ~ W_q * scale
  // Where element (k, n) of the packed [K, N] = W^T sits: k_offsets[k] + n_offset(n) elements
  // from the start (a blocked layout's offset is a sum of one term per dimension). Empty when
  // the layout is not one rows() can read.
  std::vector<int64_t> k_offsets;
  std::shared_ptr<const void> owner;  // keeps weights' memory alive when it is not oneDNN's
  int64_t n_offset(int64_t n) const { return blocked_offset(weights_md, 0, n); }

  // float32, 1-16 rows: kernels/small_gemm.h over the packed panels, where it gives oneDNN's
  // bits (small_chunking). Found at the first such call; width 0: not this layout.
  mutable std::once_flag panels_found;
  mutable kernels::PanelLayout panels;
  bool probing = false;  // small_chunking's own GEMM: oneDNN always
  kernels::PanelLayout find_panels() const;
  static int64_t small_chunking(int64_t k, int64_t rows, std::optional<Activation> activation, bool bias);
  // The k chunk small_gemm runs `rows` rows with; 0: oneDNN runs them.
  int64_t small_rows_chunk(int64_t rows) const;
  // y = small_gemm(x) then, for an activation other than relu (which small_gemm applies),
  // oneDNN's eltwise primitive on the [rows, out] result in place: the same code (its
  // eltwise injector) as the post-op fused into its matmul, checked bit for bit by
  // small_chunking before this path is taken.
  void small_rows(const float* x, int64_t rows, int64_t chunk, float* y) const;
  mutable std::vector<std::pair<int64_t, std::shared_ptr<const dnnl::eltwise_forward>>> activations;  // per rows

  // int8, 1-16 rows: kernels/small_gemm.h's VNNI kernel over the packed panels, where this
  // process's probe found it gives oneDNN's bits. Found at the first such call; width 0: not
  // this layout (or no VNNI).
  mutable std::once_flag s8_found;
  mutable kernels::PanelLayoutS8 s8_panels;
  mutable std::vector<int32_t> column_sums;  // of W_q, per output column
  kernels::PanelLayoutS8 find_s8_panels() const;
  // Per output column of int8 weights laid out as k_offsets says, the sum over k of W_q (or
  // of |W_q|).
  std::vector<int32_t> int8_column_sums(bool absolute) const;

  // forward_bounded's int8 copy of a float32 W (w_n = s_n q_n + e_n), and its per-column
  // factors (float, rounded up, made from |q_n|_1, |q_n|_2 and |e_n|_2): its bound is
  // min(l1 x_holder, |x|_2 x_cs) + min(s_x q_holder, |d|_2 q_cs) + g l1 sum_rounding + fixed.
  struct Screen {
    std::unique_ptr<PackedGemm> gemm;
    std::vector<float> x_holder, x_cs, q_holder, q_cs, sum_rounding, fixed;
  };
  mutable std::once_flag screen_made;
  mutable std::unique_ptr<Screen> screen;
  const Screen* screen_for_bounds(const PackedGemm& self) const;
  bool s8_rows(int64_t rows) const;
  void s8_small_rows(const int8_t* x, int64_t rows, const float* row_scales, float* y) const;

  // oneDNN's blocked-layout offset of logical element (k, n) (its memory_desc_wrapper::off_v):
  // inner blocks innermost last, then the outer strides.
  static int64_t blocked_offset(const memory::desc& md, int64_t k, int64_t n) {
    const dnnl_blocking_desc_t& blk = md.data.format_desc.blocking;
    int64_t pos[2] = {k, n};
    int64_t offset = md.data.offset0, stride = 1;
    for (int i = blk.inner_nblks - 1; i >= 0; --i) {
      const int d = static_cast<int>(blk.inner_idxs[i]);
      offset += pos[d] % blk.inner_blks[i] * stride;
      pos[d] /= blk.inner_blks[i];
      stride *= blk.inner_blks[i];
    }
    return offset + pos[0] * blk.strides[0] + pos[1] * blk.strides[1];
  }

  struct Kernel {
    dnnl::matmul primitive;
    size_t scratchpad_bytes = 0;
  };
  // The kernels of the most recently used (rows, threads) shapes (oneDNN fixes both when it
  // creates one), least recently used first out. Unbounded, a server that sees every batch
  // shape would keep one per shape forever. Few are needed: a decoder GEMM sees one row count
  // per batch being decoded, an encoder GEMM a new one with each source length. Kept kernels
  // cost more than their size: they pin the heap around them, so lines of many different
  // lengths peak higher with each kernel kept (the heap is also released after each batch,
  // pipeline/heap.h). A shape that comes back is rebuilt cheaply while oneDNN's own primitive
  // cache (128 entries here, process-wide) still holds it, and JIT-compiled afresh otherwise.
  // Row r's result does not depend on the row count (tests/nn/batch_invariance_test.cpp),
  // so which kernel runs a batch never changes a bit.
  struct CachedKernel {
    int64_t rows;
    int threads;
    uint64_t last_use;
    std::shared_ptr<const Kernel> kernel;
  };
  mutable std::mutex mutex;
  mutable std::vector<CachedKernel> kernels;  // at most kMaxCachedKernels
  mutable uint64_t uses = 0;

  // int8 applies its per-row scales, the bias and the activation after the GEMM (oneDNN 2.6's
  // brgemm kernels accept no per-row post-op and fall back to reference code with one).
  bool fused_epilogue() const { return type != GemmType::kInt8; }

  dnnl::matmul::primitive_desc describe(int64_t rows, const memory::desc& weights_desc) const {
    const memory::desc src({rows, in}, source_type(type), tag::ab);
    const memory::desc dst({rows, out}, dt::f32, tag::ab);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    if (type == GemmType::kInt8) attr.set_output_scales(2, weight_scales);
    if (fused_epilogue() && activation) {
      dnnl::post_ops ops;
      float alpha = 0.0f;
      const dnnl::algorithm algorithm = eltwise_of(*activation, &alpha);
      ops.append_eltwise(1.0f, algorithm, alpha, 0.0f);
      attr.set_post_ops(ops);
    }
    if (fused_epilogue() && bias.defined()) {
      const memory::desc bias_md({1, out}, dt::f32, tag::ab);
      return {dnnl::matmul::desc(src, weights_desc, bias_md, dst), attr, cpu_engine()};
    }
    return {dnnl::matmul::desc(src, weights_desc, dst), attr, cpu_engine()};
  }

  void index_rows(const at::Tensor& source);
  bool compute_row_offsets();
  // int8 and float32 weights written straight into the blocked layout, instead of into a whole
  // plain copy that oneDNN then reorders (for int8 its "simple" reorder: most of a big model's
  // packing time; for float32 a second full-size copy and pass).
  bool writes_directly() const;
  void write_rows(int64_t first, const void* values, int64_t count, uint8_t* packed) const;

  std::shared_ptr<const dnnl::eltwise_forward> activation_kernel(int64_t rows) const {
    std::lock_guard<std::mutex> lock(mutex);
    for (const auto& [r, made] : activations)
      if (r == rows) return made;
    float alpha = 0.0f;
    const dnnl::algorithm algorithm = eltwise_of(*activation, &alpha);
    const memory::desc data({rows, out}, dt::f32, tag::ab);
    const dnnl::eltwise_forward::primitive_desc pd(
        dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, algorithm, data, alpha, 0.0f), cpu_engine());
    auto made = std::make_shared<const dnnl::eltwise_forward>(pd);
    activations.emplace_back(rows, made);
    return made;
  }

  std::shared_ptr<const Kernel> kernel(int64_t rows) const {
    const int threads = at::get_num_threads();
    std::lock_guard<std::mutex> lock(mutex);
    ++uses;
    for (CachedKernel& cached : kernels)
      if (cached.rows == rows && cached.threads == threads) {
        cached.last_use = uses;
        return cached.kernel;
      }
    const dnnl::matmul::primitive_desc pd = describe(rows, weights_md);
    if (pd.weights_desc() != weights_md)
      throw Error("oneDNN chose another weight layout for " + std::to_string(rows) + " rows");
    auto made = std::make_shared<Kernel>(Kernel{dnnl::matmul(pd), pd.scratchpad_desc().get_size()});
    // A caller still running an evicted kernel keeps it alive through its shared_ptr.
    if (kernels.size() >= kMaxCachedKernels)
      kernels.erase(std::min_element(kernels.begin(), kernels.end(), [](const CachedKernel& a, const CachedKernel& b) {
        return a.last_use < b.last_use;
      }));
    kernels.push_back({rows, threads, uses, made});
    return made;
  }
};

void cap_onednn_isa() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (std::getenv("ONEDNN_MAX_CPU_ISA") || std::getenv("DNNL_MAX_CPU_ISA")) return;
    try {
      dnnl::set_max_cpu_isa(dnnl::cpu_isa::avx512_core_bf16);  // lower ISAs stay as detected
    } catch (const dnnl::error&) {  // asked too late (another library used oneDNN first): as it is
    }
  });
}

bool gemm_type_supported(GemmType type) {
  if (type == GemmType::kFloat32) return true;
  try {
    const memory::desc src({4, 64}, source_type(type), tag::ab);
    const memory::desc weights({64, 64}, source_type(type), tag::any);
    const memory::desc dst({4, 64}, dt::f32, tag::ab);
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, weights, dst), cpu_engine());
    return std::string(pd.impl_info_str()).rfind("ref", 0) != 0;  // reference code: too slow to offer
  } catch (const dnnl::error&) {
    return false;
  }
}

PackedGemm::PackedGemm(const at::Tensor& weight, const at::Tensor& bias, GemmType type,
                       std::optional<Activation> activation)
    : PackedGemm([&weight](int64_t begin, int64_t count) { return weight.narrow(0, begin, count).to(at::kFloat); },
                 weight.size(0), weight.size(1), bias, type, activation,
                 type == GemmType::kFloat32 && weight.scalar_type() == at::kFloat && weight.is_contiguous()
                     ? weight
                     : at::Tensor()) {}

PackedGemm::PackedGemm(const RowSource& rows, int64_t out, int64_t in, const at::Tensor& bias, GemmType type,
                       std::optional<Activation> activation)
    : PackedGemm(rows, out, in, bias, type, activation, at::Tensor()) {}

PackedGemm::PackedGemm(const RowSource& rows, int64_t out, int64_t in, const at::Tensor& bias, GemmType type,
                       std::optional<Activation> activation, const at::Tensor& float32_whole)
    : impl_(std::make_unique<Impl>()) {
  if (!gemm_type_supported(type))
    throw Error(std::string("compute type ") + (type == GemmType::kBFloat16 ? "bfloat16" : "int8") +
                " is not supported on this CPU (oneDNN has no fast kernel for it; use float32)");
  Impl& m = *impl_;
  m.type = type;
  m.out = out;
  m.in = in;
  m.activation = activation;
  // A zero bias (Marian's final_logits_bias usually is) is skipped: one pass less per call.
  if (bias.defined() && bias.ne(0).any().item<bool>()) m.bias = bias.to(at::kFloat).contiguous().view({1, m.out});

  // W^T as oneDNN's [K, N] matrix: the [out, in] row-major weight is [K, N] in layout 'ba'.
  // Filled in slices of rows: whole-matrix temporaries would hold several float32 copies of a
  // 256k-vocabulary output projection at once (int8: scales, then values, per slice). A slice
  // holds about kSliceElements values (1 MB in float32), whatever the width: a 1,024-row slice
  // of a 4,096-wide fc2 would be the whole 16 MB matrix, and its int8 temporaries (|W|,
  // W / scale) two more copies of it, the peak of loading a big model. The slices are filled on all the
  // threads (parallel_for: a contiguous run of slices per thread); each row's arithmetic is
  // the same however the rows are split.
  at::Tensor source;
  dt source_dt = dt::f32;
  constexpr int64_t kSliceElements = int64_t{1} << 18;
  const int64_t slice_rows = std::max<int64_t>(1, kSliceElements / std::max<int64_t>(1, m.in));
  // W's rows in slices (put(first row, count, [count, in] float32 contiguous)), on all the threads.
  const auto for_each_slice = [&](const std::function<void(int64_t, int64_t, const at::Tensor&)>& put) {
    const int64_t slices = (m.out + slice_rows - 1) / slice_rows;
    kernels::parallel_for(0, slices, 1, [&](int64_t first, int64_t last) {
      for (int64_t r = first * slice_rows; r < std::min(m.out, last * slice_rows); r += slice_rows) {
        const int64_t n = std::min(slice_rows, m.out - r);
        const at::Tensor slice = rows(r, n).to(at::kFloat).contiguous();
        if (slice.sizes() != at::IntArrayRef{n, m.in})
          throw Error("GEMM weight rows " + std::to_string(r) + "+" + std::to_string(n) + " have the wrong shape");
        put(r, n, slice);
      }
    });
  };
  const memory::desc any({m.in, m.out}, source_type(type), tag::any);
  if (type == GemmType::kInt8) m.weight_scales.resize(static_cast<size_t>(m.out));
  if (type != GemmType::kBFloat16) {
    m.weights_md = m.describe(/*rows=*/32, any).weights_desc();
    if (m.compute_row_offsets() && m.writes_directly()) {
      // Each slice (int8: quantized by kernels/quantize.h) has its rows written where oneDNN's
      // reorder would put them, with the s8s8 compensation it appends: the same bytes (checked
      // once per process against the reorder, and by tests/pipeline/compute_type_test.cpp), one
      // pass, on all the threads, and no plain copy of the whole matrix beside the packed one.
      if (type == GemmType::kFloat32) m.owner = kernels::map_zeroed(m.weights_md.get_size());
      m.weights = m.owner ? memory(m.weights_md, cpu_engine(), const_cast<void*>(m.owner.get()))
                          : memory(m.weights_md, cpu_engine());
      auto* packed = static_cast<uint8_t*>(m.weights.get_data_handle());
      // Zeros where no row goes: the padding (when the blocks cut the matrix short) and the end.
      const dnnl_memory_desc_t& d = m.weights_md.data;
      const size_t filled = d.padded_dims[0] == m.in && d.padded_dims[1] == m.out ? direct_bytes(d) : 0;
      if (!m.owner) std::memset(packed + filled, 0, m.weights_md.get_size() - filled);  // a fresh mapping is zero
      for_each_slice([&](int64_t r, int64_t n, const at::Tensor& slice) {
        if (type == GemmType::kInt8) {
          std::vector<int8_t> q(static_cast<size_t>(n * m.in));
          kernels::quantize_weight_rows(slice.data_ptr<float>(), n, m.in, q.data(), m.weight_scales.data() + r);
          m.write_rows(r, q.data(), n, packed);
        } else {
          m.write_rows(r, slice.data_ptr<float>(), n, packed);
        }
      });
      return;
    }
    m.k_offsets.clear();
  }
  if (float32_whole.defined()) {
    source = float32_whole;  // read by the reorder as it is: no copy
  } else if (type == GemmType::kFloat32 && m.out <= slice_rows) {
    source = rows(0, m.out).to(at::kFloat).contiguous();
  } else if (type == GemmType::kFloat32) {
    source = at::empty({m.out, m.in}, at::kFloat);
  } else if (type == GemmType::kBFloat16) {
    source = at::empty({m.out, m.in}, at::kBFloat16);
    source_dt = dt::bf16;
  } else {
    source = at::empty({m.out, m.in}, at::kChar);
    source_dt = dt::s8;
  }
  if (!float32_whole.defined() && (type != GemmType::kFloat32 || m.out > slice_rows)) {
    for_each_slice([&](int64_t r, int64_t n, const at::Tensor& slice) {
      if (type == GemmType::kInt8)
        kernels::quantize_weight_rows(slice.data_ptr<float>(), n, m.in, source.narrow(0, r, n).data_ptr<int8_t>(),
                                      m.weight_scales.data() + r);
      else
        source.narrow(0, r, n).copy_(slice);
    });
  }
  m.weights_md = m.describe(/*rows=*/32, any).weights_desc();
  memory plain({{m.in, m.out}, source_dt, tag::ba}, cpu_engine(), source.data_ptr());
  m.weights = memory(m.weights_md, cpu_engine());
  dnnl::stream stream(cpu_engine());
  dnnl::reorder(plain, m.weights).execute(stream, plain, m.weights);
  stream.wait();
  m.index_rows(source);
}

// Makes rows() possible when the packed layout is plain blocks holding the values as given
// (not, e.g., oneDNN's int8 "scale adjust" for CPUs without VNNI, which halves them), and
// proves it on a spread of rows against `source` ([out, in], the values packed).
bool PackedGemm::Impl::compute_row_offsets() {
  const dnnl_memory_desc_t& d = weights_md.data;
  if (d.format_kind != dnnl_blocked || d.ndims != 2 || d.padded_offsets[0] != 0 || d.padded_offsets[1] != 0)
    return false;
  if ((d.extra.flags & dnnl_memory_extra_flag_scale_adjust) && d.extra.scale_adjust != 1.0f) return false;
  k_offsets.resize(static_cast<size_t>(in));
  for (int64_t k = 0; k < in; ++k) k_offsets[static_cast<size_t>(k)] = blocked_offset(weights_md, k, 0);
  return true;
}

void PackedGemm::Impl::index_rows(const at::Tensor& source) {
  if (!compute_row_offsets()) return;
  const int64_t samples[] = {0, 1, out / 3, out / 2, out - 2, out - 1};
  const size_t element = source.element_size();
  const auto* packed = static_cast<const uint8_t*>(weights.get_data_handle());
  for (int64_t n : samples) {
    if (n < 0 || n >= out) continue;
    const auto* row = static_cast<const uint8_t*>(source.data_ptr()) + n * in * element;
    const int64_t base = n_offset(n);
    for (int64_t k = 0; k < in; ++k)
      if (std::memcmp(packed + (k_offsets[static_cast<size_t>(k)] + base) * element, row + k * element, element) != 0) {
        k_offsets.clear();
        return;
      }
  }
}

// Rows first.. of W (`values`: count x in, int8 or float32 as `type`) into the packed [K, N]
// layout: element k_offsets[k] + n_offset(n), and for int8, when oneDNN asks for it (s8 inputs
// on a CPU without AMX), the int32 compensation -128 * sum_k q[k] of column n after the padded
// matrix.
void PackedGemm::Impl::write_rows(int64_t first, const void* values, int64_t count, uint8_t* packed) const {
  const int64_t* k_offset = k_offsets.data();
  if (type == GemmType::kFloat32) {
    const auto* w = static_cast<const float*>(values);
    auto* target = reinterpret_cast<float*>(packed);
    // A row whose k are consecutive in the layout (plain 'ba') is one copy.
    bool plain_rows = true;
    for (int64_t k = 0; plain_rows && k < in; ++k) plain_rows = k_offset[k] == k;
    const auto write_row = [&](int64_t i) {
      const float* row = w + i * in;
      float* column = target + n_offset(first + i);
      if (plain_rows) {
        std::memcpy(column, row, static_cast<size_t>(in) * sizeof(float));
        return;
      }
      for (int64_t k = 0; k < in; ++k) column[k_offset[k]] = row[k];
    };
    // Where 16 consecutive output columns from a multiple of 16 on are 16 consecutive floats
    // (the innermost block runs over n, 16, 32, 48 or 64 wide; or n has stride 1), such groups
    // of rows are written as 8 x 8 tiles (kernels/pack.h).
    static const kernels::WriteGroup16 write_group = kernels::pick_write_group16();
    const dnnl_blocking_desc_t& blk = weights_md.data.format_desc.blocking;
    const int last = blk.inner_nblks - 1;
    const bool groups = !plain_rows && write_group &&
                        (last >= 0 ? blk.inner_idxs[last] == 1 && blk.inner_blks[last] % 16 == 0 : blk.strides[1] == 1);
    int64_t i = 0;
    if (groups) {
      for (; i < count && (first + i) % 16 != 0; ++i) write_row(i);
      for (; i + 16 <= count; i += 16) write_group(w + i * in, in, k_offset, target + n_offset(first + i));
    }
    for (; i < count; ++i) write_row(i);
    return;
  }
  const auto* q = static_cast<const int8_t*>(values);
  const dnnl_memory_desc_t& d = weights_md.data;
  const bool compensated = d.extra.flags & dnnl_memory_extra_flag_compensation_conv_s8s8;
  auto* compensation = reinterpret_cast<int32_t*>(packed + d.padded_dims[0] * d.padded_dims[1]);
  // Runs of 4 consecutive k in 4 consecutive bytes (the VNNI blocks: ...4a) are copied as one.
  bool quads = in % 4 == 0;
  for (int64_t k = 0; quads && k < in; k += 4)
    quads =
        k_offset[k + 1] == k_offset[k] + 1 && k_offset[k + 2] == k_offset[k] + 2 && k_offset[k + 3] == k_offset[k] + 3;
  for (int64_t i = 0; i < count; ++i) {
    const int8_t* row = q + i * in;
    uint8_t* column = packed + n_offset(first + i);
    int32_t sum = 0;
    if (quads) {
      for (int64_t k = 0; k < in; k += 4) std::memcpy(column + k_offset[k], row + k, 4);
    } else {
      for (int64_t k = 0; k < in; ++k) column[k_offset[k]] = static_cast<uint8_t>(row[k]);
    }
    for (int64_t k = 0; k < in; ++k) sum += row[k];
    if (compensated) compensation[first + i] = -128 * sum;
  }
}

namespace {

// The bytes of layout `d` that hold something: the padded values, then (int8, s8s8) one int32
// compensation per padded output column. oneDNN 2.6 reserves twice as much again after them
// and never writes it (left zero here). 0: a layout write_rows does not know (not plain
// blocks, scale adjustment, another compensation, bfloat16).
size_t direct_bytes(const dnnl_memory_desc_t& d) {
  if (d.format_kind != dnnl_blocked || d.ndims != 2 || d.offset0 != 0) return 0;
  const uint64_t flags = d.extra.flags;
  if (d.data_type == dnnl_f32)
    return flags == dnnl_memory_extra_flag_none &&
                   memory::desc(d).get_size() == static_cast<size_t>(d.padded_dims[0] * d.padded_dims[1] * 4)
               ? memory::desc(d).get_size()
               : 0;
  if (d.data_type != dnnl_s8) return 0;
  const size_t values = static_cast<size_t>(d.padded_dims[0] * d.padded_dims[1]);
  const size_t used =
      flags == dnnl_memory_extra_flag_none ? values : values + static_cast<size_t>(d.padded_dims[1]) * 4;
  if (flags != dnnl_memory_extra_flag_none &&
      (flags != dnnl_memory_extra_flag_compensation_conv_s8s8 || d.extra.compensation_mask != 2))
    return 0;
  return memory::desc(d).get_size() >= used ? used : 0;
}

}  // namespace

bool PackedGemm::Impl::writes_directly() const {
  if (type == GemmType::kBFloat16 || k_offsets.empty() || direct_bytes(weights_md.data) == 0) return false;
  // Once per process and type: a matrix with partial blocks on both sides, written here and
  // reordered by oneDNN, must give the same bytes; otherwise oneDNN's reorder packs every matrix.
  const auto same_as_onednn = [](GemmType probed) {
    Impl probe;
    probe.type = probed;
    probe.in = 200;
    probe.out = 150;
    if (probed == GemmType::kInt8) probe.weight_scales.assign(150, 1.0f);
    probe.weights_md =
        probe.describe(32, memory::desc({probe.in, probe.out}, source_type(probed), tag::any)).weights_desc();
    const size_t used = direct_bytes(probe.weights_md.data);
    if (!probe.compute_row_offsets() || used == 0) return false;
    const size_t count = static_cast<size_t>(probe.in * probe.out);
    std::vector<int8_t> q(count);
    std::vector<float> f(count);
    uint32_t state = 12345;
    for (size_t i = 0; i < count; ++i) {
      state = state * 1664525u + 1013904223u;
      q[i] = static_cast<int8_t>(static_cast<int>(state >> 24) % 255 - 127);
      f[i] = static_cast<float>(static_cast<int32_t>(state)) * 1e-9f;
    }
    void* values = probed == GemmType::kInt8 ? static_cast<void*>(q.data()) : static_cast<void*>(f.data());
    memory plain({{probe.in, probe.out}, source_type(probed), tag::ba}, cpu_engine(), values);
    memory reordered(probe.weights_md, cpu_engine());
    std::memset(reordered.get_data_handle(), 0x5a, probe.weights_md.get_size());
    dnnl::stream stream(cpu_engine());
    dnnl::reorder(plain, reordered).execute(stream, plain, reordered);
    stream.wait();
    std::vector<uint8_t> written(probe.weights_md.get_size(), 0);
    probe.write_rows(0, values, probe.out, written.data());
    return std::memcmp(written.data(), reordered.get_data_handle(), used) == 0;
  };
  if (type == GemmType::kInt8) {
    static const bool int8_ok = same_as_onednn(GemmType::kInt8);
    return int8_ok;
  }
  static const bool float32_ok = same_as_onednn(GemmType::kFloat32);
  return float32_ok;
}

PackedGemm::PackedGemm() : impl_(std::make_unique<Impl>()) {}

PackedGemm::Image PackedGemm::image() const {
  const Impl& m = *impl_;
  Image image;
  image.type = m.type;
  image.in = m.in;
  image.out = m.out;
  image.activation = m.activation;
  const auto* layout = reinterpret_cast<const uint8_t*>(&m.weights_md.data);
  image.layout.assign(layout, layout + sizeof(m.weights_md.data));
  image.weights = m.weights.get_data_handle();
  image.weight_bytes = m.weights_md.get_size();
  image.weight_scales = m.weight_scales;
  if (m.bias.defined()) image.bias.assign(m.bias.data_ptr<float>(), m.bias.data_ptr<float>() + m.out);
  image.rows_readable = !m.k_offsets.empty();
  return image;
}

std::shared_ptr<const PackedGemm> PackedGemm::from_image(const Image& image, std::shared_ptr<const void> owner) {
  if (!gemm_type_supported(image.type) || image.layout.size() != sizeof(dnnl_memory_desc_t)) return nullptr;
  if (image.type == GemmType::kInt8 && image.weight_scales.size() != static_cast<size_t>(image.out)) return nullptr;
  if (!image.bias.empty() && image.bias.size() != static_cast<size_t>(image.out)) return nullptr;
  std::shared_ptr<PackedGemm> gemm(new PackedGemm());
  Impl& m = *gemm->impl_;
  m.type = image.type;
  m.in = image.in;
  m.out = image.out;
  m.activation = image.activation;
  m.weight_scales = image.weight_scales;
  if (!image.bias.empty())
    m.bias = at::from_blob(const_cast<float*>(image.bias.data()), {1, m.out}, at::kFloat).clone();
  dnnl_memory_desc_t saved;
  std::memcpy(&saved, image.layout.data(), sizeof(saved));
  const memory::desc any({m.in, m.out}, source_type(m.type), tag::any);
  m.weights_md = m.describe(/*rows=*/32, any).weights_desc();
  if (m.weights_md != memory::desc(saved) || m.weights_md.get_size() != image.weight_bytes) return nullptr;
  m.weights = memory(m.weights_md, cpu_engine(), const_cast<void*>(image.weights));
  m.owner = std::move(owner);
  if (image.rows_readable && !m.compute_row_offsets()) return nullptr;
  return gemm;
}

bool PackedGemm::rows_readable() const { return !impl_->k_offsets.empty(); }

at::Tensor PackedGemm::rows(const at::Tensor& ids) const {
  const Impl& m = *impl_;
  if (m.k_offsets.empty()) throw Error("the packed weights of this GEMM cannot be read back as rows");
  const at::Tensor flat = ids.to(at::kLong).contiguous().view({-1});
  const int64_t count = flat.numel();
  const int64_t* id = flat.data_ptr<int64_t>();
  for (int64_t i = 0; i < count; ++i)
    if (id[i] < 0 || id[i] >= m.out)
      throw Error("token id " + std::to_string(id[i]) + " is outside the vocabulary (0.." + std::to_string(m.out - 1) +
                  ")");
  at::Tensor out = at::empty({count, m.in}, at::kFloat);
  float* target = out.data_ptr<float>();
  const int64_t* k_offsets = m.k_offsets.data();
  const void* packed = m.weights.get_data_handle();
  kernels::parallel_for(0, count, kernels::grain_for(m.in), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t base = m.n_offset(id[i]);
      float* row = target + i * m.in;
      switch (m.type) {
        case GemmType::kFloat32: {
          const float* w = static_cast<const float*>(packed) + base;
          for (int64_t k = 0; k < m.in; ++k) row[k] = w[k_offsets[k]];
          break;
        }
        case GemmType::kBFloat16: {
          const uint16_t* w = static_cast<const uint16_t*>(packed) + base;
          for (int64_t k = 0; k < m.in; ++k) {
            const uint32_t bits = static_cast<uint32_t>(w[k_offsets[k]]) << 16;
            std::memcpy(&row[k], &bits, sizeof(float));
          }
          break;
        }
        case GemmType::kInt8: {
          const int8_t* w = static_cast<const int8_t*>(packed) + base;
          const float scale = m.weight_scales[static_cast<size_t>(id[i])];
          for (int64_t k = 0; k < m.in; ++k) row[k] = static_cast<float>(w[k_offsets[k]]) * scale;
          break;
        }
      }
    }
  });
  auto sizes = ids.sizes().vec();
  sizes.push_back(m.in);
  return out.view(sizes);
}

// The panels small_gemm reads, when the layout is plain panels of 16-64 columns: for every k
// the panel's columns consecutive, panels a fixed stride apart (oneDNN's BA16a64b and kin).
kernels::PanelLayout PackedGemm::Impl::find_panels() const {
  if (type != GemmType::kFloat32 || k_offsets.empty() || n_offset(0) != 0) return {};
  int64_t width = 1;
  while (width < out && width <= 64 && n_offset(width) == width) ++width;
  if (width % 16 != 0 || width > 64) return {};
  const int64_t stride = width < out ? n_offset(width) : in * width;
  if (stride < in * width) return {};
  for (int64_t k = 0; k < in; ++k)
    if (k_offsets[static_cast<size_t>(k)] != k * width) return {};
  for (int64_t n = 0; n < out; ++n)
    if (n_offset(n) != n / width * stride + n % width) return {};
  const int64_t count = (out + width - 1) / width;
  if (static_cast<size_t>((count - 1) * stride + in * width) * sizeof(float) > weights_md.get_size()) return {};
  return {width, stride};
}

// The k chunking under which small_gemm gives the bits of oneDNN's kernel for `rows` rows of
// width k on this thread count (oneDNN's K blocking depends on the shape and the cache size:
// each chunk a chain of its own, the chunks' sums added): tried once per process and shape on
// random weights against oneDNN itself, the whole of k first. 0: none does (oneDNN runs).
int64_t PackedGemm::Impl::small_chunking(int64_t k, int64_t rows, std::optional<Activation> activation, bool bias) {
  static std::mutex mutex;
  static std::map<std::tuple<int64_t, int64_t, int, int, bool>, int64_t> known;
  const auto key =
      std::make_tuple(k, rows, at::get_num_threads(), activation ? static_cast<int>(*activation) : -1, bias);
  const auto known_chunk = [&key]() -> std::optional<int64_t> {
    std::lock_guard<std::mutex> lock(mutex);
    const auto found = known.find(key);
    return found != known.end() ? std::optional<int64_t>(found->second) : std::nullopt;
  };
  if (const auto chunk = known_chunk()) return *chunk;
  // One probe at a time in the process, and each key probed once: threads that decode their
  // first steps together (inter_threads workers, a server's batches) wait for the probe running
  // rather than build the same oneDNN primitives beside it. (Two threads creating one primitive
  // at once meet inside oneDNN's primitive cache, synchronized there in ways ThreadSanitizer
  // cannot see: a report from Cli.SpeedOptions.)
  static std::mutex probing_mutex;
  const std::lock_guard<std::mutex> probing_lock(probing_mutex);
  if (const auto chunk = known_chunk()) return *chunk;  // probed while this thread waited
  constexpr int64_t kProbeColumns = 512;
  uint32_t state = 2463534242u;
  const auto fill = [&state](at::Tensor t) { return probe_values(std::move(t), state); };
  const at::Tensor w = fill(at::empty({kProbeColumns, k}, at::kFloat));
  const at::Tensor b = bias ? fill(at::empty({kProbeColumns}, at::kFloat)) : at::Tensor();
  const at::Tensor x = fill(at::empty({rows, k}, at::kFloat));
  const PackedGemm probe(w, b, GemmType::kFloat32, activation);
  probe.impl_->probing = true;
  const kernels::PanelLayout layout = probe.impl_->find_panels();
  int64_t chosen = 0;
  if (layout.width > 0) {
    const at::Tensor expected = probe.forward(x);
    at::Tensor got = at::empty({rows, kProbeColumns}, at::kFloat);
    std::vector<int64_t> candidates = {k};
    for (int64_t d = 2; d <= 16; ++d) candidates.push_back(((k + d - 1) / d + 3) / 4 * 4);
    for (int64_t c = 256; c < k; c *= 2) candidates.push_back(c);
    probe.impl_->panels = layout;
    for (const int64_t c : candidates) {
      if (c <= 0 || c > k) continue;
      probe.impl_->small_rows(x.data_ptr<float>(), rows, c, got.data_ptr<float>());
      if (std::memcmp(got.data_ptr<float>(), expected.data_ptr<float>(), sizeof(float) * rows * kProbeColumns) == 0) {
        chosen = c;
        break;
      }
    }
  }
  std::lock_guard<std::mutex> lock(mutex);
  known[key] = chosen;
  return chosen;
}

int64_t PackedGemm::Impl::small_rows_chunk(int64_t rows) const {
  static const bool enabled = kernels::small_gemm_available() && small_gemm_wanted();
  if (!enabled || rows < 1 || rows > kernels::kSmallGemmMaxRows || type != GemmType::kFloat32 || probing) return 0;
  std::call_once(panels_found, [this] { panels = find_panels(); });
  return panels.width > 0 ? small_chunking(in, rows, activation, bias.defined()) : 0;
}

void PackedGemm::Impl::small_rows(const float* x, int64_t rows, int64_t chunk, float* y) const {
  const bool relu = activation == Activation::kRelu;
  kernels::small_gemm(x, rows, in, static_cast<const float*>(weights.get_data_handle()), panels, out, chunk,
                      bias.defined() ? bias.data_ptr<float>() : nullptr, relu, y);
  if (!activation || relu) return;
  // 8 x 4,096 values: less work than waking a thread for (kernels/parallel.h).
  const kernels::SerialScope serial(true);
  const memory data({{rows, out}, dt::f32, tag::ab}, cpu_engine(), y);
  dnnl::stream stream(cpu_engine());
  activation_kernel(rows)->execute(stream, {{DNNL_ARG_SRC, data}, {DNNL_ARG_DST, data}});
  stream.wait();
}

// The VNNI panels small_gemm_s8 reads, when the int8 layout is plain panels of 16-64 columns,
// 4 k per column in each group (oneDNN's BA16a64b4a and kin), with their column sums.
kernels::PanelLayoutS8 PackedGemm::Impl::find_s8_panels() const {
  if (type != GemmType::kInt8 || k_offsets.empty() || in % 4 != 0 || n_offset(0) != 0 ||
      !kernels::small_gemm_s8_available())
    return {};
  int64_t width = 1;
  while (width < out && width <= 64 && n_offset(width) == 4 * width) ++width;
  if (width % 16 != 0 || width > 64) return {};
  const int64_t stride = width < out ? n_offset(width) : in * width;
  if (stride < in * width) return {};
  for (int64_t k = 0; k < in; ++k)
    if (k_offsets[static_cast<size_t>(k)] != k / 4 * 4 * width + k % 4) return {};
  for (int64_t n = 0; n < out; ++n)
    if (n_offset(n) != n / width * stride + n % width * 4) return {};
  const int64_t count = (out + width - 1) / width;
  if (static_cast<size_t>((count - 1) * stride + in * width) > weights_md.get_size()) return {};
  column_sums = int8_column_sums(false);
  return {width, stride};
}

std::vector<int32_t> PackedGemm::Impl::int8_column_sums(bool absolute) const {
  const auto* packed = static_cast<const int8_t*>(weights.get_data_handle());
  std::vector<int32_t> sums(static_cast<size_t>(out), 0);
  for (int64_t n = 0; n < out; ++n) {
    const int8_t* column = packed + n_offset(n);
    int32_t sum = 0;
    for (int64_t k = 0; k < in; ++k) {
      const int32_t q = column[k_offsets[static_cast<size_t>(k)]];
      sum += absolute ? std::abs(q) : q;
    }
    sums[static_cast<size_t>(n)] = sum;
  }
  return sums;
}

void PackedGemm::Impl::s8_small_rows(const int8_t* x, int64_t rows, const float* row_scales, float* y) const {
  kernels::small_gemm_s8(x, rows, in, static_cast<const int8_t*>(weights.get_data_handle()), s8_panels, out,
                         column_sums.data(), weight_scales.data(), row_scales,
                         bias.defined() ? bias.data_ptr<float>() : nullptr, activation == Activation::kRelu, y);
}

// Whether `rows` int8 rows run on small_gemm_s8: its layout here, and, once per process, its
// results equal oneDNN's followed by ordo's rescaling, bit for bit, on random weights (with a
// bias and relu, every step of the epilogue) for 3 and 7 rows (the kernel's two paths).
bool PackedGemm::Impl::s8_rows(int64_t rows) const {
  static const bool enabled = kernels::small_gemm_s8_available() && small_gemm_wanted();
  if (!enabled || rows < 1 || rows > kernels::kSmallGemmS8MaxRows || type != GemmType::kInt8 || probing) return false;
  static const bool same_as_onednn = [] {
    constexpr int64_t kIn = 256, kOut = 200;
    uint32_t state = 88172645u;
    const auto fill = [&state](at::Tensor t) { return probe_values(std::move(t), state); };
    const at::Tensor w = fill(at::empty({kOut, kIn}, at::kFloat));
    const at::Tensor b = fill(at::empty({kOut}, at::kFloat));
    const PackedGemm probe(w, b, GemmType::kInt8, Activation::kRelu);
    Impl& p = *probe.impl_;
    p.s8_panels = p.find_s8_panels();
    if (p.s8_panels.width == 0) return false;
    for (const int64_t probe_rows : {3, 7}) {
      const at::Tensor x = fill(at::empty({probe_rows, kIn}, at::kFloat));
      p.probing = true;
      const at::Tensor expected = probe.forward(x);
      p.probing = false;
      at::Tensor scales = at::empty({probe_rows}, at::kFloat);
      const at::Tensor q = kernels::quantize_rows(x, scales);
      at::Tensor got = at::empty({probe_rows, kOut}, at::kFloat);
      p.s8_small_rows(q.data_ptr<int8_t>(), probe_rows, scales.data_ptr<float>(), got.data_ptr<float>());
      if (std::memcmp(got.data_ptr<float>(), expected.data_ptr<float>(), sizeof(float) * probe_rows * kOut) != 0)
        return false;
    }
    return true;
  }();
  if (!same_as_onednn) return false;
  std::call_once(s8_found, [this] { s8_panels = find_s8_panels(); });
  return s8_panels.width > 0;
}

const PackedGemm::Impl::Screen* PackedGemm::Impl::screen_for_bounds(const PackedGemm& self) const {
  std::call_once(screen_made, [this, &self] {
    if (type != GemmType::kFloat32 || k_offsets.empty() || activation || !kernels::small_gemm_s8_available() ||
        !gemm_type_supported(GemmType::kInt8))
      return;
    // W's rows read back out of the packed float32 copy.
    const RowSource rows = [&self](int64_t begin, int64_t count) {
      return self.rows(at::arange(begin, begin + count, at::kLong));
    };
    auto made = std::make_unique<Screen>();
    made->gemm.reset(new PackedGemm(rows, out, in, bias.defined() ? bias.view({out}) : at::Tensor(), GemmType::kInt8,
                                    std::nullopt, at::Tensor()));
    const Impl& q = *made->gemm->impl_;
    if (q.k_offsets.empty()) return;
    const std::vector<int32_t> abs_sums = q.int8_column_sums(true);
    // The norms from the int8 bytes as packed and W's rows read back (in double: exact
    // products, sums far below a float's rounding), taken a little larger.
    std::vector<double> q_norms(static_cast<size_t>(out)), error_norms(static_cast<size_t>(out));
    const auto* packed = static_cast<const int8_t*>(q.weights.get_data_handle());
    constexpr int64_t kBatch = 256;
    for (int64_t begin = 0; begin < out; begin += kBatch) {
      const int64_t count = std::min(kBatch, out - begin);
      const at::Tensor w = rows(begin, count).to(at::kFloat).contiguous();
      const float* wr = w.data_ptr<float>();
      for (int64_t n = begin; n < begin + count; ++n) {
        const int8_t* column = packed + q.n_offset(n);
        const double scale = q.weight_scales[static_cast<size_t>(n)];
        double q2 = 0, e2 = 0;
        for (int64_t k = 0; k < in; ++k) {
          const double v = column[q.k_offsets[static_cast<size_t>(k)]];
          const double e = static_cast<double>(wr[(n - begin) * in + k]) - scale * v;
          q2 += v * v;
          e2 += e * e;
        }
        q_norms[static_cast<size_t>(n)] = std::sqrt(q2) * (1 + 1e-12);
        error_norms[static_cast<size_t>(n)] = std::sqrt(e2) * (1 + 1e-9);
      }
    }
    constexpr double u = 0x1p-24;
    const double g = (in + 1) * u / (1 - (in + 1) * u);
    const auto up = [](double value) { return static_cast<float>(value * (1 + 0x1p-20)); };
    const float* bias_values = bias.defined() ? bias.data_ptr<float>() : nullptr;
    for (int64_t n = 0; n < out; ++n) {
      const size_t c = static_cast<size_t>(n);
      const double scale = q.weight_scales[c];
      made->x_holder.push_back(up(0.5001 * scale));
      made->x_cs.push_back(up(error_norms[c]));
      made->q_holder.push_back(up(0.5001 * scale * abs_sums[c]));
      made->q_cs.push_back(up(scale * q_norms[c]));
      made->sum_rounding.push_back(up(scale * 127 * (1 + 2 * u)));
      made->fixed.push_back(up((g + 8 * u) * (bias_values ? std::fabs(static_cast<double>(bias_values[n])) : 0.0)));
    }
    screen = std::move(made);
  });
  return screen.get();
}

// The bound: with x = s_x q + d and w_n = s_n q_n + e_n (per-row and per-column int8 rounding,
// |d| <= s_x / 2, |e_n| <= s_n / 2), x . w_n - s_x s_n (q . q_n) = x . e_n + s_n (q_n . d), so
// |x . w_n - A_n| <= min(s_n |x|_1 / 2, |x|_2 |e_n|_2) + s_n min(s_x |q_n|_1 / 2, |d|_2 |q_n|_2)
// (Hölder's and Cauchy-Schwarz's, whichever is smaller; d from quantize_rows, the screen's own
// quantizer), plus the float rounding of A_n (a few ulps of |A_n| + |b_n|) and of forward()'s
// own sum, |L - x . w_n - b_n| <= g (|x| . |w_n| + |b_n|), g = (K + 1) u / (1 - (K + 1) u),
// |x| . |w_n| <= |x|_1 127 s_n (1 + u). Each term is taken a little larger (0.5001 for 1/2: the
// roundings of the quantizers' own divisions), the sum widened by 1 % and rounded up.
PackedGemm::Bounded PackedGemm::forward_bounded(const at::Tensor& x) const {
  const Impl& m = *impl_;
  const int64_t rows = x.numel() / std::max<int64_t>(1, m.in);
  // The exact columns go through the small-rows kernel, kSmallGemmMaxRows rows at a time.
  const int64_t block = std::min(rows, kernels::kSmallGemmMaxRows), last_block = rows % block;
  const bool small = x.size(-1) == m.in && rows > 0 && m.small_rows_chunk(block) > 0 &&
                     (last_block == 0 || m.small_rows_chunk(last_block) > 0);
  const Impl::Screen* screen = small && !m.activation ? m.screen_for_bounds(*this) : nullptr;
  if (!screen) return {forward(x), at::Tensor()};
  auto out_sizes = x.sizes().vec();
  out_sizes.back() = m.out;
  const at::Tensor input = x.reshape({rows, m.in}).to(at::kFloat).contiguous();
  const at::Tensor approx = screen->gemm->forward(input);
  at::Tensor values = at::empty({rows, m.out}, at::kFloat);
  at::Tensor exact = at::zeros({rows, m.out}, at::kBool);
  const float* xs = input.data_ptr<float>();
  const float* a = approx.data_ptr<float>();
  float* v = values.data_ptr<float>();
  const float* b = m.bias.defined() ? m.bias.data_ptr<float>() : nullptr;
  constexpr double u = 0x1p-24;
  const double g = (m.in + 1) * u / (1 - (m.in + 1) * u);
  const int64_t groups = (m.out + 15) / 16;
  std::vector<char> wanted(static_cast<size_t>(rows * groups), 0);  // per row, groups of 16 columns
  at::Tensor x_scales = at::empty({rows}, at::kFloat);
  const at::Tensor x_q = kernels::quantize_rows(input, x_scales);
  kernels::ScreenColumns columns;
  columns.x_holder = screen->x_holder.data();
  columns.x_cs = screen->x_cs.data();
  columns.q_holder = screen->q_holder.data();
  columns.q_cs = screen->q_cs.data();
  columns.sum_rounding = screen->sum_rounding.data();
  columns.fixed = screen->fixed.data();
  std::atomic<bool> finite{true};
  kernels::parallel_for(0, rows, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      double l1 = 0, largest = 0, x2 = 0, d2 = 0;
      const double x_scale = x_scales.data_ptr<float>()[r];
      const int8_t* qr = x_q.data_ptr<int8_t>() + r * m.in;
      for (int64_t k = 0; k < m.in; ++k) {
        const double value = xs[r * m.in + k];
        const double magnitude = std::fabs(value), d = value - x_scale * qr[k];
        l1 += magnitude;
        largest = std::max(largest, magnitude);
        x2 += value * value;
        d2 += d * d;
      }
      const auto up = [](double value) { return static_cast<float>(value * (1 + 0x1p-20)); };
      const kernels::ScreenRow bounds{up(l1), up(std::sqrt(x2)), up(std::max(largest, 1e-12) / 127), up(std::sqrt(d2)),
                                      up(g * l1)};
      const bool ok =
          std::isfinite(l1) && std::isfinite(x2) && l1 < 1e30 &&
          kernels::screen_bounds(a + r * m.out, m.out, columns, bounds, v + r * m.out, wanted.data() + r * groups);
      if (!ok) finite = false;
    }
  });
  if (!finite) return {forward(x), at::Tensor()};
  // The groups of 16 columns holding a candidate of any row of a block: forward()'s own kernel,
  // on only their lines of the panels (each column's arithmetic does not depend on the others).
  const auto* panels = static_cast<const float*>(m.weights.get_data_handle());
  bool* e = exact.data_ptr<bool>();
  for (int64_t r0 = 0; r0 < rows; r0 += block) {
    const int64_t count = std::min(block, rows - r0);
    std::vector<int64_t> chosen;
    for (int64_t group = 0; group < groups; ++group)
      for (int64_t r = r0; r < r0 + count; ++r)
        if (wanted[static_cast<size_t>(r * groups + group)]) {
          chosen.push_back(group);
          break;
        }
    kernels::small_gemm_groups(xs + r0 * m.in, count, m.in, panels, m.panels, m.out, m.small_rows_chunk(count), b,
                               v + r0 * m.out, chosen.data(), static_cast<int64_t>(chosen.size()));
    for (const int64_t group : chosen) {
      const int64_t first = 16 * group, columns = std::min<int64_t>(16, m.out - first);
      for (int64_t r = r0; r < r0 + count; ++r) std::fill_n(e + r * m.out + first, columns, true);
    }
  }
  return {values.view(out_sizes), exact.view(out_sizes)};
}

bool PackedGemm::small_rows_kernel(int64_t rows) const {
  return impl_->small_rows_chunk(rows) > 0 || impl_->s8_rows(rows);
}

PackedGemm::~PackedGemm() = default;

int64_t PackedGemm::in_features() const { return impl_->in; }
size_t PackedGemm::cached_kernels() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->kernels.size();
}
int64_t PackedGemm::out_features() const { return impl_->out; }
GemmType PackedGemm::type() const { return impl_->type; }

at::Tensor PackedGemm::forward(const at::Tensor& x) const {
  const Impl& m = *impl_;
  if (x.size(-1) != m.in)
    throw Error("GEMM input has " + std::to_string(x.size(-1)) + " features, the weight " + std::to_string(m.in));
  auto out_sizes = x.sizes().vec();
  out_sizes.back() = m.out;
  const int64_t rows = x.numel() / m.in;
  if (rows == 0) return at::empty(out_sizes, x.options().dtype(at::kFloat));

  // A decoding step's few rows: kernels/small_gemm.h, with oneDNN's bits.
  if (const int64_t chunk = m.small_rows_chunk(rows); chunk > 0) {
    const at::Tensor input = x.reshape({rows, m.in}).to(at::kFloat).contiguous();
    at::Tensor output = at::empty({rows, m.out}, x.options().dtype(at::kFloat));
    m.small_rows(input.data_ptr<float>(), rows, chunk, output.data_ptr<float>());
    return output.view(out_sizes);
  }

  // oneDNN's float32 kernel for 1-3 rows streams the weights slower than its kernel for 4 (seen
  // with ONEDNN_VERBOSE on tc-big shapes), and a row's result does not depend on the row count
  // (docs/reliability.md, "Batch invariance"): so fewer rows run as 4, zero-padded.
  // (bfloat16 and int8 are faster unpadded.)
  constexpr int64_t kMinRows = 4;
  if (rows < kMinRows && m.type == GemmType::kFloat32) {
    at::Tensor padded = at::zeros({kMinRows, m.in}, x.options());
    padded.narrow(0, 0, rows).copy_(x.reshape({rows, m.in}));
    return forward(padded).narrow(0, 0, rows).reshape(out_sizes);
  }
  // int8, 1-16 rows: quantized, then one pass of kernels/small_gemm.h's VNNI kernel.
  if (m.s8_rows(rows)) {
    at::Tensor scales = at::empty({rows}, at::kFloat);
    const at::Tensor q = kernels::quantize_rows(x.reshape({rows, m.in}).to(at::kFloat).contiguous(), scales);
    at::Tensor output = at::empty({rows, m.out}, x.options().dtype(at::kFloat));
    m.s8_small_rows(q.data_ptr<int8_t>(), rows, scales.data_ptr<float>(), output.data_ptr<float>());
    if (m.activation && m.activation != Activation::kRelu) output = apply(*m.activation, output);
    return output.view(out_sizes);
  }

  at::Tensor input = x.reshape({rows, m.in});
  at::Tensor row_scales;
  switch (m.type) {
    case GemmType::kFloat32: input = input.to(at::kFloat).contiguous(); break;
    case GemmType::kBFloat16: input = input.to(at::kBFloat16).contiguous(); break;
    case GemmType::kInt8: {
      row_scales = at::empty({rows}, at::kFloat);
      input = kernels::quantize_rows(input.to(at::kFloat).contiguous(), row_scales);
      break;
    }
  }
  at::Tensor output = at::empty({rows, m.out}, x.options().dtype(at::kFloat));

  const std::shared_ptr<const Impl::Kernel> kernel = m.kernel(rows);
  const dnnl::engine& engine = cpu_engine();
  memory src({{rows, m.in}, source_type(m.type), tag::ab}, engine, input.data_ptr());
  memory dst({{rows, m.out}, dt::f32, tag::ab}, engine, output.data_ptr());
  std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, m.weights}, {DNNL_ARG_DST, dst}};
  if (m.fused_epilogue() && m.bias.defined())
    args.emplace(DNNL_ARG_BIAS, memory({{1, m.out}, dt::f32, tag::ab}, engine, m.bias.data_ptr()));
  at::Tensor scratchpad;
  if (kernel->scratchpad_bytes > 0) {
    scratchpad = at::empty({static_cast<int64_t>(kernel->scratchpad_bytes)}, at::kByte);
    args.emplace(DNNL_ARG_SCRATCHPAD, memory({{static_cast<int64_t>(kernel->scratchpad_bytes)}, dt::u8, tag::a}, engine,
                                             scratchpad.data_ptr()));
  }
  dnnl::stream stream(engine);
  kernel->primitive.execute(stream, args);
  stream.wait();

  if (m.type == GemmType::kInt8) {
    const bool relu = m.activation == Activation::kRelu;  // applied in the same pass
    rescale_rows(output, row_scales, m.bias, relu);
    if (m.activation && !relu) output = apply(*m.activation, output);
  }
  return output.view(out_sizes);
}

}  // namespace ordo::nn
