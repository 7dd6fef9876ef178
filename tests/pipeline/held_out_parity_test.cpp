// Parity with transformers 4.31 on the long-input families with other settings than their
// golden fixtures (tools/codegen/goldens/make_long_goldens.py): led_alt (one attention_window
// for every layer, given as an int; encoder and decoder tables of different lengths),
// longt5_alt (transient-global with global blocks of 3, tied embeddings, relu) and
// pegasus_x_alt (blocks of 4 without staggering, 2 global tokens). Their golden.json holds the
// encoder states and the greedy, beam4 and batched greedy outputs.
// ctest-label: integration
#include <string>
#include <utility>
#include <vector>

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "models/seq2seq_model.h"
#include "ordo/translator.h"
#include "support/fixtures.h"
#include "support/golden_options.h"

namespace ordo {
namespace {

class HeldOutParity : public ::testing::TestWithParam<std::string> {};

// The first `length` ids of a golden sequence, without its decoder start.
std::vector<int64_t> generated(const nlohmann::json& sequence, int64_t length) {
  const auto ids = sequence.get<std::vector<int64_t>>();
  return std::vector<int64_t>(ids.begin() + 1, ids.begin() + length);
}

TEST_P(HeldOutParity, EncoderStatesMatchTransformers) {
  at::InferenceMode guard;
  const nlohmann::json golden = testing::load_golden(GetParam());
  const auto model = models::Seq2SeqModel::load(testing::fixture_dir(GetParam()));
  model->pack(nn::GemmType::kFloat32);
  for (const auto& [index, states] :
       {std::pair{"sentence_index", "last_hidden_state"}, std::pair{"long_sentence_index", "long_last_hidden_state"}}) {
    const int sentence = golden["encoder"][index];
    const at::Tensor ids =
        at::tensor(golden["tokenization"][sentence]["input_ids"].get<std::vector<int64_t>>(), at::kLong).unsqueeze(0);
    const at::Tensor out = model->encode(ids, at::ones_like(ids))[0];
    std::vector<float> flat;
    for (const auto& r : golden["encoder"][states])
      for (float v : r) flat.push_back(v);
    ASSERT_EQ(out.numel(), static_cast<int64_t>(flat.size())) << states;
    EXPECT_LE((out.reshape({-1}) - at::tensor(flat, at::kFloat)).abs().max().item<double>(), 1e-4) << states;
  }
}

TEST_P(HeldOutParity, GreedyBeamAndBatchedOutputsMatchGenerate) {
  const nlohmann::json golden = testing::load_golden(GetParam());
  const Translator translator(testing::fixture_dir(GetParam()));
  std::vector<std::vector<int64_t>> sources;
  for (const auto& t : golden["tokenization"]) sources.push_back(t["input_ids"].get<std::vector<int64_t>>());
  for (const char* name : {"greedy", "beam4"}) {
    const nlohmann::json& gcase = golden["generation"][name];
    const DecodeOptions options = testing::options_for(gcase["kwargs"]);
    for (size_t i = 0; i < sources.size(); ++i) {
      const auto hyps = translator.translate_ids({sources[i]}, options).at(0).hypotheses;
      const nlohmann::json& expected = gcase["per_sentence"][i];
      ASSERT_EQ(hyps.size(), expected["sequences"].size()) << name << " sentence " << i;
      for (size_t k = 0; k < hyps.size(); ++k)
        EXPECT_EQ(hyps[k].ids, generated(expected["sequences"][k], expected["lengths"][k]))
            << name << " sentence " << i << " hypothesis " << k;
    }
  }
  const nlohmann::json& batched = golden["generation"]["batched_greedy"];
  const auto results = translator.translate_ids(sources, testing::options_for(batched["kwargs"]));
  ASSERT_EQ(results.size(), sources.size());
  for (size_t i = 0; i < sources.size(); ++i)
    EXPECT_EQ(results[i].hypotheses.at(0).ids, generated(batched["sequences"][i], batched["lengths"][i]))
        << "batched sentence " << i;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, HeldOutParity, ::testing::Values("led_alt", "longt5_alt", "pegasus_x_alt"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace ordo
