#include "nn/attention.h"

#include <sys/mman.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "kernels/attention_kernel.h"
#include "kernels/parallel.h"
#include "ordo/error.h"

namespace ordo::nn {

MultiHeadAttention::MultiHeadAttention(int64_t dim, int64_t heads, int64_t head_dim_, bool bias, bool scaled_)
    : num_heads(heads), head_dim(head_dim_ > 0 ? head_dim_ : (heads > 0 ? dim / heads : 0)), scaled(scaled_) {
  if (heads <= 0 || (head_dim_ <= 0 && dim % heads != 0))
    throw Error("d_model " + std::to_string(dim) + " is not divisible by the number of heads " + std::to_string(heads));
  const int64_t inner = heads * head_dim;
  q_proj = Linear(dim, inner, bias);
  k_proj = Linear(dim, inner, bias);
  v_proj = Linear(dim, inner, bias);
  out_proj = Linear(inner, dim, bias);
}

double MultiHeadAttention::scaling() const { return scaled ? 1.0 / std::sqrt(static_cast<double>(head_dim)) : 1.0; }

namespace {

// Cache buffers of 1 MB or more are mappings of their own: from malloc's heap (configure_process
// keeps large buffers there), each doubling would leave the smaller buffers behind as resident
// holes that the larger ones never fit, raising the peak of long batches. A freed mapping is
// kept for the next buffer it can hold (the smallest kept one that can): a fresh mapping faults
// in every page it is written to (about 11 us a page on a virtual machine), and every batch
// asks for buffers of the sizes the last one did. The mappings live and kept stay within the
// most that were ever live at once (the smallest kept ones are returned first), so what the
// pool holds between batches is the cache's peak, as malloc's heap holds its own
// (pipeline/heap.h). A batch's first, smaller buffers take larger kept mappings; within two
// batches of one shape the kept mappings serve every buffer, at one buffer more than the peak
// without the pool (32 sentences, beam 4: 224 MB against 208).
class Mappings {
 public:
  // A mapping of at least `bytes` (a kept one or a fresh one) and its length; nullptr when the
  // system has none to give.
  std::pair<void*, size_t> take(size_t bytes) {
    std::vector<std::pair<size_t, void*>> dropped;
    std::pair<void*, size_t> out{nullptr, 0};
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const auto kept = kept_.lower_bound(bytes);
      if (kept != kept_.end()) {
        out = {kept->second, kept->first};
        kept_bytes_ -= kept->first;
        kept_.erase(kept);
      } else {
        void* pages = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (pages == MAP_FAILED) return out;
        out = {pages, bytes};
      }
      live_ += out.second;
      most_live_ = std::max(most_live_, live_);
      while (live_ + kept_bytes_ > most_live_) {  // after a fresh mapping
        dropped.emplace_back(*kept_.begin());
        kept_bytes_ -= kept_.begin()->first;
        kept_.erase(kept_.begin());
      }
    }
    for (const auto& [length, pages] : dropped) ::munmap(pages, length);
    return out;
  }

  void give(void* pages, size_t length) {
    std::lock_guard<std::mutex> lock(mutex_);
    live_ -= length;
    kept_.emplace(length, pages);
    kept_bytes_ += length;
  }

  // Unmaps every kept mapping and forgets the peak (the next batches learn it again).
  size_t release() {
    std::multimap<size_t, void*> dropped;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      dropped.swap(kept_);
      kept_bytes_ = 0;
      most_live_ = live_;
    }
    size_t bytes = 0;
    for (const auto& [length, pages] : dropped) {
      ::munmap(pages, length);
      bytes += length;
    }
    return bytes;
  }

 private:
  std::mutex mutex_;
  std::multimap<size_t, void*> kept_;  // by length
  size_t kept_bytes_ = 0, live_ = 0, most_live_ = 0;
};

Mappings& cache_mappings() {
  static auto* mappings = new Mappings;  // never destroyed: buffers may outlive static destruction
  return *mappings;
}

at::Tensor cache_buffer(at::IntArrayRef sizes, const at::TensorOptions& options) {
  int64_t count = 1;
  for (const int64_t size : sizes) count *= size;
  const size_t bytes = static_cast<size_t>(count) * options.dtype().itemsize();
  if (bytes < (size_t{1} << 20)) return at::empty(sizes, options);
  const auto [pages, length] = cache_mappings().take(bytes);
  if (pages == nullptr) return at::empty(sizes, options);
  return at::from_blob(
      pages, sizes, [length = length](void* p) { cache_mappings().give(p, length); }, options);
}

}  // namespace

size_t release_kept_cache_mappings() { return cache_mappings().release(); }

KeyValue KeyValue::gather(const int64_t* source, int64_t count, int64_t capacity) const {
  const int64_t used = length();
  auto sizes = key_buffer.sizes().vec();
  sizes[0] = count;
  sizes[2] = capacity;
  KeyValue out;
  out.key_buffer = cache_buffer(sizes, key_buffer.options());
  out.value_buffer = cache_buffer(sizes, value_buffer.options());
  out.key = out.key_buffer.narrow(2, 0, used);
  out.value = out.value_buffer.narrow(2, 0, used);
  if (count == 0 || used == 0) return out;
  const int64_t heads = key_buffer.size(1), head_dim = key_buffer.size(3);
  const int32_t* from = origin.defined() ? origin.data_ptr<int32_t>() : nullptr;
  const int64_t from_row = origin.defined() ? origin.stride(0) : 0;
  const at::Tensor* inputs[2] = {&key_buffer, &value_buffer};
  const at::Tensor* outputs[2] = {&out.key_buffer, &out.value_buffer};
  // A unit is one row of keys or of values; positions that come from the same row are copied
  // as one run per head.
  kernels::parallel_for(0, 2 * count, kernels::grain_for(heads * used * head_dim), [&](int64_t begin, int64_t end) {
    for (int64_t unit = begin; unit < end; ++unit) {
      const at::Tensor& in = *inputs[unit / count];
      const at::Tensor& to = *outputs[unit / count];
      const int64_t i = unit % count, row = source[i], bytes = in.element_size();
      const char* in_data = static_cast<const char*>(in.data_ptr());
      char* to_data = static_cast<char*>(to.data_ptr()) + i * to.stride(0) * bytes;
      for (int64_t s = 0; s < used;) {
        const int64_t at_row = from ? from[row * from_row + s] : row;
        int64_t e = s + 1;
        while (e < used && (from ? from[row * from_row + e] : row) == at_row) ++e;
        for (int64_t h = 0; h < heads; ++h)
          std::memcpy(to_data + (h * to.stride(1) + s * to.stride(2)) * bytes,
                      in_data + (at_row * in.stride(0) + h * in.stride(1) + s * in.stride(2)) * bytes,
                      (e - s) * head_dim * bytes);
        s = e;
      }
    }
  });
  return out;
}

KeyValue KeyValue::select(const at::Tensor& indices) const {
  if (!key_buffer.defined()) {
    // Keys stored by dimension (the encoder memory, keys_by_dimension) keep that layout.
    const at::Tensor keys = kernels::is_by_dimension(key) ? kernels::keys_by_dimension(key.index_select(0, indices))
                                                          : key.index_select(0, indices);
    return {keys, value.index_select(0, indices), {}, {}, {}};
  }
  const at::Tensor index = indices.to(at::kLong).contiguous();
  const int64_t count = index.size(0), rows = key_buffer.size(0);
  const int64_t* source = index.data_ptr<int64_t>();
  for (int64_t i = 0; i < count; ++i)
    if (source[i] < 0 || source[i] >= rows)
      throw Error("cache row " + std::to_string(source[i]) + " does not exist (" + std::to_string(rows) + " rows)");
  return gather(source, count, key_buffer.size(2));
}

void KeyValue::reorder(const at::Tensor& indices) {
  const int64_t rows = key.size(0);
  if (!key_buffer.defined() || indices.size(0) != rows) {
    *this = select(indices);
    return;
  }
  const at::Tensor index = indices.to(at::kLong).contiguous();
  const int64_t* source = index.data_ptr<int64_t>();
  bool moved = false;
  for (int64_t row = 0; row < rows; ++row)
    if (source[row] < 0 || source[row] >= rows)
      throw Error("cache row " + std::to_string(source[row]) + " does not exist (" + std::to_string(rows) + " rows)");
    else
      moved = moved || source[row] != row;
  if (!moved) return;
  // Each row takes its parent's row numbers; the keys and values stay where they were written.
  const int64_t capacity = key_buffer.size(2), used = length();
  if (!origin.defined()) origin = at::arange(rows, at::kInt).unsqueeze(1).expand({rows, capacity}).contiguous();
  at::Tensor next = at::empty({rows, capacity}, at::kInt);
  const int32_t* from = origin.data_ptr<int32_t>();
  int32_t* to = next.data_ptr<int32_t>();
  for (int64_t row = 0; row < rows; ++row)
    std::memcpy(to + row * capacity, from + source[row] * capacity, used * sizeof(int32_t));
  origin = next;
}

void KeyValue::append(const KeyValue& fresh) {
  const int64_t used = length(), added = fresh.key.size(2);
  if (!key_buffer.defined() || used + added > key_buffer.size(2)) {
    const int64_t capacity = std::max<int64_t>({16, 2 * used, used + added});
    if (key_buffer.defined()) {
      // Growing: each row's positions are copied into a row of its own (the origin is spent).
      std::vector<int64_t> rows(static_cast<size_t>(key_buffer.size(0)));
      for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<int64_t>(i);
      *this = gather(rows.data(), static_cast<int64_t>(rows.size()), capacity);
    } else {
      auto sizes = fresh.key.sizes().vec();
      sizes[2] = capacity;
      key_buffer = cache_buffer(sizes, fresh.key.options());
      value_buffer = cache_buffer(sizes, fresh.value.options());
    }
  }
  key_buffer.narrow(2, used, added).copy_(fresh.key);
  value_buffer.narrow(2, used, added).copy_(fresh.value);
  key = key_buffer.narrow(2, 0, used + added);
  value = value_buffer.narrow(2, 0, used + added);
  if (origin.defined()) {  // the new positions are the rows' own
    int32_t* rows = origin.data_ptr<int32_t>();
    for (int64_t row = 0; row < origin.size(0); ++row)
      std::fill(rows + row * origin.stride(0) + used, rows + row * origin.stride(0) + used + added,
                static_cast<int32_t>(row));
  }
}

at::Tensor MultiHeadAttention::split_heads(const at::Tensor& x) const {
  return x.view({x.size(0), x.size(1), num_heads, head_dim}).transpose(1, 2);
}

at::Tensor MultiHeadAttention::part(const at::Tensor& fused, int64_t index) const {
  const int64_t dim = num_heads * head_dim;
  return fused.narrow(-1, index * dim, dim);
}

KeyValue MultiHeadAttention::project_key_value(const at::Tensor& x) const {
  // Keys by dimension: the layout forward() reads in place (ScoreOrder::kKeyChain).
  if (kv_proj.packed) {
    const at::Tensor kv = kv_proj.forward(x);
    return {kernels::keys_by_dimension(split_heads(part(kv, 0))), split_heads(part(kv, 1)).contiguous(), {}, {}, {}};
  }
  return {kernels::keys_by_dimension(split_heads(k_proj.forward(x))),
          split_heads(v_proj.forward(x)).contiguous(),
          {},
          {},
          {}};
}

at::Tensor MultiHeadAttention::forward(const at::Tensor& x, const KeyValue& kv, const at::Tensor& additive_mask) const {
  return attend(q_proj.forward(x), kv, additive_mask, kernels::ScoreOrder::kKeyChain);
}

at::Tensor MultiHeadAttention::forward_self(const at::Tensor& x, const at::Tensor& additive_mask,
                                            const at::Tensor& position_bias) const {
  if (!qkv_proj.packed)
    return attend(q_proj.forward(x), project_key_value(x), additive_mask, kernels::ScoreOrder::kKeyChain,
                  position_bias);
  const at::Tensor qkv = qkv_proj.forward(x);
  // Views into the fused projection (the keys are transposed once, for all the queries).
  const KeyValue kv{split_heads(part(qkv, 1)), split_heads(part(qkv, 2)), {}, {}, {}};
  return attend(part(qkv, 0), kv, additive_mask, kernels::ScoreOrder::kKeyChain, position_bias);
}

std::array<at::Tensor, 3> MultiHeadAttention::project_qkv(const at::Tensor& x) const {
  if (!qkv_proj.packed) return {q_proj.forward(x), k_proj.forward(x), v_proj.forward(x)};
  const at::Tensor qkv = qkv_proj.forward(x);
  return {part(qkv, 0), part(qkv, 1), part(qkv, 2)};
}

void MultiHeadAttention::pack(GemmType type, bool self_attention) {
  if (self_attention) {
    qkv_proj = fuse_and_pack({&q_proj, &k_proj, &v_proj}, type);
  } else {
    q_proj.pack(type);
    kv_proj = fuse_and_pack({&k_proj, &v_proj}, type);
  }
  out_proj.pack(type);
}

at::Tensor MultiHeadAttention::attend(const at::Tensor& projected_q, const KeyValue& kv,
                                      const at::Tensor& additive_mask, kernels::ScoreOrder order,
                                      const at::Tensor& position_bias) const {
  const int64_t batch = projected_q.size(0), q_len = projected_q.size(1);
  const double scaling = this->scaling();
  // Inference: the kernel whose rows do not depend on the batch (attention_kernel.h). The
  // LibTorch route below stays for autograd (the trainer).
  const bool needs_grad =
      at::GradMode::is_enabled() && (projected_q.requires_grad() || kv.key.requires_grad() || kv.value.requires_grad());
  if (!needs_grad)
    return out_proj.forward(kernels::fixed_order_attention(projected_q, kv.key, kv.value, additive_mask, num_heads,
                                                           static_cast<float>(scaling), order, position_bias,
                                                           kv.origin));
  if (kv.origin.defined()) throw Error("attention with gradients over a reordered cache");
  const at::Tensor q = split_heads(scaled ? projected_q * scaling : projected_q);
  at::Tensor scores = at::matmul(q, kv.key.transpose(2, 3));  // [b, h, q, k]
  if (position_bias.defined()) scores = scores + position_bias;
  if (additive_mask.defined()) scores = scores + additive_mask;
  const at::Tensor probs = at::softmax(scores, -1);
  const at::Tensor context = at::matmul(probs, kv.value)  // [b, h, q, head_dim]
                                 .transpose(1, 2)
                                 .reshape({batch, q_len, num_heads * head_dim});
  return out_proj.forward(context);
}

at::Tensor MultiHeadAttention::forward_cached(const at::Tensor& x, KeyValue& cache,
                                              const at::Tensor& additive_mask) const {
  // The cache keeps one key per row (appending a position writes one row): kDimensionTree.
  if (!qkv_proj.packed) {
    cache.append(project_key_value(x));
    return attend(q_proj.forward(x), cache, additive_mask, kernels::ScoreOrder::kDimensionTree);
  }
  const at::Tensor qkv = qkv_proj.forward(x);
  cache.append({split_heads(part(qkv, 1)), split_heads(part(qkv, 2)), {}, {}, {}});
  return attend(part(qkv, 0), cache, additive_mask, kernels::ScoreOrder::kDimensionTree);
}

void MultiHeadAttention::visit_linears(const std::string& prefix, const LinearVisitor& visitor) {
  visitor(join_name(prefix, "q_proj"), q_proj);
  visitor(join_name(prefix, "k_proj"), k_proj);
  visitor(join_name(prefix, "v_proj"), v_proj);
  visitor(join_name(prefix, "out_proj"), out_proj);
  visitor(join_name(prefix, "qkv_proj"), qkv_proj);
  visitor(join_name(prefix, "kv_proj"), kv_proj);
}

void MultiHeadAttention::visit(const std::string& prefix, const ParamVisitor& visitor) {
  q_proj.visit(join_name(prefix, "q_proj"), visitor);
  k_proj.visit(join_name(prefix, "k_proj"), visitor);
  v_proj.visit(join_name(prefix, "v_proj"), visitor);
  out_proj.visit(join_name(prefix, "out_proj"), visitor);
}

at::Tensor MultiHeadAttention::weights(const at::Tensor& x, const KeyValue& kv, const at::Tensor& additive_mask) const {
  const at::Tensor q = q_proj.forward(x);
  at::Tensor scores = at::matmul(split_heads(scaled ? q * scaling() : q), kv.key.transpose(2, 3));
  if (additive_mask.defined()) scores = scores + additive_mask;
  return at::softmax(scores, -1);
}

at::Tensor padding_mask(const at::Tensor& attention_mask) {
  const float lowest = std::numeric_limits<float>::lowest();
  const at::Tensor blocked = attention_mask.eq(0).to(at::kFloat) * lowest;
  return blocked.unsqueeze(1).unsqueeze(1);
}

at::Tensor causal_mask(int64_t q_len, int64_t past_len) {
  if (q_len == 1) return {};
  const float lowest = std::numeric_limits<float>::lowest();
  // Query i (absolute position past_len + i) may see keys 0 .. past_len + i.
  const at::Tensor keys = at::arange(past_len + q_len, at::kLong).unsqueeze(0);
  const at::Tensor queries = at::arange(q_len, at::kLong).unsqueeze(1) + past_len;
  return keys.gt(queries).to(at::kFloat).mul(lowest).unsqueeze(0).unsqueeze(0);
}

}  // namespace ordo::nn
