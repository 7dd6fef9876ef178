// The random-weight checkpoints ordo-bench measures (tools/train/random_checkpoint.h): each of
// the three shapes, written small but with its real vocabulary, is a folder ordo loads with the
// family, layer counts and tensor shapes asked for, and translates text through.
// ctest-label: slow
#include <gtest/gtest.h>

#include <map>

#include "io/json_file.h"
#include "io/safetensors.h"
#include "models/seq2seq_model.h"
#include "ordo/translator.h"
#include "support/temp_dir.h"
#include "train/random_checkpoint.h"

namespace ordo {
namespace {

class RandomCheckpoint : public ::testing::TestWithParam<std::string> {};

TEST_P(RandomCheckpoint, LoadsWithTheShapeAskedFor) {
  train::BigShape shape = train::big_shape(GetParam());
  shape.layers = 2;
  shape.d_model = 16;
  shape.ffn_dim = 24;
  shape.heads = 4;
  testing::TempDir tmp;
  const std::string dir = tmp.file("model");
  train::write_random_model(dir, shape, std::string(ORDO_TEST_DATA_DIR) + "/hf");

  const auto model = models::Seq2SeqModel::load(dir);
  EXPECT_EQ(model->config().d_model, 16);
  EXPECT_EQ(model->config().encoder_layers, 2);
  EXPECT_EQ(model->config().decoder_layers, 2);
  EXPECT_EQ(model->config().encoder_attention_heads, 4);
  EXPECT_EQ(model->config().decoder_ffn_dim, 24);
  EXPECT_EQ(model->config().vocab_size, train::big_shape(GetParam()).vocab_size);
  const std::map<std::string, std::string> families = {{"tc-big", "marian"},         {"nllb-600m", "m2m_100"},
                                                       {"pegasus-large", "pegasus"}, {"bart-large-cnn", "bart"},
                                                       {"flan-t5-base", "t5"},       {"mbart-large-50", "mbart"}};
  EXPECT_EQ(model->family().name, families.at(GetParam()));

  const io::SafetensorsFile file(dir + "/model.safetensors");
  if (GetParam() == "flan-t5-base") {  // T5's own names; d_kv 64 kept: 4 heads x 64 wide
    EXPECT_EQ(file.get("shared.weight").shape, (std::vector<int64_t>{shape.vocab_size, 16}));
    EXPECT_EQ(file.get("lm_head.weight").shape, (std::vector<int64_t>{shape.vocab_size, 16}));
    EXPECT_EQ(file.get("decoder.block.1.layer.0.SelfAttention.q.weight").shape, (std::vector<int64_t>{256, 16}));
    EXPECT_EQ(file.get("decoder.block.1.layer.2.DenseReluDense.wi_1.weight").shape, (std::vector<int64_t>{24, 16}));
    EXPECT_FALSE(file.contains("decoder.block.2.layer.0.SelfAttention.q.weight"));
  } else {
    EXPECT_EQ(file.get("model.shared.weight").shape, (std::vector<int64_t>{shape.vocab_size, 16}));
    EXPECT_EQ(file.get("model.decoder.layers.1.fc1.weight").shape, (std::vector<int64_t>{24, 16}));
    EXPECT_FALSE(file.contains("model.decoder.layers.2.fc1.weight"));
  }

  const Translator translator(dir);
  DecodeOptions options;
  options.max_new_tokens = options.min_new_tokens = 5;
  const auto results = translator.translate({"A test sentence."}, options);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].hypotheses[0].ids.size(), 5u);
}

INSTANTIATE_TEST_SUITE_P(Shapes, RandomCheckpoint,
                         ::testing::Values("tc-big", "nllb-600m", "pegasus-large", "bart-large-cnn", "flan-t5-base",
                                           "mbart-large-50"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

// Written at a fixture's own dimensions, a new family's checkpoint has exactly the tensor names
// and shapes of the fixture transformers 4.31 saved (golden.json checks.safetensors): the file
// CTranslate2's converter and ordo read is laid out as a downloaded one.
TEST(RandomCheckpointShapes, NewFamiliesWriteTheLayoutTransformersSaves) {
  for (const auto& [name, fixture] : std::vector<std::pair<std::string, std::string>>{
           {"bart-large-cnn", "bart"}, {"mbart-large-50", "mbart50"}, {"flan-t5-base", "t5"}}) {
    SCOPED_TRACE(name);
    const std::string fixture_dir = std::string(ORDO_TEST_DATA_DIR) + "/hf/" + fixture;
    const nlohmann::json config = io::read_json_file(fixture_dir + "/config.json");
    train::BigShape shape = train::big_shape(name);
    EXPECT_EQ(shape.fixture, fixture);
    const bool t5 = fixture == "t5";
    shape.layers = config.at(t5 ? "num_layers" : "encoder_layers").get<int64_t>();
    shape.heads = config.at(t5 ? "num_heads" : "encoder_attention_heads").get<int64_t>();
    shape.ffn_dim = config.at(t5 ? "d_ff" : "encoder_ffn_dim").get<int64_t>();
    shape.d_model = config.at("d_model").get<int64_t>();
    shape.vocab_size = config.at("vocab_size").get<int64_t>();
    if (t5) shape.d_kv = config.at("d_kv").get<int64_t>();
    testing::TempDir tmp;
    const std::string dir = tmp.file("model");
    train::write_random_model(dir, shape, std::string(ORDO_TEST_DATA_DIR) + "/hf");

    const nlohmann::json expected =
        io::read_json_file(fixture_dir + "/golden.json").at("checks").at("safetensors").at("tensors");
    const io::SafetensorsFile file(dir + "/model.safetensors");
    std::vector<std::string> expected_names;
    for (const auto& [tensor, entry] : expected.items()) {
      expected_names.push_back(tensor);
      if (file.contains(tensor))
        EXPECT_EQ(file.get(tensor).shape, entry.at("shape").get<std::vector<int64_t>>()) << tensor;
    }
    EXPECT_EQ(file.names(), expected_names);  // both sorted
  }
}

TEST(RandomCheckpointShapes, UnknownNameIsAnError) { EXPECT_THROW(train::big_shape("gpt-5"), Error); }

}  // namespace
}  // namespace ordo
