#include <algorithm>

#include "models/family.h"
#include "ordo/error.h"
#include "ordo/model_types.h"

namespace ordo::models {

namespace {

std::vector<FamilySpec> all_families() {
  return {marian_family(), pegasus_family(), m2m100_family(),    fsmt_family(), bart_family(),   mbart_family(),
          t5_family(),     longt5_family(),  pegasus_x_family(), led_family(),  whisper_family()};
}

// LongT5's encoder attention is config.json's encoder_attention_type (local by default).
FamilySpec with_encoder_attention(FamilySpec family, const io::ModelConfig& config) {
  if (family.long_attention == nn::LongAttentionKind::kLongT5Local &&
      config.encoder_attention_type == "transient-global")
    family.long_attention = nn::LongAttentionKind::kLongT5TransientGlobal;
  return family;
}

bool contains(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

// NLLB checkpoints are M2M100 models whose folder names another tokenizer. mBART folders name
// theirs: "MBart50Tokenizer(Fast)" is mBART-50's layout; anything else is MBartTokenizer's
// (mbart-large-cc25), which Hugging Face's AutoTokenizer also picks when no class is named.
FamilySpec with_tokenizer(FamilySpec family, const io::ModelConfig& config) {
  if (family.tokenizer == TokenizerKind::kM2M100 && config.tokenizer_class.rfind("Nllb", 0) == 0)
    family.tokenizer = TokenizerKind::kNllb;
  if (family.tokenizer == TokenizerKind::kMBart50 || family.tokenizer == TokenizerKind::kMBart)
    family.tokenizer =
        config.tokenizer_class.rfind("MBart50", 0) == 0 ? TokenizerKind::kMBart50 : TokenizerKind::kMBart;
  return family;
}

}  // namespace

nn::PositionEncodingSpec position_spec(const io::ModelConfig& config, const FamilySpec& family) {
  nn::PositionEncodingSpec spec;
  spec.layout = family.position_layout;
  // BartLearnedPositionalEmbedding's offset: 2 in Hugging Face, whatever the pad id (LED: 0).
  if (family.position_layout == PositionLayout::kLearned) spec.offset = family.learned_position_offset;
  if (family.fairseq_positions) {
    spec.offset = config.pad_token_id + 1;
    spec.zero_row = config.pad_token_id;
  }
  return spec;
}

std::string checkpoint_name(const FamilySpec& family, const io::ModelConfig& config, const std::string& name) {
  return family.checkpoint_name ? family.checkpoint_name(name, config) : name;
}

FamilySpec family_for(const io::ModelConfig& config) {
  const std::vector<FamilySpec> families = all_families();
  for (const FamilySpec& family : families)
    if (contains(family.model_types, config.model_type))
      return with_encoder_attention(with_tokenizer(family, config), config);
  for (const FamilySpec& family : families)
    for (const std::string& architecture : config.architectures)
      if (contains(family.architectures, architecture))
        return with_encoder_attention(with_tokenizer(family, config), config);

  std::string supported;
  for (const std::string& type : ordo::supported_model_types()) supported += (supported.empty() ? "" : ", ") + type;
  std::string architectures;
  for (const std::string& a : config.architectures) architectures += (architectures.empty() ? "" : ", ") + a;
  throw Error(config.path + ": unsupported model_type '" + config.model_type + "' (architectures: " +
              (architectures.empty() ? "none" : architectures) + "); supported model types: " + supported);
}

}  // namespace ordo::models

namespace ordo {

std::vector<std::string> supported_model_types() {
  std::vector<std::string> types;
  for (const models::FamilySpec& family : models::all_families())
    types.insert(types.end(), family.model_types.begin(), family.model_types.end());
  return types;
}

}  // namespace ordo
