#include "pipeline/tokenizer_loading.h"

#include "ordo/error.h"
#include "text/whisper_tokenizer.h"

namespace ordo::pipeline {

std::unique_ptr<text::Tokenizer> load_tokenizer(const std::string& dir, const models::FamilySpec& family,
                                                const io::ModelConfig& config) {
  switch (family.tokenizer) {
    case models::TokenizerKind::kMarian:
      return text::load_marian_tokenizer(dir, !config.share_encoder_decoder_embeddings);
    case models::TokenizerKind::kPegasus: return text::load_pegasus_tokenizer(dir);
    case models::TokenizerKind::kM2M100: return text::load_m2m100_tokenizer(dir);
    case models::TokenizerKind::kNllb: return text::load_nllb_tokenizer(dir);
    case models::TokenizerKind::kFsmt: return text::load_fsmt_tokenizer(dir);
    case models::TokenizerKind::kBart: return text::load_bart_tokenizer(dir);
    case models::TokenizerKind::kMBart50: return text::load_mbart50_tokenizer(dir);
    case models::TokenizerKind::kMBart: return text::load_mbart_tokenizer(dir);
    case models::TokenizerKind::kT5: return text::load_t5_tokenizer(dir);
    case models::TokenizerKind::kWhisper: return text::load_whisper_tokenizer(dir);
  }
  throw Error(dir + ": no tokenizer for model family " + family.name);
}

}  // namespace ordo::pipeline
