// LED (allenai/led-base-16384, allenai/led-large-16384, led-large-16384-arxiv) as Hugging Face's
// LEDForConditionalGeneration runs it: BART's layers (post-norm, gelu, layernorm_embedding,
// final_logits_bias, tied embeddings, GPT-2 byte-level BPE, decoding from </s>) with learned
// position tables WITHOUT BART's offset of 2 (row = position), an encoder table of
// max_encoder_position_embeddings rows (16,384) and a decoder table of
// max_decoder_position_embeddings (1,024), and a Longformer encoder self-attention: a sliding
// window of attention_window / 2 positions on each side plus global attention
// (nn/longformer.cpp). The checkpoint keeps the model under "led." and names the encoder's
// attention projections after Longformer's.
#include "models/family.h"

namespace ordo::models {

namespace {

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

std::string led_name(const std::string& name, const io::ModelConfig&) {
  if (!starts_with(name, "model.")) return name;  // final_logits_bias, lm_head.weight
  const std::string led = "led." + name.substr(6);
  const std::string layers = "led.encoder.layers.";
  if (!starts_with(led, layers)) return led;
  const size_t dot = led.find('.', layers.size());
  if (dot == std::string::npos) return led;
  const std::string layer = led.substr(0, dot + 1), part = led.substr(dot + 1);
  static const std::pair<const char*, const char*> renames[] = {
      {"self_attn.q_proj.", "self_attn.longformer_self_attn.query."},
      {"self_attn.k_proj.", "self_attn.longformer_self_attn.key."},
      {"self_attn.v_proj.", "self_attn.longformer_self_attn.value."},
      {"self_attn.out_proj.", "self_attn.output."},
      {"self_attn.query_global.", "self_attn.longformer_self_attn.query_global."},
      {"self_attn.key_global.", "self_attn.longformer_self_attn.key_global."},
      {"self_attn.value_global.", "self_attn.longformer_self_attn.value_global."}};
  for (const auto& [ours, theirs] : renames)
    if (starts_with(part, ours)) return layer + theirs + part.substr(std::string(ours).size());
  return led;
}

}  // namespace

FamilySpec led_family() {
  FamilySpec family;
  family.name = "led";
  family.model_types = {"led"};
  family.architectures = {"LEDForConditionalGeneration"};
  family.pre_norm = false;
  family.final_layer_norm = false;
  family.layernorm_embedding = true;
  family.position_layout = PositionLayout::kLearned;
  family.learned_position_offset = 0;
  family.tokenizer = TokenizerKind::kBart;
  family.long_attention = nn::LongAttentionKind::kLongformer;
  family.checkpoint_name = led_name;
  return family;
}

}  // namespace ordo::models
