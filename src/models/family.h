// A model family is a small description of how it differs from the shared encoder-decoder:
// where the layer norms go, how positions are laid out, which tokenizer reads its folder,
// and the few generation quirks its reference implementation has. Adding a family means
// adding one of these (see marian.cpp), not another encoder or decoder.
#pragma once

#include <string>
#include <vector>

#include "io/model_config.h"
#include "nn/long_attention.h"
#include "nn/positional_encoding.h"

namespace ordo::models {

// kBart: GPT-2 byte-level BPE (vocab.json + merges.txt); kMBart50 / kMBart: SentencePiece in
// fairseq's id layout with language codes after the pieces (mBART-50 puts the source code
// first, mbart-large-cc25 last); kT5: SentencePiece with 100 <extra_id_N> tokens, no BOS;
// kWhisper: byte-level BPE with Whisper's special tokens (languages, tasks, timestamps).
enum class TokenizerKind { kMarian, kPegasus, kM2M100, kNllb, kFsmt, kBart, kMBart50, kMBart, kT5, kWhisper };

struct FamilySpec {
  std::string name;                        // "marian"
  std::vector<std::string> model_types;    // config.json model_type values it serves
  std::vector<std::string> architectures;  // config.json architectures it serves
  bool pre_norm = false;                   // layer norm before each sub-layer
  bool final_layer_norm = false;           // a layer norm after the last layer of each stack
  bool layernorm_embedding = false;        // a layer norm after embeddings + positions
  PositionLayout position_layout = PositionLayout::kSinCos;
  // A learned table's first rows before position 0 (BART, mBART: 2; LED: none).
  int64_t learned_position_offset = 2;
  bool fairseq_positions = false;  // offset padding_idx + 1, padding row zero, from ids
  // Hugging Face's Marian sets the pad logit to -inf before the log-softmax in beam search
  // (adjust_logits_during_generation); reproducing it keeps beam scores identical.
  bool beam_search_never_pad = false;
  TokenizerKind tokenizer = TokenizerKind::kMarian;
  // T5 (t5.cpp): RMS norms (no mean, no bias), no biases anywhere, attention logits not scaled
  // by 1/sqrt(head_dim), a relative position bias in each stack's self-attention instead of
  // absolute positions (config.json's relative_attention_num_buckets / _max_distance), and a
  // tied output projection fed the decoder output times d_model^-0.5.
  bool rms_norm = false;
  bool biases = true;
  bool attention_biases = true;  // Pegasus-X: none in the attention projections, only there
  bool key_biases = true;        // Whisper: none in k_proj alone (q_proj, v_proj, out_proj have them)
  bool output_bias = true;       // final_logits_bias on the output projection (Whisper's proj_out: none)
  bool scale_attention = true;
  bool relative_positions = false;
  bool scale_tied_output = false;
  // LED, LongT5, Pegasus-X: the encoder's self-attention is local (nn/long_attention.h), set
  // from config.json's attention_window / local_radius / block_size and the like.
  nn::LongAttentionKind long_attention = nn::LongAttentionKind::kNone;
  // Whisper: the encoder reads log-mel features (config.json num_mel_bins) through convolutions
  // (nn/audio_frontend.h), not token ids: Seq2SeqModel::encode_features, not encode().
  bool speech_encoder = false;
  // The checkpoint's name for a parameter that ordo names in the BART layout
  // ("model.encoder.layers.0.self_attn.q_proj.weight", the names nn/ visits); also maps the stack
  // prefix "model.encoder.layers" alone. nullptr: the checkpoint uses those names. A name the
  // family does not know is returned unchanged.
  std::string (*checkpoint_name)(const std::string& name, const io::ModelConfig& config) = nullptr;
};

FamilySpec marian_family();
FamilySpec pegasus_family();
FamilySpec m2m100_family();
FamilySpec fsmt_family();
FamilySpec bart_family();
FamilySpec mbart_family();
FamilySpec t5_family();
FamilySpec pegasus_x_family();
FamilySpec longt5_family();
FamilySpec led_family();
FamilySpec whisper_family();

// T5's checkpoint names (t5.cpp), shared with LongT5, whose encoder blocks name their
// self-attention `encoder_attention` ("LocalSelfAttention", "TransientGlobalSelfAttention";
// T5: "SelfAttention").
std::string t5_checkpoint_name(const std::string& name, const io::ModelConfig& config,
                               const std::string& encoder_attention);

// `name` as `family`'s checkpoints spell it (FamilySpec::checkpoint_name).
std::string checkpoint_name(const FamilySpec& family, const io::ModelConfig& config, const std::string& name);

// The position table `family` builds for `config`: its layout, and for fairseq-style
// positions the offset padding_idx + 1 and the zero padding row.
nn::PositionEncodingSpec position_spec(const io::ModelConfig& config, const FamilySpec& family);

// The family serving `config` (by model_type, then architectures). Throws ordo::Error naming
// config.json and listing the supported types otherwise.
FamilySpec family_for(const io::ModelConfig& config);

}  // namespace ordo::models
