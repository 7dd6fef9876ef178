#include "io/model_config.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <type_traits>

#include "io/file.h"
#include "io/json_file.h"
#include "ordo/error.h"

namespace ordo::io {
namespace {

// Older configs write "eos_token_id": [2] or similar lists; HF takes the first element for
// Marian/Pegasus/M2M100 seq2seq models.
std::optional<int64_t> optional_token_id(const nlohmann::json& object, const JsonFields& fields,
                                         const std::string& key) {
  const auto it = object.find(key);
  if (it != object.end() && it->is_array()) {
    if (it->empty() || !(*it)[0].is_number_integer())
      fields.fail(key, "must be a token id or a non-empty list of token ids");
    return (*it)[0].get<int64_t>();
  }
  return fields.optional_int(key);
}

// Sizes far beyond any real checkpoint are refused before anything is allocated from them
// (a position table of 2^56 rows would overflow the size arithmetic; one of 2^30 would take
// all memory). The limits are generous: NLLB-200 has a 256k vocabulary, tc-big d_model 1024.
constexpr int64_t kMaxModelDim = 1 << 16;  // d_model, ffn dims
constexpr int64_t kMaxLayers = 1 << 10;
constexpr int64_t kMaxVocab = 1 << 24;
constexpr int64_t kMaxPositions = 1 << 20;
constexpr int64_t kMaxPositionTable = int64_t{1} << 28;  // rows x d_model floats (1 GiB)
// Decoding sizes from generation_config.json; beams and lengths beyond these are mistakes.
constexpr int64_t kMaxBeams = 1024;
constexpr int64_t kMaxLength = 1 << 20;

void check_range(const JsonFields& fields, const std::string& key, int64_t value, int64_t low, int64_t high) {
  if (value < low || value > high)
    fields.fail(key, "is " + std::to_string(value) + ", outside the accepted range [" + std::to_string(low) + ", " +
                         std::to_string(high) + "]");
}

void check_finite(const JsonFields& fields, const std::string& key, const std::optional<double>& value) {
  if (value && !std::isfinite(*value)) fields.fail(key, "must be a finite number");
}

void check_token_id(const JsonFields& fields, const std::string& key, int64_t id, int64_t vocab) {
  if (id < 0 || id >= vocab)
    fields.fail(key, "is " + std::to_string(id) + ", outside the vocabulary [0, " + std::to_string(vocab) + ")");
}

// A config.json is read into its model type's config class in Hugging Face, whose constructor
// supplies the keys the file leaves out (a null value is kept: it means None). Only FSMT needs
// this here: its FSMTConfig defaults (transformers 4.31) differ from the generic ones, and the
// WMT19 configs on the hub rely on them (e.g. decoder_start_token_id, forced_eos_token_id,
// max_length 200, num_beams 5).
nlohmann::json with_class_defaults(nlohmann::json object) {
  const nlohmann::json type = object.is_object() ? object.value("model_type", nlohmann::json()) : nlohmann::json();
  if (type == "t5" || type == "mt5" || type == "longt5") {
    // T5Config / MT5Config / LongT5Config (transformers 4.31); num_decoder_layers defaults to
    // num_layers. LongT5Config has T5Config's defaults plus its encoder attention's, and no
    // n_positions: 16384, the input length LongT5 was fine-tuned on, stands for it.
    const bool mt5 = object["model_type"] == "mt5";
    const nlohmann::json longt5 = {
        {"local_radius", 127}, {"global_block_size", 16}, {"encoder_attention_type", "local"}, {"n_positions", 16384}};
    if (type == "longt5")
      for (const auto& [key, value] : longt5.items())
        if (!object.contains(key) || object[key].is_null()) object[key] = value;
    const nlohmann::json t5 = {{"vocab_size", mt5 ? 250112 : 32128},
                               {"d_model", 512},
                               {"d_kv", 64},
                               {"d_ff", mt5 ? 1024 : 2048},
                               {"num_layers", mt5 ? 8 : 6},
                               {"num_heads", mt5 ? 6 : 8},
                               {"relative_attention_num_buckets", 32},
                               {"relative_attention_max_distance", 128},
                               {"layer_norm_epsilon", 1e-6},
                               {"feed_forward_proj", mt5 ? "gated-gelu" : "relu"},
                               {"tie_word_embeddings", !mt5},
                               {"n_positions", 512},
                               {"pad_token_id", 0},
                               {"eos_token_id", 1},
                               {"decoder_start_token_id", 0}};
    for (const auto& [key, value] : t5.items())
      if (!object.contains(key) || object[key].is_null()) object[key] = value;
    if (!object.contains("num_decoder_layers") || object["num_decoder_layers"].is_null())
      object["num_decoder_layers"] = object["num_layers"];
    return object;
  }
  if (!object.is_object() || object.value("model_type", nlohmann::json()) != "fsmt") return object;
  static const nlohmann::json fsmt = {{"src_vocab_size", 42024},
                                      {"tgt_vocab_size", 42024},
                                      {"activation_function", "relu"},
                                      {"d_model", 1024},
                                      {"max_length", 200},
                                      {"max_position_embeddings", 1024},
                                      {"encoder_ffn_dim", 4096},
                                      {"encoder_layers", 12},
                                      {"encoder_attention_heads", 16},
                                      {"decoder_ffn_dim", 4096},
                                      {"decoder_layers", 12},
                                      {"decoder_attention_heads", 16},
                                      {"decoder_start_token_id", 2},
                                      {"scale_embedding", true},
                                      {"tie_word_embeddings", false},
                                      {"num_beams", 5},
                                      {"length_penalty", 1.0},
                                      {"early_stopping", false},
                                      {"pad_token_id", 1},
                                      {"bos_token_id", 0},
                                      {"eos_token_id", 2},
                                      {"forced_eos_token_id", 2}};
  for (const auto& [key, value] : fsmt.items())
    if (!object.contains(key)) object[key] = value;
  return object;
}

// A non-negative integer in a JSON value (an element of a list, a value of a map).
bool is_id(const nlohmann::json& value) { return value.is_number_integer() && value.get<int64_t>() >= 0; }

std::optional<std::vector<int64_t>> optional_id_list(const nlohmann::json& object, const JsonFields& f,
                                                     const std::string& key) {
  if (!f.has(key)) return std::nullopt;
  const nlohmann::json& list = object.at(key);
  if (!list.is_array()) f.fail(key, "must be a list of token ids, found " + list.dump());
  std::vector<int64_t> ids;
  for (const nlohmann::json& id : list) {
    if (!is_id(id)) f.fail(key, "must contain non-negative token ids, found " + id.dump());
    ids.push_back(id.get<int64_t>());
  }
  return ids;
}

// [[index, token or null], ...] (forced_decoder_ids) or [[layer, head], ...] (alignment_heads).
template <class Second>
std::optional<std::vector<std::pair<int64_t, Second>>> optional_pairs(const nlohmann::json& object, const JsonFields& f,
                                                                      const std::string& key,
                                                                      const std::string& shape) {
  if (!f.has(key)) return std::nullopt;
  const nlohmann::json& list = object.at(key);
  if (!list.is_array()) f.fail(key, "must be a list of " + shape + " pairs, found " + list.dump());
  std::vector<std::pair<int64_t, Second>> pairs;
  for (const nlohmann::json& pair : list) {
    const bool null_second =
        std::is_same_v<Second, std::optional<int64_t>> && pair.is_array() && pair.size() == 2 && pair[1].is_null();
    if (!pair.is_array() || pair.size() != 2 || !is_id(pair[0]) || (!null_second && !is_id(pair[1])))
      f.fail(key, "must be a list of " + shape + " pairs of non-negative integers, found element " + pair.dump());
    check_range(f, key, pair[0].get<int64_t>(), 0, kMaxLength);
    pairs.emplace_back(pair[0].get<int64_t>(), null_second ? Second() : Second(pair[1].get<int64_t>()));
  }
  return pairs;
}

// {"<|de|>": 50261, ...} (lang_to_id) or {"transcribe": 50359, ...} (task_to_id).
std::optional<std::map<std::string, int64_t>> optional_id_map(const nlohmann::json& object, const JsonFields& f,
                                                              const std::string& key) {
  if (!f.has(key)) return std::nullopt;
  const nlohmann::json& map = object.at(key);
  if (!map.is_object()) f.fail(key, "must be an object mapping names to token ids, found " + map.dump());
  std::map<std::string, int64_t> ids;
  for (const auto& [name, id] : map.items()) {
    if (!is_id(id)) f.fail(key, "must map names to non-negative token ids, found \"" + name + "\": " + id.dump());
    ids[name] = id.get<int64_t>();
  }
  return ids;
}

GenerationConfig read_generation_fields(const nlohmann::json& object, const std::string& path) {
  const JsonFields f(object, path);
  GenerationConfig g;
  g.num_beams = f.optional_int("num_beams");
  g.num_return_sequences = f.optional_int("num_return_sequences");
  g.max_length = f.optional_int("max_length");
  g.max_new_tokens = f.optional_int("max_new_tokens");
  g.min_length = f.optional_int("min_length");
  g.min_new_tokens = f.optional_int("min_new_tokens");
  g.length_penalty = f.optional_number("length_penalty");
  // HF also allows early_stopping: "never"; it behaves like False except for the is_done check.
  if (object.contains("early_stopping") && object["early_stopping"].is_string()) {
    if (object["early_stopping"] != "never") f.fail("early_stopping", "must be true, false or \"never\"");
    g.early_stopping = false;
  } else {
    g.early_stopping = f.optional_bool("early_stopping");
  }
  g.no_repeat_ngram_size = f.optional_int("no_repeat_ngram_size");
  g.repetition_penalty = f.optional_number("repetition_penalty");
  g.bad_words_ids = f.optional_int_lists("bad_words_ids");
  g.forced_bos_token_id = f.optional_int("forced_bos_token_id");
  g.forced_eos_token_id = optional_token_id(object, f, "forced_eos_token_id");
  g.renormalize_logits = f.optional_bool("renormalize_logits");
  g.do_sample = f.optional_bool("do_sample");
  g.temperature = f.optional_number("temperature");
  g.top_k = f.optional_int("top_k");
  g.top_p = f.optional_number("top_p");
  g.pad_token_id = f.optional_int("pad_token_id");
  g.eos_token_id = optional_token_id(object, f, "eos_token_id");
  g.decoder_start_token_id = f.optional_int("decoder_start_token_id");
  for (const auto& [key, value] :
       {std::pair{"num_beams", g.num_beams}, {"num_return_sequences", g.num_return_sequences}})
    if (value) check_range(f, key, *value, 1, kMaxBeams);
  for (const auto& [key, value] : {std::pair{"max_length", g.max_length},
                                   {"max_new_tokens", g.max_new_tokens},
                                   {"min_length", g.min_length},
                                   {"min_new_tokens", g.min_new_tokens},
                                   {"no_repeat_ngram_size", g.no_repeat_ngram_size},
                                   {"top_k", g.top_k}})
    if (value) check_range(f, key, *value, 0, kMaxLength);
  for (const auto& [key, value] : {std::pair{"length_penalty", g.length_penalty},
                                   {"repetition_penalty", g.repetition_penalty},
                                   {"temperature", g.temperature},
                                   {"top_p", g.top_p}})
    check_finite(f, key, value);
  if (g.repetition_penalty && *g.repetition_penalty <= 0) f.fail("repetition_penalty", "must be positive");
  if (g.temperature && *g.temperature < 0) f.fail("temperature", "must not be negative");
  if (g.top_p && (*g.top_p < 0 || *g.top_p > 1)) f.fail("top_p", "must be in [0, 1]");

  g.suppress_tokens = optional_id_list(object, f, "suppress_tokens");
  g.begin_suppress_tokens = optional_id_list(object, f, "begin_suppress_tokens");
  g.forced_decoder_ids = optional_pairs<std::optional<int64_t>>(object, f, "forced_decoder_ids", "[index, token]");
  g.no_timestamps_token_id = f.optional_int("no_timestamps_token_id");
  g.max_initial_timestamp_index = f.optional_int("max_initial_timestamp_index");
  if (g.max_initial_timestamp_index)
    check_range(f, "max_initial_timestamp_index", *g.max_initial_timestamp_index, 0, kMaxLength);
  g.is_multilingual = f.optional_bool("is_multilingual");
  g.lang_to_id = optional_id_map(object, f, "lang_to_id");
  g.task_to_id = optional_id_map(object, f, "task_to_id");
  g.alignment_heads = optional_pairs<int64_t>(object, f, "alignment_heads", "[layer, head]");
  g.return_timestamps = f.optional_bool("return_timestamps");
  return g;
}

// The activation names transformers 4.31 knows (activations.py, ACT2FN): a T5 config naming
// another one fails there when the model is built. Which of them ordo computes is nn's concern.
constexpr const char* kTransformersActivations[] = {
    "gelu",          "gelu_10", "gelu_fast", "gelu_new", "gelu_python", "gelu_pytorch_tanh",
    "gelu_accurate", "laplace", "linear",    "mish",     "quick_gelu",  "relu",
    "relu2",         "relu6",   "sigmoid",   "silu",     "swish",       "tanh"};

// feed_forward_proj as T5Config.__init__ (transformers 4.31) reads it: split on '-', the last
// part is the activation, gated when the first part is "gated"; more than two parts, or two
// whose first is not "gated", raise its ValueError; "gated-gelu" means gelu_new. The file may
// also hold dense_act_fn and is_gated_act (T5Config saves them); transformers would let them
// override what feed_forward_proj says, so one that disagrees is refused rather than chosen.
void read_t5_feed_forward(const JsonFields& f, ModelConfig& c) {
  const std::string proj = f.optional_string("feed_forward_proj").value_or("relu");
  std::vector<std::string> parts{""};
  for (const char ch : proj) {
    if (ch == '-')
      parts.emplace_back();
    else
      parts.back() += ch;
  }
  if ((parts.size() > 1 && parts[0] != "gated") || parts.size() > 2)
    f.fail("feed_forward_proj", "is '" + proj +
                                    "', not a valid activation function of the dense layer: use the format "
                                    "'gated-{ACT_FN}' or '{ACT_FN}', e.g. 'gated-gelu' or 'relu'");
  c.gated_activation = parts[0] == "gated";
  c.activation_function = proj == "gated-gelu" ? "gelu_new" : parts.back();
  c.activation_function_key = "feed_forward_proj";
  if (std::find(std::begin(kTransformersActivations), std::end(kTransformersActivations), c.activation_function) ==
      std::end(kTransformersActivations)) {
    std::string known;
    for (const char* name : kTransformersActivations) known += std::string(known.empty() ? "" : ", ") + name;
    f.fail("feed_forward_proj", "is '" + proj + "': '" + c.activation_function +
                                    "' is not an activation function of transformers (" + known + ")");
  }
  const std::string implied = "feed_forward_proj '" + proj + "' implies ";
  if (const auto act = f.optional_string("dense_act_fn"); act && *act != c.activation_function)
    f.fail("dense_act_fn", "is '" + *act + "', but " + implied + "'" + c.activation_function + "'");
  if (const auto gated = f.optional_bool("is_gated_act"); gated && *gated != c.gated_activation)
    f.fail("is_gated_act", std::string("is ") + (*gated ? "true" : "false") + ", but " + implied +
                               (c.gated_activation ? "true" : "false"));
}

// T5's names for the sizes, its feed_forward_proj ("relu", "gated-gelu", ...) and its relative
// position buckets, as T5Config reads them (with_class_defaults filled in what the file omits).
void read_t5_fields(const JsonFields& f, ModelConfig& c) {
  c.encoder_layers = f.required_int("num_layers");
  c.decoder_layers = f.required_int("num_decoder_layers");
  c.encoder_attention_heads = c.decoder_attention_heads = f.required_int("num_heads");
  c.encoder_ffn_dim = c.decoder_ffn_dim = f.required_int("d_ff");
  c.head_dim = f.required_int("d_kv");
  for (const char* key : {"num_layers", "num_decoder_layers"}) check_range(f, key, f.required_int(key), 1, kMaxLayers);
  check_range(f, "num_heads", c.encoder_attention_heads, 1, kMaxModelDim);
  check_range(f, "d_ff", c.encoder_ffn_dim, 1, kMaxModelDim);
  check_range(f, "d_kv", c.head_dim, 1, kMaxModelDim);
  if (c.head_dim * c.encoder_attention_heads > kMaxModelDim)
    f.fail("d_kv", "(" + std::to_string(c.head_dim) + ") times num_heads (" +
                       std::to_string(c.encoder_attention_heads) + ") is larger than " + std::to_string(kMaxModelDim));
  read_t5_feed_forward(f, c);
  c.layer_norm_epsilon = f.optional_number("layer_norm_epsilon").value_or(1e-6);
  if (!(c.layer_norm_epsilon > 0 && c.layer_norm_epsilon < 1)) f.fail("layer_norm_epsilon", "must be in (0, 1)");
  c.relative_attention_num_buckets = f.required_int("relative_attention_num_buckets");
  c.relative_attention_max_distance = f.required_int("relative_attention_max_distance");
  check_range(f, "relative_attention_num_buckets", c.relative_attention_num_buckets, 4, 1 << 16);
  // The buckets' logarithm divides by ln(max_distance / max_exact), max_exact up to buckets / 2.
  check_range(f, "relative_attention_max_distance", c.relative_attention_max_distance,
              c.relative_attention_num_buckets / 2 + 1, kMaxPositions);
}

// LongT5's encoder self-attention (nn/longt5_attention.cpp): LongT5Block's two kinds, the
// local window's radius (blocks of local_radius + 1 tokens) and, for transient-global, the
// size of the blocks summed into global tokens.
void read_longt5_fields(const JsonFields& f, ModelConfig& c) {
  c.encoder_attention_type = f.optional_string("encoder_attention_type").value_or("local");
  if (c.encoder_attention_type != "local" && c.encoder_attention_type != "transient-global")
    f.fail("encoder_attention_type",
           "is '" + c.encoder_attention_type + "'; LongT5 has 'local' or 'transient-global' attention");
  c.local_radius = f.required_int("local_radius");
  check_range(f, "local_radius", c.local_radius, 0, kMaxPositions);
  c.global_block_size = f.required_int("global_block_size");
  check_range(f, "global_block_size", c.global_block_size, 1, kMaxPositions);
}

// LED's sizes (LEDConfig, transformers 4.31): two position tables of their own lengths, and the
// Longformer window of each encoder layer (attention_window: one even number for every layer,
// or a list of one per layer), which nn/longformer.cpp splits into w/2 positions on each side.
void read_led_fields(const nlohmann::json& object, const JsonFields& f, ModelConfig& c) {
  check_range(f, "encoder_layers", c.encoder_layers, 1, kMaxLayers);
  c.max_encoder_position_embeddings = f.optional_int("max_encoder_position_embeddings").value_or(16384);
  c.max_decoder_position_embeddings = f.optional_int("max_decoder_position_embeddings").value_or(1024);
  check_range(f, "max_encoder_position_embeddings", c.max_encoder_position_embeddings, 1, kMaxPositions);
  check_range(f, "max_decoder_position_embeddings", c.max_decoder_position_embeddings, 1, kMaxPositions);
  const auto it = object.find("attention_window");
  if (it == object.end() || it->is_null()) {
    c.attention_window.assign(c.encoder_layers, 512);
  } else if (it->is_number_integer()) {
    c.attention_window.assign(c.encoder_layers, it->get<int64_t>());
  } else if (it->is_array()) {
    for (const auto& window : *it) {
      if (!window.is_number_integer()) f.fail("attention_window", "must be an integer or a list of integers");
      c.attention_window.push_back(window.get<int64_t>());
    }
    if (static_cast<int64_t>(c.attention_window.size()) != c.encoder_layers)
      f.fail("attention_window", "lists " + std::to_string(c.attention_window.size()) +
                                     " windows, but encoder_layers is " + std::to_string(c.encoder_layers));
  } else {
    f.fail("attention_window", "must be an integer or a list of integers");
  }
  for (int64_t window : c.attention_window) {
    check_range(f, "attention_window", window, 2, kMaxPositions);
    if (window % 2 != 0) f.fail("attention_window", "is " + std::to_string(window) + ", which is not even");
  }
}

// Pegasus-X's encoder attention (PegasusXConfig, transformers 4.31; nn/pegasus_x_attention.cpp):
// blocks of block_size tokens, num_global_tokens learned global tokens, and on odd layers blocks
// shifted by block_size / 2 (which must then be a whole, non-zero number of tokens).
void read_pegasus_x_fields(const JsonFields& f, ModelConfig& c) {
  c.block_size = f.optional_int("block_size").value_or(512);
  check_range(f, "block_size", c.block_size, 1, kMaxPositions);
  c.num_global_tokens = f.optional_int("num_global_tokens").value_or(32);
  check_range(f, "num_global_tokens", c.num_global_tokens, 0, 1 << 16);
  c.stagger_local_blocks = f.optional_bool("stagger_local_blocks").value_or(true);
  if (c.stagger_local_blocks && (c.block_size < 2 || c.block_size % 2 != 0))
    f.fail("block_size", "is " + std::to_string(c.block_size) +
                             "; staggered blocks (stagger_local_blocks) shift by block_size / 2, so it must be even");
}

// Whisper's sizes (WhisperConfig, transformers 4.31, whose defaults fill in absent keys): the mel
// bins of its input features and its two position tables, max_source_positions encoder frames
// (after the stride-2 convolution: 1500 for 30 s) and max_target_positions decoder tokens.
void read_whisper_fields(const JsonFields& f, ModelConfig& c) {
  c.num_mel_bins = f.optional_int("num_mel_bins").value_or(80);
  check_range(f, "num_mel_bins", c.num_mel_bins, 1, 1024);
  c.max_position_embeddings = f.optional_int("max_source_positions").value_or(1500);
  c.max_decoder_position_embeddings = f.optional_int("max_target_positions").value_or(448);
  check_range(f, "max_source_positions", c.max_position_embeddings, 1, kMaxPositions);
  check_range(f, "max_target_positions", c.max_decoder_position_embeddings, 1, kMaxPositions);
  c.median_filter_width = f.optional_int("median_filter_width").value_or(7);
  if (c.median_filter_width < 1 || c.median_filter_width % 2 == 0)
    f.fail("median_filter_width", "must be a positive odd number");
}

}  // namespace

ModelConfig load_model_config(const std::string& path) {
  if (!path_exists(path))
    throw Error(path + ": cannot open file (a model folder needs the config.json of a Hugging Face checkpoint)");
  const nlohmann::json object = with_class_defaults(read_json_file(path));
  const JsonFields f(object, path);
  ModelConfig c;
  c.path = path;
  c.model_type = f.optional_string("model_type").value_or("");
  c.architectures = f.optional_strings("architectures").value_or(std::vector<std::string>{});
  c.tokenizer_class = f.optional_string("tokenizer_class").value_or("");
  const std::string tokenizer_config = path.substr(0, path.find_last_of('/') + 1) + "tokenizer_config.json";
  if (c.tokenizer_class.empty() && path_exists(tokenizer_config)) {
    const nlohmann::json t = read_json_file(tokenizer_config);
    if (t.is_object())
      c.tokenizer_class = JsonFields(t, tokenizer_config).optional_string("tokenizer_class").value_or("");
  }

  const bool t5 = c.model_type == "t5" || c.model_type == "mt5" || c.model_type == "longt5";
  c.d_model = f.required_int("d_model");
  if (t5) {
    read_t5_fields(f, c);
    if (c.model_type == "longt5") read_longt5_fields(f, c);
  } else {
    c.encoder_layers = f.required_int("encoder_layers");
    c.decoder_layers = f.required_int("decoder_layers");
    c.encoder_attention_heads = f.required_int("encoder_attention_heads");
    c.decoder_attention_heads = f.required_int("decoder_attention_heads");
    c.encoder_ffn_dim = f.required_int("encoder_ffn_dim");
    c.decoder_ffn_dim = f.required_int("decoder_ffn_dim");
    c.activation_function = f.optional_string("activation_function").value_or("gelu");
  }
  if (c.model_type == "fsmt") {
    // FSMT: separate source and target vocabularies; tie_word_embeddings shares the source and
    // target embeddings, and the output projection always is the decoder embedding.
    c.vocab_size_key = "src_vocab_size";
    c.decoder_vocab_size_key = "tgt_vocab_size";
    c.vocab_size = f.required_int("src_vocab_size");
    c.decoder_vocab_size = f.required_int("tgt_vocab_size");
    c.share_encoder_decoder_embeddings = f.optional_bool("tie_word_embeddings").value_or(false);
    c.tie_word_embeddings = true;
  } else {
    c.vocab_size = f.required_int("vocab_size");
    c.decoder_vocab_size = f.optional_int("decoder_vocab_size").value_or(c.vocab_size);
    c.share_encoder_decoder_embeddings = f.optional_bool("share_encoder_decoder_embeddings").value_or(true);
    c.tie_word_embeddings = f.optional_bool("tie_word_embeddings").value_or(true);
  }
  // T5 has no position table; its n_positions (unused by T5 itself) stands for the limit. LED's
  // encoder table is the source limit (its decoder's: max_decoder_position_embeddings).
  const bool led = c.model_type == "led";
  const bool whisper = c.model_type == "whisper";
  const char* const positions_key = t5        ? "n_positions"
                                    : led     ? "max_encoder_position_embeddings"
                                    : whisper ? "max_source_positions"
                                              : "max_position_embeddings";
  if (led) read_led_fields(object, f, c);
  if (c.model_type == "pegasus_x") read_pegasus_x_fields(f, c);
  if (whisper) read_whisper_fields(f, c);
  if (led) {
    c.max_position_embeddings = c.max_encoder_position_embeddings;
  } else if (!whisper) {
    c.max_position_embeddings = f.required_int(positions_key);
  }
  c.scale_embedding = f.optional_bool("scale_embedding").value_or(false);
  c.normalize_before = f.optional_bool("normalize_before").value_or(false);
  c.normalize_embedding = f.optional_bool("normalize_embedding").value_or(false);

  for (const auto& [key, high] : {std::pair{"d_model", kMaxModelDim},
                                  {"encoder_ffn_dim", kMaxModelDim},
                                  {"decoder_ffn_dim", kMaxModelDim},
                                  {"encoder_attention_heads", c.d_model},
                                  {"decoder_attention_heads", c.d_model},
                                  {"vocab_size", kMaxVocab},
                                  {"decoder_vocab_size", kMaxVocab},
                                  {"src_vocab_size", kMaxVocab},
                                  {"tgt_vocab_size", kMaxVocab},
                                  {positions_key, kMaxPositions}})
    if (f.has(key)) check_range(f, key, f.required_int(key), 1, high);
  // Zero layers is no model (a decoder of embeddings alone repeats one word): refused.
  if (!t5)
    for (const char* key : {"encoder_layers", "decoder_layers"})
      check_range(f, key, f.required_int(key), 1, kMaxLayers);
  if (t5) {
    // Checked in read_t5_fields: the heads' width is d_kv, not d_model / heads.
  } else if (c.d_model % c.encoder_attention_heads != 0)
    f.fail("encoder_attention_heads", "(" + std::to_string(c.encoder_attention_heads) + ") must divide d_model (" +
                                          std::to_string(c.d_model) + ")");
  if (!t5 && c.d_model % c.decoder_attention_heads != 0)
    f.fail("decoder_attention_heads", "(" + std::to_string(c.decoder_attention_heads) + ") must divide d_model (" +
                                          std::to_string(c.d_model) + ")");
  if (c.share_encoder_decoder_embeddings && c.decoder_vocab_size != c.vocab_size)
    f.fail(c.decoder_vocab_size_key,
           "differs from " + c.vocab_size_key + " but the embeddings are shared (" +
               (c.model_type == "fsmt" ? "tie_word_embeddings" : "share_encoder_decoder_embeddings") + " is true)");

  const std::optional<int64_t> pad = optional_token_id(object, f, "pad_token_id");
  const std::optional<int64_t> eos = optional_token_id(object, f, "eos_token_id");
  if (!pad) f.fail("pad_token_id", "is missing");
  if (!eos) f.fail("eos_token_id", "is missing");
  c.pad_token_id = *pad;
  c.eos_token_id = *eos;
  c.bos_token_id = optional_token_id(object, f, "bos_token_id");
  // Pegasus starts decoding from the pad token and its configs often omit the field.
  std::optional<int64_t> start = f.optional_int("decoder_start_token_id");
  if (!start && (c.model_type == "pegasus" || c.model_type == "pegasus_x")) start = c.pad_token_id;
  if (!start) f.fail("decoder_start_token_id", "is missing");
  c.decoder_start_token_id = *start;
  c.forced_bos_token_id = f.optional_int("forced_bos_token_id");
  c.forced_eos_token_id = optional_token_id(object, f, "forced_eos_token_id");
  c.bad_words_ids = f.optional_int_lists("bad_words_ids").value_or(std::vector<std::vector<int64_t>>{});

  check_token_id(f, "pad_token_id", c.pad_token_id, std::min(c.vocab_size, c.decoder_vocab_size));
  // The position table has max_position_embeddings rows (plus fairseq's small offset), each
  // d_model wide; both are bounded above, so the product cannot overflow.
  if (c.max_position_embeddings * c.d_model > kMaxPositionTable)
    f.fail(positions_key, "(" + std::to_string(c.max_position_embeddings) + ") times d_model (" +
                              std::to_string(c.d_model) + ") makes a position table larger than " +
                              std::to_string(kMaxPositionTable) + " values");
  if (c.max_decoder_position_embeddings * c.d_model > kMaxPositionTable)
    f.fail(decoder_positions_key(c), "(" + std::to_string(c.max_decoder_position_embeddings) + ") times d_model (" +
                                         std::to_string(c.d_model) + ") makes a position table larger than " +
                                         std::to_string(kMaxPositionTable) + " values");
  check_token_id(f, "eos_token_id", c.eos_token_id, c.decoder_vocab_size);
  check_token_id(f, "decoder_start_token_id", c.decoder_start_token_id, c.decoder_vocab_size);
  if (c.forced_bos_token_id) check_token_id(f, "forced_bos_token_id", *c.forced_bos_token_id, c.decoder_vocab_size);
  if (c.forced_eos_token_id) check_token_id(f, "forced_eos_token_id", *c.forced_eos_token_id, c.decoder_vocab_size);
  for (const auto& words : c.bad_words_ids)
    for (int64_t id : words) check_token_id(f, "bad_words_ids", id, c.decoder_vocab_size);
  return c;
}

std::string config_key(const ModelConfig& config, const std::string& field) {
  if (field == "vocab_size") return config.vocab_size_key;
  if (field == "decoder_vocab_size") return config.decoder_vocab_size_key;
  if (field == "activation_function") return config.activation_function_key;
  if (field == "max_position_embeddings" && config.max_encoder_position_embeddings > 0)
    return "max_encoder_position_embeddings";
  if (field == "max_position_embeddings" && config.model_type == "whisper") return "max_source_positions";
  if (config.model_type != "t5" && config.model_type != "mt5" && config.model_type != "longt5") return field;
  static const std::pair<const char*, const char*> t5[] = {{"encoder_layers", "num_layers"},
                                                           {"decoder_layers", "num_decoder_layers"},
                                                           {"encoder_attention_heads", "num_heads"},
                                                           {"decoder_attention_heads", "num_heads"},
                                                           {"encoder_ffn_dim", "d_ff"},
                                                           {"decoder_ffn_dim", "d_ff"},
                                                           {"max_position_embeddings", "n_positions"}};
  for (const auto& [generic, theirs] : t5)
    if (field == generic) return theirs;
  return field;
}

int64_t decoder_positions(const ModelConfig& config) {
  return config.max_decoder_position_embeddings > 0 ? config.max_decoder_position_embeddings
                                                    : config.max_position_embeddings;
}

std::string decoder_positions_key(const ModelConfig& config) {
  if (config.model_type == "whisper") return "max_target_positions";
  return config.max_decoder_position_embeddings > 0 ? "max_decoder_position_embeddings"
                                                    : config_key(config, "max_position_embeddings");
}

GenerationConfig load_generation_config(const std::string& path) {
  if (!path_exists(path)) return {};
  GenerationConfig g = read_generation_fields(read_json_file(path), path);
  g.source = "generation_config.json";
  g.path = path;
  return g;
}

GenerationConfig generation_config_from_model_config(const std::string& path) {
  GenerationConfig g = read_generation_fields(with_class_defaults(read_json_file(path)), path);
  g.source = "config.json";
  g.path = path;
  return g;
}

void check_generation_ids(const GenerationConfig& g, const ModelConfig& model) {
  const nlohmann::json none = nlohmann::json::object();
  const JsonFields f(none, g.path);
  for (const auto& [key, id] : {std::pair{"pad_token_id", g.pad_token_id},
                                {"eos_token_id", g.eos_token_id},
                                {"decoder_start_token_id", g.decoder_start_token_id},
                                {"forced_bos_token_id", g.forced_bos_token_id},
                                {"forced_eos_token_id", g.forced_eos_token_id}})
    if (id) check_token_id(f, key, *id, model.decoder_vocab_size);
  if (g.bad_words_ids)
    for (const auto& words : *g.bad_words_ids)
      for (int64_t id : words) check_token_id(f, "bad_words_ids", id, model.decoder_vocab_size);
  for (const auto& [key, ids] :
       {std::pair{"suppress_tokens", &g.suppress_tokens}, {"begin_suppress_tokens", &g.begin_suppress_tokens}})
    if (*ids)
      for (int64_t id : **ids) check_token_id(f, key, id, model.decoder_vocab_size);
  if (g.forced_decoder_ids)
    for (const auto& [index, token] : *g.forced_decoder_ids)
      if (token) check_token_id(f, "forced_decoder_ids", *token, model.decoder_vocab_size);
  // The timestamps are the ids after <|notimestamps|>: there must be one.
  if (g.no_timestamps_token_id &&
      (*g.no_timestamps_token_id < 0 || *g.no_timestamps_token_id + 1 >= model.decoder_vocab_size))
    f.fail("no_timestamps_token_id", "is " + std::to_string(*g.no_timestamps_token_id) +
                                         ", which leaves no timestamp id after it in the vocabulary [0, " +
                                         std::to_string(model.decoder_vocab_size) + ")");
  for (const auto& [key, map] : {std::pair{"lang_to_id", &g.lang_to_id}, {"task_to_id", &g.task_to_id}})
    if (*map)
      for (const auto& [name, id] : **map) check_token_id(f, key, id, model.decoder_vocab_size);
  if (g.alignment_heads)
    for (const auto& [layer, head] : *g.alignment_heads)
      if (layer >= model.decoder_layers || head >= model.decoder_attention_heads)
        f.fail("alignment_heads", "names layer " + std::to_string(layer) + ", head " + std::to_string(head) +
                                      ", but the decoder has " + std::to_string(model.decoder_layers) + " layers of " +
                                      std::to_string(model.decoder_attention_heads) + " heads");
}

std::vector<TaskParams> load_task_params(const std::string& path) {
  const nlohmann::json object = read_json_file(path);
  std::vector<TaskParams> tasks;
  if (!object.is_object()) return tasks;
  const auto it = object.find("task_specific_params");
  if (it == object.end() || it->is_null()) return tasks;
  if (!it->is_object()) JsonFields(object, path).fail("task_specific_params", "must be an object of tasks");
  for (const auto& [name, params] : it->items()) {
    const std::string field = "task_specific_params." + name;
    if (!params.is_object()) JsonFields(object, path).fail(field, "must be an object of settings");
    TaskParams task;
    task.name = name;
    task.settings = read_generation_fields(params, path + " " + field);
    task.settings.source = "config.json " + field;
    task.settings.path = path + " " + field;
    task.prefix = JsonFields(params, path + " " + field).optional_string("prefix").value_or("");
    tasks.push_back(std::move(task));
  }
  return tasks;
}

}  // namespace ordo::io
