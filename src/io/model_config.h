// The parts of a Hugging Face config.json and generation_config.json that ordo uses, as
// plain structs. Parsing validates types and ranges and names the file and field on error.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ordo::io {

struct ModelConfig {
  std::string path;                        // the config.json it was read from, for error messages
  std::string model_type;                  // "marian", "pegasus", "m2m_100", ...
  std::vector<std::string> architectures;  // e.g. {"MarianMTModel"}
  // config.json's tokenizer_class, else tokenizer_config.json's (beside it); "" if neither.
  std::string tokenizer_class;

  int64_t d_model = 0;
  int64_t encoder_layers = 0;
  int64_t decoder_layers = 0;
  int64_t encoder_attention_heads = 0;
  int64_t decoder_attention_heads = 0;
  int64_t encoder_ffn_dim = 0;
  int64_t decoder_ffn_dim = 0;
  std::string activation_function = "gelu";                     // "swish"/"silu", "gelu", "relu", "gelu_new", ...
  std::string activation_function_key = "activation_function";  // T5: "feed_forward_proj"
  // T5 (model_type "t5", "mt5"): the config names its sizes num_layers, num_decoder_layers,
  // num_heads, d_ff and d_kv, and these four are set from it. `head_dim` is d_kv (num_heads x
  // d_kv need not be d_model; 0 elsewhere: d_model / heads); `gated_activation` is
  // feed_forward_proj "gated-<act>" (act(wi_0 x) * wi_1 x); the relative position buckets are
  // 0 for the families with absolute positions.
  int64_t head_dim = 0;
  bool gated_activation = false;
  double layer_norm_epsilon = 1e-5;
  int64_t relative_attention_num_buckets = 0;
  int64_t relative_attention_max_distance = 0;
  int64_t vocab_size = 0;
  int64_t decoder_vocab_size = 0;  // = vocab_size unless the config says otherwise
  // The config.json keys the two sizes came from, for error messages ("src_vocab_size" and
  // "tgt_vocab_size" for FSMT).
  std::string vocab_size_key = "vocab_size";
  std::string decoder_vocab_size_key = "decoder_vocab_size";
  bool share_encoder_decoder_embeddings = true;
  bool tie_word_embeddings = true;
  int64_t max_position_embeddings = 0;
  bool scale_embedding = false;
  bool normalize_before = false;     // pre-norm layers (Pegasus, M2M100); Marian: false
  bool normalize_embedding = false;  // layernorm_embedding after embeddings (MBart-style)
  // The long-input families' encoder attention (nn/long_attention.h): LED's attention_window
  // (one per layer), LongT5's local_radius / global_block_size (and encoder_attention_type
  // "local" or "transient-global"), Pegasus-X's block_size / num_global_tokens /
  // stagger_local_blocks. Unused elsewhere.
  std::vector<int64_t> attention_window;
  std::string encoder_attention_type;
  int64_t local_radius = 0;
  int64_t global_block_size = 0;
  int64_t block_size = 0;
  int64_t num_global_tokens = 0;
  bool stagger_local_blocks = false;
  // LED: the encoder's and the decoder's position tables differ in length
  // (max_encoder_position_embeddings, max_decoder_position_embeddings); 0 elsewhere, where
  // max_position_embeddings serves both.
  int64_t max_encoder_position_embeddings = 0;
  int64_t max_decoder_position_embeddings = 0;
  // Whisper (model_type "whisper"): the mel bins of the input features (num_mel_bins; 0 for a text
  // model). Its max_source_positions (encoder frames after the convolutions) is read into
  // max_position_embeddings and its max_target_positions into max_decoder_position_embeddings;
  // config_key() names them as the file does. Absent keys take WhisperConfig's defaults (80,
  // 1500, 448).
  int64_t num_mel_bins = 0;
  // Whisper: the width of the median filter over the alignment heads' weights (word timestamps;
  // median_filter_width, default 7, positive and odd).
  int64_t median_filter_width = 7;

  int64_t pad_token_id = 0;
  int64_t eos_token_id = 0;
  std::optional<int64_t> bos_token_id;
  int64_t decoder_start_token_id = 0;
  std::optional<int64_t> forced_bos_token_id;
  std::optional<int64_t> forced_eos_token_id;
  std::vector<std::vector<int64_t>> bad_words_ids;
};

// Reads `<dir>/config.json`. Required: d_model, encoder_layers, decoder_layers,
// encoder_attention_heads, decoder_attention_heads, encoder_ffn_dim, decoder_ffn_dim,
// vocab_size, max_position_embeddings, pad_token_id, eos_token_id, decoder_start_token_id
// (for Pegasus the start id defaults to pad). FSMT configs (model_type "fsmt") name the sizes
// src_vocab_size / tgt_vocab_size, and keys they leave out take FSMTConfig's defaults, as in
// Hugging Face. T5 configs (model_type "t5", "mt5", "longt5") name them num_layers, num_decoder_layers,
// num_heads, d_ff, d_kv and feed_forward_proj, with T5Config's / MT5Config's / LongT5Config's defaults;
// they have no max_position_embeddings (relative positions): n_positions stands for it (default
// 512; LongT5 16384). LongT5 adds encoder_attention_type ("local" or "transient-global"),
// local_radius and global_block_size. Throws ordo::Error("<path>: field 'x' ...").
ModelConfig load_model_config(const std::string& config_json_path);

// The key `config`'s config.json spells one of the generic fields above with, for messages:
// "encoder_layers" is "num_layers" in a T5 config, "vocab_size" "src_vocab_size" in FSMT's.
std::string config_key(const ModelConfig& config, const std::string& field);

// How many positions the decoder's table holds: LED's max_decoder_position_embeddings,
// max_position_embeddings elsewhere (and the config.json field that says so, for messages).
// The encoder's is max_position_embeddings (for LED its max_encoder_position_embeddings).
int64_t decoder_positions(const ModelConfig& config);
std::string decoder_positions_key(const ModelConfig& config);

// generate()'s forced_decoder_ids: (index, token) pairs; the token is forced when the sequence
// (decoder start included) is `index` long; std::nullopt leaves that step free.
using ForcedDecoderIds = std::vector<std::pair<int64_t, std::optional<int64_t>>>;

// Decoding defaults from generation_config.json (or, when absent, the same keys in config.json).
struct GenerationConfig {
  std::string source;  // "generation_config.json" or "config.json": where these came from
  std::string path;    // the file they were read from, for error messages
  std::optional<int64_t> num_beams;
  std::optional<int64_t> num_return_sequences;
  std::optional<int64_t> max_length;
  std::optional<int64_t> max_new_tokens;
  std::optional<int64_t> min_length;
  std::optional<int64_t> min_new_tokens;
  std::optional<double> length_penalty;
  std::optional<bool> early_stopping;
  std::optional<int64_t> no_repeat_ngram_size;
  std::optional<double> repetition_penalty;
  std::optional<std::vector<std::vector<int64_t>>> bad_words_ids;
  std::optional<int64_t> forced_bos_token_id;
  std::optional<int64_t> forced_eos_token_id;
  std::optional<bool> renormalize_logits;
  std::optional<bool> do_sample;
  std::optional<double> temperature;
  std::optional<int64_t> top_k;
  std::optional<double> top_p;
  std::optional<int64_t> pad_token_id;
  std::optional<int64_t> eos_token_id;
  std::optional<int64_t> decoder_start_token_id;

  // Token suppression and forcing (generate() applies them for any model; Whisper's files set
  // them). forced_decoder_ids: (sequence length at which it applies, token), a null token
  // leaving that step free (Whisper's language detection: [1, null]).
  std::optional<std::vector<int64_t>> suppress_tokens;
  std::optional<std::vector<int64_t>> begin_suppress_tokens;
  std::optional<ForcedDecoderIds> forced_decoder_ids;
  // Whisper's generation_config.json: the timestamp rules' <|notimestamps|> (timestamps are the
  // ids after it) and how far the first timestamp may be (a null keeps it unset: no limit),
  // the language and task tokens ("<|de|>" -> id, "transcribe" -> id), the decoder
  // cross-attention heads that align words with audio ([layer, head]), and return_timestamps
  // (read; transformers 4.31's generate() takes timestamps from its argument only).
  std::optional<int64_t> no_timestamps_token_id;
  std::optional<int64_t> max_initial_timestamp_index;
  std::optional<bool> is_multilingual;
  std::optional<std::map<std::string, int64_t>> lang_to_id;
  std::optional<std::map<std::string, int64_t>> task_to_id;
  std::optional<std::vector<std::pair<int64_t, int64_t>>> alignment_heads;
  std::optional<bool> return_timestamps;
};

// Reads generation_config.json if it exists at `path`; returns an empty GenerationConfig
// (all unset) if the file does not exist. Malformed content throws ordo::Error.
GenerationConfig load_generation_config(const std::string& generation_config_json_path);

// The same keys read from a config.json (HF falls back to them when there is no
// generation_config.json).
GenerationConfig generation_config_from_model_config(const std::string& config_json_path);

// Checks every token id of `generation` (pad, eos, decoder start, forced BOS/EOS, bad words,
// suppressed and forced tokens, Whisper's <|notimestamps|> with a timestamp after it, the
// language and task ids) against the model's target vocabulary, and the alignment heads
// against its decoder layers and heads. Throws ordo::Error naming the file and the field.
void check_generation_ids(const GenerationConfig& generation, const ModelConfig& model);

// One entry of config.json's task_specific_params (T5: "summarization", "translation_en_to_de",
// ...): the text the transformers pipeline of that task puts before each input, and the
// generation settings it lays over generation_config.json.
struct TaskParams {
  std::string name;           // "summarization"
  std::string prefix;         // "summarize: "; "" when the entry has none
  GenerationConfig settings;  // source "config.json task_specific_params.<name>"
};

// config.json's task_specific_params, sorted by name; empty without it. Throws ordo::Error
// naming the file and the field (e.g. "task_specific_params.summarization: field 'num_beams'").
std::vector<TaskParams> load_task_params(const std::string& config_json_path);

}  // namespace ordo::io
