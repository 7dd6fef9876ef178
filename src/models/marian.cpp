// Marian (Helsinki-NLP opus-mt and tc-big models) as Hugging Face's MarianMTModel runs them:
// post-norm layers with no final layer norm, sines-then-cosines positions starting at 0,
// embeddings scaled by sqrt(d_model) (config scale_embedding), SentencePiece + vocab.json.
#include "models/family.h"

namespace ordo::models {

FamilySpec marian_family() {
  FamilySpec family;
  family.name = "marian";
  family.model_types = {"marian"};
  family.architectures = {"MarianMTModel"};
  family.pre_norm = false;
  family.final_layer_norm = false;
  family.position_layout = PositionLayout::kSinCos;
  family.beam_search_never_pad = true;
  family.tokenizer = TokenizerKind::kMarian;
  return family;
}

}  // namespace ordo::models
