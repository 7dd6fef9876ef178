// M2M100 and NLLB (facebook/m2m100_*, facebook/nllb-200-*), both M2M100ForConditionalGeneration
// in Hugging Face: pre-norm layers with final layer norms, fairseq positions (sines then
// cosines with the d/2 - 1 denominator, counted from padding_idx + 1 over non-padding tokens),
// scaled embeddings, a source-language token in the input and the target language forced as
// the first generated token. The two differ only in their tokenizers.
#include "models/family.h"

namespace ordo::models {

FamilySpec m2m100_family() {
  FamilySpec family;
  family.name = "m2m_100";
  family.model_types = {"m2m_100", "nllb"};
  family.architectures = {"M2M100ForConditionalGeneration"};
  family.pre_norm = true;
  family.final_layer_norm = true;
  family.position_layout = PositionLayout::kFairseq;
  family.fairseq_positions = true;
  family.tokenizer = TokenizerKind::kM2M100;  // kNllb when the folder says NllbTokenizer
  return family;
}

}  // namespace ordo::models
