// FSMT (facebook/wmt19-en-de, -de-en, -en-ru, -ru-en and other fairseq transformers), Hugging
// Face's FSMTForConditionalGeneration: post-norm layers without final or embedding layer norms
// (like Marian), fairseq positions (sines then cosines with the d/2 - 1 denominator, counted from
// padding_idx + 1 over non-padding tokens, growing with the input; the tables some checkpoints
// store are recomputed), scaled embeddings, separate source and target vocabularies
// (src_vocab_size / tgt_vocab_size, see io/model_config.cpp), an output projection without bias
// tied to the decoder embedding, decoding from </s>, Moses + BPE tokenizer.
#include "models/family.h"

namespace ordo::models {

FamilySpec fsmt_family() {
  FamilySpec family;
  family.name = "fsmt";
  family.model_types = {"fsmt"};
  family.architectures = {"FSMTForConditionalGeneration"};
  family.pre_norm = false;
  family.final_layer_norm = false;
  family.position_layout = PositionLayout::kFairseq;
  family.fairseq_positions = true;
  family.tokenizer = TokenizerKind::kFsmt;
  return family;
}

}  // namespace ordo::models
