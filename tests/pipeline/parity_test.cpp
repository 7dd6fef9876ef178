// Parity with Hugging Face transformers 4.31 on every family's golden fixtures: encoder states,
// first-step and teacher-forced logits, greedy / beam / no-repeat-ngram / batched generation.
// ctest-label: integration
#include <cmath>
#include <map>
#include <memory>

#include <gtest/gtest.h>

#include "io/safetensors.h"
#include "models/seq2seq_model.h"
#include "ordo/translator.h"
#include "support/fixtures.h"
#include "support/golden_options.h"

namespace ordo {
namespace {

using nlohmann::json;
using testing::fixture_dir;
using testing::load_golden;

constexpr double kTolerance = 1e-4;

at::Tensor ids_tensor(const std::vector<int64_t>& ids) { return at::tensor(ids, at::kLong).unsqueeze(0); }

double max_abs_diff(const at::Tensor& actual, const json& expected_rows) {
  std::vector<float> flat;
  for (const auto& row : expected_rows)
    for (float v : row) flat.push_back(v);
  const at::Tensor expected = at::tensor(flat, at::kFloat);
  if (expected.numel() != actual.numel()) return INFINITY;
  return (actual.reshape({-1}) - expected).abs().max().item<double>();
}

class Parity : public ::testing::TestWithParam<std::string> {
 protected:
  // The fixture's golden and models, loaded once for the suite's tests (each test sees them
  // const) and released after them.
  struct Loaded {
    json golden;
    std::shared_ptr<models::Seq2SeqModel> model, unpacked;
    std::unique_ptr<Translator> translator;
  };
  void SetUp() override {
    Loaded& loaded = loaded_[GetParam()];
    if (!loaded.model) {
      loaded.golden = load_golden(GetParam());
      // model as the Translator runs it (GEMMs packed for oneDNN, float32); unpacked as the
      // trainer runs it (at::linear, autograd-capable).
      loaded.model = models::Seq2SeqModel::load(fixture_dir(GetParam()));
      loaded.model->pack(nn::GemmType::kFloat32);
      loaded.unpacked = models::Seq2SeqModel::load(fixture_dir(GetParam()));
    }
    golden_ = loaded.golden;
    model_ = loaded.model;
    unpacked_ = loaded.unpacked;
  }
  static void TearDownTestSuite() { loaded_.clear(); }
  const Translator& translator() const {
    std::unique_ptr<Translator>& t = loaded_[GetParam()].translator;
    if (!t) t = std::make_unique<Translator>(fixture_dir(GetParam()));
    return *t;
  }
  std::vector<int64_t> input_ids(int sentence) const {
    return golden_["tokenization"][sentence]["input_ids"].get<std::vector<int64_t>>();
  }
  at::Tensor encode(const models::Seq2SeqModel& model, int sentence) const {
    const at::Tensor ids = ids_tensor(input_ids(sentence));
    return model.encode(ids, at::ones_like(ids));
  }
  json golden_;
  std::shared_ptr<models::Seq2SeqModel> model_, unpacked_;

 private:
  static std::map<std::string, Loaded> loaded_;
};

std::map<std::string, Parity::Loaded> Parity::loaded_;

TEST_P(Parity, EncoderStates) {
  at::InferenceMode guard;
  const json& enc = golden_["encoder"];
  for (const auto& model : {model_, unpacked_}) {
    EXPECT_LE(max_abs_diff(encode(*model, enc["sentence_index"])[0], enc["last_hidden_state"]), kTolerance);
    EXPECT_LE(max_abs_diff(encode(*model, enc["long_sentence_index"])[0], enc["long_last_hidden_state"]), kTolerance);
  }
}

TEST_P(Parity, FirstStepLogits) {
  at::InferenceMode guard;
  const json& step = golden_["decoder_step0"];
  const at::Tensor ids = ids_tensor(input_ids(step["sentence_index"]));
  const at::Tensor mask = at::ones_like(ids);
  for (const auto& model : {model_, unpacked_}) {
    nn::DecoderState state = model->start_decoding(model->encode(ids, mask), mask);
    const at::Tensor logits =
        model->next_logits(ids_tensor(step["decoder_input_ids"][0].get<std::vector<int64_t>>()), state)[0];
    const at::Tensor expected = at::tensor(step["logits"].get<std::vector<float>>(), at::kFloat);
    ASSERT_EQ(logits.size(0), expected.size(0));
    EXPECT_LE((logits - expected).abs().max().item<double>(), kTolerance);
    EXPECT_EQ(logits.argmax().item<int64_t>(), step["argmax"].get<int64_t>());
  }
}

// Hugging Face's FSMT decodes only the LAST token when called with use_cache=True (its
// config's default), also when given a whole sequence: that token at its position in the
// sequence, attending to nothing before it. Its golden holds that one row.
bool holds_the_last_row_only(const json& teacher_forced) {
  return teacher_forced["top5_ids"].size() == 1 && teacher_forced["decoder_input_ids"][0].size() > 1;
}

// `logits` (of target position `pos`) against row `row` of the golden top 5.
void expect_top5(const json& teacher_forced, const at::Tensor& logits, size_t row, size_t pos) {
  const auto [values, indices] = at::topk(logits, 5);
  const auto ref_ids = teacher_forced["top5_ids"][row].get<std::vector<int64_t>>();
  const auto ref_logits = teacher_forced["top5_logits"][row].get<std::vector<float>>();
  for (int k = 0; k < 5; ++k) {
    EXPECT_NEAR(values[k].item<float>(), ref_logits[k], kTolerance) << "position " << pos;
    if (k == 0) EXPECT_EQ(indices[k].item<int64_t>(), ref_ids[k]) << "position " << pos;
  }
}

TEST_P(Parity, TeacherForcedTop5MatchesHuggingFaces) {
  at::InferenceMode guard;
  const json& tf = golden_["teacher_forced"];
  const at::Tensor ids = ids_tensor(input_ids(tf["sentence_index"]));
  const at::Tensor mask = at::ones_like(ids);
  const at::Tensor encoded = model_->encode(ids, mask);
  const auto target = tf["decoder_input_ids"][0].get<std::vector<int64_t>>();
  if (holds_the_last_row_only(tf)) {
    nn::DecoderState alone = model_->start_decoding(encoded, mask);
    alone.length = static_cast<int64_t>(target.size()) - 1;
    expect_top5(tf, model_->next_logits(ids_tensor({target.back()}), alone)[0], 0, target.size() - 1);
    return;
  }
  ASSERT_EQ(tf["top5_ids"].size(), target.size());
  nn::DecoderState one_pass = model_->start_decoding(encoded, mask);
  const at::Tensor all = model_->all_logits(ids_tensor(target), one_pass)[0];
  for (size_t pos = 0; pos < target.size(); ++pos) expect_top5(tf, all[pos], pos, pos);
}

TEST_P(Parity, StepByStepLogitsEqualTheOnePassOnes) {
  at::InferenceMode guard;
  const json& tf = golden_["teacher_forced"];
  const at::Tensor ids = ids_tensor(input_ids(tf["sentence_index"]));
  const at::Tensor mask = at::ones_like(ids);
  const at::Tensor encoded = model_->encode(ids, mask);
  const auto target = tf["decoder_input_ids"][0].get<std::vector<int64_t>>();
  nn::DecoderState one_pass = model_->start_decoding(encoded, mask);
  const at::Tensor all = model_->all_logits(ids_tensor(target), one_pass)[0];
  nn::DecoderState incremental = model_->start_decoding(encoded, mask);
  for (size_t pos = 0; pos < target.size(); ++pos) {
    const at::Tensor step = model_->next_logits(ids_tensor({target[pos]}), incremental)[0];
    EXPECT_LE((step - all[pos]).abs().max().item<double>(), kTolerance) << "position " << pos;
  }
}

using testing::options_for;

// The generated ids of a golden sequence: decoder start dropped, cut after `length`.
std::vector<int64_t> generated(const json& sequence, int64_t length) {
  const auto ids = sequence.get<std::vector<int64_t>>();
  return std::vector<int64_t>(ids.begin() + 1, ids.begin() + length);
}

class Generation : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(Generation, MatchesGenerate) {
  const auto& [fixture, case_name] = GetParam();
  const json golden = load_golden(fixture);
  const json& gcase = golden["generation"][case_name];
  const Translator translator(fixture_dir(fixture));
  const DecodeOptions options = options_for(gcase["kwargs"]);
  const size_t sentences = golden["sentences"].size();

  for (size_t i = 0; i < sentences; ++i) {
    const auto source = golden["tokenization"][i]["input_ids"].get<std::vector<int64_t>>();
    const auto results = translator.translate_ids({source}, options);
    const json& expected = gcase["per_sentence"][i];
    const auto& hyps = results.at(0).hypotheses;
    ASSERT_EQ(hyps.size(), expected["sequences"].size()) << "sentence " << i;
    for (size_t k = 0; k < hyps.size(); ++k) {
      EXPECT_EQ(hyps[k].ids, generated(expected["sequences"][k], expected["lengths"][k]))
          << fixture << " " << case_name << " sentence " << i << " hypothesis " << k;
      if (expected.contains("sequences_scores"))
        EXPECT_NEAR(hyps[k].score, expected["sequences_scores"][k].get<double>(), kTolerance)
            << fixture << " " << case_name << " sentence " << i << " hypothesis " << k;
    }
  }
}

std::vector<std::vector<int64_t>> golden_sources(const json& golden) {
  std::vector<std::vector<int64_t>> sources;
  for (const json& t : golden["tokenization"]) sources.push_back(t["input_ids"].get<std::vector<int64_t>>());
  return sources;
}

TEST_P(Parity, BatchedGreedyMatchesGenerate) {
  const json& gcase = golden_["generation"]["batched_greedy"];
  const auto batched = translator().translate_ids(golden_sources(golden_), options_for(gcase["kwargs"]));
  ASSERT_EQ(batched.size(), golden_sources(golden_).size());
  for (size_t i = 0; i < batched.size(); ++i)
    EXPECT_EQ(batched[i].hypotheses.at(0).ids, generated(gcase["sequences"][i], gcase["lengths"][i]))
        << "sentence " << i;
}

// Without scores, greedy search takes bounded logits (only what can be chosen computed
// exactly): generate()'s tokens still, batched and sentence by sentence.
TEST_P(Parity, GreedyWithoutScoresMatchesGenerate) {
  const json& gcase = golden_["generation"]["batched_greedy"];
  DecodeOptions options = options_for(gcase["kwargs"]);
  options.return_scores = false;
  const auto sources = golden_sources(golden_);
  const auto batched = translator().translate_ids(sources, options);
  ASSERT_EQ(batched.size(), sources.size());
  for (size_t i = 0; i < batched.size(); ++i) {
    const std::vector<int64_t> want = generated(gcase["sequences"][i], gcase["lengths"][i]);
    EXPECT_EQ(batched[i].hypotheses.at(0).ids, want) << "sentence " << i;
    EXPECT_EQ(translator().translate_ids({sources[i]}, options)[0].hypotheses.at(0).ids, want) << "sentence " << i;
  }
}

TEST_P(Parity, BatchedGreedyEqualsOneByOne) {
  const DecodeOptions options = options_for(golden_["generation"]["batched_greedy"]["kwargs"]);
  const auto sources = golden_sources(golden_);
  const auto batched = translator().translate_ids(sources, options);
  ASSERT_EQ(batched.size(), sources.size());
  for (size_t i = 0; i < sources.size(); ++i) {
    const auto alone = translator().translate_ids({sources[i]}, options);
    EXPECT_EQ(alone[0].hypotheses.at(0).ids, batched[i].hypotheses.at(0).ids) << "sentence " << i;
  }
}

TEST_P(Parity, BeamBatchEqualsOneByOne) {
  const Translator& translator = this->translator();
  DecodeOptions options;
  options.beam_size = 4;
  options.n_best = 2;
  options.max_new_tokens = 20;
  BatchOptions threes;
  threes.batch_size = 3;
  std::vector<std::vector<int64_t>> sources;
  for (const json& t : golden_["tokenization"]) sources.push_back(t["input_ids"].get<std::vector<int64_t>>());
  const auto batched = translator.translate_ids(sources, options, threes);
  for (size_t i = 0; i < sources.size(); ++i) {
    const auto alone = translator.translate_ids({sources[i]}, options);
    ASSERT_EQ(alone[0].hypotheses.size(), batched[i].hypotheses.size());
    for (size_t k = 0; k < alone[0].hypotheses.size(); ++k) {
      EXPECT_EQ(alone[0].hypotheses[k].ids, batched[i].hypotheses[k].ids) << "sentence " << i;
      EXPECT_NEAR(alone[0].hypotheses[k].score, batched[i].hypotheses[k].score, kTolerance);
    }
  }
}

std::string name_of(const ::testing::TestParamInfo<std::string>& info) { return info.param; }

INSTANTIATE_TEST_SUITE_P(Fixtures, Parity, ::testing::ValuesIn(testing::seq2seq_fixtures()), name_of);

INSTANTIATE_TEST_SUITE_P(Fixtures, Generation,
                         ::testing::Combine(::testing::ValuesIn(testing::seq2seq_fixtures()),
                                            ::testing::Values("greedy", "beam4", "beam4_nrng3")),
                         [](const ::testing::TestParamInfo<std::tuple<std::string, std::string>>& info) {
                           return std::get<0>(info.param) + "_" + std::get<1>(info.param);
                         });

}  // namespace
}  // namespace ordo
