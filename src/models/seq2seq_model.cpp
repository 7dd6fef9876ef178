#include "models/seq2seq_model.h"

#include <malloc.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "io/safetensors.h"
#include "models/packed_cache.h"
#include "ordo/error.h"

namespace ordo::models {

namespace {

nn::StackShape stack_shape(const io::ModelConfig& c, const FamilySpec& f, bool encoder) {
  nn::StackShape s;
  s.layer.dim = c.d_model;
  s.layer.heads = encoder ? c.encoder_attention_heads : c.decoder_attention_heads;
  s.layer.ffn_dim = encoder ? c.encoder_ffn_dim : c.decoder_ffn_dim;
  try {
    s.layer.activation = nn::parse_activation(c.activation_function);
  } catch (const Error& e) {
    throw Error(c.path + ": field '" + c.activation_function_key + "': " + e.what());
  }
  s.layer.pre_norm = f.pre_norm;
  s.layer.head_dim = c.head_dim;
  s.layer.bias = f.biases;
  s.layer.attention_bias = f.attention_biases;
  s.layer.key_bias = f.key_biases;
  s.layer.scale_attention = f.scale_attention;
  s.layer.rms_norm = f.rms_norm;
  if (f.rms_norm) s.layer.norm_eps = c.layer_norm_epsilon;
  s.layer.gated = c.gated_activation;
  if (f.relative_positions) {
    s.absolute_positions = false;
    s.relative_buckets = c.relative_attention_num_buckets;
    s.relative_max_distance = c.relative_attention_max_distance;
  }
  s.num_layers = encoder ? c.encoder_layers : c.decoder_layers;
  s.max_positions = encoder ? c.max_position_embeddings : io::decoder_positions(c);
  s.embed_scale = c.scale_embedding ? std::sqrt(static_cast<double>(c.d_model)) : 1.0;
  s.positions = position_spec(c, f);
  s.positions_from_ids = f.fairseq_positions;
  s.padding_idx = c.pad_token_id;
  s.final_layer_norm = f.final_layer_norm;
  s.layernorm_embedding = f.layernorm_embedding;
  if (encoder && f.long_attention != nn::LongAttentionKind::kNone) {
    s.long_attention.kind = f.long_attention;
    s.long_attention.attention_window = c.attention_window;
    s.long_attention.local_radius = c.local_radius;
    s.long_attention.global_block_size = c.global_block_size;
    s.long_attention.block_size = c.block_size;
    s.long_attention.num_global_tokens = c.num_global_tokens;
    s.long_attention.stagger_local_blocks = c.stagger_local_blocks;
  }
  if (encoder && f.speech_encoder) {
    if (c.num_mel_bins < 1)
      throw Error(c.path + ": a " + f.name + " model needs num_mel_bins (model_type '" + f.model_types.front() + "')");
    s.mel_bins = c.num_mel_bins;
  }
  return s;
}

std::string shape_string(at::IntArrayRef shape) {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < shape.size(); ++i) out << (i ? ", " : "") << shape[i];
  out << "]";
  return out.str();
}

// A NaN or infinity in a weight makes every output garbage without any error; one pass over
// the values already in memory finds it at load.
void check_finite(const at::Tensor& values, const std::string& name, const std::string& path) {
  const float* data = values.data_ptr<float>();
  const int64_t i = io::first_non_finite(io::DType::F32, data, static_cast<size_t>(values.numel()));
  if (i < 0) return;
  throw Error(path + ": tensor '" + name + "' holds " + (std::isnan(data[i]) ? "NaN" : "an infinity") + " (element " +
              std::to_string(i) + "); the checkpoint is corrupt");
}

// Copies checkpoint tensor `name` into `param` (converting F16/BF16 to float32).
void assign(const Checkpoint& weights, const std::string& name, at::Tensor& param) {
  const std::vector<int64_t> shape = weights.shape(name);
  if (!std::equal(shape.begin(), shape.end(), param.sizes().begin(), param.sizes().end()))
    throw Error(weights.path() + ": tensor '" + name + "' has shape " + shape_string(shape) +
                ", but config.json implies " + shape_string(param.sizes()));
  param = weights.get(name);
  check_finite(param, name, weights.path());
}

// Layers the checkpoint holds beyond the ones config.json asks for would be left out without a
// word, and the model would run truncated (worse output, exit 0): refused, naming them.
void check_no_extra_layers(const io::ModelConfig& c, const FamilySpec& f, const Checkpoint& weights) {
  for (const auto& [stack, layers, generic_field] : {std::tuple{"encoder", c.encoder_layers, "encoder_layers"},
                                                     std::tuple{"decoder", c.decoder_layers, "decoder_layers"}}) {
    const std::string field = io::config_key(c, generic_field);
    const std::string prefix = checkpoint_name(f, c, std::string("model.") + stack + ".layers") + ".";
    int64_t first_extra = -1, last_extra = -1;
    for (const std::string& name : weights.names()) {
      if (name.compare(0, prefix.size(), prefix) != 0) continue;
      const size_t digits = name.find_first_not_of("0123456789", prefix.size());
      if (digits == prefix.size() || digits == std::string::npos || name[digits] != '.' || digits - prefix.size() > 9)
        continue;
      const int64_t index = std::stoll(name.substr(prefix.size(), digits - prefix.size()));
      if (index < layers) continue;
      first_extra = first_extra < 0 ? index : std::min(first_extra, index);
      last_extra = std::max(last_extra, index);
    }
    if (first_extra < 0) continue;
    const std::string range = prefix + std::to_string(first_extra) + ".*" +
                              (last_extra > first_extra ? " to " + prefix + std::to_string(last_extra) + ".*" : "");
    throw Error(weights.path() + ": tensors " + range + " are not used by " + c.path + " " + field + "=" +
                std::to_string(layers) + " (the checkpoint has " + std::to_string(last_extra + 1) + " " + stack +
                " layers; set " + field + " to match it)");
  }
}

// The sizes config.json gives, checked against the checkpoint's own shapes BEFORE any
// parameter is allocated from them: a config that claims more than the file holds (a vocab
// of 2^24, 10,000 layers) is refused naming the field, not with a failed allocation. Only the
// tensors that pin each size are looked at; load_weights then checks every tensor.
void check_sizes_against(const io::ModelConfig& c, const FamilySpec& f, const Checkpoint& weights) {
  using Dims = std::vector<std::pair<int64_t, std::string>>;
  const auto expect = [&](const std::string& name, const Dims& dims) {
    if (!weights.contains(name)) return;  // load_weights names what is missing
    const std::vector<int64_t> shape = weights.shape(name);
    std::vector<int64_t> wanted;
    for (const auto& dim : dims) wanted.push_back(dim.first);
    if (shape == wanted) return;
    std::string fields;
    for (size_t i = 0; i < dims.size(); ++i)
      if (i >= shape.size() || shape[i] != dims[i].first)
        fields += std::string(fields.empty() ? "'" : ", '") + dims[i].second + "'";
    throw Error(c.path + ": " + fields + " imply tensor '" + name + "' of shape " + shape_string(wanted) + ", but " +
                weights.path() + " has " + shape_string(shape));
  };
  const int64_t d = c.d_model;
  const auto named = [&](const std::string& name) { return checkpoint_name(f, c, name); };
  for (const char* name : {"model.shared.weight", "model.encoder.embed_tokens.weight"})
    expect(named(name), {{c.vocab_size, c.vocab_size_key}, {d, "d_model"}});
  for (const char* name :
       {"model.decoder.embed_tokens.weight", "model.decoder.output_projection.weight", "lm_head.weight"})
    expect(named(name), {{c.decoder_vocab_size, c.decoder_vocab_size_key}, {d, "d_model"}});
  expect("final_logits_bias", {{1, "(one row)"}, {c.decoder_vocab_size, c.decoder_vocab_size_key}});
  if (f.position_layout == PositionLayout::kLearned) {
    const int64_t offset = position_spec(c, f).offset;
    expect(named("model.encoder.embed_positions.weight"),
           {{c.max_position_embeddings + offset, io::config_key(c, "max_position_embeddings")}, {d, "d_model"}});
    expect(named("model.decoder.embed_positions.weight"),
           {{io::decoder_positions(c) + offset, io::decoder_positions_key(c)}, {d, "d_model"}});
  }
  for (const auto& [stack, layers, layers_field, ffn, ffn_field] :
       {std::tuple{"encoder", c.encoder_layers, "encoder_layers", c.encoder_ffn_dim, "encoder_ffn_dim"},
        std::tuple{"decoder", c.decoder_layers, "decoder_layers", c.decoder_ffn_dim, "decoder_ffn_dim"}}) {
    if (layers == 0) continue;
    const std::string last = std::string("model.") + stack + ".layers." + std::to_string(layers - 1) + ".";
    if (!weights.contains(named(last + "fc1.weight")))
      throw Error(c.path + ": field '" + io::config_key(c, layers_field) + "' is " + std::to_string(layers) + ", but " +
                  weights.path() + " has no tensor '" + named(last + "fc1.weight") + "'");
    expect(named(last + "fc1.weight"), {{ffn, io::config_key(c, ffn_field)}, {d, "d_model"}});
    // T5: heads x d_kv wide; elsewhere d_model.
    const int64_t inner = c.head_dim > 0 ? c.encoder_attention_heads * c.head_dim : d;
    expect(named(last + "self_attn.q_proj.weight"),
           {{inner, c.head_dim > 0 ? "num_heads x d_kv" : "d_model"}, {d, "d_model"}});
  }
  if (f.speech_encoder) {
    // Refused before anything is allocated: conv1 is what num_mel_bins is checked against, and
    // a missing position table transformers 4.31 initialises at random (no output to match).
    for (const auto& [name, what] : {std::pair{"model.encoder.conv1.weight", "first convolution"},
                                     {"model.encoder.embed_positions.weight", "position table"}})
      if (!weights.contains(named(name)))
        throw Error(weights.path() + ": missing tensor '" + named(name) + "' (the " + f.name + " encoder's " + what +
                    ")");
    expect(named("model.encoder.conv1.weight"), {{d, "d_model"}, {c.num_mel_bins, "num_mel_bins"}, {3, "(kernel 3)"}});
    expect(named("model.encoder.conv2.weight"), {{d, "d_model"}, {d, "d_model"}, {3, "(kernel 3)"}});
  }
  if (f.relative_positions)
    for (const char* stack : {"model.encoder", "model.decoder"})
      expect(named(std::string(stack) + ".relative_attention_bias.weight"),
             {{c.relative_attention_num_buckets, "relative_attention_num_buckets"},
              {c.encoder_attention_heads, io::config_key(c, "encoder_attention_heads")}});
  check_no_extra_layers(c, f, weights);
}

// The first of `names` the checkpoint holds; error naming all of them otherwise.
std::string first_present(const Checkpoint& weights, const std::vector<std::string>& names) {
  for (const std::string& name : names)
    if (weights.contains(name)) return name;
  std::string tried;
  for (const std::string& name : names) tried += (tried.empty() ? "'" : ", '") + name + "'";
  throw Error(weights.path() + ": missing tensor " + tried);
}

bool shares_embeddings(const io::ModelConfig& c) { return c.share_encoder_decoder_embeddings; }

// A shared embedding table apart from the output projection: packed as int8 rows for the
// lookups of an int8 model (Seq2SeqModel::embed_lookup_).
bool looks_up_int8_rows(const io::ModelConfig& c) {
  return c.share_encoder_decoder_embeddings && !c.tie_word_embeddings;
}

int64_t file_bytes(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
}

}  // namespace

Seq2SeqModel::Seq2SeqModel(io::ModelConfig config, FamilySpec family)
    : config_(std::move(config)),
      family_(std::move(family)),
      encoder_(stack_shape(config_, family_, true)),
      decoder_(stack_shape(config_, family_, false)),
      output_(config_.d_model, config_.decoder_vocab_size, family_.biases && family_.output_bias) {
  encoder_.embed.tokens = at::empty({config_.vocab_size, config_.d_model}, at::kFloat);
  decoder_.embed.tokens = shares_embeddings(config_)
                              ? encoder_.embed.tokens
                              : at::empty({config_.decoder_vocab_size, config_.d_model}, at::kFloat);
  if (config_.tie_word_embeddings) output_.weight = decoder_.embed.tokens;
}

std::shared_ptr<Seq2SeqModel> Seq2SeqModel::load(const std::string& model_dir) {
  io::ModelConfig config = io::load_model_config(model_dir + "/config.json");
  FamilySpec family = family_for(config);
  return load(model_dir, std::move(config), std::move(family));
}

std::shared_ptr<Seq2SeqModel> Seq2SeqModel::load(const std::string& model_dir, io::ModelConfig config,
                                                 FamilySpec family, std::optional<nn::GemmType> pack_as,
                                                 const PackedCacheOptions* cache) {
  const std::unique_ptr<Checkpoint> weights = open_checkpoint(model_dir);
  check_sizes_against(config, family, *weights);
  std::string cache_path, cache_dir;
  const std::string config_path = config.path;
  const PackedCacheEnvironment environment = packed_cache_environment();
  if (pack_as && cache && cache->enabled && environment != PackedCacheEnvironment::kOff &&
      (environment == PackedCacheEnvironment::kAlways || file_bytes(weights->path()) >= cache->min_checkpoint_bytes)) {
    cache_dir = cache->dir.empty() ? default_packed_cache_dir() : cache->dir;
    // In the background, a checkpoint the hash index does not know is not read for its hash
    // here: the writer does it after the model is returned (packed_cache.h).
    if (!cache_dir.empty())
      cache_path = cache->write_in_background
                       ? remembered_packed_cache_path(cache_dir, weights->path(), config.path, *pack_as)
                       : packed_cache_path(cache_dir, weights->path(), config.path, *pack_as);
    if (!cache_path.empty()) {
      // Parameters are allocated, not touched: a miss costs no memory.
      auto cached = std::make_shared<Seq2SeqModel>(config, family);
      std::string why;
      if (restore_packed(cache_path, *cached, *pack_as, &why)) return cached;
      if (!why.empty() && cache->warn) cache->warn("weight cache not used: " + why + "; packing from the checkpoint");
    }
  }
  auto model = std::make_shared<Seq2SeqModel>(std::move(config), std::move(family));
  model->load_weights(*weights, pack_as);
  if (!cache_dir.empty() && cache->write_in_background) {
    model->cache_writer_ =
        save_packed_in_background(cache_path, cache_dir, weights->path(), config_path, *model, *pack_as, cache->warn);
    return model;
  }
  std::string why;
  if (!cache_path.empty() && !save_packed(cache_path, *model, *pack_as, &why) && cache->warn)
    cache->warn("weight cache not written: " + why);  // loading goes on without it
  return model;
}

Seq2SeqModel::~Seq2SeqModel() { wait_for_cache_file(); }
Seq2SeqModel::Seq2SeqModel(Seq2SeqModel&&) = default;

void Seq2SeqModel::wait_for_cache_file() const {
  if (cache_writer_) cache_writer_->wait();
}

void Seq2SeqModel::load_weights(const Checkpoint& weights, std::optional<nn::GemmType> pack_as) {
  if (weights.contains("final_logits_bias")) {
    at::Tensor bias = at::empty({1, config_.decoder_vocab_size}, at::kFloat);
    assign(weights, "final_logits_bias", bias);
    output_.bias = bias.view({config_.decoder_vocab_size});
  } else if (output_.bias.defined()) {
    output_.bias.zero_();
  }
  const auto named = [&](const std::string& name) { return checkpoint_name(family_, config_, name); };
  // Embeddings: save_pretrained writes a tied tensor once, under one of its names. FSMT's
  // decoder embedding is also its output projection (model.decoder.output_projection).
  const bool shared = shares_embeddings(config_);
  const std::string encoder_table =
      shared ? first_present(weights,
                             {named("model.shared.weight"), named("model.encoder.embed_tokens.weight"),
                              named("model.decoder.embed_tokens.weight"), "model.decoder.output_projection.weight"})
             : first_present(weights, {named("model.encoder.embed_tokens.weight"), named("model.shared.weight")});
  const std::string decoder_table = shared ? encoder_table
                                           : first_present(weights, {named("model.decoder.embed_tokens.weight"),
                                                                     "model.decoder.output_projection.weight"});
  // Packing a tied output projection, it is packed straight from the checkpoint, a slice of
  // rows at a time, and the embedding lookups read its packed rows (compact_embeddings): the
  // float32 table (1 GB for NLLB's 256k x 1024) is never built.
  const bool pack_tied = pack_as && config_.tie_word_embeddings;
  if (pack_tied) {
    const std::vector<int64_t> shape = weights.shape(decoder_table);
    const std::vector<int64_t> implied = {config_.decoder_vocab_size, config_.d_model};
    if (shape != implied)
      throw Error(weights.path() + ": tensor '" + decoder_table + "' has shape " + shape_string(shape) +
                  ", but config.json implies " + shape_string(implied));
    const auto rows = [&](int64_t begin, int64_t count) {
      const at::Tensor slice = weights.get_rows(decoder_table, begin, count);
      check_finite(slice, decoder_table, weights.path());
      return slice;
    };
    output_.packed = std::make_shared<const nn::PackedGemm>(rows, implied[0], implied[1], output_.bias, *pack_as);
    output_.weight = at::Tensor();
  }
  const bool lookup_packed = pack_tied && output_.packed->rows_readable();
  if (lookup_packed) {
    decoder_.embed.tokens = at::Tensor();
    decoder_.embed.packed_rows = output_.packed;
  }
  if (shared) {
    if (lookup_packed) {
      encoder_.embed.tokens = at::Tensor();
      encoder_.embed.packed_rows = output_.packed;
    } else {
      assign(weights, encoder_table, encoder_.embed.tokens);
      decoder_.embed.tokens = encoder_.embed.tokens;
    }
  } else {
    assign(weights, encoder_table, encoder_.embed.tokens);
    if (!lookup_packed) assign(weights, decoder_table, decoder_.embed.tokens);
  }
  if (!config_.tie_word_embeddings) {
    assign(weights, named("lm_head.weight"), output_.weight);
  } else if (!pack_tied) {
    output_.weight = decoder_.embed.tokens;
  }
  // Packing, a GEMM's weight is not read here: its Linear packs it from the checkpoint a slice
  // of rows at a time (Linear::weight_rows), so a layer's float32 weights are never resident
  // whole (a 4,096-wide fc2 and its int8 temporaries would set the peak of loading). The shape
  // is checked here all the same, and each slice for NaN.
  std::unordered_map<const at::Tensor*, nn::Linear*> gemm_weights;
  if (pack_as) {
    const nn::LinearVisitor collect = [&](const std::string&, nn::Linear& linear) {
      gemm_weights[&linear.weight] = &linear;
    };
    encoder_.visit_linears("model.encoder", collect);
    decoder_.visit_linears("model.decoder", collect);
  }
  const nn::ParamVisitor load = [&](const std::string& name, at::Tensor& param) {
    const auto gemm = gemm_weights.find(&param);
    if (gemm == gemm_weights.end() || param.dim() != 2) return assign(weights, named(name), param);
    const std::string stored = named(name);
    const std::vector<int64_t> shape = weights.shape(stored);
    if (!std::equal(shape.begin(), shape.end(), param.sizes().begin(), param.sizes().end()))
      throw Error(weights.path() + ": tensor '" + stored + "' has shape " + shape_string(shape) +
                  ", but config.json implies " + shape_string(param.sizes()));
    const Checkpoint* checkpoint = &weights;
    gemm->second->weight_rows = {[checkpoint, stored](int64_t begin, int64_t count) {
                                   const at::Tensor slice = checkpoint->get_rows(stored, begin, count);
                                   check_finite(slice, stored, checkpoint->path());
                                   return slice;
                                 },
                                 shape[0], shape[1]};
    param = at::Tensor();
  };
  // After each packed layer its float32 copies are free chunks in malloc's heap (too small
  // for their own mappings): trimmed there and then, they never add up (trimmed once at the
  // end, the resident set would climb by every layer's float32 copies while loading).
  const auto trim = [] {
#ifdef __GLIBC__
    ::malloc_trim(0);
#endif
  };
  // The output projection and embeddings before the layers: what they leave in malloc's heap
  // (the slices, the reorder's source) is trimmed before the layers arrive.
  if (pack_as) {
    if (!pack_tied) output_.pack(*pack_as);
    compact_embeddings(*pack_as);
    trim();
  }
  // Each part of a layer (self-attention, cross-attention, feed-forward) is packed as soon as it
  // is read: one part's float32 weights at a time, not a whole layer's (64 MB for a tc-big
  // decoder layer), which would set the peak of loading.
  encoder_.visit("model.encoder", load, [&](size_t i, nn::LayerPart part) {
    if (!pack_as) return;
    encoder_.layers[i].pack(*pack_as, part);
    trim();
  });
  if (pack_as && encoder_.long_attention) {
    encoder_.long_attention->pack(*pack_as);
    trim();
  }
  decoder_.visit("model.decoder", load, [&](size_t i, nn::LayerPart part) {
    if (!pack_as) return;
    decoder_.layers[i].pack(*pack_as, part);
    trim();
  });
}

void Seq2SeqModel::compact_embeddings(nn::GemmType type) {
  // A tied embedding table and the output projection's packed copy hold the same rows: the
  // lookups read them back out of the packed copy (exact in float32 and bfloat16, int8 rows
  // dequantized as CTranslate2's int8 embeddings are), and the table goes (1 GB in float32
  // for NLLB's 256k tokens). Where the packed layout cannot be read back (PackedGemm::
  // rows_readable), reduced precision keeps a bfloat16 table (only looked up) and float32 the
  // table itself. (load_weights with pack_as has done the first part already.) A shared table
  // that is not the output projection (T5 v1.1) is packed as int8 rows of its own in an int8
  // model (embed_lookup_).
  const bool shared = encoder_.embed.tokens.defined() && decoder_.embed.tokens.is_same(encoder_.embed.tokens);
  const bool tied = output_.packed && output_.weight.defined() && output_.weight.is_same(decoder_.embed.tokens);
  if (tied) output_.weight = at::Tensor();
  if (tied && output_.packed->rows_readable()) {
    decoder_.embed.tokens = at::Tensor();
    decoder_.embed.packed_rows = output_.packed;
    if (shared) {
      encoder_.embed.tokens = at::Tensor();
      encoder_.embed.packed_rows = output_.packed;
    }
  } else if (tied && type == nn::GemmType::kFloat32) {
    return;  // the table serves the lookups as it is
  }
  if (type == nn::GemmType::kFloat32) return;
  if (type == nn::GemmType::kInt8 && !tied && shared && encoder_.embed.tokens.scalar_type() == at::kFloat &&
      looks_up_int8_rows(config_)) {
    embed_lookup_.weight = encoder_.embed.tokens;
    embed_lookup_.pack(type);
    embed_lookup_.weight = at::Tensor();
    if (embed_lookup_.packed->rows_readable()) {
      encoder_.embed.tokens = decoder_.embed.tokens = at::Tensor();
      encoder_.embed.packed_rows = decoder_.embed.packed_rows = embed_lookup_.packed;
      return;
    }
    embed_lookup_ = nn::Linear();
  }
  const auto narrow = [](at::Tensor& table) {
    if (table.defined() && table.scalar_type() == at::kFloat) table = table.to(at::kBFloat16);
  };
  narrow(encoder_.embed.tokens);
  if (shared && encoder_.embed.tokens.defined()) {
    decoder_.embed.tokens = encoder_.embed.tokens;
  } else {
    narrow(decoder_.embed.tokens);
  }
}

void Seq2SeqModel::visit(const nn::ParamVisitor& visitor) {
  if (shares_embeddings(config_)) {
    visitor("model.shared.weight", encoder_.embed.tokens);
    decoder_.embed.tokens = encoder_.embed.tokens;
  } else {
    visitor("model.encoder.embed_tokens.weight", encoder_.embed.tokens);
    visitor("model.decoder.embed_tokens.weight", decoder_.embed.tokens);
  }
  if (config_.tie_word_embeddings)
    output_.weight = decoder_.embed.tokens;
  else
    visitor("lm_head.weight", output_.weight);
  if (output_.bias.defined()) {  // T5 has none
    at::Tensor bias = output_.bias.view({1, config_.decoder_vocab_size});
    visitor("final_logits_bias", bias);
    output_.bias = bias.view({config_.decoder_vocab_size});
  }
  encoder_.visit("model.encoder", visitor);
  decoder_.visit("model.decoder", visitor);
}

void Seq2SeqModel::visit_linears(const nn::LinearVisitor& visitor) {
  visitor("lm_head", output_);
  if (looks_up_int8_rows(config_)) visitor("embed_lookup", embed_lookup_);  // empty unless int8
  encoder_.visit_linears("model.encoder", visitor);
  decoder_.visit_linears("model.decoder", visitor);
}

void Seq2SeqModel::pack(nn::GemmType type) {
  encoder_.pack(type);
  decoder_.pack(type);
  output_.pack(type);
  compact_embeddings(type);
}

at::Tensor Seq2SeqModel::encode(const at::Tensor& ids, const at::Tensor& attention_mask,
                                const at::Tensor& global_mask) const {
  if (family_.speech_encoder)
    throw Error(config_.path + ": a " + family_.name + " model's encoder reads audio features, not token ids");
  return encoder_.forward(ids, attention_mask, global_mask);
}

at::Tensor Seq2SeqModel::encode_features(const at::Tensor& features) const {
  if (!family_.speech_encoder)
    throw Error(config_.path + ": a " + family_.name + " model's encoder reads token ids, not audio features");
  const std::string field = io::config_key(config_, "max_position_embeddings");
  const int64_t frames = 2 * config_.max_position_embeddings;
  const std::string expected = "[batch, " + std::to_string(config_.num_mel_bins) + ", " + std::to_string(frames) + "]";
  if (!features.defined() || features.dim() != 3)
    throw Error("audio features: a tensor " + expected + " is expected, not " +
                (features.defined() ? shape_string(features.sizes()) : std::string("none")));
  if (features.scalar_type() != at::kFloat)
    throw Error("audio features: float32 values are expected, not " +
                std::string(c10::toString(features.scalar_type())));
  if (features.size(0) < 1) throw Error("audio features: the batch is empty");
  if (features.size(1) != config_.num_mel_bins)
    throw Error("audio features have " + std::to_string(features.size(1)) + " mel bins, but " + config_.path +
                " num_mel_bins is " + std::to_string(config_.num_mel_bins));
  // transformers 4.31 adds the whole position table to the convolutions' output: the frames
  // must fill it (the feature extractor pads or cuts every input to that).
  if (features.size(2) != frames)
    throw Error("audio features have " + std::to_string(features.size(2)) + " frames, but " + config_.path + " " +
                field + " " + std::to_string(config_.max_position_embeddings) + " takes exactly " +
                std::to_string(frames) + " (pad or cut the features to that many)");
  return encoder_.forward_features(features);
}

nn::DecoderState Seq2SeqModel::start_decoding(const at::Tensor& encoder_out) const {
  return decoder_.start(encoder_out, at::ones({encoder_out.size(0), encoder_out.size(1)}, at::kLong));
}

at::Tensor Seq2SeqModel::project(const at::Tensor& hidden) const {
  // T5 with tied embeddings: the decoder output times d_model^-0.5 (a float32 product, as torch's).
  if (family_.scale_tied_output && config_.tie_word_embeddings)
    return output_.forward(hidden * std::pow(static_cast<double>(config_.d_model), -0.5));
  return output_.forward(hidden);
}

nn::PackedGemm::Bounded Seq2SeqModel::project_bounded(const at::Tensor& hidden) const {
  if (!output_.packed) return {project(hidden), at::Tensor()};
  if (family_.scale_tied_output && config_.tie_word_embeddings)
    return output_.packed->forward_bounded(hidden * std::pow(static_cast<double>(config_.d_model), -0.5));
  return output_.packed->forward_bounded(hidden);
}

at::Tensor Seq2SeqModel::next_hidden(const at::Tensor& ids, nn::DecoderState& state) const {
  const at::Tensor hidden = decoder_.forward(ids, state);
  return hidden.select(1, hidden.size(1) - 1);
}

at::Tensor Seq2SeqModel::next_logits(const at::Tensor& ids, nn::DecoderState& state) const {
  return project(next_hidden(ids, state));
}

at::Tensor Seq2SeqModel::next_logits(const at::Tensor& ids, nn::DecoderState& state, const Shortlist& shortlist) const {
  const at::Tensor hidden = decoder_.forward(ids, state);
  at::Tensor last = hidden.select(1, hidden.size(1) - 1);
  if (family_.scale_tied_output && config_.tie_word_embeddings)
    last = last * std::pow(static_cast<double>(config_.d_model), -0.5);
  const at::Tensor part = shortlist.projection.forward(last);
  at::Tensor logits =
      at::full({last.size(0), config_.decoder_vocab_size}, -std::numeric_limits<float>::infinity(), part.options());
  logits.index_copy_(1, shortlist.ids, part);
  return logits;
}

Shortlist Seq2SeqModel::shortlist(const at::Tensor& ids) const {
  Shortlist s;
  s.ids = ids;
  if (output_.packed) {
    if (!output_.packed->rows_readable())
      throw Error("use_vmap: the output projection of " + config_.path +
                  " is packed in a layout whose rows cannot be read back here; translate without use_vmap");
    s.projection.weight = output_.packed->rows(ids).contiguous();
  } else {
    s.projection.weight = output_.weight.index_select(0, ids);
  }
  if (output_.bias.defined()) s.projection.bias = output_.bias.index_select(0, ids);
  if (output_.packed) s.projection.pack(output_.packed->type());
  return s;
}

at::Tensor Seq2SeqModel::all_logits(const at::Tensor& ids, nn::DecoderState& state) const {
  return project(decoder_.forward(ids, state));
}

}  // namespace ordo::models
