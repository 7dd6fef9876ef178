// An encoder-decoder transformer assembled from nn/ for one family, with its weights.
// Immutable after loading: concurrent translations share it read-only.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "io/model_config.h"
#include "models/checkpoint.h"
#include "models/family.h"
#include "nn/transformer.h"

namespace ordo::models {

struct PackedCacheOptions;  // models/packed_cache.h
class PackedCacheWriter;    // models/packed_cache.h

// A vocabulary shortlist for one batch (pipeline/vocab_map.h, DecodeOptions::use_vmap): the
// target ids it may produce (sorted, int64) and the output projection over their rows only.
struct Shortlist {
  at::Tensor ids;
  nn::Linear projection;
};

class Seq2SeqModel {
 public:
  // Allocates every parameter with the shape `config` implies (values unset).
  Seq2SeqModel(io::ModelConfig config, FamilySpec family);
  // Waits for the packed weights cache file being written, if any (wait_for_cache_file).
  ~Seq2SeqModel();
  Seq2SeqModel(Seq2SeqModel&&);  // (no assignment: the writer must end before the weights go)

  // Loads `<dir>/config.json` and the weights in `<dir>/model.safetensors` (or the legacy
  // pytorch_model.bin).
  static std::shared_ptr<Seq2SeqModel> load(const std::string& model_dir);
  // The same with config.json already read (and its family chosen). The sizes the config gives
  // are checked against the checkpoint's tensor shapes before anything is allocated.
  // With `pack_as`, each layer is packed as soon as it is read (inference only, as pack()):
  // the whole model never sits in memory in float32 next to its packed copy.
  // With `pack_as` and an enabled `cache` (models/packed_cache.h), a model packed before for
  // the same checkpoint and type is mapped from the cache instead, and a new one is saved there.
  static std::shared_ptr<Seq2SeqModel> load(const std::string& model_dir, io::ModelConfig config, FamilySpec family,
                                            std::optional<nn::GemmType> pack_as = std::nullopt,
                                            const PackedCacheOptions* cache = nullptr);
  // Returns once the cache file this load writes in the background (PackedCacheOptions::
  // write_in_background) is complete or given up; at once otherwise. The destructor calls it.
  void wait_for_cache_file() const;

  // Fills every parameter from a checkpoint, checking presence and shape; tied weights
  // (shared embeddings, output projection) are resolved the way Hugging Face ties them.
  void load_weights(const Checkpoint& weights, std::optional<nn::GemmType> pack_as = std::nullopt);

  // Every parameter under its Hugging Face name, each tensor once (tied ones are visited under
  // the name save_pretrained() writes them with).
  void visit(const nn::ParamVisitor& visitor);

  // Every GEMM of the model (after packing too), "lm_head" being the output projection.
  void visit_linears(const nn::LinearVisitor& visitor);

  // Inference only, after loading: packs every GEMM's weights for `type` (nn/packed_gemm.h).
  // The model can no longer be trained or saved.
  void pack(nn::GemmType type);

  // ids, attention_mask: [batch, src_len] -> encoder output [batch, src_len, d_model].
  // global_mask: LED's global attention positions (TransformerEncoder::forward).
  at::Tensor encode(const at::Tensor& ids, const at::Tensor& attention_mask,
                    const at::Tensor& global_mask = at::Tensor()) const;
  // A speech model (FamilySpec::speech_encoder): features [batch, num_mel_bins, frames], float32,
  // frames = 2 x max_source_positions (3,000 = 30 s for every Whisper) -> encoder output
  // [batch, frames / 2, d_model]. Throws ordo::Error naming the field at fault for another
  // shape or type, and for a text model (whose encode() in turn refuses a speech model).
  at::Tensor encode_features(const at::Tensor& features) const;
  nn::DecoderState start_decoding(const at::Tensor& encoder_out, const at::Tensor& attention_mask) const {
    return decoder_.start(encoder_out, attention_mask);
  }
  // The same with nothing masked (a speech encoder's output has no padding).
  nn::DecoderState start_decoding(const at::Tensor& encoder_out) const;
  // Runs the decoder on `ids` [rows, new_len] and returns the logits of the LAST position
  // only, [rows, vocab] (the output projection is the costliest GEMM: skip the others).
  at::Tensor next_logits(const at::Tensor& ids, nn::DecoderState& state) const;
  // The decoder's newest position for `ids`, [rows, d_model]: next_logits() is
  // project(next_hidden()).
  at::Tensor next_hidden(const at::Tensor& ids, nn::DecoderState& state) const;
  // The output projection of decoder outputs [..., d_model] -> [..., vocab] (T5's scaling first).
  at::Tensor project(const at::Tensor& hidden) const;
  // The same with only the logits that can be a row's largest exact (nn::PackedGemm::
  // forward_bounded): for greedy search without scores.
  nn::PackedGemm::Bounded project_bounded(const at::Tensor& hidden) const;
  // The same through a shortlist's projection: [rows, vocab], -inf outside shortlist.ids.
  at::Tensor next_logits(const at::Tensor& ids, nn::DecoderState& state, const Shortlist& shortlist) const;
  // The shortlist of target ids `ids` (sorted int64): those rows of the output projection and
  // its bias, read back from the packed weights and packed again in the model's type.
  Shortlist shortlist(const at::Tensor& ids) const;
  // Logits for every position, [rows, new_len, vocab] (teacher forcing, training).
  at::Tensor all_logits(const at::Tensor& ids, nn::DecoderState& state) const;

  const io::ModelConfig& config() const { return config_; }
  const FamilySpec& family() const { return family_; }
  nn::TransformerEncoder& encoder() { return encoder_; }
  nn::TransformerDecoder& decoder() { return decoder_; }

 private:
  void compact_embeddings(nn::GemmType type);  // after packing: see seq2seq_model.cpp

  io::ModelConfig config_;
  FamilySpec family_;
  nn::TransformerEncoder encoder_;
  nn::TransformerDecoder decoder_;
  nn::Linear output_;  // weight tied to the decoder embedding unless the config unties it;
                       // bias = final_logits_bias
  // int8 only, for a shared embedding table that is not the output projection (T5 v1.1,
  // Flan-T5, mT5): the table packed as an int8 GEMM that is never run, only read back by the
  // lookups (PackedGemm::rows), as CTranslate2 keeps int8 embeddings: half the bfloat16 table.
  nn::Linear embed_lookup_;
  // Writing the packed weights cache file after load() returned (joined by the destructor).
  std::unique_ptr<PackedCacheWriter> cache_writer_;
};

}  // namespace ordo::models
