#include "pipeline/result_building.h"

#include <algorithm>

#include <ATen/ATen.h>

namespace ordo::pipeline {
namespace {

// [target, layers, heads, padded source] -> the public layout, the batch's padding cut off
// (its weights are exactly 0), and the alignment layer's head average.
Attention to_attention(const at::Tensor& steps, int64_t source_length) {
  const at::Tensor w = steps.narrow(3, 0, source_length).permute({1, 2, 0, 3}).contiguous().to(at::kFloat);
  Attention a;
  a.layers = w.size(0);
  a.heads = w.size(1);
  a.target_length = w.size(2);
  a.source_length = source_length;
  a.weights.assign(w.data_ptr<float>(), w.data_ptr<float>() + w.numel());
  a.alignment_layer = std::max<int64_t>(0, a.layers - 2);
  const at::Tensor mean = w[a.alignment_layer].mean(0).contiguous();
  a.averaged.assign(mean.data_ptr<float>(), mean.data_ptr<float>() + mean.numel());
  return a;
}

}  // namespace

void label_ids(const text::Tokenizer& tokenizer, Hypothesis& hyp) {
  hyp.id_pieces.clear();
  hyp.token_positions.clear();
  for (size_t t = 0; t < hyp.ids.size(); ++t) {
    hyp.id_pieces.push_back(tokenizer.target_piece(hyp.ids[t]));
    if (!tokenizer.id_to_pieces({hyp.ids[t]}).empty()) hyp.token_positions.push_back(static_cast<int64_t>(t));
  }
}

TranslationResult to_result(const text::Tokenizer& tokenizer, const std::vector<search::SearchHypothesis>& hyps,
                            const std::vector<int64_t>& source) {
  TranslationResult result;
  for (const auto& hyp : hyps) {
    Hypothesis out;
    out.ids = hyp.ids;
    out.score = static_cast<float>(hyp.score);
    out.tokens = tokenizer.id_to_pieces(hyp.ids);
    out.text = tokenizer.decode(hyp.ids);
    if (hyp.attention.defined()) {
      out.attention = to_attention(hyp.attention, static_cast<int64_t>(source.size()));
      label_ids(tokenizer, out);
    }
    result.hypotheses.push_back(std::move(out));
  }
  if (!result.hypotheses.empty() && !result.hypotheses[0].attention.empty()) {
    result.source_ids = source;
    // Special: the ids the tokenizer puts around the text (the final </s>, a source-language
    // code before the text or after </s>, BART's <s>).
    const text::Tokenizer::Framing framing = tokenizer.framing();
    for (size_t p = 0; p < source.size(); ++p) {
      result.source_tokens.push_back(tokenizer.source_piece(source[p]));
      const bool special = p < static_cast<size_t>(framing.before) || p + framing.after >= source.size();
      if (!special) result.source_text_positions.push_back(static_cast<int64_t>(p));
    }
  }
  return result;
}

}  // namespace ordo::pipeline
