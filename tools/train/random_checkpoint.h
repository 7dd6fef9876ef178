// Random-weight Hugging Face folders at the sizes people run (tc-big, NLLB-600M, Pegasus-large,
// BART-large-cnn, Flan-T5-base, mBART-large-50), for speed and memory measurements: the layout, config.json and tokenizer files of a small
// fixture of the same family (tests/data/hf/), scaled to the named shape. Weights are written
// tensor by tensor, so writing a 600 M-parameter model needs its float32 size once, not twice.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ordo::train {

struct BigShape {
  std::string name;     // "tc-big", "nllb-600m", "pegasus-large", "bart-large-cnn", ...
  std::string fixture;  // folder under tests/data/hf/ whose family, config and tokenizer it copies
  int64_t layers = 6;   // encoder layers = decoder layers
  int64_t d_model = 1024, ffn_dim = 4096, heads = 16;
  int64_t vocab_size = 0;  // output vocabulary (rows of the shared embedding)
  int64_t max_positions = 1024;
  int64_t d_kv = 0;  // T5: width of one attention head (0: d_model / heads)
  // Generation settings of the real checkpoint written over the fixture's, in config.json and
  // generation_config.json (bart-large-cnn: min_length 56, max_length 142).
  std::vector<std::pair<std::string, int64_t>> generation;
};

// The real model sizes ordo-bench measures, and their names for --shape.
std::vector<BigShape> big_shapes();
BigShape big_shape(const std::string& name);  // ordo::Error listing the names when unknown

// Writes config.json, generation_config.json, model.safetensors (float32, random weights from
// `seed`, the initialisation of train::initialise) and the fixture's tokenizer files into `dir`.
// `fixtures_dir` is tests/data/hf. A folder that already has model.safetensors is kept.
void write_random_model(const std::string& dir, const BigShape& shape, const std::string& fixtures_dir,
                        uint64_t seed = 1234);

}  // namespace ordo::train
