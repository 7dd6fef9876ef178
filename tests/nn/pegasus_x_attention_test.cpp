// Pegasus-X's encoder attention (nn/pegasus_x_attention.cpp) beyond what the generic parity
// suites check on the golden fixture: that it is block-local (on a ~4,000-token input a token
// reaches another block only through the global tokens), that a length which is no multiple of
// block_size runs as if padded by the mask, that staggering shifts the blocks of odd layers; and
// around it: config.json's block settings and the positions of Hugging Face's
// PegasusXSinusoidalPositionalEmbedding (the pegasus_x_alt fixture: held_out_parity_test.cpp;
// the packed weights cache: packed_cache_test.cpp).
// ctest-label: integration
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "io/model_config.h"
#include "models/packed_cache.h"
#include "models/seq2seq_model.h"
#include "nn/activation.h"
#include "nn/positional_encoding.h"
#include "nn/transformer.h"
#include "ordo/error.h"
#include "ordo/translator.h"
#include "support/fixtures.h"
#include "support/golden_options.h"
#include "support/temp_dir.h"

namespace ordo {
namespace {

constexpr int64_t kVocab = 1000;

// A Pegasus-X encoder the size of the fixture's (d_model 16, 4 heads, 2 layers, blocks of 8)
// with random weights: num_global_tokens and stagger_local_blocks are what the tests vary.
nn::TransformerEncoder random_encoder(int64_t global_tokens, bool stagger) {
  nn::StackShape s;
  s.layer.dim = 16;
  s.layer.heads = 4;
  s.layer.ffn_dim = 32;
  s.layer.activation = nn::parse_activation("gelu");
  s.layer.pre_norm = true;
  s.layer.attention_bias = false;
  s.num_layers = 2;
  s.max_positions = 16384;
  s.embed_scale = 4.0;
  s.positions.layout = PositionLayout::kPegasusX;
  s.final_layer_norm = true;
  s.long_attention.kind = nn::LongAttentionKind::kPegasusX;
  s.long_attention.block_size = 8;
  s.long_attention.num_global_tokens = global_tokens;
  s.long_attention.stagger_local_blocks = stagger;
  nn::TransformerEncoder encoder(s);
  // The same seed gives the same weights whatever the settings: the layers are visited first.
  at::manual_seed(5);
  encoder.visit("model.encoder", [](const std::string& name, at::Tensor& param) {
    const bool norm = name.find("norm") != std::string::npos;
    param = norm && name.size() > 7 && name.compare(name.size() - 7, 7, ".weight") == 0
                ? 1 + 0.25 * at::randn(param.sizes(), at::kFloat)
                : 0.3 * at::randn(param.sizes(), at::kFloat);
  });
  encoder.embed.tokens = at::randn({kVocab, 16}, at::kFloat);
  return encoder;
}

at::Tensor random_ids(int64_t length, uint64_t seed) {
  at::manual_seed(seed);
  return at::randint(2, kVocab, {1, length}, at::kLong);
}

at::Tensor encode(const nn::TransformerEncoder& encoder, const at::Tensor& ids) {
  return encoder.forward(ids, at::ones_like(ids));
}

at::Tensor with_token_changed(const at::Tensor& ids, int64_t position) {
  at::Tensor changed = ids.clone();
  changed[0][position] = ids[0][position].item<int64_t>() == 5 ? 6 : 5;
  return changed;
}

bool same_at(const at::Tensor& a, const at::Tensor& b, int64_t position) {
  return at::equal(a.narrow(1, position, 1), b.narrow(1, position, 1));
}

// Without global tokens and staggering, blocks of 8 never see each other: a change at 3,500
// (block 437: positions 3,496 .. 3,503) reaches exactly that block of a 4,000-token input.
TEST(PegasusXAttention, WithoutGlobalTokensATokenReachesItsOwnBlockOnly) {
  const nn::TransformerEncoder encoder = random_encoder(0, false);
  const at::Tensor ids = random_ids(4000, 7);
  const at::Tensor before = encode(encoder, ids), after = encode(encoder, with_token_changed(ids, 3500));
  ASSERT_EQ(before.sizes(), (std::vector<int64_t>{1, 4000, 16}));
  EXPECT_TRUE(at::equal(before.narrow(1, 0, 3496), after.narrow(1, 0, 3496)));
  EXPECT_TRUE(at::equal(before.narrow(1, 3504, 496), after.narrow(1, 3504, 496)));
  for (int64_t p = 3496; p < 3504; ++p) EXPECT_FALSE(same_at(before, after, p)) << "position " << p;
}

// With global tokens the same change reaches every position, through them.
TEST(PegasusXAttention, GlobalTokensCarryATokenToEveryBlock) {
  const nn::TransformerEncoder encoder = random_encoder(4, false);
  const at::Tensor ids = random_ids(4000, 7);
  const at::Tensor before = encode(encoder, ids), after = encode(encoder, with_token_changed(ids, 3500));
  EXPECT_TRUE(at::isfinite(before).all().item<bool>());
  for (int64_t p : {0, 1000, 3495, 3504, 3999}) EXPECT_FALSE(same_at(before, after, p)) << "position " << p;
}

// Staggered, layer 1's blocks are shifted by 4 (positions 4..11 form a block): a change at 8
// reaches 4..15 (block 1 of layer 0, then the shifted blocks over it), nothing further.
TEST(PegasusXAttention, StaggeredBlocksReachHalfABlockIntoTheNeighbours) {
  const nn::TransformerEncoder staggered = random_encoder(0, true);
  const at::Tensor ids = random_ids(64, 3);
  const at::Tensor changed = with_token_changed(ids, 8);
  const at::Tensor before = encode(staggered, ids), after = encode(staggered, changed);
  for (int64_t p = 0; p < 64; ++p) EXPECT_EQ(same_at(before, after, p), p < 4 || p >= 20) << "position " << p;
  // Not staggered, the change stays in positions 8..15.
  const nn::TransformerEncoder aligned = random_encoder(0, false);
  const at::Tensor plain_before = encode(aligned, ids), plain_after = encode(aligned, changed);
  for (int64_t p = 0; p < 64; ++p)
    EXPECT_EQ(same_at(plain_before, plain_after, p), p < 8 || p >= 16) << "position " << p;
}

TEST(PegasusXAttention, StaggeringChangesTheOutput) {
  const at::Tensor ids = random_ids(40, 9);
  EXPECT_FALSE(at::allclose(encode(random_encoder(4, true), ids), encode(random_encoder(4, false), ids)));
}

// 13 tokens (not a multiple of 8) run as 16 whose last 3 are masked: the same bits as the same
// tokens padded to 21 in a batch beside a longer input.
TEST(PegasusXAttention, ALengthOffTheBlockSizeEqualsItPaddedInABatch) {
  for (const bool stagger : {false, true}) {
    const nn::TransformerEncoder encoder = random_encoder(4, stagger);
    const at::Tensor ids = random_ids(13, 4);
    const at::Tensor alone = encode(encoder, ids);
    at::Tensor batch_ids = at::zeros({2, 21}, at::kLong), mask = at::zeros({2, 21}, at::kLong);
    batch_ids[0].narrow(0, 0, 13).copy_(ids[0]);
    mask[0].narrow(0, 0, 13).fill_(1);
    batch_ids[1].copy_(random_ids(21, 8)[0]);
    mask[1].fill_(1);
    const at::Tensor batched = encoder.forward(batch_ids, mask);
    ASSERT_EQ(alone.sizes(), (std::vector<int64_t>{1, 13, 16}));
    EXPECT_TRUE(at::equal(alone[0], batched[0].narrow(0, 0, 13))) << "stagger " << stagger;
  }
}

// The fixture's model (4 global tokens, staggered blocks of 8) over a ~4,000-token input.
TEST(PegasusXAttention, FixtureModelEncodesALongInput) {
  auto model = models::Seq2SeqModel::load(testing::fixture_dir("pegasus_x"));
  model->pack(nn::GemmType::kFloat32);
  at::manual_seed(11);
  at::Tensor ids = at::randint(110, 96000, {1, 4001}, at::kLong);
  ids[0][4000] = 1;
  const at::Tensor out = model->encode(ids, at::ones_like(ids));
  ASSERT_EQ(out.sizes(), (std::vector<int64_t>{1, 4001, 16}));
  EXPECT_TRUE(at::isfinite(out).all().item<bool>());
}

// config.json's block settings are read with PegasusXConfig's defaults and checked, naming the field.
TEST(PegasusXConfig, BlockSettingsAreReadAndChecked) {
  const std::string dir = testing::fixture_dir("pegasus_x");
  const io::ModelConfig config = io::load_model_config(dir + "/config.json");
  EXPECT_EQ(config.block_size, 8);
  EXPECT_EQ(config.num_global_tokens, 4);
  EXPECT_TRUE(config.stagger_local_blocks);
  std::ifstream in(dir + "/config.json");
  const nlohmann::json original = nlohmann::json::parse(in);
  testing::TempDir tmp;
  nlohmann::json defaults = original;
  for (const char* key : {"block_size", "num_global_tokens", "stagger_local_blocks"}) defaults.erase(key);
  const io::ModelConfig defaulted = io::load_model_config(tmp.write("config.json", defaults.dump()));
  EXPECT_EQ(defaulted.block_size, 512);
  EXPECT_EQ(defaulted.num_global_tokens, 32);
  EXPECT_TRUE(defaulted.stagger_local_blocks);
  nlohmann::json odd = original;
  odd["block_size"] = 7;
  try {
    io::load_model_config(tmp.write("config.json", odd.dump()));
    ADD_FAILURE() << "an odd block_size with staggered blocks was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("block_size"), std::string::npos) << e.what();
  }
  odd["stagger_local_blocks"] = false;
  EXPECT_EQ(io::load_model_config(tmp.write("config.json", odd.dump())).block_size, 7);
}

// Sines of p * f_i in the first half, cosines in the second, f_i = 10000^(-i / (d/2 - 1)).
TEST(PegasusXPositions, FollowHuggingFacesFormula) {
  const at::Tensor table = nn::pegasus_x_positions(0, 50, 16);
  ASSERT_EQ(table.sizes(), (std::vector<int64_t>{50, 16}));
  for (int64_t p : {0, 1, 7, 49})
    for (int64_t i = 0; i < 8; ++i) {
      const double angle = p * std::pow(10000.0, -static_cast<double>(i) / 7.0);
      EXPECT_NEAR(table[p][i].item<float>(), std::sin(angle), 2e-5) << p << ", " << i;
      EXPECT_NEAR(table[p][8 + i].item<float>(), std::cos(angle), 2e-5) << p << ", " << i;
    }
  // Computed for the positions asked for: a range later in the sequence is the same rows.
  EXPECT_TRUE(at::equal(nn::pegasus_x_positions(40, 10, 16), table.narrow(0, 40, 10)));
}

}  // namespace
}  // namespace ordo
