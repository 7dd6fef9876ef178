#include "train/marian_export.h"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "ordo/error.h"

namespace ordo::train {
namespace {

void write_json(const std::string& path, const nlohmann::ordered_json& json) {
  std::ofstream out(path);
  out << json.dump(2) << "\n";
  if (!out) throw Error(path + ": cannot write");
}

}  // namespace

void copy_file(const std::string& from, const std::string& to) {
  std::ifstream in(from, std::ios::binary);
  if (!in) throw Error(from + ": cannot open");
  std::ofstream out(to, std::ios::binary);
  out << in.rdbuf();
  if (!out) throw Error(to + ": cannot write");
}

int64_t write_tokenizer_files(const std::string& dir, const std::string& spm_model, const std::string& spm_vocab,
                              const std::string& source_lang, const std::string& target_lang) {
  copy_file(spm_model, dir + "/source.spm");
  copy_file(spm_model, dir + "/target.spm");
  std::ifstream in(spm_vocab);
  if (!in) throw Error(spm_vocab + ": cannot open");
  nlohmann::ordered_json vocab;
  int64_t id = 0;
  for (std::string line; std::getline(in, line); ++id) vocab[line.substr(0, line.find('\t'))] = id;
  if (vocab.value("</s>", -1) != 0 || vocab.value("<unk>", -1) != 1)
    throw Error(spm_vocab + ": the SentencePiece model must have </s> = 0 and <unk> = 1 (Marian's layout)");
  vocab["<pad>"] = id;
  write_json(dir + "/vocab.json", vocab);
  write_json(dir + "/tokenizer_config.json", {{"clean_up_tokenization_spaces", true},
                                              {"eos_token", "</s>"},
                                              {"model_max_length", 512},
                                              {"pad_token", "<pad>"},
                                              {"separate_vocabs", false},
                                              {"source_lang", source_lang},
                                              {"sp_model_kwargs", nlohmann::json::object()},
                                              {"target_lang", target_lang},
                                              {"tokenizer_class", "MarianTokenizer"},
                                              {"unk_token", "<unk>"}});
  write_json(dir + "/special_tokens_map.json", {{"eos_token", "</s>"}, {"pad_token", "<pad>"}, {"unk_token", "<unk>"}});
  return id + 1;
}

io::ModelConfig marian_config(const MarianShape& shape, int64_t vocab_size) {
  io::ModelConfig c;
  c.model_type = "marian";
  c.architectures = {"MarianMTModel"};
  c.d_model = shape.d_model;
  c.encoder_layers = c.decoder_layers = shape.layers;
  c.encoder_attention_heads = c.decoder_attention_heads = shape.heads;
  c.encoder_ffn_dim = c.decoder_ffn_dim = shape.ffn_dim;
  c.activation_function = shape.activation;
  c.vocab_size = c.decoder_vocab_size = vocab_size;
  c.max_position_embeddings = shape.max_positions;
  c.scale_embedding = true;
  c.pad_token_id = c.decoder_start_token_id = vocab_size - 1;
  c.eos_token_id = 0;
  c.bos_token_id = 0;
  c.forced_eos_token_id = 0;
  c.bad_words_ids = {{vocab_size - 1}};
  return c;
}

void write_model_files(const std::string& dir, models::Seq2SeqModel& model, const MarianShape& shape, io::DType dtype,
                       double dropout) {
  const io::ModelConfig& c = model.config();
  const int64_t pad = c.pad_token_id;
  nlohmann::ordered_json config = {{"architectures", {"MarianMTModel"}},
                                   {"model_type", "marian"},
                                   {"activation_function", c.activation_function},
                                   {"d_model", c.d_model},
                                   {"encoder_layers", c.encoder_layers},
                                   {"decoder_layers", c.decoder_layers},
                                   {"encoder_attention_heads", c.encoder_attention_heads},
                                   {"decoder_attention_heads", c.decoder_attention_heads},
                                   {"encoder_ffn_dim", c.encoder_ffn_dim},
                                   {"decoder_ffn_dim", c.decoder_ffn_dim},
                                   {"vocab_size", c.vocab_size},
                                   {"decoder_vocab_size", c.decoder_vocab_size},
                                   {"share_encoder_decoder_embeddings", true},
                                   {"max_position_embeddings", c.max_position_embeddings},
                                   {"scale_embedding", true},
                                   {"normalize_before", false},
                                   {"normalize_embedding", false},
                                   {"static_position_embeddings", true},
                                   {"dropout", dropout},
                                   {"attention_dropout", 0.0},
                                   {"activation_dropout", 0.0},
                                   {"init_std", 0.02},
                                   {"is_encoder_decoder", true},
                                   {"use_cache", true},
                                   {"pad_token_id", pad},
                                   {"eos_token_id", 0},
                                   {"bos_token_id", 0},
                                   {"decoder_start_token_id", pad},
                                   {"forced_eos_token_id", 0},
                                   {"bad_words_ids", {{pad}}},
                                   {"num_beams", 4},
                                   {"max_length", 256},
                                   {"torch_dtype", dtype == io::DType::F32   ? "float32"
                                                   : dtype == io::DType::F16 ? "float16"
                                                                             : "bfloat16"},
                                   {"transformers_version", "4.31.0"}};
  write_json(dir + "/config.json", config);
  write_json(dir + "/generation_config.json", {{"bad_words_ids", {{pad}}},
                                               {"bos_token_id", 0},
                                               {"decoder_start_token_id", pad},
                                               {"eos_token_id", 0},
                                               {"forced_eos_token_id", 0},
                                               {"max_length", 256},
                                               {"num_beams", 4},
                                               {"pad_token_id", pad},
                                               {"transformers_version", "4.31.0"}});

  std::vector<io::TensorData> tensors;
  model.visit([&](const std::string& name, at::Tensor& param) {
    const at::Tensor t = param.detach().contiguous();
    std::vector<float> values(t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
    io::TensorData data{name, dtype, t.sizes().vec(), {}};
    data.bytes = dtype == io::DType::F16    ? io::float32_to_f16_bytes(values)
                 : dtype == io::DType::BF16 ? io::float32_to_bf16_bytes(values)
                                            : io::float32_bytes(values);
    tensors.push_back(std::move(data));
  });
  io::write_safetensors(dir + "/model.safetensors", tensors, {{"format", "pt"}});
}

}  // namespace ordo::train
