// Whisper (openai/whisper-*, distil-whisper) as Hugging Face's WhisperForConditionalGeneration
// runs it: a speech encoder whose input is log-mel features (num_mel_bins x 3,000 frames) put
// through two convolutions with GELU (nn/audio_frontend.h) plus a position table of
// max_source_positions rows read from the checkpoint (converted checkpoints hold OpenAI's
// sinusoids there; transformers 4.31 loads it as a weight and, when it is absent, initialises it
// at random: ordo refuses such a checkpoint instead). Pre-norm layers with final layer norms,
// exact-erf GELU, no embedding scale, k_proj without a bias (q, v and out have one), learned
// decoder positions from row 0 (max_target_positions), and an output projection (proj_out) tied
// to the decoder's token embedding, with no final_logits_bias. Byte-level BPE with Whisper's
// special tokens.
#include "models/family.h"

namespace ordo::models {

namespace {

std::string whisper_name(const std::string& name, const io::ModelConfig&) {
  return name == "lm_head.weight" ? "proj_out.weight" : name;  // read only when untied
}

}  // namespace

FamilySpec whisper_family() {
  FamilySpec family;
  family.name = "whisper";
  family.model_types = {"whisper"};
  family.architectures = {"WhisperForConditionalGeneration"};
  family.pre_norm = true;
  family.final_layer_norm = true;
  family.position_layout = PositionLayout::kLearned;
  family.learned_position_offset = 0;
  family.key_biases = false;
  family.output_bias = false;
  family.speech_encoder = true;
  family.tokenizer = TokenizerKind::kWhisper;
  family.checkpoint_name = whisper_name;
  return family;
}

}  // namespace ordo::models
