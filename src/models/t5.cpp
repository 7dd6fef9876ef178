// T5, Flan-T5 and mT5 (t5-small/base/large, google/flan-t5-*, google/mt5-*) as Hugging Face's
// T5ForConditionalGeneration runs them: pre-norm layers with RMS norms (no mean, no bias) and a
// final norm after each stack, no biases, attention logits not scaled, no absolute positions but
// a relative position bias (bidirectional buckets in the encoder, causal in the decoder; one table
// per stack, in block 0, used by every layer; none in cross-attention), heads of d_kv (num_heads x
// d_kv need not be d_model), embeddings not scaled, decoding from <pad>. The original layout
// (t5-small: feed_forward_proj "relu", output tied to `shared` and fed the decoder output times
// d_model^-0.5) and v1.1 / Flan / mT5 ("gated-gelu": wo(gelu_new(wi_0 x) * wi_1 x), an untied
// lm_head) differ only in config.json. SentencePiece tokenizer with 100 <extra_id_N> tokens.
#include <cstdlib>

#include "models/family.h"

namespace ordo::models {

// model.{encoder,decoder}.layers.N.<part> -> {encoder,decoder}.block.N.layer.M.<T5 part>: the
// encoder's blocks are [<encoder_attention>, FF], the decoder's [SelfAttention, EncDecAttention, FF].
std::string t5_checkpoint_name(const std::string& name, const io::ModelConfig& config,
                               const std::string& encoder_attention) {
  if (name == "model.shared.weight") return "shared.weight";
  for (const char* stack : {"encoder", "decoder"}) {
    const std::string ours = std::string("model.") + stack + ".";
    if (name.compare(0, ours.size(), ours) != 0) continue;
    const std::string rest = name.substr(ours.size());
    const std::string theirs = std::string(stack) + ".";
    const std::string self_attention = std::string(stack) == "encoder" ? encoder_attention : "SelfAttention";
    if (rest == "embed_tokens.weight") return theirs + rest;
    if (rest == "layer_norm.weight") return theirs + "final_layer_norm.weight";
    if (rest == "relative_attention_bias.weight")
      return theirs + "block.0.layer.0." + self_attention + ".relative_attention_bias.weight";
    if (rest == "layers") return theirs + "block";
    if (rest.compare(0, 7, "layers.") != 0) return name;
    const size_t dot = rest.find('.', 7);
    if (dot == std::string::npos) return name;
    const std::string block = theirs + "block." + rest.substr(7, dot - 7) + ".layer.";
    const std::string part = rest.substr(dot + 1);
    const std::string ff = std::string(stack) == "encoder" ? "1" : "2";
    const auto attention = [&](const std::string& prefix, const std::string& layer) -> std::string {
      for (const auto& [from, to] :
           {std::pair{"q_proj.", "q."}, {"k_proj.", "k."}, {"v_proj.", "v."}, {"out_proj.", "o."}})
        if (part.compare(prefix.size(), std::string(from).size(), from) == 0)
          return block + layer + to + part.substr(prefix.size() + std::string(from).size());
      return name;
    };
    if (part.compare(0, 10, "self_attn.") == 0) return attention("self_attn.", "0." + self_attention + ".");
    if (part.compare(0, 13, "encoder_attn.") == 0) return attention("encoder_attn.", "1.EncDecAttention.");
    if (part == "self_attn_layer_norm.weight") return block + "0.layer_norm.weight";
    if (part == "encoder_attn_layer_norm.weight") return block + "1.layer_norm.weight";
    if (part == "final_layer_norm.weight") return block + ff + ".layer_norm.weight";
    if (part == "fc1.weight")
      return block + ff + ".DenseReluDense." + (config.gated_activation ? "wi_0" : "wi") + ".weight";
    if (part == "gate.weight") return block + ff + ".DenseReluDense.wi_1.weight";
    if (part == "fc2.weight") return block + ff + ".DenseReluDense.wo.weight";
    return name;
  }
  return name;
}

namespace {

std::string t5_name(const std::string& name, const io::ModelConfig& config) {
  return t5_checkpoint_name(name, config, "SelfAttention");
}

}  // namespace

FamilySpec t5_family() {
  FamilySpec family;
  family.name = "t5";
  family.model_types = {"t5", "mt5"};
  family.architectures = {"T5ForConditionalGeneration", "MT5ForConditionalGeneration"};
  family.pre_norm = true;
  family.final_layer_norm = true;
  family.rms_norm = true;
  family.biases = false;
  family.scale_attention = false;
  family.relative_positions = true;
  family.scale_tied_output = true;
  family.checkpoint_name = t5_name;
  family.tokenizer = TokenizerKind::kT5;
  return family;
}

}  // namespace ordo::models
