// LongT5 (google/long-t5-local-base, google/long-t5-tglobal-base and their larger sizes) as
// Hugging Face's LongT5ForConditionalGeneration runs them: T5 v1.1 in every respect (t5.cpp:
// RMS norms, no biases, unscaled logits, relative position buckets, T5's tokenizer) except the
// encoder's self-attention, which config.json's encoder_attention_type makes local (each token
// sees local_radius tokens on either side) or transient-global (the same, plus one summary
// token per global_block_size tokens): nn/longt5_attention.cpp. The checkpoint names the
// encoder's attention module after that kind and keeps the transient-global parameters in it.
#include "models/family.h"

namespace ordo::models {

namespace {

std::string longt5_name(const std::string& name, const io::ModelConfig& config) {
  const bool global = config.encoder_attention_type == "transient-global";
  const std::string attention = global ? "TransientGlobalSelfAttention" : "LocalSelfAttention";
  // The transient-global additions (nn/longt5_attention.cpp names them).
  if (name == "model.encoder.global_relative_attention_bias.weight")
    return "encoder.block.0.layer.0." + attention + ".global_relative_attention_bias.weight";
  const std::string layers = "model.encoder.layers.", norm = ".self_attn.global_input_layer_norm.weight";
  if (name.compare(0, layers.size(), layers) == 0 && name.size() > layers.size() + norm.size() &&
      name.compare(name.size() - norm.size(), norm.size(), norm) == 0)
    return "encoder.block." + name.substr(layers.size(), name.size() - norm.size() - layers.size()) + ".layer.0." +
           attention + ".global_input_layer_norm.weight";
  return t5_checkpoint_name(name, config, attention);
}

}  // namespace

FamilySpec longt5_family() {
  FamilySpec family = t5_family();
  family.name = "longt5";
  family.model_types = {"longt5"};
  family.architectures = {"LongT5ForConditionalGeneration"};
  // family_for makes it kLongT5TransientGlobal when config.json says "transient-global".
  family.long_attention = nn::LongAttentionKind::kLongT5Local;
  family.checkpoint_name = longt5_name;
  return family;
}

}  // namespace ordo::models
