// LongT5's encoder attention (nn/longt5_attention.cpp) beyond what the generic parity suites
// check on the golden fixtures: that it is local (a ~4,000-token input, where a token far from
// a position changes nothing there; dense attention cut to the window gives the same states),
// that lengths which are no multiple of the block run and padding changes no bit, that
// config.json's LongT5 fields are read and checked, and what `ordo positions` shows (the packed
// weights cache: packed_cache_test.cpp).
// ctest-label: integration
#include <fstream>
#include <string>

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "io/model_config.h"
#include "models/checkpoint.h"
#include "models/family.h"
#include "models/packed_cache.h"
#include "models/seq2seq_model.h"
#include "nn/transformer.h"
#include "ordo/error.h"
#include "ordo/positions.h"
#include "support/fixtures.h"
#include "support/temp_dir.h"

namespace ordo {
namespace {

using testing::fixture_dir;

std::shared_ptr<models::Seq2SeqModel> packed_model(const std::string& fixture) {
  auto model = models::Seq2SeqModel::load(fixture_dir(fixture));
  model->pack(nn::GemmType::kFloat32);
  return model;
}

at::Tensor encode(const models::Seq2SeqModel& model, const at::Tensor& ids) {
  return model.encode(ids, at::ones_like(ids));
}

// Random ids of the T5 vocabulary, ending in </s> (1), [1, length].
at::Tensor random_ids(int64_t length, uint64_t seed) {
  at::manual_seed(seed);
  at::Tensor ids = at::randint(2, 32000, {1, length}, at::kLong);
  ids[0][length - 1] = 1;
  return ids;
}

// Local attention of radius 3 in each of the 2 layers: a position sees 3 positions either side
// per layer, 6 through both; one 3,000 positions away must change nothing.
TEST(LongT5Attention, LocalTokenFarAwayLeavesAPositionUnchanged) {
  const auto model = packed_model("longt5_local");
  const at::Tensor ids = random_ids(4000, 7);
  at::Tensor changed = ids.clone();
  changed[0][3500] = ids[0][3500].item<int64_t>() == 5 ? 6 : 5;
  const at::Tensor before = encode(*model, ids), after = encode(*model, changed);
  ASSERT_EQ(before.sizes(), (std::vector<int64_t>{1, 4000, 32}));
  EXPECT_TRUE(at::equal(before.narrow(1, 0, 3400), after.narrow(1, 0, 3400)));
  EXPECT_FALSE(at::equal(before.narrow(1, 3500, 1), after.narrow(1, 3500, 1)));
}

// The window is the token's own block (local_radius + 1 = 4 positions) and both neighbours,
// cut to local_radius either side: after two layers a change reaches 6 positions and no more.
TEST(LongT5Attention, LocalChangeReachesTwiceTheRadius) {
  const auto model = packed_model("longt5_local");
  const at::Tensor ids = random_ids(101, 11);
  at::Tensor changed = ids.clone();
  changed[0][50] = ids[0][50].item<int64_t>() == 5 ? 6 : 5;
  const at::Tensor before = encode(*model, ids), after = encode(*model, changed);
  for (int64_t p = 0; p < 101; ++p) {
    const bool same = at::equal(before.narrow(1, p, 1), after.narrow(1, p, 1));
    EXPECT_EQ(same, p < 44 || p > 56) << "position " << p;
  }
}

// Local attention is dense T5 attention with the keys more than local_radius away masked: the
// encoder's own layers run densely (the relative bias over every distance, a band mask) give the
// same states but for the order of the sums.
TEST(LongT5Attention, LocalEqualsDenseAttentionCutToTheWindow) {
  const auto model = packed_model("longt5_local");
  const int64_t length = 50, radius = 3;
  const at::Tensor ids = random_ids(length, 5);
  const at::Tensor local = encode(*model, ids);
  const nn::TransformerEncoder& encoder = model->encoder();
  at::Tensor x = encoder.embed.forward(ids, 0);
  const at::Tensor bias = encoder.relative_bias.forward(0, length, length);
  const at::Tensor position = at::arange(length, at::kLong);
  const at::Tensor far = (position.unsqueeze(0) - position.unsqueeze(1)).abs().gt(radius);
  const at::Tensor band = far.to(at::kFloat).mul(-1e4).view({1, 1, length, length});
  for (const nn::EncoderLayer& layer : encoder.layers) x = layer.forward(x, band, bias);
  const at::Tensor dense = encoder.layer_norm.forward(x);
  EXPECT_LT((local - dense).abs().max().item<double>(), 2e-6);
}

// Transient-global: every position sees the side tokens, so a far change reaches everywhere,
// and the input runs in time (4,000 tokens in blocks of 5 with 1,000 side tokens).
TEST(LongT5Attention, TransientGlobalLongInputSeesFarTokens) {
  const auto model = packed_model("longt5");
  const at::Tensor ids = random_ids(4000, 13);
  at::Tensor changed = ids.clone();
  changed[0][3500] = ids[0][3500].item<int64_t>() == 5 ? 6 : 5;
  const at::Tensor before = encode(*model, ids), after = encode(*model, changed);
  ASSERT_EQ(before.sizes(), (std::vector<int64_t>{1, 4000, 32}));
  EXPECT_TRUE(at::isfinite(before).all().item<bool>());
  EXPECT_FALSE(at::equal(before.narrow(1, 0, 1), after.narrow(1, 0, 1)));
}

// Lengths that are no multiple of the block (4 for longt5_local, 5 for longt5) nor of the
// global block (4), shorter than one block too: the output has the input's length (the last
// block's padding never shows) and is finite.
TEST(LongT5Attention, LengthNotAMultipleOfTheBlock) {
  for (const std::string fixture : {"longt5_local", "longt5"}) {
    const auto model = packed_model(fixture);
    for (const int64_t length : {1, 2, 3, 5, 7, 9, 13, 22}) {
      const at::Tensor out = encode(*model, random_ids(length, 17 + length));
      ASSERT_EQ(out.sizes(), (std::vector<int64_t>{1, length, 32})) << fixture;
      EXPECT_TRUE(at::isfinite(out).all().item<bool>()) << fixture << " length " << length;
    }
  }
}

// A length that is no multiple of the block, alone and padded inside a batch: padding after it
// (more blocks, more side tokens) changes none of its bits.
TEST(LongT5Attention, PaddingChangesNoBit) {
  for (const std::string fixture : {"longt5_local", "longt5"}) {
    const auto model = packed_model(fixture);
    const at::Tensor ids = random_ids(23, 29);
    const at::Tensor alone = encode(*model, ids);
    at::Tensor batch = at::zeros({2, 41}, at::kLong), mask = at::zeros({2, 41}, at::kLong);
    batch[0].narrow(0, 0, 23).copy_(ids[0]);
    mask[0].narrow(0, 0, 23).fill_(1);
    batch[1].copy_(random_ids(41, 31)[0]);
    mask[1].fill_(1);
    const at::Tensor together = model->encode(batch, mask);
    EXPECT_TRUE(at::equal(together[0].narrow(0, 0, 23), alone[0])) << fixture;
  }
}

void write_config(const std::string& dir, const std::string& attention_type) {
  std::ifstream in(fixture_dir("longt5") + "/config.json");
  nlohmann::json config = nlohmann::json::parse(in);
  config["encoder_attention_type"] = attention_type;
  std::ofstream(dir + "/config.json") << config.dump(2);
}

TEST(LongT5Attention, UnknownEncoderAttentionTypeIsRefusedNamingTheField) {
  testing::TempDir dir;
  write_config(dir.path(), "global");
  try {
    io::load_model_config(dir.path() + "/config.json");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("encoder_attention_type"), std::string::npos) << what;
    EXPECT_NE(what.find("'global'"), std::string::npos) << what;
  }
}

// `ordo positions`: the encoder's bias (LocalSelfAttention's table in block 0) over the distances
// the local window can meet, the decoder's as T5's.
TEST(LongT5Attention, PositionsShowTheEncoderBiasWithinTheLocalRadius) {
  const RelativePositionBiasTable encoder = model_relative_position_bias(fixture_dir("longt5"));
  EXPECT_EQ(encoder.family, "LongT5");
  EXPECT_EQ(encoder.local_radius, 4);
  EXPECT_EQ(encoder.first, -4);
  EXPECT_EQ(encoder.last, 4);
  const auto weights = models::open_checkpoint(fixture_dir("longt5"));
  const at::Tensor table =
      weights->get("encoder.block.0.layer.0.TransientGlobalSelfAttention.relative_attention_bias.weight");
  for (int64_t h = 0; h < encoder.heads; ++h)
    for (int64_t d = -4; d <= 4; ++d)
      EXPECT_EQ(encoder.at(h, d), table[encoder.buckets[d + 4]][h].item<float>()) << "head " << h << " distance " << d;
  const RelativePositionBiasTable decoder = model_relative_position_bias(fixture_dir("longt5_local"), 20, true);
  EXPECT_EQ(decoder.local_radius, -1);
  EXPECT_EQ(decoder.first, -20);
  EXPECT_EQ(decoder.last, 0);
}

TEST(LongT5Attention, ConfigDefaultsAreLongT5Config) {
  testing::TempDir dir;
  std::ifstream in(fixture_dir("longt5") + "/config.json");
  nlohmann::json config = nlohmann::json::parse(in);
  for (const char* key : {"encoder_attention_type", "local_radius", "global_block_size", "n_positions"})
    config.erase(key);
  std::ofstream(dir.path() + "/config.json") << config.dump(2);
  const io::ModelConfig c = io::load_model_config(dir.path() + "/config.json");
  EXPECT_EQ(c.encoder_attention_type, "local");
  EXPECT_EQ(c.local_radius, 127);
  EXPECT_EQ(c.global_block_size, 16);
  EXPECT_EQ(c.max_position_embeddings, 16384);
}

}  // namespace
}  // namespace ordo
