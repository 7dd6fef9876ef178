// Loading for less memory must not change a single value: packing each layer part as it is read
// gives the same logits as packing the loaded model afterwards, and a checkpoint tensor read
// again after its mapped pages were released (a tied weight) reads the same values.
// ctest-label: slow
#include <algorithm>

#include <gtest/gtest.h>

#include "io/model_config.h"
#include "models/checkpoint.h"
#include "models/seq2seq_model.h"
#include "nn/attention.h"
#include "nn/transformer_layers.h"
#include "support/fixtures.h"

namespace ordo {
namespace {

using testing::fixture_dir;

at::Tensor first_logits(models::Seq2SeqModel& model) {
  at::InferenceMode guard;
  const at::Tensor ids =
      at::tensor(std::vector<int64_t>{5, 9, 17, 3, model.config().eos_token_id}, at::kLong).unsqueeze(0);
  const at::Tensor mask = at::ones_like(ids);
  nn::DecoderState state = model.start_decoding(model.encode(ids, mask), mask);
  const at::Tensor start =
      at::tensor(std::vector<int64_t>{model.config().decoder_start_token_id}, at::kLong).unsqueeze(0);
  return model.next_logits(start, state);
}

class PackWhileLoading : public ::testing::TestWithParam<std::tuple<std::string, nn::GemmType>> {};

TEST_P(PackWhileLoading, SameLogitsAsPackingAfterwards) {
  const auto& [fixture, type] = GetParam();
  if (!nn::gemm_type_supported(type)) GTEST_SKIP() << "no oneDNN kernel for this compute type on this CPU";
  const std::string dir = fixture_dir(fixture);
  auto after = models::Seq2SeqModel::load(dir);
  after->pack(type);
  io::ModelConfig config = io::load_model_config(dir + "/config.json");
  models::FamilySpec family = models::family_for(config);
  auto during = models::Seq2SeqModel::load(dir, config, family, type);
  const at::Tensor a = first_logits(*after), b = first_logits(*during);
  ASSERT_EQ(a.sizes(), b.sizes());
  EXPECT_TRUE(at::equal(a, b)) << "max abs diff " << (a - b).abs().max().item<double>();
}

INSTANTIATE_TEST_SUITE_P(Families, PackWhileLoading,
                         ::testing::Combine(::testing::Values("marian_opus_en_mg", "pegasus", "nllb"),
                                            ::testing::Values(nn::GemmType::kFloat32, nn::GemmType::kBFloat16,
                                                              nn::GemmType::kInt8)));

// Loading packs each part of a layer as soon as that part is read (one part's float32 weights
// resident at a time): a part is announced after all of its parameters and before any of the
// next part's.
TEST(LoadingLayerParts, EachIsAnnouncedRightAfterItsParameters) {
  nn::DecoderLayer layer(nn::LayerShape{16, 2, 32, kernels::Activation::kRelu, false});
  std::vector<std::string> seen;
  layer.visit(
      "l", [&](const std::string& name, at::Tensor&) { seen.push_back(name); },
      [&](nn::LayerPart part) { seen.push_back("part " + std::to_string(static_cast<int>(part))); });
  const auto index_of = [&](const std::string& entry) {
    return std::find(seen.begin(), seen.end(), entry) - seen.begin();
  };
  const auto last_with = [&](const std::string& prefix) {
    std::ptrdiff_t last = -1;
    for (size_t i = 0; i < seen.size(); ++i)
      if (seen[i].rfind(prefix, 0) == 0) last = static_cast<std::ptrdiff_t>(i);
    return last;
  };
  const auto first_with = [&](const std::string& prefix) {
    for (size_t i = 0; i < seen.size(); ++i)
      if (seen[i].rfind(prefix, 0) == 0) return static_cast<std::ptrdiff_t>(i);
    return std::ptrdiff_t{-1};
  };
  const std::ptrdiff_t self = index_of("part 0"), cross = index_of("part 1"), ffn = index_of("part 2");
  ASSERT_LT(ffn, static_cast<std::ptrdiff_t>(seen.size()));
  EXPECT_EQ(self, last_with("l.self_attn.") + 1);
  EXPECT_LT(self, first_with("l.encoder_attn."));
  EXPECT_EQ(cross, last_with("l.encoder_attn.") + 1);
  EXPECT_LT(cross, first_with("l.fc1"));
  EXPECT_EQ(ffn, std::max(last_with("l.fc1"), last_with("l.fc2")) + 1);
}

// Packing streams a GEMM's weight from the checkpoint in slices of rows (Linear::weight_rows),
// the fused [q; k; v] as one source whose slices cross the parts' boundaries (768 wide: 341-row
// slices, so one straddles q and k): the packed attention computes exactly what the one packed
// from whole tensors does, in every compute type, on one thread and on several.
TEST(StreamedPacking, FusedAttentionEqualsPackingWholeTensors) {
  at::manual_seed(7);
  const int64_t dim = 768;
  for (nn::GemmType type : {nn::GemmType::kFloat32, nn::GemmType::kBFloat16, nn::GemmType::kInt8}) {
    if (!nn::gemm_type_supported(type)) continue;
    nn::MultiHeadAttention whole(dim, 12), streamed(dim, 12);
    for (nn::Linear* l : {&whole.q_proj, &whole.k_proj, &whole.v_proj, &whole.out_proj}) {
      l->weight = at::randn({dim, dim}) * 0.05;
      l->bias = at::randn({dim}) * 0.01;
    }
    std::vector<nn::Linear*> from = {&whole.q_proj, &whole.k_proj, &whole.v_proj, &whole.out_proj};
    std::vector<nn::Linear*> to = {&streamed.q_proj, &streamed.k_proj, &streamed.v_proj, &streamed.out_proj};
    for (size_t i = 0; i < from.size(); ++i) {
      const at::Tensor w = from[i]->weight.clone();
      to[i]->bias = from[i]->bias.clone();
      to[i]->weight = at::Tensor();
      to[i]->weight_rows = {[w](int64_t begin, int64_t count) { return w.narrow(0, begin, count).clone(); }, dim, dim};
    }
    whole.pack(type, /*self_attention=*/true);
    streamed.pack(type, /*self_attention=*/true);
    ASSERT_TRUE(streamed.qkv_proj.packed);
    EXPECT_FALSE(streamed.qkv_proj.weight_rows.rows);  // released once packed
    at::InferenceMode guard;
    const at::Tensor x = at::randn({2, 5, dim});
    const at::Tensor a = whole.forward_self(x, at::Tensor(), at::Tensor());
    const at::Tensor b = streamed.forward_self(x, at::Tensor(), at::Tensor());
    EXPECT_TRUE(at::equal(a, b)) << static_cast<int>(type) << ": max abs diff " << (a - b).abs().max().item<double>();
  }
}

TEST(ReleasedCheckpointPages, ReadAgainGiveTheSameValues) {
  const auto checkpoint = models::open_checkpoint(fixture_dir("marian_opus_en_mg"));
  const at::Tensor first = checkpoint->get("model.shared.weight");
  const at::Tensor again = checkpoint->get("model.shared.weight");
  EXPECT_TRUE(at::equal(first, again));
  EXPECT_GT(first.abs().sum().item<double>(), 0.0);
  EXPECT_NE(first.data_ptr(), again.data_ptr());  // copies, not views of the released mapping
}

}  // namespace
}  // namespace ordo
