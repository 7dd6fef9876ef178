#include "train/training_forward.h"

#include <cmath>

#include "nn/attention.h"

namespace ordo::train {
namespace {

at::Tensor encoder_forward(models::Seq2SeqModel& model, const Batch& batch, double p, bool training) {
  nn::TransformerEncoder& encoder = model.encoder();
  const at::Tensor mask = nn::padding_mask(batch.source_mask);
  at::Tensor x = at::dropout(encoder.embed.forward(batch.source, 0), p, training);
  for (const nn::EncoderLayer& layer : encoder.layers) {
    x = nn::residual(x, layer.self_attn_layer_norm, layer.pre_norm, [&](const at::Tensor& h) {
      return at::dropout(layer.self_attn.forward(h, layer.self_attn.project_key_value(h), mask), p, training);
    });
    x = nn::residual(x, layer.final_layer_norm, layer.pre_norm,
                     [&](const at::Tensor& h) { return at::dropout(layer.ffn.forward(h), p, training); });
  }
  if (encoder.layer_norm.weight.defined()) x = encoder.layer_norm.forward(x);
  return x;
}

at::Tensor decoder_forward(models::Seq2SeqModel& model, const Batch& batch, const at::Tensor& memory, double p,
                           bool training) {
  nn::TransformerDecoder& decoder = model.decoder();
  const at::Tensor self_mask = nn::causal_mask(batch.decoder_input.size(1), 0);
  const at::Tensor memory_mask = nn::padding_mask(batch.source_mask);
  at::Tensor x = at::dropout(decoder.embed.forward(batch.decoder_input, 0), p, training);
  for (const nn::DecoderLayer& layer : decoder.layers) {
    x = nn::residual(x, layer.self_attn_layer_norm, layer.pre_norm, [&](const at::Tensor& h) {
      return at::dropout(layer.self_attn.forward(h, layer.self_attn.project_key_value(h), self_mask), p, training);
    });
    x = nn::residual(x, layer.encoder_attn_layer_norm, layer.pre_norm, [&](const at::Tensor& h) {
      return at::dropout(layer.encoder_attn.forward(h, layer.encoder_attn.project_key_value(memory), memory_mask), p,
                         training);
    });
    x = nn::residual(x, layer.final_layer_norm, layer.pre_norm,
                     [&](const at::Tensor& h) { return at::dropout(layer.ffn.forward(h), p, training); });
  }
  if (decoder.layer_norm.weight.defined()) x = decoder.layer_norm.forward(x);
  return x;
}

}  // namespace

at::Tensor batch_loss(models::Seq2SeqModel& model, const Batch& batch, const TrainingOptions& options, bool training) {
  const double p = training ? options.dropout : 0.0;
  const at::Tensor memory = encoder_forward(model, batch, p, training);
  const at::Tensor hidden = decoder_forward(model, batch, memory, p, training);
  // Output projection tied to the decoder embedding (final_logits_bias stays zero, as Marian's).
  const at::Tensor logits = at::linear(hidden, model.decoder().embed.tokens);
  const int64_t vocab = logits.size(-1);
  return at::cross_entropy_loss(logits.reshape({-1, vocab}), batch.labels.reshape({-1}), {}, at::Reduction::Sum,
                                model.config().pad_token_id, training ? options.label_smoothing : 0.0);
}

void initialise(models::Seq2SeqModel& model, uint64_t seed) {
  at::manual_seed(seed);
  const double dim = static_cast<double>(model.config().d_model);
  model.visit([&](const std::string& name, at::Tensor& param) {
    at::NoGradGuard no_grad;
    const auto ends_with = [&](const std::string& suffix) {
      return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    if (name == "final_logits_bias" || ends_with(".bias")) {
      param.zero_();
    } else if (name.find("layer_norm") != std::string::npos || name.find("layernorm") != std::string::npos) {
      param.fill_(1.0);
    } else if (name == "model.shared.weight" || ends_with("embed_tokens.weight")) {
      param.normal_(0.0, std::pow(dim, -0.5));
    } else {
      const double bound = std::sqrt(6.0 / static_cast<double>(param.size(0) + param.size(1)));
      param.uniform_(-bound, bound);
    }
  });
}

}  // namespace ordo::train
