// Writes a trained model as a Hugging Face Marian folder, loadable by ordo and by
// transformers' MarianMTModel / MarianTokenizer unchanged.
#pragma once

#include <string>

#include "io/model_config.h"
#include "io/safetensors.h"
#include "models/seq2seq_model.h"

namespace ordo::train {

// The shape of a model to train; the rest of config.json follows opus-mt conventions.
struct MarianShape {
  int64_t d_model = 256, layers = 3, heads = 4, ffn_dim = 1024, max_positions = 256;
  std::string activation = "relu";
};

// Tokenizer files from one joint SentencePiece model (trained with </s> = 0, <unk> = 1, no
// bos/pad): source.spm = target.spm, vocab.json = the spm pieces in id order + "<pad>" last,
// tokenizer_config.json, special_tokens_map.json. Returns the vocabulary size (with <pad>).
int64_t write_tokenizer_files(const std::string& dir, const std::string& spm_model, const std::string& spm_vocab,
                              const std::string& source_lang, const std::string& target_lang);

// The config a model of `shape` over `vocab_size` pieces has (pad = last id = decoder start).
io::ModelConfig marian_config(const MarianShape& shape, int64_t vocab_size);

// config.json, generation_config.json and model.safetensors (F32, F16 or BF16) into `dir`.
// `dropout` is the training dropout, recorded in config.json for whoever fine-tunes the model.
void write_model_files(const std::string& dir, models::Seq2SeqModel& model, const MarianShape& shape, io::DType dtype,
                       double dropout);

// Copies a file byte for byte (a tokenizer file into a model folder); ordo::Error naming the
// file that cannot be read or written.
void copy_file(const std::string& from, const std::string& to);

}  // namespace ordo::train
