// The encoder and decoder stacks: token embedding (optionally scaled) + sinusoidal or learned positions,
// N layers, an optional final layer norm. A speech encoder (Whisper) embeds log-mel frames
// through convolutions instead of tokens (nn/audio_frontend.h). Nothing here names a model
// family; models/ fills in a StackShape for each.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "nn/audio_frontend.h"
#include "nn/long_attention.h"
#include "nn/positional_encoding.h"
#include "nn/relative_position.h"
#include "nn/transformer_layers.h"

namespace ordo::nn {

struct StackShape {
  LayerShape layer;
  int64_t num_layers = 0;
  int64_t max_positions = 0;
  double embed_scale = 1.0;  // sqrt(d_model) when the config says scale_embedding
  PositionEncodingSpec positions;
  // fairseq style: a token's position counts only non-padding tokens before it, and padding
  // tokens get the (zero) padding row.
  bool positions_from_ids = false;
  int64_t padding_idx = 0;
  bool final_layer_norm = false;     // pre-norm stacks end with a layer norm
  bool layernorm_embedding = false;  // a layer norm right after embeddings + positions
  // T5: no positions added to the embeddings; instead a relative position bias table of
  // relative_buckets rows (0: none) added to every self-attention's logits, bidirectional in
  // the encoder and causal in the decoder (nn/relative_position.h).
  bool absolute_positions = true;
  int64_t relative_buckets = 0;
  int64_t relative_max_distance = 0;
  // The encoder of a long-input family: its self-attention (nn/long_attention.h).
  LongAttentionSpec long_attention;
  // A speech encoder (Whisper): input features of mel_bins log-mel bins go through the audio
  // front end, then the learned positions are added (0: a text encoder, embedding token ids).
  int64_t mel_bins = 0;
};

// Embeds ids and adds positions. Shared by both stacks.
struct Embedder {
  at::Tensor tokens;  // [vocab, dim]; may be the same tensor as another stack's
  // Instead of `tokens` (then undefined), after packing: the tied output projection whose
  // packed weights hold the same rows (PackedGemm::rows), so the table is not kept twice.
  std::shared_ptr<const PackedGemm> packed_rows;
  SinusoidalPositions positions;
  LearnedPositions learned_positions;  // instead of `positions` for PositionLayout::kLearned
  StackShape shape;
  LayerNorm layernorm_embedding;

  Embedder() = default;
  explicit Embedder(const StackShape& shape);
  // ids [batch, len] whose first position is absolute position `past_len`.
  at::Tensor forward(const at::Tensor& ids, int64_t past_len) const;
};

class TransformerEncoder {
 public:
  Embedder embed;
  std::vector<EncoderLayer> layers;
  LayerNorm layer_norm;                // defined only when shape.final_layer_norm
  RelativePositionBias relative_bias;  // defined only when shape.relative_buckets > 0
  // Runs the layers instead of the dense self-attention for a long-input family (null otherwise).
  std::shared_ptr<LongAttention> long_attention;
  AudioFrontEnd audio;  // defined only when shape.mel_bins > 0

  TransformerEncoder() = default;
  explicit TransformerEncoder(const StackShape& shape);

  // ids, attention_mask: [batch, src_len] (mask 1 = token, 0 = padding) -> [batch, src_len, dim].
  // global_mask (LED): [batch, src_len], 1 = a position with global attention; undefined = the
  // family's default (LongAttention::forward); ignored by the other families.
  at::Tensor forward(const at::Tensor& ids, const at::Tensor& attention_mask,
                     const at::Tensor& global_mask = at::Tensor()) const;
  // A speech encoder: features [batch, mel_bins, frames] -> [batch, (frames - 1) / 2 + 1, dim]
  // through the audio front end, the first rows of the learned positions (Error past the table),
  // the layers (nothing masked) and the final norm. Shapes are the caller's to check.
  at::Tensor forward_features(const at::Tensor& features) const;
  // Layers and norms under `prefix` ("model.encoder"); the token embedding is the model's.
  // `after_part(i, part)` runs once that part of layer i has its parameters visited (loading
  // packs it there).
  void visit(const std::string& prefix, const ParamVisitor& visitor,
             const std::function<void(size_t, LayerPart)>& after_part = {});
  void visit_linears(const std::string& prefix, const LinearVisitor& visitor);
  void pack(GemmType type);  // inference: see Linear::pack
};

// Everything a decoder needs between steps for a batch of hypotheses.
//
// The encoder memory is kept once per source, not once per hypothesis: the beams of a
// sentence share it, so beam reordering never copies it, and cross-attention runs the
// `group` hypotheses of a source as `group` queries against one memory (one GEMM, not
// `group`). Rows are grouped as beam search lays them out: source i owns rows
// i*group .. i*group+group-1.
struct DecoderState {
  std::vector<KeyValue> self_cache;  // per layer, [rows, heads, length, head_dim]
  std::vector<KeyValue> memory;      // per layer, [sources, heads, src_len, head_dim]
  at::Tensor memory_mask;            // additive [sources, 1, 1, src_len]
  int64_t group = 1;                 // hypotheses per source (rows = sources * group)
  int64_t length = 0;                // positions decoded so far
  // When set, each forward() leaves every layer's cross-attention weights of the positions it
  // ran in `cross_attention` ([rows, heads, new_len, src_len] per layer).
  bool record_cross_attention = false;
  std::vector<at::Tensor> cross_attention;

  int64_t rows() const { return memory_mask.size(0) * group; }
  // Keeps hypotheses `indices` (int64 [new_rows]): beam expansion and reordering, dropping
  // finished rows. Memory rows are copied only when sources leave or the rows stop being
  // grouped by source.
  void select(const at::Tensor& indices);
};

class TransformerDecoder {
 public:
  Embedder embed;
  std::vector<DecoderLayer> layers;
  LayerNorm layer_norm;
  RelativePositionBias relative_bias;  // defined only when shape.relative_buckets > 0 (causal)

  TransformerDecoder() = default;
  explicit TransformerDecoder(const StackShape& shape);

  // Precomputes every layer's cross-attention keys/values for `encoder_out` [batch, src, dim].
  DecoderState start(const at::Tensor& encoder_out, const at::Tensor& encoder_attention_mask) const;
  // ids [rows, new_len] -> hidden states [rows, new_len, dim]; advances `state`.
  at::Tensor forward(const at::Tensor& ids, DecoderState& state) const;
  void visit(const std::string& prefix, const ParamVisitor& visitor,
             const std::function<void(size_t, LayerPart)>& after_part = {});  // as the encoder's
  void visit_linears(const std::string& prefix, const LinearVisitor& visitor);
  void pack(GemmType type);  // inference: see Linear::pack
};

}  // namespace ordo::nn
