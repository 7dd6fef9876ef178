// Whisper's model (models/whisper.cpp, nn/audio_frontend.h) against transformers 4.31: the
// encoder's output for log-mel features and the decoder's teacher-forced logits, on the shared
// `whisper` fixture and on `whisper_alt` (128 mel bins, 200 source positions, other sizes), from
// tools/codegen/whisper/make_model_goldens.py; the reduced compute types; the errors for a
// config or features that do not fit.
// ctest-label: unit
#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>

#include <gtest/gtest.h>

#include "io/model_config.h"
#include "io/safetensors.h"
#include "models/checkpoint.h"
#include "models/family.h"
#include "models/packed_cache.h"
#include "models/seq2seq_model.h"
#include "ordo/error.h"
#include "ordo/positions.h"
#include "support/fixtures.h"
#include "support/golden_arrays.h"
#include "support/temp_dir.h"

namespace ordo {
namespace {

using testing::fixture_dir;

at::Tensor npy_tensor(const std::string& path) {
  testing::NpyArray array = testing::read_npy(path);
  return at::tensor(array.values).reshape(array.shape);
}

const nlohmann::json& golden(const std::string& fixture) {
  static const nlohmann::json all = testing::load_fixture_json("whisper", "model_golden.json");
  return all.at("fixtures").at(fixture);
}

at::Tensor features_of(const std::string& fixture) {
  return npy_tensor(fixture_dir(fixture) + "/" + golden(fixture).at("features").get<std::string>());
}

// Loaded outside inference mode whatever the caller's (LoadedModel loads so: packing writes
// the weights on threads of its own, where an inference tensor could not be written).
std::shared_ptr<models::Seq2SeqModel> load(const std::string& dir, nn::GemmType type) {
  const c10::InferenceMode off(false);
  io::ModelConfig config = io::load_model_config(dir + "/config.json");
  models::FamilySpec family = models::family_for(config);
  return models::Seq2SeqModel::load(dir, std::move(config), std::move(family), type);
}

// The fixture's model packed in float32, as LoadedModel runs it, loaded once per fixture.
const models::Seq2SeqModel& model(const std::string& fixture) {
  static std::map<std::string, std::shared_ptr<models::Seq2SeqModel>> models;
  auto& m = models[fixture];
  if (!m) m = load(fixture_dir(fixture), nn::GemmType::kFloat32);
  return *m;
}

// Teacher-forced logits [len, vocab] of the golden ids.
at::Tensor teacher_forced(const models::Seq2SeqModel& m, const at::Tensor& encoded, const nlohmann::json& ids) {
  nn::DecoderState state = m.start_decoding(encoded);
  const at::Tensor input = at::tensor(ids.get<std::vector<int64_t>>(), at::kLong).unsqueeze(0);
  return m.all_logits(input, state)[0];
}

at::Tensor json_matrix(const nlohmann::json& rows) {
  std::vector<at::Tensor> out;
  for (const auto& row : rows) out.push_back(at::tensor(row.get<std::vector<float>>(), at::kFloat));
  return at::stack(out);
}

class WhisperParity : public ::testing::TestWithParam<std::string> {};

TEST_P(WhisperParity, EncoderOutputMatchesTransformersWithin1e4) {
  at::InferenceMode guard;
  const nlohmann::json& g = golden(GetParam()).at("encoder");
  const at::Tensor out = model(GetParam()).encode_features(features_of(GetParam()));
  ASSERT_EQ(out.sizes().vec(), g.at("shape").get<std::vector<int64_t>>());
  const at::Tensor rows = out[0].index_select(0, at::tensor(g.at("rows").get<std::vector<int64_t>>(), at::kLong));
  EXPECT_LE((rows - json_matrix(g.at("values"))).abs().max().item<double>(), 1e-4);
  const at::Tensor all = out.to(at::kDouble);
  EXPECT_NEAR(all.mean().item<double>(), g.at("mean").get<double>(), 1e-5);
  EXPECT_NEAR(all.std(/*unbiased=*/false).item<double>(), g.at("std").get<double>(), 1e-5);
}

// Within 1e-4, or within transformers' own float32 rounding where that is larger: the shared
// fixture's decoder is scaled so that its logits (around 50) depend on the audio, and there
// transformers' float32 logits are 1.4e-3 from the float64 ones (make_model_goldens.py).
TEST_P(WhisperParity, TeacherForcedLogitsMatchTransformersWithin1e4) {
  at::InferenceMode guard;
  const nlohmann::json& g = golden(GetParam()).at("decoder");
  const double tolerance = std::max(1e-4, golden(GetParam()).at("float32_error").at("logits").get<double>());
  const models::Seq2SeqModel& m = model(GetParam());
  const at::Tensor logits = teacher_forced(m, m.encode_features(features_of(GetParam())), g.at("ids"));
  ASSERT_EQ(logits.size(0), static_cast<int64_t>(g.at("ids").size()));
  ASSERT_EQ(logits.size(1), m.config().vocab_size);
  const auto top5 = g.at("top5_ids").get<std::vector<std::vector<int64_t>>>();
  const at::Tensor expected_top = json_matrix(g.at("top5_logits"));
  const auto fixed = at::tensor(g.at("fixed_ids").get<std::vector<int64_t>>(), at::kLong);
  const at::Tensor expected_fixed = json_matrix(g.at("fixed_logits"));
  for (int64_t p = 0; p < logits.size(0); ++p) {
    const at::Tensor at_top = logits[p].index_select(0, at::tensor(top5[p], at::kLong));
    EXPECT_LE((at_top - expected_top[p]).abs().max().item<double>(), tolerance) << "position " << p;
    EXPECT_LE((logits[p].index_select(0, fixed) - expected_fixed[p]).abs().max().item<double>(), tolerance)
        << "position " << p;
  }
}

TEST_P(WhisperParity, TopFiveIdsOfEveryPositionAreTransformers) {
  at::InferenceMode guard;
  const nlohmann::json& g = golden(GetParam()).at("decoder");
  // The goldens' ranks 1..6 are at least this far apart: no tie for the order to depend on.
  ASSERT_GT(g.at("min_top6_gap").get<double>(), 2e-4);
  const models::Seq2SeqModel& m = model(GetParam());
  const at::Tensor logits = teacher_forced(m, m.encode_features(features_of(GetParam())), g.at("ids"));
  const auto expected = g.at("top5_ids").get<std::vector<std::vector<int64_t>>>();
  const at::Tensor top = std::get<1>(logits.topk(5, -1));
  for (int64_t p = 0; p < logits.size(0); ++p) {
    const std::vector<int64_t> ids(top[p].data_ptr<int64_t>(), top[p].data_ptr<int64_t>() + 5);
    EXPECT_EQ(ids, expected[p]) << "position " << p;
  }
}

TEST_P(WhisperParity, UnpackedFloat32AgreesWithPacked) {
  const auto unpacked = models::Seq2SeqModel::load(fixture_dir(GetParam()));
  at::InferenceMode guard;
  const at::Tensor features = features_of(GetParam());
  const at::Tensor a = unpacked->encode_features(features), b = model(GetParam()).encode_features(features);
  EXPECT_LE((a - b).abs().max().item<double>(), 1e-4);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, WhisperParity, ::testing::Values("whisper", "whisper_alt"));

class WhisperComputeTypes : public ::testing::TestWithParam<nn::GemmType> {};

TEST_P(WhisperComputeTypes, LoadAndRunCloseToFloat32) {
  at::InferenceMode guard;
  if (!nn::gemm_type_supported(GetParam())) GTEST_SKIP() << "no oneDNN kernel for this compute type on this CPU";
  for (const std::string fixture : {"whisper", "whisper_alt"}) {
    const auto reduced = load(fixture_dir(fixture), GetParam());
    const at::Tensor features = features_of(fixture);
    const at::Tensor encoded = reduced->encode_features(features);
    const at::Tensor reference = model(fixture).encode_features(features);
    ASSERT_EQ(encoded.sizes(), reference.sizes());
    // Layer-normed outputs (std 1): reduced precision moves them by a few hundredths at most.
    EXPECT_LT((encoded - reference).abs().mean().item<double>(), 0.05) << fixture;
    const nlohmann::json& ids = golden(fixture).at("decoder").at("ids");
    const at::Tensor logits = teacher_forced(*reduced, encoded, ids);
    EXPECT_TRUE(at::isfinite(logits).all().item<bool>()) << fixture;
    const at::Tensor expected = teacher_forced(model(fixture), reference, ids);
    const double agree = logits.argmax(-1).eq(expected.argmax(-1)).to(at::kDouble).mean().item<double>();
    EXPECT_GE(agree, 0.7) << fixture;
  }
}

INSTANTIATE_TEST_SUITE_P(Types, WhisperComputeTypes, ::testing::Values(nn::GemmType::kBFloat16, nn::GemmType::kInt8),
                         [](const auto& info) { return info.param == nn::GemmType::kInt8 ? "int8" : "bfloat16"; });

TEST(WhisperPackedCache, RestoredModelEncodesTheSameBits) {
  testing::TempDir tmp;
  const std::string dir = fixture_dir("whisper_alt"), file = tmp.file("packed");
  const auto packed = load(dir, nn::GemmType::kBFloat16);
  ASSERT_TRUE(models::save_packed(file, *packed, nn::GemmType::kBFloat16));
  io::ModelConfig config = io::load_model_config(dir + "/config.json");
  models::Seq2SeqModel fresh(config, models::family_for(config));
  ASSERT_TRUE(models::restore_packed(file, fresh, nn::GemmType::kBFloat16));
  at::InferenceMode guard;
  const at::Tensor features = features_of("whisper_alt");
  EXPECT_TRUE(at::equal(fresh.encode_features(features), packed->encode_features(features)));
}

TEST(WhisperConfig, ReadsMelBinsAndBothPositionLimits) {
  const io::ModelConfig c = io::load_model_config(fixture_dir("whisper_alt") + "/config.json");
  EXPECT_EQ(c.num_mel_bins, 128);
  EXPECT_EQ(c.max_position_embeddings, 200);
  EXPECT_EQ(io::decoder_positions(c), 64);
  EXPECT_EQ(io::config_key(c, "max_position_embeddings"), "max_source_positions");
  EXPECT_EQ(io::decoder_positions_key(c), "max_target_positions");
  const models::FamilySpec f = models::family_for(c);
  EXPECT_EQ(f.name, "whisper");
  EXPECT_EQ(f.tokenizer, models::TokenizerKind::kWhisper);
}

// The error's message, or "" when `run` does not throw ordo::Error.
template <class Run>
std::string error_of(Run&& run) {
  try {
    run();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(WhisperErrors, AConfigWithOtherMelBinsThanTheCheckpointNamesTheField) {
  testing::TempDir tmp;
  testing::copy_dir(fixture_dir("whisper_alt"), tmp.path());
  nlohmann::json config = testing::load_fixture_json("whisper_alt", "config.json");
  config["num_mel_bins"] = 80;
  tmp.write("config.json", config.dump());
  const std::string message = error_of([&] { load(tmp.path(), nn::GemmType::kFloat32); });
  EXPECT_NE(message.find("'num_mel_bins'"), std::string::npos) << message;
  EXPECT_NE(message.find("model.encoder.conv1.weight"), std::string::npos) << message;
}

TEST(WhisperErrors, FeaturesOfTheWrongShapeOrTypeAreRefused) {
  at::InferenceMode guard;
  const models::Seq2SeqModel& m = model("whisper_alt");
  const auto message = [&](const at::Tensor& features) { return error_of([&] { m.encode_features(features); }); };
  EXPECT_NE(message(at::zeros({1, 80, 400})).find("80 mel bins, but"), std::string::npos);
  EXPECT_NE(message(at::zeros({1, 80, 400})).find("num_mel_bins is 128"), std::string::npos);
  EXPECT_NE(message(at::zeros({1, 128, 3000})).find("max_source_positions 200 takes exactly 400"), std::string::npos);
  EXPECT_NE(message(at::zeros({1, 128, 399})).find("399 frames"), std::string::npos);
  EXPECT_NE(message(at::zeros({128, 400})).find("[batch, 128, 400] is expected"), std::string::npos);
  EXPECT_NE(message(at::zeros({1, 128, 400}, at::kDouble)).find("float32"), std::string::npos);
  EXPECT_NE(message(at::zeros({0, 128, 400})).find("empty"), std::string::npos);
  EXPECT_NE(message(at::Tensor()).find("not none"), std::string::npos);
}

TEST(WhisperErrors, TokenIdsAreRefusedByTheSpeechEncoder) {
  at::InferenceMode guard;
  const at::Tensor ids = at::ones({1, 4}, at::kLong);
  EXPECT_NE(error_of([&] { model("whisper_alt").encode(ids, at::ones_like(ids)); }).find("audio features"),
            std::string::npos);
}

TEST(WhisperErrors, ACheckpointWithoutTheEncoderPositionTableIsRefused) {
  testing::TempDir tmp;
  testing::copy_dir(fixture_dir("whisper_alt"), tmp.path());
  const auto source = models::open_checkpoint(fixture_dir("whisper_alt"));
  std::vector<io::TensorData> tensors;
  for (const std::string& name : source->names()) {
    if (name == "model.encoder.embed_positions.weight") continue;
    const at::Tensor t = source->get(name).contiguous();
    const float* data = t.data_ptr<float>();
    tensors.push_back({name, io::DType::F32, t.sizes().vec(), io::float32_bytes({data, data + t.numel()})});
  }
  io::write_safetensors(tmp.file("model.safetensors"), tensors);
  const std::string message = error_of([&] { load(tmp.path(), nn::GemmType::kFloat32); });
  EXPECT_NE(message.find("missing tensor 'model.encoder.embed_positions.weight'"), std::string::npos) << message;
}

TEST(WhisperPositions, TheEncoderTableIsTheCheckpointsSinusoids) {
  const PositionTable encoder = model_position_encodings(fixture_dir("whisper_alt"));
  EXPECT_EQ(encoder.layout, PositionLayout::kLearned);
  EXPECT_EQ(encoder.stack, "encoder");
  EXPECT_EQ(encoder.length, 200);
  EXPECT_EQ(encoder.dim, 48);
  EXPECT_EQ(encoder.offset, 0);
  // Sines then cosines (the fixture holds Whisper's sinusoids): position 0 is 0 ... 0, 1 ... 1.
  EXPECT_EQ(encoder.at(0, 0), 0.0);
  EXPECT_EQ(encoder.at(0, 24), 1.0);
  EXPECT_NEAR(encoder.at(7, 0), std::sin(7.0), 1e-6);
  EXPECT_NEAR(encoder.at(7, 24), std::cos(7.0), 1e-6);
  const PositionTable decoder = model_position_encodings(fixture_dir("whisper_alt"), std::nullopt, true);
  EXPECT_EQ(decoder.stack, "decoder");
  EXPECT_EQ(decoder.length, 64);
}

}  // namespace
}  // namespace ordo
