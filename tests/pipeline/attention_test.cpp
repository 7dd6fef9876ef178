// Cross-attention weights against Hugging Face's own (attention.json: the golden greedy output
// teacher-forced with output_attentions=True), for every family, layer and head; beam-search
// weights that follow their hypothesis; batches; and outputs unchanged by asking for them.
// ctest-label: integration
#include <algorithm>
#include <fstream>
#include <map>
#include <memory>

#include <gtest/gtest.h>

#include "models/seq2seq_model.h"
#include "ordo/translator.h"
#include "support/fixtures.h"
#include "support/golden_options.h"

namespace ordo {
namespace {

using nlohmann::json;
using testing::fixture_dir;

json load_attention(const std::string& fixture) {
  std::ifstream in(fixture_dir(fixture) + "/attention.json");
  return json::parse(in);
}

DecodeOptions greedy_with_attention(const std::string& fixture) {
  DecodeOptions options = testing::options_for(testing::load_golden(fixture)["generation"]["greedy"]["kwargs"]);
  options.return_attention = true;
  return options;
}

// Largest difference between `attention` and HF's cross_attentions[layer][head][t][s].
double max_diff(const Attention& attention, const json& expected) {
  double worst = 0;
  if (static_cast<int64_t>(expected.size()) != attention.layers) return INFINITY;
  for (int64_t l = 0; l < attention.layers; ++l) {
    if (static_cast<int64_t>(expected[l].size()) != attention.heads) return INFINITY;
    for (int64_t h = 0; h < attention.heads; ++h) {
      if (static_cast<int64_t>(expected[l][h].size()) != attention.target_length) return INFINITY;
      for (int64_t t = 0; t < attention.target_length; ++t) {
        if (static_cast<int64_t>(expected[l][h][t].size()) != attention.source_length) return INFINITY;
        for (int64_t s = 0; s < attention.source_length; ++s)
          worst = std::max(worst, std::abs(attention.at(l, h, t, s) - expected[l][h][t][s].get<double>()));
      }
    }
  }
  return worst;
}

class AttentionParity : public ::testing::TestWithParam<std::string> {
 protected:
  // The fixture's Translator, loaded once for the suite's tests and released after them.
  const Translator& translator() const {
    std::unique_ptr<Translator>& t = loaded_[GetParam()];
    if (!t) t = std::make_unique<Translator>(fixture_dir(GetParam()));
    return *t;
  }
  static void TearDownTestSuite() { loaded_.clear(); }

  // The sources of attention.json's sentences.
  std::vector<std::vector<int64_t>> sources(const json& golden) const {
    std::vector<std::vector<int64_t>> out;
    for (const json& sentence : golden["sentences"]) out.push_back(sentence["source_ids"].get<std::vector<int64_t>>());
    return out;
  }

  // `result` of sentence `i` against attention.json: its ids are the teacher-forced ones, its
  // weights Hugging Face's in every layer and head.
  void expect_huggingfaces_weights(const json& golden, size_t i, const TranslationResult& result) const {
    const json& expected = golden["sentences"][i];
    const auto decoder_inputs = expected["decoder_input_ids"].get<std::vector<int64_t>>();
    const Hypothesis& hyp = result.hypotheses.at(0);
    // The query of target position t predicts ids[t]; HF fed start + ids but the last.
    ASSERT_EQ(hyp.ids.size(), decoder_inputs.size()) << GetParam() << " sentence " << i;
    EXPECT_TRUE(std::equal(hyp.ids.begin(), hyp.ids.end() - 1, decoder_inputs.begin() + 1));
    EXPECT_EQ(hyp.attention.layers, golden["decoder_layers"].get<int64_t>());
    EXPECT_EQ(hyp.attention.heads, golden["heads"].get<int64_t>());
    // 2e-5: after up to 20 greedy steps, ordo's fixed-order attention kernel (kernels/attention_kernel.h)
    // and PyTorch's softmax round differently in the last bits; more where transformers' own
    // float32 and float64 runs differ more (golden.json checks: LongT5's local attention).
    const double tolerance = std::max(2e-5, testing::load_golden(GetParam())["checks"]["max_abs_diff_f32_vs_f64"].value(
                                                "teacher_forced_logits", 0.0));
    EXPECT_LE(max_diff(hyp.attention, expected["cross_attentions"]), tolerance) << GetParam() << " sentence " << i;
    EXPECT_EQ(result.source_ids, sources(golden)[i]);
    EXPECT_EQ(result.source_tokens.size(), sources(golden)[i].size());
    EXPECT_EQ(hyp.id_pieces.size(), hyp.ids.size());
  }

  // Hugging Face's FSMT with use_cache=True (its default) decodes only the LAST token of a
  // teacher-forced call, at its position, seeing nothing before it; its golden holds that one
  // row (see parity_test.cpp).
  static bool holds_the_last_row_only(const json& expected) {
    return expected["cross_attentions"][0][0].size() == 1 && expected["decoder_input_ids"].size() > 1;
  }

 private:
  static std::map<std::string, std::unique_ptr<Translator>> loaded_;
};

std::map<std::string, std::unique_ptr<Translator>> AttentionParity::loaded_;

TEST_P(AttentionParity, GreedyWeightsEqualHuggingFacesEveryLayerAndHead) {
  const json golden = load_attention(GetParam());
  const DecodeOptions options = greedy_with_attention(GetParam());
  const auto sources = this->sources(golden);
  ASSERT_FALSE(sources.empty());
  for (size_t i = 0; i < sources.size(); ++i) {
    const json& expected = golden["sentences"][i];
    if (holds_the_last_row_only(expected)) {
      // That row computed the same way here.
      const auto decoder_inputs = expected["decoder_input_ids"].get<std::vector<int64_t>>();
      auto model = models::Seq2SeqModel::load(fixture_dir(GetParam()));
      model->pack(nn::GemmType::kFloat32);
      at::InferenceMode guard;
      const at::Tensor ids = at::tensor(sources[i], at::kLong).unsqueeze(0);
      nn::DecoderState alone = model->start_decoding(model->encode(ids, at::ones_like(ids)), at::ones_like(ids));
      alone.length = static_cast<int64_t>(decoder_inputs.size()) - 1;
      alone.record_cross_attention = true;
      model->next_logits(at::tensor({decoder_inputs.back()}, at::kLong).unsqueeze(0), alone);
      double worst = 0;
      for (size_t l = 0; l < alone.cross_attention.size(); ++l)
        for (int64_t h = 0; h < alone.cross_attention[l].size(1); ++h)
          for (size_t s = 0; s < sources[i].size(); ++s)
            worst = std::max<double>(worst, std::abs(alone.cross_attention[l][0][h][0][s].item<float>() -
                                                     expected["cross_attentions"][l][h][0][s].get<double>()));
      EXPECT_LE(worst, 1e-5) << GetParam() << " sentence " << i;
      continue;
    }
    expect_huggingfaces_weights(golden, i, translator().translate_ids({sources[i]}, options)[0]);
  }
}

// Padding must not change a weight.
TEST_P(AttentionParity, GreedyWeightsInOneBatchEqualHuggingFaces) {
  const json golden = load_attention(GetParam());
  const auto sources = this->sources(golden);
  ASSERT_FALSE(sources.empty());
  const std::vector<TranslationResult> batched = translator().translate_ids(sources, greedy_with_attention(GetParam()));
  ASSERT_EQ(batched.size(), sources.size());
  for (size_t i = 0; i < sources.size(); ++i)
    if (!holds_the_last_row_only(golden["sentences"][i])) expect_huggingfaces_weights(golden, i, batched[i]);
}

TEST_P(AttentionParity, BeamWeightsFollowTheirHypothesis) {
  // Each n-best hypothesis' weights equal a teacher-forced run of exactly its ids: whatever
  // beam reorders happened on the way, the rows came along with the tokens.
  const std::string fixture = GetParam();
  const json golden = testing::load_golden(fixture);
  const Translator& translator = this->translator();
  DecodeOptions options = testing::options_for(golden["generation"]["beam4"]["kwargs"]);
  options.return_attention = true;
  auto model = models::Seq2SeqModel::load(fixture_dir(fixture));
  model->pack(nn::GemmType::kFloat32);
  at::InferenceMode guard;
  for (int sentence : {0, 2, 3}) {
    const auto source = golden["tokenization"][sentence]["input_ids"].get<std::vector<int64_t>>();
    const TranslationResult result = translator.translate_ids({source}, options)[0];
    ASSERT_GE(result.hypotheses.size(), 2u);
    for (const Hypothesis& hyp : result.hypotheses) {
      std::vector<int64_t> inputs = {golden["special_ids"]["decoder_start_token_id"].get<int64_t>()};
      inputs.insert(inputs.end(), hyp.ids.begin(), hyp.ids.end() - 1);
      const at::Tensor ids = at::tensor(source, at::kLong).unsqueeze(0);
      nn::DecoderState state = model->start_decoding(model->encode(ids, at::ones_like(ids)), at::ones_like(ids));
      state.record_cross_attention = true;
      model->all_logits(at::tensor(inputs, at::kLong).unsqueeze(0), state);
      double worst = 0;
      for (int64_t l = 0; l < hyp.attention.layers; ++l)
        for (int64_t h = 0; h < hyp.attention.heads; ++h)
          for (int64_t t = 0; t < hyp.attention.target_length; ++t)
            for (int64_t s = 0; s < hyp.attention.source_length; ++s)
              worst = std::max<double>(
                  worst, std::abs(hyp.attention.at(l, h, t, s) - state.cross_attention[l][0][h][t][s].item<float>()));
      EXPECT_LE(worst, 1e-5) << fixture << " sentence " << sentence;
    }
  }
}

TEST_P(AttentionParity, AskingForAttentionChangesNoOutput) {
  const json golden = testing::load_golden(GetParam());
  const Translator& translator = this->translator();
  std::vector<std::vector<int64_t>> sources;
  for (int i = 0; i < 6; ++i) sources.push_back(golden["tokenization"][i]["input_ids"].get<std::vector<int64_t>>());
  for (const char* name : {"greedy", "beam4"}) {
    DecodeOptions options = testing::options_for(golden["generation"][name]["kwargs"]);
    const auto plain = translator.translate_ids(sources, options);
    options.return_attention = true;
    const auto with = translator.translate_ids(sources, options);
    for (size_t i = 0; i < sources.size(); ++i)
      for (size_t k = 0; k < plain[i].hypotheses.size(); ++k) {
        EXPECT_EQ(plain[i].hypotheses[k].ids, with[i].hypotheses[k].ids);
        EXPECT_EQ(plain[i].hypotheses[k].score, with[i].hypotheses[k].score);
        EXPECT_TRUE(plain[i].hypotheses[k].attention.empty());
      }
  }
}

TEST(Attention, AveragedMatrixIsThePenultimateLayersHeadMean) {
  const Translator translator(fixture_dir("marian_opus_en_mg"));  // 2 decoder layers: layer 0
  DecodeOptions options = greedy_with_attention("marian_opus_en_mg");
  const Attention a = translator.translate({"Hello world."}, options)[0].hypotheses[0].attention;
  ASSERT_EQ(a.layers, 2);
  EXPECT_EQ(a.alignment_layer, 0);
  for (int64_t t = 0; t < a.target_length; ++t) {
    double row = 0;
    for (int64_t s = 0; s < a.source_length; ++s) {
      double mean = 0;
      for (int64_t h = 0; h < a.heads; ++h) mean += a.at(0, h, t, s) / a.heads;
      EXPECT_NEAR(a.aligned(t, s), mean, 1e-6);
      row += a.aligned(t, s);
    }
    EXPECT_NEAR(row, 1.0, 1e-5);
  }
}

// Named by fixture (t5 and t5_v1: cross-attention has no position bias, logits unscaled).
INSTANTIATE_TEST_SUITE_P(Fixtures, AttentionParity, ::testing::ValuesIn(testing::seq2seq_fixtures()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace ordo
