#include "io/model_config.h"

#include <sys/stat.h>

#include "io/json_file.h"
#include "ordo/error.h"

namespace ordo::io {
namespace {

bool file_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

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

void check_positive(const JsonFields& fields, const std::string& key, int64_t value) {
  if (value <= 0) fields.fail(key, "must be positive, found " + std::to_string(value));
}

void check_token_id(const JsonFields& fields, const std::string& key, int64_t id, int64_t vocab) {
  if (id < 0 || id >= vocab)
    fields.fail(key, "is " + std::to_string(id) + ", outside the vocabulary [0, " + std::to_string(vocab) + ")");
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
  for (const auto& [key, value] : {std::pair{"num_beams", g.num_beams}, {"num_return_sequences", g.num_return_sequences}})
    if (value && *value < 1) f.fail(key, "must be at least 1, found " + std::to_string(*value));
  for (const auto& [key, value] : {std::pair{"max_length", g.max_length}, {"max_new_tokens", g.max_new_tokens},
                                   {"min_length", g.min_length}, {"min_new_tokens", g.min_new_tokens},
                                   {"no_repeat_ngram_size", g.no_repeat_ngram_size}})
    if (value && *value < 0) f.fail(key, "must not be negative, found " + std::to_string(*value));
  if (g.repetition_penalty && *g.repetition_penalty <= 0)
    f.fail("repetition_penalty", "must be positive");
  return g;
}

}  // namespace

ModelConfig load_model_config(const std::string& path) {
  if (!file_exists(path))
    throw Error(path + ": cannot open file (a model folder needs the config.json of a Hugging Face checkpoint)");
  const nlohmann::json object = read_json_file(path);
  const JsonFields f(object, path);
  ModelConfig c;
  c.path = path;
  c.model_type = f.optional_string("model_type").value_or("");
  c.architectures = f.optional_strings("architectures").value_or(std::vector<std::string>{});
  c.tokenizer_class = f.optional_string("tokenizer_class").value_or("");
  const std::string tokenizer_config = path.substr(0, path.find_last_of('/') + 1) + "tokenizer_config.json";
  if (c.tokenizer_class.empty() && file_exists(tokenizer_config)) {
    const nlohmann::json t = read_json_file(tokenizer_config);
    if (t.is_object())
      c.tokenizer_class = JsonFields(t, tokenizer_config).optional_string("tokenizer_class").value_or("");
  }

  c.d_model = f.required_int("d_model");
  c.encoder_layers = f.required_int("encoder_layers");
  c.decoder_layers = f.required_int("decoder_layers");
  c.encoder_attention_heads = f.required_int("encoder_attention_heads");
  c.decoder_attention_heads = f.required_int("decoder_attention_heads");
  c.encoder_ffn_dim = f.required_int("encoder_ffn_dim");
  c.decoder_ffn_dim = f.required_int("decoder_ffn_dim");
  c.activation_function = f.optional_string("activation_function").value_or("gelu");
  c.vocab_size = f.required_int("vocab_size");
  c.decoder_vocab_size = f.optional_int("decoder_vocab_size").value_or(c.vocab_size);
  c.share_encoder_decoder_embeddings = f.optional_bool("share_encoder_decoder_embeddings").value_or(true);
  c.tie_word_embeddings = f.optional_bool("tie_word_embeddings").value_or(true);
  c.max_position_embeddings = f.required_int("max_position_embeddings");
  c.scale_embedding = f.optional_bool("scale_embedding").value_or(false);
  c.normalize_before = f.optional_bool("normalize_before").value_or(false);
  c.normalize_embedding = f.optional_bool("normalize_embedding").value_or(false);

  for (const char* key : {"d_model", "encoder_attention_heads", "decoder_attention_heads", "encoder_ffn_dim",
                          "decoder_ffn_dim", "vocab_size", "decoder_vocab_size", "max_position_embeddings"})
    if (f.has(key)) check_positive(f, key, f.required_int(key));
  for (const char* key : {"encoder_layers", "decoder_layers"})
    if (f.required_int(key) < 0) f.fail(key, "must not be negative");
  if (c.d_model % c.encoder_attention_heads != 0)
    f.fail("encoder_attention_heads", "(" + std::to_string(c.encoder_attention_heads) +
                                          ") must divide d_model (" + std::to_string(c.d_model) + ")");
  if (c.d_model % c.decoder_attention_heads != 0)
    f.fail("decoder_attention_heads", "(" + std::to_string(c.decoder_attention_heads) +
                                          ") must divide d_model (" + std::to_string(c.d_model) + ")");
  if (c.share_encoder_decoder_embeddings && c.decoder_vocab_size != c.vocab_size)
    f.fail("decoder_vocab_size", "differs from vocab_size but share_encoder_decoder_embeddings is true");

  const std::optional<int64_t> pad = optional_token_id(object, f, "pad_token_id");
  const std::optional<int64_t> eos = optional_token_id(object, f, "eos_token_id");
  if (!pad) f.fail("pad_token_id", "is missing");
  if (!eos) f.fail("eos_token_id", "is missing");
  c.pad_token_id = *pad;
  c.eos_token_id = *eos;
  c.bos_token_id = optional_token_id(object, f, "bos_token_id");
  // Pegasus starts decoding from the pad token and its configs often omit the field.
  std::optional<int64_t> start = f.optional_int("decoder_start_token_id");
  if (!start && c.model_type == "pegasus") start = c.pad_token_id;
  if (!start) f.fail("decoder_start_token_id", "is missing");
  c.decoder_start_token_id = *start;
  c.forced_bos_token_id = f.optional_int("forced_bos_token_id");
  c.forced_eos_token_id = optional_token_id(object, f, "forced_eos_token_id");
  c.bad_words_ids = f.optional_int_lists("bad_words_ids").value_or(std::vector<std::vector<int64_t>>{});

  check_token_id(f, "pad_token_id", c.pad_token_id, c.decoder_vocab_size);
  check_token_id(f, "eos_token_id", c.eos_token_id, c.decoder_vocab_size);
  check_token_id(f, "decoder_start_token_id", c.decoder_start_token_id, c.decoder_vocab_size);
  if (c.forced_bos_token_id) check_token_id(f, "forced_bos_token_id", *c.forced_bos_token_id, c.decoder_vocab_size);
  if (c.forced_eos_token_id) check_token_id(f, "forced_eos_token_id", *c.forced_eos_token_id, c.decoder_vocab_size);
  return c;
}

GenerationConfig load_generation_config(const std::string& path) {
  if (!file_exists(path)) return {};
  GenerationConfig g = read_generation_fields(read_json_file(path), path);
  g.source = "generation_config.json";
  return g;
}

GenerationConfig generation_config_from_model_config(const std::string& path) {
  GenerationConfig g = read_generation_fields(read_json_file(path), path);
  g.source = "config.json";
  return g;
}

}  // namespace ordo::io
