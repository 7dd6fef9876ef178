// LED's Longformer encoder attention (nn/longformer.cpp) where the generic parity suites do not
// reach: an explicit global attention mask, locality on a long input, lengths that are not a
// multiple of the window, and the config fields LED adds.
// ctest-label: integration
#include <cmath>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "io/model_config.h"
#include "models/checkpoint.h"
#include "models/packed_cache.h"
#include "models/seq2seq_model.h"
#include "nn/transformer.h"
#include "ordo/error.h"
#include "ordo/translator.h"
#include "support/cli_run.h"
#include "support/fixtures.h"
#include "support/golden_options.h"
#include "support/temp_dir.h"

namespace ordo {
namespace {

using testing::fixture_dir;

std::shared_ptr<models::Seq2SeqModel> led_model() {
  static std::shared_ptr<models::Seq2SeqModel> model = [] {
    auto m = models::Seq2SeqModel::load(fixture_dir("led"));
    m->pack(nn::GemmType::kFloat32);
    return m;
  }();
  return model;
}

std::vector<int64_t> golden_ids(int sentence) {
  return testing::load_golden("led")["tokenization"][sentence]["input_ids"].get<std::vector<int64_t>>();
}

at::Tensor row(const std::vector<int64_t>& ids) { return at::tensor(ids, at::kLong).unsqueeze(0); }

at::Tensor random_ids(int64_t len, int64_t seed) {
  at::manual_seed(seed);
  at::Tensor ids = at::randint(4, 50000, {1, len}, at::kLong);
  ids.index_put_({0, 0}, 0);        // <s>
  ids.index_put_({0, len - 1}, 2);  // </s>
  return ids;
}

double max_abs_diff(const at::Tensor& a, const at::Tensor& b) { return (a - b).abs().max().item<double>(); }

// The fixture's encoder layout (windows 8 and 16, d_model 32, 4 heads) with random weights and
// a position table of `positions` rows (the fixture's has 1024).
nn::TransformerEncoder random_led_encoder(int64_t positions, std::vector<int64_t> windows = {8, 16}) {
  nn::StackShape shape;
  shape.layer.dim = 32;
  shape.layer.heads = 4;
  shape.layer.ffn_dim = 64;
  shape.layer.activation = nn::Activation::kGelu;
  shape.num_layers = static_cast<int64_t>(windows.size());
  shape.max_positions = positions;
  shape.positions.layout = PositionLayout::kLearned;
  shape.layernorm_embedding = true;
  shape.long_attention.kind = nn::LongAttentionKind::kLongformer;
  shape.long_attention.attention_window = windows;
  nn::TransformerEncoder encoder(shape);
  at::manual_seed(7);
  encoder.embed.tokens = at::randn({1000, 32});
  encoder.visit("model.encoder",
                [](const std::string&, at::Tensor& param) { param.copy_(at::randn(param.sizes()) * 0.3); });
  encoder.pack(nn::GemmType::kFloat32);
  return encoder;
}

TEST(LedEncoder, LongInputMatchesTransformers) {
  at::InferenceMode guard;
  const nlohmann::json golden = testing::load_golden("led");
  const at::Tensor ids = row(golden_ids(golden["encoder"]["long_sentence_index"]));
  const at::Tensor out = led_model()->encode(ids, at::ones_like(ids))[0];
  std::vector<float> flat;
  for (const auto& r : golden["encoder"]["long_last_hidden_state"])
    for (float v : r) flat.push_back(v);
  ASSERT_EQ(out.numel(), static_cast<int64_t>(flat.size()));
  EXPECT_LE(max_abs_diff(out.reshape({-1}), at::tensor(flat, at::kFloat)), 1e-4);
}

TEST(LedEncoder, NoMaskMeansGlobalAttentionOnTheFirstToken) {
  at::InferenceMode guard;
  const at::Tensor ids = row(golden_ids(7));
  const at::Tensor mask = at::ones_like(ids);
  at::Tensor first = at::zeros_like(ids);
  first.index_put_({0, 0}, 1);
  EXPECT_TRUE(at::equal(led_model()->encode(ids, mask), led_model()->encode(ids, mask, first)));
}

TEST(LedEncoder, AnExplicitGlobalTokenChangesTheOutput) {
  at::InferenceMode guard;
  const at::Tensor ids = row(golden_ids(7));
  const at::Tensor mask = at::ones_like(ids);
  at::Tensor first = at::zeros_like(ids);
  first.index_put_({0, 0}, 1);
  at::Tensor two = first.clone();
  two.index_put_({0, 5}, 1);
  const at::Tensor one_global = led_model()->encode(ids, mask, first);
  const at::Tensor two_globals = led_model()->encode(ids, mask, two);
  EXPECT_GT(max_abs_diff(one_global, two_globals), 1e-3);
  // Position 150 sees neither 0 nor 5 through its windows (at most 12 positions away after two
  // layers), only as global tokens: it changes too.
  EXPECT_GT(max_abs_diff(one_global[0][150], two_globals[0][150]), 1e-6);
}

TEST(LedEncoder, AnAllZeroGlobalMaskRunsWindowsAlone) {
  at::InferenceMode guard;
  const at::Tensor ids = row(golden_ids(7));
  const at::Tensor mask = at::ones_like(ids);
  const at::Tensor none = led_model()->encode(ids, mask, at::zeros_like(ids));
  EXPECT_TRUE(at::isfinite(none).all().item<bool>());
  EXPECT_GT(max_abs_diff(none, led_model()->encode(ids, mask)), 1e-3);
  // Without global tokens each position sees 4 + 8 positions on each side over the two layers:
  // a change at 0 leaves position 100 as it was.
  at::Tensor changed = ids.clone();
  changed.index_put_({0, 1}, 1000);
  const at::Tensor after = led_model()->encode(changed, mask, at::zeros_like(ids));
  EXPECT_TRUE(at::equal(none[0][100], after[0][100]));
}

TEST(LedEncoder, AGlobalMaskOfAnotherShapeIsAnError) {
  at::InferenceMode guard;
  const at::Tensor ids = row(golden_ids(0));
  try {
    led_model()->encode(ids, at::ones_like(ids), at::zeros({1, ids.size(1) + 1}, at::kLong));
    FAIL() << "a mask one position too long was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("global attention mask"), std::string::npos) << e.what();
  }
}

TEST(LedEncoder, GlobalMaskOnPaddingIsIgnored) {
  at::InferenceMode guard;
  const std::vector<int64_t> ids = golden_ids(3);
  std::vector<int64_t> padded = ids;
  padded.resize(ids.size() + 7, 1);
  at::Tensor mask = at::zeros({1, static_cast<int64_t>(padded.size())}, at::kLong);
  mask.narrow(1, 0, static_cast<int64_t>(ids.size())).fill_(1);
  at::Tensor global = at::zeros_like(mask);
  global.index_put_({0, 0}, 1);
  at::Tensor global_on_pad = global.clone();
  global_on_pad.index_put_({0, static_cast<int64_t>(padded.size()) - 1}, 1);
  const at::Tensor a = led_model()->encode(row(padded), mask, global);
  const at::Tensor b = led_model()->encode(row(padded), mask, global_on_pad);
  const int64_t n = static_cast<int64_t>(ids.size());
  EXPECT_TRUE(at::equal(a.narrow(1, 0, n), b.narrow(1, 0, n)));
}

TEST(LedEncoder, LengthsOffTheWindowMultipleMatchThePaddedRun) {
  at::InferenceMode guard;
  // 37 tokens (windows 8 and 16: not a multiple of either) alone and right-padded to 48 in a
  // batch: the real positions are bitwise the same.
  const at::Tensor ids = random_ids(37, 11);
  const at::Tensor alone = led_model()->encode(ids, at::ones_like(ids));
  at::Tensor padded = at::ones({1, 48}, at::kLong);
  padded.narrow(1, 0, 37).copy_(ids);
  at::Tensor mask = at::zeros({1, 48}, at::kLong);
  mask.narrow(1, 0, 37).fill_(1);
  const at::Tensor batched = led_model()->encode(at::cat({padded, padded}), at::cat({mask, mask}));
  EXPECT_TRUE(at::equal(alone[0], batched[0].narrow(0, 0, 37)));
  EXPECT_TRUE(at::equal(alone[0], batched[1].narrow(0, 0, 37)));
}

TEST(LedEncoder, ARowsStatesDoNotDependOnItsNeighboursGlobalCount) {
  at::InferenceMode guard;
  // Row 0 has one global token, row 1 three: in one batch row 0 gets two unused global slots,
  // and its states stay bitwise those it has alone.
  const at::Tensor a = random_ids(40, 21), b = random_ids(40, 22);
  const at::Tensor mask = at::ones({1, 40}, at::kLong);
  at::Tensor ga = at::zeros({1, 40}, at::kLong), gb = at::zeros({1, 40}, at::kLong);
  ga.index_put_({0, 0}, 1);
  for (int64_t p : {0, 3, 9}) gb.index_put_({0, p}, 1);
  const at::Tensor alone = led_model()->encode(a, mask, ga);
  const at::Tensor batched = led_model()->encode(at::cat({a, b}), at::cat({mask, mask}), at::cat({ga, gb}));
  EXPECT_TRUE(at::equal(alone[0], batched[0]));
  EXPECT_TRUE(at::equal(led_model()->encode(b, mask, gb)[0], batched[1]));
}

TEST(LedEncoder, FourThousandTokensStayLocal) {
  at::InferenceMode guard;
  const nn::TransformerEncoder encoder = random_led_encoder(4096);
  at::manual_seed(5);
  const at::Tensor ids = at::randint(1000, {1, 4000}, at::kLong);
  const at::Tensor mask = at::ones_like(ids);
  const at::Tensor none = at::zeros_like(ids);
  // Without global tokens, position 3,000 sees 4 + 8 positions on each side through the two
  // layers: a token changed at 1,000 leaves it bitwise unchanged, and changes position 1,005.
  const at::Tensor before = encoder.forward(ids, mask, none);
  at::Tensor changed = ids.clone();
  changed.index_put_({0, 1000}, (ids[0][1000].item<int64_t>() + 1) % 1000);
  const at::Tensor after = encoder.forward(changed, mask, none);
  ASSERT_EQ(before.size(1), 4000);
  EXPECT_TRUE(at::equal(before[0][3000], after[0][3000]));
  EXPECT_TRUE(at::equal(before[0][1013], after[0][1013]));
  EXPECT_GT(max_abs_diff(before[0][1012], after[0][1012]), 1e-6);
  // With the default global first token, a far change reaches every position through it.
  const at::Tensor global_before = encoder.forward(ids, mask);
  const at::Tensor global_after = encoder.forward(changed, mask);
  EXPECT_TRUE(at::isfinite(global_after).all().item<bool>());
  EXPECT_FALSE(at::equal(global_before[0][3000], global_after[0][3000]));
}

TEST(LedEncoder, SixteenThousandTokensWithLedsWindowOf1024Run) {
  at::InferenceMode guard;
  // led-*-16384's length and window (512 positions on each side) on a narrow random encoder.
  const nn::TransformerEncoder encoder = random_led_encoder(16384, {1024});
  at::manual_seed(6);
  const at::Tensor ids = at::randint(1000, {1, 16384}, at::kLong);
  const at::Tensor mask = at::ones_like(ids);
  const at::Tensor none = at::zeros_like(ids);
  const at::Tensor before = encoder.forward(ids, mask, none);
  at::Tensor changed = ids.clone();
  changed.index_put_({0, 8000}, (ids[0][8000].item<int64_t>() + 1) % 1000);
  const at::Tensor after = encoder.forward(changed, mask, none);
  ASSERT_EQ(before.size(1), 16384);
  EXPECT_TRUE(at::isfinite(after).all().item<bool>());
  EXPECT_TRUE(at::equal(before[0][8513], after[0][8513]));
  EXPECT_TRUE(at::equal(before[0][7487], after[0][7487]));
  EXPECT_GT(max_abs_diff(before[0][8512], after[0][8512]), 0.0);
  EXPECT_GT(max_abs_diff(before[0][7488], after[0][7488]), 0.0);
}

TEST(LedConfig, EncoderAndDecoderPositionsComeFromTheirOwnFields) {
  const io::ModelConfig config = io::load_model_config(fixture_dir("led") + "/config.json");
  EXPECT_EQ(config.max_position_embeddings, 1024);
  EXPECT_EQ(io::decoder_positions(config), 1024);
  EXPECT_EQ(config.attention_window, (std::vector<int64_t>{8, 16}));
  const io::ModelConfig alt = io::load_model_config(fixture_dir("led_alt") + "/config.json");
  EXPECT_EQ(alt.max_position_embeddings, 2048);
  EXPECT_EQ(io::decoder_positions(alt), 512);
  EXPECT_EQ(alt.attention_window, (std::vector<int64_t>(alt.encoder_layers, 6)));
}

TEST(LedConfig, AnOddAttentionWindowIsRefusedNamingTheField) {
  testing::TempDir dir;
  std::ifstream in(fixture_dir("led") + "/config.json");
  nlohmann::json config = nlohmann::json::parse(in);
  config["attention_window"] = {8, 15};
  std::ofstream(dir.path() + "/config.json") << config.dump();
  try {
    io::load_model_config(dir.path() + "/config.json");
    FAIL() << "an odd window was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("attention_window"), std::string::npos) << e.what();
  }
}

// ordo positions -m: LED's tables have no offset (position p is row p) and each stack its own
// length (led_alt: 2048 encoder positions, 512 decoder ones).
TEST(LedPositions, EachStacksTableIsTheCheckpointsRowsWithoutOffset) {
  const std::unique_ptr<models::Checkpoint> weights = models::open_checkpoint(fixture_dir("led_alt"));
  for (const std::string stack : {"encoder", "decoder"}) {
    const testing::CliRun run = testing::run_ordo("positions -m '" + fixture_dir("led_alt") + "' --format json" +
                                                  (stack == "decoder" ? " --decoder" : ""));
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const nlohmann::json table = nlohmann::json::parse(run.out);
    EXPECT_EQ(table["layout"], "learned");
    EXPECT_EQ(table["offset"], 0);
    EXPECT_EQ(table["stack"], stack);
    const at::Tensor rows = weights->get("led." + stack + ".embed_positions.weight");
    ASSERT_EQ(table["values"].size(), static_cast<size_t>(stack == "encoder" ? 2048 : 512));
    for (int64_t p : {0, 1, 511})
      for (int64_t j = 0; j < rows.size(1); ++j)
        ASSERT_EQ(table["values"][p][j].get<float>(), rows[p][j].item<float>()) << stack << " position " << p;
  }
}

TEST(LedPositions, TheDecoderTableEndsAtMaxDecoderPositionEmbeddings) {
  const testing::CliRun run =
      testing::run_ordo("positions -m '" + fixture_dir("led_alt") + "' --decoder --length 513 --format none");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("max_decoder_position_embeddings"), std::string::npos) << run.err;
}

// A table length config.json gets wrong is named by its own field, stack by stack.
TEST(LedConfig, APositionTableOfTheWrongLengthNamesItsField) {
  for (const char* field : {"max_encoder_position_embeddings", "max_decoder_position_embeddings"}) {
    testing::TempDir dir;
    for (const auto& entry : std::filesystem::directory_iterator(fixture_dir("led")))
      if (entry.path().filename() != "config.json")
        std::filesystem::create_symlink(entry.path(), dir.file(entry.path().filename().string()));
    std::ifstream in(fixture_dir("led") + "/config.json");
    nlohmann::json config = nlohmann::json::parse(in);
    config[field] = 1000;
    std::ofstream(dir.file("config.json")) << config.dump();
    try {
      models::Seq2SeqModel::load(dir.path());
      FAIL() << field << " 1000 was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  }
}

TEST(LedTranslator, TargetLengthIsCappedByTheDecoderTable) {
  const testing::CliRun run =
      testing::run_ordo("translate -m '" + fixture_dir("led_alt") + "' --print-config --max-length 5000");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("max_length = 513  (option, capped at max_decoder_position_embeddings + 1)"),
            std::string::npos)
      << run.out;
}

TEST(LedTranslator, SourceLimitIsTheEncoderTable) {
  const Translator translator(fixture_dir("led"));
  EXPECT_EQ(translator.max_source_tokens(), 1024);
}

}  // namespace
}  // namespace ordo
