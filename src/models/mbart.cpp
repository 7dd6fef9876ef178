// mBART (facebook/mbart-large-50-many-to-many-mmt, -one-to-many, -many-to-one, mbart-large-cc25
// and its fine-tunes) as Hugging Face's MBartForConditionalGeneration runs it: BART's learned
// positions (row p + 2) and layernorm_embedding, but pre-norm layers with a final layer norm
// after each stack, embeddings scaled by sqrt(d_model) (config scale_embedding), decoding from
// </s> with the target language code forced first. SentencePiece in fairseq's id layout with the
// language codes after the pieces: mBART-50's tokenizer puts the source code first in the input,
// mbart-large-cc25's last (text/, chosen by the folder's tokenizer class).
#include "models/family.h"

namespace ordo::models {

FamilySpec mbart_family() {
  FamilySpec family;
  family.name = "mbart";
  family.model_types = {"mbart"};
  family.architectures = {"MBartForConditionalGeneration"};
  family.pre_norm = true;
  family.final_layer_norm = true;
  family.layernorm_embedding = true;
  family.position_layout = PositionLayout::kLearned;
  family.tokenizer = TokenizerKind::kMBart50;
  return family;
}

}  // namespace ordo::models
