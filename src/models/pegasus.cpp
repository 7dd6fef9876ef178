// Pegasus (google/pegasus-*) as Hugging Face's PegasusForConditionalGeneration runs it:
// pre-norm layers with a final layer norm after each stack, sines-then-cosines positions
// starting at 0 (some checkpoints also store the table; it is recomputed, as HF does),
// embeddings scaled by sqrt(d_model), decoding starts from <pad>, spiece.model tokenizer.
#include "models/family.h"

namespace ordo::models {

FamilySpec pegasus_family() {
  FamilySpec family;
  family.name = "pegasus";
  family.model_types = {"pegasus"};
  family.architectures = {"PegasusForConditionalGeneration"};
  family.pre_norm = true;
  family.final_layer_norm = true;
  family.position_layout = PositionLayout::kSinCos;
  family.tokenizer = TokenizerKind::kPegasus;
  return family;
}

}  // namespace ordo::models
