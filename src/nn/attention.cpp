#include "nn/attention.h"

#include <sys/mman.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kernels/attention_kernel.h"
#include "kernels/parallel.h"
#include "ordo/error.h"

namespace ordo::nn {

MultiHeadAttention::MultiHeadAttention(int64_t dim, int64_t heads, int64_t head_dim_, bool bias, bool scaled_)
    : num_heads(heads), head_dim(head_dim_ > 0 ? head_dim_ : (heads > 0 ? dim / heads : 0)), scaled(scaled_) {
  if (heads <= 0 || (head_dim_ <= 0 && dim % heads != 0))
    throw Error("d_model " + std::to_string(dim) + " is not divisible by the number of heads " +
                std::to_string(heads));
  const int64_t inner = heads * head_dim;
  q_proj = Linear(dim, inner, bias);
  k_proj = Linear(dim, inner, bias);
  v_proj = Linear(dim, inner, bias);
  out_proj = Linear(inner, dim, bias);
}

double MultiHeadAttention::scaling() const { return scaled ? 1.0 / std::sqrt(static_cast<double>(head_dim)) : 1.0; }

KeyValue KeyValue::select(const at::Tensor& indices) const {
  if (!key_buffer.defined()) {
    // Keys stored by dimension (the encoder memory, keys_by_dimension) keep that layout.
    const at::Tensor keys =
        is_by_dimension(key) ? keys_by_dimension(key.index_select(0, indices)) : key.index_select(0, indices);
    return {keys, value.index_select(0, indices), {}, {}};
  }
  KeyValue out;
  out.key_buffer = key_buffer.index_select(0, indices);
  out.value_buffer = value_buffer.index_select(0, indices);
  out.key = out.key_buffer.narrow(2, 0, length());
  out.value = out.value_buffer.narrow(2, 0, length());
  return out;
}

void KeyValue::reorder(const at::Tensor& indices) {
  const int64_t rows = key.size(0);
  if (!key_buffer.defined() || indices.size(0) != rows || !key_buffer.is_contiguous() ||
      !value_buffer.is_contiguous() || value_buffer.sizes() != key_buffer.sizes() ||
      value_buffer.scalar_type() != key_buffer.scalar_type()) {
    *this = select(indices);
    return;
  }
  const at::Tensor index = indices.to(at::kLong).contiguous();
  const int64_t* source = index.data_ptr<int64_t>();
  std::vector<int64_t> from, to;
  for (int64_t row = 0; row < rows; ++row)
    if (source[row] < 0 || source[row] >= rows)
      throw Error("cache row " + std::to_string(source[row]) + " does not exist (" + std::to_string(rows) + " rows)");
    else if (source[row] != row) {
      from.push_back(source[row]);
      to.push_back(row);
    }
  if (from.empty()) return;
  // A row that is read and also overwritten is staged first (a copy of what it held); every other
  // move copies straight from its source row, which no move writes. Beam search mostly moves
  // beams onto rows whose own content is dropped, so most moves are one copy, not two. A row of
  // the [batch, heads, capacity, head_dim] buffers is `heads` runs of the used length.
  const int64_t moved = static_cast<int64_t>(from.size()), heads = key_buffer.size(1);
  const int64_t run = length() * key_buffer.size(3) * key_buffer.element_size();  // bytes
  const int64_t run_stride = key_buffer.size(2) * key_buffer.size(3) * key_buffer.element_size();
  std::vector<char> written(rows, 0);
  for (int64_t row : to) written[row] = 1;
  std::vector<int64_t> slot(rows, -1), staged;  // slot[row]: where row's old content is staged
  for (int64_t row : from)
    if (written[row] && slot[row] < 0) {
      slot[row] = static_cast<int64_t>(staged.size());
      staged.push_back(row);
    }
  const int64_t stage_rows = static_cast<int64_t>(staged.size());
  at::Tensor staging = at::empty({2 * stage_rows * heads * run}, at::kByte);
  char* stage = static_cast<char*>(staging.data_ptr());
  char* const buffers[2] = {static_cast<char*>(key_buffer.data_ptr()), static_cast<char*>(value_buffer.data_ptr())};
  const auto row_at = [&](int which, int64_t row) { return buffers[which] + row * heads * run_stride; };
  const auto stage_at = [&](int which, int64_t index) { return stage + (which * stage_rows + index) * heads * run; };
  if (stage_rows > 0)
    parallel_for(0, 2 * stage_rows, grain_for(heads * run / 4), [&](int64_t begin, int64_t end) {
      for (int64_t unit = begin; unit < end; ++unit) {
        const int which = static_cast<int>(unit / stage_rows);
        const int64_t i = unit % stage_rows;
        for (int64_t h = 0; h < heads; ++h)
          std::memcpy(stage_at(which, i) + h * run, row_at(which, staged[i]) + h * run_stride, run);
      }
    });
  parallel_for(0, 2 * moved, grain_for(heads * run / 4), [&](int64_t begin, int64_t end) {
    for (int64_t unit = begin; unit < end; ++unit) {
      const int which = static_cast<int>(unit / moved);
      const int64_t i = unit % moved, source = from[i];
      char* target = row_at(which, to[i]);
      if (slot[source] >= 0) {
        const char* copy = stage_at(which, slot[source]);
        for (int64_t h = 0; h < heads; ++h) std::memcpy(target + h * run_stride, copy + h * run, run);
      } else {
        const char* row = row_at(which, source);
        for (int64_t h = 0; h < heads; ++h) std::memcpy(target + h * run_stride, row + h * run_stride, run);
      }
    }
  });
}

namespace {

// A cache buffer of 1 MB or more in pages of its own, returned to the system when it is freed.
// From malloc's heap (configure_process keeps large buffers there), each doubling left the
// smaller buffers behind as resident holes that the larger ones never fit (the workload in
// int8, 100 lines in batches of 32 x 4 beams x 64 tokens: peak 960 MB from the heap, 908 here).
at::Tensor cache_buffer(at::IntArrayRef sizes, const at::TensorOptions& options) {
  int64_t count = 1;
  for (const int64_t size : sizes) count *= size;
  const size_t bytes = static_cast<size_t>(count) * options.dtype().itemsize();
  if (bytes < (size_t{1} << 20)) return at::empty(sizes, options);
  void* pages = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (pages == MAP_FAILED) return at::empty(sizes, options);
  return at::from_blob(pages, sizes, [bytes](void* p) { ::munmap(p, bytes); }, options);
}

}  // namespace

void KeyValue::append(const KeyValue& fresh) {
  const int64_t used = length(), added = fresh.key.size(2);
  if (!key_buffer.defined() || used + added > key_buffer.size(2)) {
    const int64_t capacity = std::max<int64_t>({16, 2 * used, used + added});
    auto sizes = fresh.key.sizes().vec();
    sizes[2] = capacity;
    at::Tensor keys = cache_buffer(sizes, fresh.key.options()), values = cache_buffer(sizes, fresh.value.options());
    if (used > 0) {
      keys.narrow(2, 0, used).copy_(key);
      values.narrow(2, 0, used).copy_(value);
    }
    key_buffer = keys;
    value_buffer = values;
  }
  key_buffer.narrow(2, used, added).copy_(fresh.key);
  value_buffer.narrow(2, used, added).copy_(fresh.value);
  key = key_buffer.narrow(2, 0, used + added);
  value = value_buffer.narrow(2, 0, used + added);
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
    return {keys_by_dimension(split_heads(part(kv, 0))), split_heads(part(kv, 1)).contiguous(), {}, {}};
  }
  return {keys_by_dimension(split_heads(k_proj.forward(x))), split_heads(v_proj.forward(x)).contiguous(), {}, {}};
}

at::Tensor MultiHeadAttention::forward(const at::Tensor& x, const KeyValue& kv,
                                       const at::Tensor& additive_mask) const {
  return attend(q_proj.forward(x), kv, additive_mask, ScoreOrder::kKeyChain);
}

at::Tensor MultiHeadAttention::forward_self(const at::Tensor& x, const at::Tensor& additive_mask,
                                            const at::Tensor& position_bias) const {
  if (!qkv_proj.packed)
    return attend(q_proj.forward(x), project_key_value(x), additive_mask, ScoreOrder::kKeyChain, position_bias);
  const at::Tensor qkv = qkv_proj.forward(x);
  // Views into the fused projection (the keys are transposed once, for all the queries).
  const KeyValue kv{split_heads(part(qkv, 1)), split_heads(part(qkv, 2)), {}, {}};
  return attend(part(qkv, 0), kv, additive_mask, ScoreOrder::kKeyChain, position_bias);
}

void MultiHeadAttention::pack(GemmType type, bool self_attention) {
  const auto fuse = [&](std::initializer_list<Linear*> parts) {
    // Weights still in the checkpoint (Linear::weight_rows) are fused as one source of rows,
    // read a slice at a time: the float32 [q; k; v] is never built.
    bool streamed = false;
    for (Linear* l : parts) streamed = streamed || !l->weight.defined();
    std::vector<at::Tensor> weights, biases;
    std::vector<Linear::RowSource> sources;
    bool any_bias = false;  // T5 has none: the fused GEMM then adds none either
    for (Linear* l : parts) any_bias = any_bias || l->bias.defined();
    for (Linear* l : parts) {
      const int64_t out = l->weight.defined() ? l->weight.size(0) : l->weight_rows.out;
      if (streamed && l->weight.defined()) {
        const at::Tensor w = l->weight;
        sources.push_back({[w](int64_t begin, int64_t count) { return w.narrow(0, begin, count).to(at::kFloat); },
                           out, w.size(1)});
      } else if (streamed) {
        sources.push_back(l->weight_rows);
      } else {
        weights.push_back(l->weight);
      }
      if (any_bias) biases.push_back(l->bias.defined() ? l->bias : at::zeros({out}, at::kFloat));
      *l = Linear();  // released: the fused copy replaces it
    }
    Linear fused;
    if (streamed) {
      int64_t out = 0;
      for (const Linear::RowSource& s : sources) out += s.out;
      // Rows [begin, begin + count) of the stacked parts, a piece from each part they cross.
      fused.weight_rows = {[sources](int64_t begin, int64_t count) {
                             std::vector<at::Tensor> pieces;
                             for (const Linear::RowSource& s : sources) {
                               const int64_t b = std::max<int64_t>(begin, 0), e = std::min(begin + count, s.out);
                               if (b < e) pieces.push_back(s.rows(b, e - b));
                               begin -= s.out;
                             }
                             return pieces.size() == 1 ? pieces[0] : at::cat(pieces, 0);
                           },
                           out, sources.front().in};
    } else {
      fused.weight = at::cat(weights, 0);
    }
    if (any_bias) fused.bias = at::cat(biases, 0);
    fused.pack(type);
    return fused;
  };
  if (self_attention) {
    qkv_proj = fuse({&q_proj, &k_proj, &v_proj});
  } else {
    q_proj.pack(type);
    kv_proj = fuse({&k_proj, &v_proj});
  }
  out_proj.pack(type);
}

at::Tensor MultiHeadAttention::attend(const at::Tensor& projected_q, const KeyValue& kv, const at::Tensor& additive_mask,
                                      ScoreOrder order, const at::Tensor& position_bias) const {
  const int64_t batch = projected_q.size(0), q_len = projected_q.size(1);
  const double scaling = this->scaling();
  // Inference: the kernel whose rows do not depend on the batch (attention_kernel.h). The
  // LibTorch route below stays for autograd (the trainer).
  const bool needs_grad = at::GradMode::is_enabled() &&
                          (projected_q.requires_grad() || kv.key.requires_grad() || kv.value.requires_grad());
  if (!needs_grad)
    return out_proj.forward(fixed_order_attention(projected_q, kv.key, kv.value, additive_mask, num_heads,
                                                  static_cast<float>(scaling), order, position_bias));
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
    return attend(q_proj.forward(x), cache, additive_mask, ScoreOrder::kDimensionTree);
  }
  const at::Tensor qkv = qkv_proj.forward(x);
  cache.append({split_heads(part(qkv, 1)), split_heads(part(qkv, 2)), {}, {}});
  return attend(part(qkv, 0), cache, additive_mask, ScoreOrder::kDimensionTree);
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
