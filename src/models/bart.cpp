// BART (facebook/bart-large-cnn, bart-large-xsum, sshleifer/distilbart-*) as Hugging Face's
// BartForConditionalGeneration runs it: post-norm layers, no final layer norms, a layer norm
// right after embeddings + positions (layernorm_embedding), learned positions read from the
// checkpoint (position p is row p + 2 of embed_positions.weight), embeddings scaled only when
// config.json says scale_embedding (bart-large: no), final_logits_bias, decoding from </s> with
// <s> forced first (generation_config.json's forced_bos_token_id), GPT-2 byte-level BPE.
#include "models/family.h"

namespace ordo::models {

FamilySpec bart_family() {
  FamilySpec family;
  family.name = "bart";
  family.model_types = {"bart"};
  family.architectures = {"BartForConditionalGeneration"};
  family.pre_norm = false;
  family.final_layer_norm = false;
  family.layernorm_embedding = true;
  family.position_layout = PositionLayout::kLearned;
  family.tokenizer = TokenizerKind::kBart;
  return family;
}

}  // namespace ordo::models
