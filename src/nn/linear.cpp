#include "nn/linear.h"

#include <algorithm>
#include <string>
#include <vector>

#include <dnnl.h>

#include "ordo/error.h"

namespace ordo::nn {

Linear::Linear(int64_t in_features, int64_t out_features, bool with_bias)
    : weight(at::empty({out_features, in_features}, at::kFloat)),
      bias(with_bias ? at::empty({out_features}, at::kFloat) : at::Tensor()) {}

namespace {

bool can_use_dnnl(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  if (at::GradMode::is_enabled() && (x.requires_grad() || weight.requires_grad())) return false;
  if (x.scalar_type() != at::kFloat || weight.scalar_type() != at::kFloat) return false;
  if (bias.defined() && bias.scalar_type() != at::kFloat) return false;
  return x.device().is_cpu() && weight.is_contiguous();
}

}  // namespace

void Linear::pack(GemmType type, std::optional<Activation> activation) {
  if (!weight.defined() && weight_rows.rows) {
    packed =
        std::make_shared<const PackedGemm>(weight_rows.rows, weight_rows.out, weight_rows.in, bias, type, activation);
    weight_rows = RowSource();
  } else {
    packed = std::make_shared<const PackedGemm>(weight, bias, type, activation);
  }
  fused_activation = activation.has_value();
  if (weight.use_count() == 1) weight = at::Tensor();
}

at::Tensor Linear::forward(const at::Tensor& x) const {
  if (packed) return packed->forward(x);
  if (!can_use_dnnl(x, weight, bias)) return at::linear(x, weight, bias);

  const int64_t in = weight.size(1), out = weight.size(0);
  const at::Tensor input = x.contiguous();
  const int64_t rows = input.numel() / in;
  auto out_sizes = input.sizes().vec();
  out_sizes.back() = out;
  // C starts as a copy of the broadcast bias and the GEMM accumulates into it (beta = 1): one
  // pass. (Not expand().contiguous(): for one row that is the bias itself, and the GEMM would
  // add into the weights.)
  at::Tensor output = at::empty({rows, out}, input.options());
  if (bias.defined()) output.copy_(bias.expand({rows, out}));
  const float beta = bias.defined() ? 1.0f : 0.0f;
  cap_onednn_isa();
  const dnnl_status_t status = dnnl_sgemm('N', 'T', rows, out, in, 1.0f, input.data_ptr<float>(), in,
                                          weight.data_ptr<float>(), in, beta, output.data_ptr<float>(), out);
  if (status != dnnl_success)
    throw Error("oneDNN sgemm failed with status " + std::to_string(static_cast<int>(status)));
  return output.view(out_sizes);
}

Linear fuse_and_pack(std::initializer_list<Linear*> parts, GemmType type) {
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
      sources.push_back(
          {[w](int64_t begin, int64_t count) { return w.narrow(0, begin, count).to(at::kFloat); }, out, w.size(1)});
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
}

void Linear::visit(const std::string& prefix, const ParamVisitor& visitor) {
  visitor(join_name(prefix, "weight"), weight);
  if (bias.defined()) visitor(join_name(prefix, "bias"), bias);
}

}  // namespace ordo::nn
