// Access to the golden Hugging Face fixtures copied into tests/data/hf/ (see its README.md).
#pragma once

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ordo::testing {

inline std::string data_dir() { return ORDO_TEST_DATA_DIR; }
inline std::string fixture_dir(const std::string& name) { return data_dir() + "/hf/" + name; }

// The Marian fixtures: shared vocab + swish, tc-big relu with renormalize_logits, separate vocabs + gelu.
inline std::vector<std::string> marian_fixtures() {
  return {"marian_opus_en_mg", "marian_tcbig_en_pt", "marian_sep_en_mg"};
}

// Every family: the Marian ones, Pegasus (pre-norm, final norms), M2M100 and NLLB (fairseq
// positions, forced target language), FSMT (post-norm, fairseq positions, Moses + BPE), BART
// (post-norm, learned positions, byte-level BPE), mBART-50 (pre-norm, learned positions) and
// T5 (RMS norms, relative position bias; t5 the v1.1 / Flan layout, t5_v1 the original t5-small).
inline std::vector<std::string> seq2seq_fixtures() {
  std::vector<std::string> all = marian_fixtures();
  for (const char* name : {"pegasus", "m2m100", "nllb", "fsmt", "bart", "mbart50", "t5", "t5_v1", "led", "longt5",
                           "longt5_local", "pegasus_x"})
    all.push_back(name);
  return all;
}

// The lines of a text file (a sample of sentences); throws when it cannot be opened.
inline std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// A fixture's JSON file: golden.json (transformers' outputs) or interactive.json (prefixes,
// constrained search and scores, tools/codegen/goldens/make_interactive_goldens.py).
inline nlohmann::json load_fixture_json(const std::string& name, const std::string& file) {
  const std::string path = fixture_dir(name) + "/" + file;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  return nlohmann::json::parse(in);
}
inline nlohmann::json load_golden(const std::string& name) { return load_fixture_json(name, "golden.json"); }
inline nlohmann::json load_interactive(const std::string& name) { return load_fixture_json(name, "interactive.json"); }

// A golden sequence without its decoder start, cut after its first EOS (beam outputs are
// padded after it).
inline std::vector<int64_t> golden_generated(const nlohmann::json& sequence, int64_t eos) {
  std::vector<int64_t> ids = sequence.get<std::vector<int64_t>>();
  ids.erase(ids.begin());
  const auto end = std::find(ids.begin(), ids.end(), eos);
  if (end != ids.end()) ids.erase(end + 1, ids.end());
  return ids;
}

}  // namespace ordo::testing
