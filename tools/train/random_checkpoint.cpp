#include "train/random_checkpoint.h"

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "io/json_file.h"
#include "io/model_config.h"
#include "models/family.h"
#include "models/seq2seq_model.h"
#include "ordo/error.h"
#include "train/marian_export.h"
#include "train/training_forward.h"

namespace ordo::train {
namespace {

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

void write_json(const std::string& path, const nlohmann::json& json) {
  std::ofstream out(path);
  out << json.dump(2) << "\n";
  if (!out) throw Error(path + ": cannot write");
}

// model.safetensors from the model's parameters under the names the family's checkpoints use
// (T5's "encoder.block.N.layer.M..."), one tensor at a time (header first, then each tensor's
// bytes in name order), through <path>.tmp and a rename.
void stream_safetensors(const std::string& path, models::Seq2SeqModel& model, const models::FamilySpec& family,
                        const io::ModelConfig& config) {
  std::map<std::string, at::Tensor> tensors;
  model.visit([&](const std::string& name, at::Tensor& param) {
    tensors[models::checkpoint_name(family, config, name)] = param;
  });
  nlohmann::ordered_json header;
  header["__metadata__"] = {{"format", "pt"}};
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    const uint64_t bytes = static_cast<uint64_t>(t.numel()) * 4;
    header[name] = {{"dtype", "F32"}, {"shape", t.sizes().vec()}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  while (text.size() % 8) text += ' ';
  const std::string tmp = path + ".tmp";
  std::ofstream out(tmp, std::ios::binary);
  uint64_t size = text.size();
  char length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<char>((size >> (8 * i)) & 0xff);
  out.write(length, 8);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  for (const auto& [name, t] : tensors) {
    const at::Tensor c = t.detach().contiguous();
    out.write(static_cast<const char*>(c.data_ptr()), static_cast<std::streamsize>(c.numel() * 4));
  }
  out.close();
  if (!out) throw Error(tmp + ": cannot write");
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw Error(path + ": cannot rename " + tmp);
}

}  // namespace

std::vector<BigShape> big_shapes() {
  // tc-big: the real opus-mt-tc-big-en-pt tokenizer (54,776 entries; tc-big models range 54-60k).
  // NLLB-600M: 256,206 rows; the fixture's small SentencePiece model tokenizes, its ids and
  //   language codes fall inside the big vocabulary, generated ids beyond it print as <unk>.
  // Pegasus-large: the real 96,103-piece Pegasus tokenizer.
  // BART-large-cnn: GPT-2's real byte-level BPE (vocab.json + merges.txt), 1,026 learned
  //   positions; its generation settings (beam 4, no-repeat 3, length penalty 2, min/max length).
  // Flan-T5-base: d_kv 64, gated-gelu, untied lm_head, relative buckets 32 / 128, the real
  //   32,000-piece spiece.model (+ 100 <extra_id_N>; 32,128 rows).
  // mBART-large-50: 250,054 rows; the small mBART-50 fixture's SentencePiece model tokenizes, its
  //   ids and language codes fall inside the big vocabulary (as for NLLB).
  return {{"tc-big", "marian_tcbig_en_pt", 6, 1024, 4096, 16, 54776, 1024, 0, {}},
          {"nllb-600m", "nllb", 12, 1024, 4096, 16, 256206, 1024, 0, {}},
          {"pegasus-large", "pegasus", 16, 1024, 4096, 16, 96103, 1024, 0, {}},
          {"bart-large-cnn", "bart", 12, 1024, 4096, 16, 50265, 1024, 0, {{"min_length", 56}, {"max_length", 142}}},
          {"flan-t5-base", "t5", 12, 768, 2048, 12, 32128, 512, 64, {}},
          {"mbart-large-50", "mbart50", 12, 1024, 4096, 16, 250054, 1024, 0, {}}};
}

BigShape big_shape(const std::string& name) {
  std::string names;
  for (const BigShape& s : big_shapes()) {
    if (s.name == name) return s;
    names += (names.empty() ? "" : ", ") + s.name;
  }
  throw Error("unknown model shape '" + name + "' (known: " + names + ")");
}

void write_random_model(const std::string& dir, const BigShape& shape, const std::string& fixtures_dir, uint64_t seed) {
  if (exists(dir + "/model.safetensors")) return;
  const std::string fixture = fixtures_dir + "/" + shape.fixture;
  if (!exists(fixture + "/config.json")) throw Error(fixture + "/config.json: fixture missing");
  ::mkdir(dir.c_str(), 0755);
  nlohmann::json config = io::read_json_file(fixture + "/config.json");
  config["d_model"] = shape.d_model;
  config["vocab_size"] = shape.vocab_size;
  if (config.value("model_type", "") == "t5") {  // T5Config's own names
    config["num_layers"] = config["num_decoder_layers"] = shape.layers;
    config["num_heads"] = shape.heads;
    config["d_ff"] = shape.ffn_dim;
    config["d_kv"] = shape.d_kv > 0 ? shape.d_kv : shape.d_model / shape.heads;
    config["n_positions"] = shape.max_positions;
  } else {
    for (const char* k : {"encoder_layers", "decoder_layers", "num_hidden_layers"}) config[k] = shape.layers;
    for (const char* k : {"encoder_attention_heads", "decoder_attention_heads"}) config[k] = shape.heads;
    for (const char* k : {"encoder_ffn_dim", "decoder_ffn_dim"}) config[k] = shape.ffn_dim;
    if (config.contains("decoder_vocab_size")) config["decoder_vocab_size"] = shape.vocab_size;
    config["max_position_embeddings"] = shape.max_positions;
  }
  for (const auto& [key, value] : shape.generation) config[key] = value;
  write_json(dir + "/config.json", config);
  for (const char* f : {"tokenizer_config.json", "special_tokens_map.json", "vocab.json", "merges.txt", "source.spm",
                        "target.spm", "sentencepiece.bpe.model", "spiece.model"})
    if (exists(fixture + "/" + f)) copy_file(fixture + "/" + f, dir + "/" + f);
  if (exists(fixture + "/generation_config.json")) {
    nlohmann::json generation = io::read_json_file(fixture + "/generation_config.json");
    for (const auto& [key, value] : shape.generation) generation[key] = value;
    write_json(dir + "/generation_config.json", generation);
  }

  const io::ModelConfig parsed = io::load_model_config(dir + "/config.json");
  const models::FamilySpec family = models::family_for(parsed);
  models::Seq2SeqModel model(parsed, family);
  initialise(model, seed);
  stream_safetensors(dir + "/model.safetensors", model, family, parsed);
}

}  // namespace ordo::train
