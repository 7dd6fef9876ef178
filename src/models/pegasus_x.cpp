// Pegasus-X (google/pegasus-x-base, google/pegasus-x-large) as Hugging Face's
// PegasusXForConditionalGeneration runs it: Pegasus's pre-norm layers with a final layer norm
// after each stack, gelu, embeddings scaled by sqrt(d_model), a tied output projection without
// final_logits_bias, decoding from <pad>, the Pegasus spiece.model tokenizer; but no biases in
// the attention projections, positions computed on the fly (PositionLayout::kPegasusX), and an
// encoder whose self-attention is block-local with global tokens, staggered on odd layers
// (nn/pegasus_x_attention.cpp), so that it reads 16,384 tokens. The checkpoint's names are
// ordo's (BART layout) plus model.encoder.embed_global.weight and each encoder layer's
// global_self_attn_layer_norm.
#include "models/family.h"

namespace ordo::models {

FamilySpec pegasus_x_family() {
  FamilySpec family;
  family.name = "pegasus_x";
  family.model_types = {"pegasus_x"};
  family.architectures = {"PegasusXForConditionalGeneration"};
  family.pre_norm = true;
  family.final_layer_norm = true;
  family.position_layout = PositionLayout::kPegasusX;
  family.attention_biases = false;
  family.long_attention = nn::LongAttentionKind::kPegasusX;
  family.tokenizer = TokenizerKind::kPegasus;
  return family;
}

}  // namespace ordo::models
