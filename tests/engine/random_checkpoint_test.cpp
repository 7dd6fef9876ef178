// The random-weight checkpoints ordo-bench measures (tools/train/random_checkpoint.h): each of
// the three shapes, written small but with its real vocabulary, is a folder ordo loads with the
// family, layer counts and tensor shapes asked for, and translates text through.
// ctest-label: slow
#include <gtest/gtest.h>

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
  const std::string expected_family = GetParam() == "tc-big" ? "marian" : GetParam() == "nllb-600m" ? "m2m_100" : "pegasus";
  EXPECT_EQ(model->family().name, expected_family);

  const io::SafetensorsFile file(dir + "/model.safetensors");
  EXPECT_EQ(file.get("model.shared.weight").shape, (std::vector<int64_t>{shape.vocab_size, 16}));
  EXPECT_EQ(file.get("model.decoder.layers.1.fc1.weight").shape, (std::vector<int64_t>{24, 16}));
  EXPECT_FALSE(file.contains("model.decoder.layers.2.fc1.weight"));

  const Translator translator(dir);
  DecodeOptions options;
  options.max_new_tokens = options.min_new_tokens = 5;
  const auto results = translator.translate({"A test sentence."}, options);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].hypotheses[0].ids.size(), 5u);
}

INSTANTIATE_TEST_SUITE_P(Shapes, RandomCheckpoint, ::testing::Values("tc-big", "nllb-600m", "pegasus-large"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

TEST(RandomCheckpointShapes, UnknownNameIsAnError) {
  EXPECT_THROW(train::big_shape("gpt-5"), Error);
}

}  // namespace
}  // namespace ordo
