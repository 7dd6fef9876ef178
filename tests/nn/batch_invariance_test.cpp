// Batch invariance: a sentence's tokens and scores (bitwise, in float32) do not depend on
// what else is in its batch, on how far it is padded, or on the thread count. Layer by layer
// first (the packed GEMMs' rows, the attention kernel), then whole translations: every
// fixture of tests/data/hf and the bundled en-de model, each sentence alone against inside
// batches of 2..8 with longer and shorter companions, greedy and beam 4, 1 and 2 intra-op
// threads and 2 batches decoded at once.
// ctest-label: slow
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include "kernels/attention_kernel.h"
#include "kernels/small_gemm.h"
#include "nn/attention.h"
#include "nn/packed_gemm.h"
#include "nn/relative_position.h"
#include "ordo/ordo.h"
#include "support/fixtures.h"
#include "support/thread_count.h"

namespace ordo {
namespace {

using nn::GemmType;
using nn::PackedGemm;

using testing::ThreadCount;

bool same_bits(const at::Tensor& a, const at::Tensor& b) {
  const at::Tensor x = a.contiguous(), y = b.contiguous();
  return x.sizes() == y.sizes() && x.scalar_type() == y.scalar_type() &&
         std::memcmp(x.data_ptr(), y.data_ptr(), x.numel() * x.element_size()) == 0;
}

// ---------------------------------------------------------------- packed GEMMs

// oneDNN picks its kernel by row count (and thread count); row r of x W^T must not depend
// on that choice, for every compute type and with a fused activation.
TEST(BatchInvariance, PackedGemmRowDoesNotDependOnRowCountOrThreads) {
  ThreadCount restore;
  at::manual_seed(3);
  struct Shape {
    int64_t in, out;
    std::optional<kernels::Activation> activation;
  };
  const std::vector<Shape> shapes = {{256, 768, std::nullopt},  // en-de fused q/k/v
                                     {256, 1024, kernels::Activation::kRelu},
                                     {512, 2048, kernels::Activation::kSilu},
                                     {1024, 256, std::nullopt},
                                     {64, 8001, std::nullopt},  // an output projection
                                     {32, 96, kernels::Activation::kGelu}};
  const std::vector<int64_t> row_counts = {1, 2, 3, 4, 5, 7, 8, 13, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 300};
  for (const GemmType type : {GemmType::kFloat32, GemmType::kBFloat16, GemmType::kInt8}) {
    if (!nn::gemm_type_supported(type)) continue;
    for (const Shape& shape : shapes) {
      const PackedGemm gemm(at::randn({shape.out, shape.in}) * 0.1, at::randn({shape.out}), type, shape.activation);
      const at::Tensor x = at::randn({300, shape.in});
      at::set_num_threads(1);
      std::vector<at::Tensor> alone;
      for (int64_t r = 0; r < 300; ++r) alone.push_back(gemm.forward(x.narrow(0, r, 1)));
      for (const int threads : {1, 2}) {
        at::set_num_threads(threads);
        for (const int64_t rows : row_counts) {
          const at::Tensor y = gemm.forward(x.narrow(0, 0, rows));
          for (int64_t r = 0; r < rows; ++r)
            ASSERT_TRUE(same_bits(y.narrow(0, r, 1), alone[r]))
                << "type " << static_cast<int>(type) << ", " << shape.in << "x" << shape.out << ", row " << r << " of "
                << rows << ", " << threads << " threads";
        }
      }
    }
  }
}

struct SmallRowsShape {
  int64_t in, out;
  bool bias;
  std::optional<kernels::Activation> activation;
};

// Each shape's GEMM of `type` on 1-16 rows (int8: 1-32) runs on the small-rows kernel and
// gives, row for row, what oneDNN's kernel gives the same row inside 48 rows, on 1 and 2 threads.
void expect_small_rows_give_onednns_bits(const std::vector<SmallRowsShape>& shapes, GemmType type) {
  ThreadCount restore;
  for (const SmallRowsShape& shape : shapes) {
    const PackedGemm gemm(at::randn({shape.out, shape.in}) * 0.1, shape.bias ? at::randn({shape.out}) : at::Tensor(),
                          type, shape.activation);
    const int64_t most = type == GemmType::kInt8 ? kernels::kSmallGemmS8MaxRows : kernels::kSmallGemmMaxRows;
    const at::Tensor x = at::randn({48, shape.in});
    for (const int threads : {1, 2}) {
      at::set_num_threads(threads);
      const at::Tensor whole = gemm.forward(x);  // 48 rows: oneDNN's kernel
      ASSERT_FALSE(gemm.small_rows_kernel(48));
      for (int64_t rows = 1; rows <= most; ++rows) {
        ASSERT_TRUE(gemm.small_rows_kernel(rows))
            << shape.in << "x" << shape.out << ", " << rows << " rows, " << threads << " threads";
        const at::Tensor y = gemm.forward(x.narrow(0, 48 - rows, rows));
        for (int64_t r = 0; r < rows; ++r)
          ASSERT_TRUE(same_bits(y.narrow(0, r, 1), whole.narrow(0, 48 - rows + r, 1)))
              << shape.in << "x" << shape.out << ", row " << r << " of " << rows << ", " << threads << " threads";
      }
    }
  }
}

// float32 decoding steps (1-16 rows) run on ordo's kernel over oneDNN's packed panels
// (kernels/small_gemm.h), and give oneDNN's own bits: each row against the same row inside 48
// rows (oneDNN's kernel), at the shapes of the big models' decoder layers, 1 and 2 threads,
// with each activation oneDNN fuses (gelu, silu, tanh: its eltwise primitive after the kernel).
TEST(BatchInvariance, SmallRowsKernelGivesOneDnnsBits) {
  if (!kernels::small_gemm_available() || std::getenv("ORDO_SMALL_GEMM")) GTEST_SKIP() << "no AVX-512 body here";
  at::manual_seed(6);
  const std::vector<SmallRowsShape> shapes = {{768, 2304, false, std::nullopt},                // Flan-T5 fused q/k/v
                                              {2048, 768, false, std::nullopt},                // Flan-T5 wo
                                              {1024, 4096, true, kernels::Activation::kRelu},  // tc-big fc1
                                              {4096, 1024, true, std::nullopt},                // tc-big fc2
                                              {512, 4001, true, std::nullopt},                 // a last panel cut short
                                              {40, 80, true, kernels::Activation::kRelu},
                                              {1024, 4096, true, kernels::Activation::kGelu},  // BART/mBART fc1
                                              {512, 2048, true, kernels::Activation::kSilu},   // Marian fc1
                                              {768, 3072, true, kernels::Activation::kGeluTanh},
                                              {256, 512, false, kernels::Activation::kTanh}};
  expect_small_rows_give_onednns_bits(shapes, GemmType::kFloat32);
}

// int8 decoding steps (1-32 rows) run on the VNNI kernel (kernels/small_gemm.h) and give what
// oneDNN's int8 kernel and the row rescaling give: each row against the same row inside 48
// rows, at the workload's and the big models' shapes (a last panel cut short, a tiny one), with
// and without bias, relu fused and gelu after, 1 and 2 threads.
TEST(BatchInvariance, Int8SmallRowsKernelGivesOneDnnsBits) {
  if (!kernels::small_gemm_s8_available() || std::getenv("ORDO_SMALL_GEMM") ||
      !nn::gemm_type_supported(GemmType::kInt8))
    GTEST_SKIP() << "no AVX-512 VNNI body here";
  at::manual_seed(7);
  const std::vector<SmallRowsShape> shapes = {{512, 1536, true, std::nullopt},                 // workload fused q/k/v
                                              {512, 2048, true, kernels::Activation::kSilu},   // workload fc1
                                              {2048, 512, true, std::nullopt},                 // workload fc2
                                              {512, 58101, false, std::nullopt},               // workload output
                                              {1024, 4096, true, kernels::Activation::kRelu},  // tc-big fc1
                                              {4096, 1024, false, std::nullopt},
                                              {40, 80, true, kernels::Activation::kRelu},
                                              {1024, 4096, true, kernels::Activation::kGelu}};
  expect_small_rows_give_onednns_bits(shapes, GemmType::kInt8);
}

// The kernels of a GEMM are bounded (a server sees every batch shape), and a kernel that was
// evicted and rebuilt gives the same bits.
PackedGemm seeded_gemm() {
  at::manual_seed(4);
  return PackedGemm(at::randn({128, 64}), at::randn({128}), GemmType::kFloat32);
}

// A GEMM and 200 rows of input for it.
struct CachedGemm {
  PackedGemm gemm = seeded_gemm();
  at::Tensor x = at::randn({200, 64});

  // Runs every row count from 1 to 200 (and 5 rows after each), checking the cap all along.
  void run_every_row_count() const {
    for (int64_t rows = 1; rows <= 200; ++rows) {
      gemm.forward(x.narrow(0, 0, rows));
      ASSERT_LE(gemm.cached_kernels(), PackedGemm::kMaxCachedKernels) << "after " << rows << " row counts";
      gemm.forward(x.narrow(0, 0, 5));  // used all along: never evicted, never rebuilt
    }
  }
};

TEST(PackedGemmCache, KeepsAtMostItsCapacityOfKernels) {
  ThreadCount restore;
  at::set_num_threads(1);
  const CachedGemm cached;
  cached.gemm.forward(cached.x.narrow(0, 0, 37));
  EXPECT_EQ(cached.gemm.cached_kernels(), 1u);
  ASSERT_NO_FATAL_FAILURE(cached.run_every_row_count());
  EXPECT_EQ(cached.gemm.cached_kernels(), PackedGemm::kMaxCachedKernels);
  at::set_num_threads(2);  // another thread count: another kernel, still within the cap
  cached.gemm.forward(cached.x.narrow(0, 0, 37));
  EXPECT_LE(cached.gemm.cached_kernels(), PackedGemm::kMaxCachedKernels);
}

TEST(PackedGemmCache, AnEvictedKernelIsRebuiltWithTheSameBits) {
  ThreadCount restore;
  at::set_num_threads(1);
  const CachedGemm cached;
  const at::Tensor first = cached.gemm.forward(cached.x.narrow(0, 0, 37)).clone();
  ASSERT_NO_FATAL_FAILURE(cached.run_every_row_count());
  EXPECT_TRUE(same_bits(cached.gemm.forward(cached.x.narrow(0, 0, 37)), first));
}

TEST(PackedGemmCache, TheKernelOfAnotherThreadCountGivesTheSameBits) {
  ThreadCount restore;
  at::set_num_threads(1);
  const CachedGemm cached;
  const at::Tensor first = cached.gemm.forward(cached.x.narrow(0, 0, 37)).clone();
  at::set_num_threads(2);
  EXPECT_TRUE(same_bits(cached.gemm.forward(cached.x.narrow(0, 0, 37)), first));
}

// ---------------------------------------------------------------- attention

// softmax(q k^T * scale + mask) v in float64 through LibTorch: the reference.
at::Tensor reference_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask,
                               int64_t heads, double scale) {
  const int64_t batch = q.size(0), q_len = q.size(1), head_dim = k.size(3);
  const at::Tensor qh = q.to(at::kDouble).reshape({batch, q_len, heads, head_dim}).transpose(1, 2) * scale;
  at::Tensor scores = at::matmul(qh, k.to(at::kDouble).transpose(2, 3));
  if (mask.defined()) scores = scores + mask.to(at::kDouble).clamp_min(-1e30);
  return at::matmul(at::softmax(scores, -1), v.to(at::kDouble))
      .transpose(1, 2)
      .reshape({batch, q_len, heads * head_dim});
}

constexpr kernels::ScoreOrder kOrders[] = {kernels::ScoreOrder::kDimensionTree, kernels::ScoreOrder::kKeyChain};
const char* order_name(kernels::ScoreOrder order) {
  return order == kernels::ScoreOrder::kKeyChain ? "key chain" : "dimension tree";
}

TEST(FixedOrderAttention, MatchesSoftmaxAttention) {
  at::manual_seed(5);
  for (const kernels::ScoreOrder order : kOrders)
    for (const int64_t kv_len : {11, 45})  // key chain: one partial block of 16; 32 + 13
      for (const int64_t head_dim : {4, 8, 16, 40, 64, 80, 128}) {
        const int64_t batch = 3, heads = 2, q_len = 5, dim = heads * head_dim;
        // q as a view into a fused [q; k; v] projection, as the layers pass it.
        const at::Tensor fused = at::randn({batch, q_len, 3 * dim});
        const at::Tensor q = fused.narrow(2, 0, dim);
        const at::Tensor k = at::randn({batch, heads, kv_len, head_dim});
        const at::Tensor v = at::randn({batch, heads, kv_len, head_dim});
        const at::Tensor attention = at::ones({batch, kv_len}, at::kLong);
        attention[1].narrow(0, 6, 5).fill_(0);  // row 1 has 6 real positions
        const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
        for (const at::Tensor& mask :
             {at::Tensor(), nn::padding_mask(attention), nn::causal_mask(q_len, kv_len - q_len)}) {
          const at::Tensor got = kernels::fixed_order_attention(q, k, v, mask, heads, scale, order);
          const at::Tensor want = reference_attention(q, k, v, mask, heads, scale);
          EXPECT_LT((got.to(at::kDouble) - want).abs().max().item<double>(), 2e-6)
              << order_name(order) << ", head_dim " << head_dim << ", kv_len " << kv_len;
          // The keys' layout changes speed, never a bit (key chain: read in place or transposed).
          EXPECT_TRUE(same_bits(
              kernels::fixed_order_attention(q, kernels::keys_by_dimension(k), v, mask, heads, scale, order), got))
              << order_name(order) << ", head_dim " << head_dim;
        }
      }
}

// T5's relative position bias enters beside the mask ([1, heads, q, kv] next to the padding mask's
// [batch, 1, 1, kv]): the same result as the reference with bias + mask summed, the same bits as
// passing that sum as the one mask (the kernel adds the bias first, as Hugging Face sums them),
// both orders, scale 1 (T5 does not scale), row 1 padded, and a decoder step's bias (one query at
// position 6 against 7 keys, causal buckets).
TEST(FixedOrderAttention, PositionBiasBesideTheMaskMatchesTheirSum) {
  at::manual_seed(9);
  for (const kernels::ScoreOrder order : kOrders)
    for (const int64_t head_dim : {8, 64, 80}) {
      const int64_t batch = 3, heads = 4, len = 19, dim = heads * head_dim;
      const at::Tensor q = at::randn({batch, len, dim});
      const at::Tensor k = at::randn({batch, heads, len, head_dim}), v = at::randn({batch, heads, len, head_dim});
      at::Tensor attention = at::ones({batch, len}, at::kLong);
      attention[1].narrow(0, 12, 7).fill_(0);
      nn::RelativePositionBias table(32, 128, heads, /*bidirectional=*/true);
      table.weight = at::randn({32, heads}) * 3;
      const at::Tensor bias = table.forward(0, len, len), mask = nn::padding_mask(attention);
      const at::Tensor got = kernels::fixed_order_attention(q, k, v, mask, heads, 1.0f, order, bias);
      const at::Tensor want = reference_attention(q, k, v, bias + mask, heads, 1.0);
      EXPECT_LT((got.to(at::kDouble) - want).abs().max().item<double>(), 2e-5)
          << order_name(order) << ", head_dim " << head_dim;
      EXPECT_TRUE(same_bits(got, kernels::fixed_order_attention(q, k, v, bias + mask, heads, 1.0f, order)))
          << order_name(order) << ", head_dim " << head_dim;
      EXPECT_FALSE(
          same_bits(got, kernels::fixed_order_attention(q, k, v, mask, heads, 1.0f, order)));  // the bias counts
      nn::RelativePositionBias causal(32, 128, heads, /*bidirectional=*/false);
      causal.weight = table.weight;
      const at::Tensor step_bias = causal.forward(6, 1, 7);
      const at::Tensor q1 = q.narrow(1, 6, 1), k7 = k.narrow(2, 0, 7), v7 = v.narrow(2, 0, 7);
      EXPECT_LT(
          (kernels::fixed_order_attention(q1, k7, v7, at::Tensor(), heads, 1.0f, order, step_bias).to(at::kDouble) -
           reference_attention(q1, k7, v7, step_bias, heads, 1.0))
              .abs()
              .max()
              .item<double>(),
          2e-5)
          << order_name(order) << ", head_dim " << head_dim;
    }
}

// The two orders are different sums, so the tests above that loop over both exercise two
// different paths: on the same inputs their results differ in the last bits.
TEST(FixedOrderAttention, TheTwoOrdersAreDifferentSums) {
  at::manual_seed(8);
  const at::Tensor q = at::randn({2, 7, 4 * 64}), k = at::randn({2, 4, 50, 64}), v = at::randn({2, 4, 50, 64});
  const at::Tensor tree =
      kernels::fixed_order_attention(q, k, v, at::Tensor(), 4, 0.125f, kernels::ScoreOrder::kDimensionTree);
  const at::Tensor chain =
      kernels::fixed_order_attention(q, k, v, at::Tensor(), 4, 0.125f, kernels::ScoreOrder::kKeyChain);
  EXPECT_FALSE(same_bits(tree, chain));
  EXPECT_LT((tree - chain).abs().max().item<float>(), 1e-5);
}

// Padding, companions of other lengths and the thread count change no bit of a row.
TEST(FixedOrderAttention, ARowGivesItsBitsAloneInAnyPaddedBatchOnAnyThreadCount) {
  for (const kernels::ScoreOrder order : kOrders) {
    ThreadCount restore;
    at::manual_seed(6);
    const int64_t heads = 4, head_dim = 64, dim = heads * head_dim, q_len = 3, real = 9;
    const float scale = 0.125f;
    const at::Tensor q = at::randn({1, q_len, dim}), k = at::randn({1, heads, real, head_dim}),
                     v = at::randn({1, heads, real, head_dim});
    at::set_num_threads(1);
    const at::Tensor alone =
        kernels::fixed_order_attention(q, k, v, nn::padding_mask(at::ones({1, real}, at::kLong)), heads, scale, order);
    for (const int64_t padded : {9, 10, 16, 17, 40, 200})
      for (const int threads : {1, 2}) {
        at::set_num_threads(threads);
        // Our sentence is row 1 of 3; the others have other lengths; padding holds garbage.
        const at::Tensor qs = at::randn({3, q_len, dim}), ks = at::randn({3, heads, padded, head_dim}) * 7,
                         vs = at::randn({3, heads, padded, head_dim}) * 7;
        qs[1].copy_(q[0]);
        ks[1].narrow(1, 0, real).copy_(k[0]);
        vs[1].narrow(1, 0, real).copy_(v[0]);
        at::Tensor attention = at::ones({3, padded}, at::kLong);
        attention[1].narrow(0, real, padded - real).fill_(0);
        attention[2].narrow(0, 0, padded / 2).fill_(1);
        const at::Tensor out =
            kernels::fixed_order_attention(qs, ks, vs, nn::padding_mask(attention), heads, scale, order);
        EXPECT_TRUE(same_bits(out.narrow(0, 1, 1), alone))
            << order_name(order) << ", padded to " << padded << ", " << threads << " threads";
      }
  }
}

// An empty source alone is one masked padding position; in a batch it is many. It attends to
// position 0 either way.
TEST(FixedOrderAttention, RowThatSeesNothingAttendsToPositionZero) {
  const at::Tensor q = at::randn({2, 1, 8}), k = at::randn({2, 2, 5, 4}), v = at::randn({2, 2, 5, 4});
  at::Tensor attention = at::ones({2, 5}, at::kLong);
  attention[0].fill_(0);
  const at::Tensor position0 = v[0].select(1, 0).reshape({1, 8});  // heads' position 0, concatenated
  for (const kernels::ScoreOrder order : kOrders) {
    const at::Tensor out = kernels::fixed_order_attention(q, k, v, nn::padding_mask(attention), 2, 0.5f, order);
    EXPECT_TRUE(same_bits(out[0], position0)) << order_name(order);
  }
}

// ---------------------------------------------------------------- whole translations

struct InvarianceCase {
  std::string name, dir;
  std::vector<std::string> sentences;
  DecodeOptions options;
};

InvarianceCase make_case(const std::string& name) {
  InvarianceCase c;
  c.name = name;
  if (name == "en-de") {
    c.dir = std::string(ORDO_SOURCE_DIR) + "/models/en-de";
    std::ifstream in(testing::data_dir() + "/samples/multi30k_val100.en");
    std::vector<std::string> lines;
    for (std::string line; lines.size() < 10 && std::getline(in, line);) lines.push_back(line);
    c.sentences.assign(lines.begin(), lines.begin() + 7);
    c.sentences.push_back("");
    c.sentences.push_back(lines[7] + " " + lines[8] + " " + lines[9]);  // three captions in one line
    c.options.max_new_tokens = 40;
    return c;
  }
  const nlohmann::json golden = testing::load_golden(name);
  c.dir = testing::fixture_dir(name);
  c.sentences = golden["sentences"].get<std::vector<std::string>>();
  c.options.max_new_tokens = 20;
  const nlohmann::json& kwargs = golden["generation"]["greedy"]["kwargs"];
  if (kwargs.contains("forced_bos_token_id"))
    c.options.forced_bos_token_id = kwargs["forced_bos_token_id"].get<int64_t>();
  return c;
}

// Batches each sentence takes part in: all of them; windows of 2..7 sentences; each one with
// the longest and with the shortest other sentence.
std::vector<std::vector<size_t>> compositions(const std::vector<std::string>& sentences) {
  const size_t n = sentences.size();
  const auto by_length = [&](size_t a, size_t b) { return sentences[a].size() < sentences[b].size(); };
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), by_length);
  const size_t shortest = order.front(), longest = order.back();
  std::vector<std::vector<size_t>> out;
  out.push_back(std::vector<size_t>(order.begin(), order.begin() + std::min<size_t>(n, 8)));
  for (size_t k = 2; k <= 7 && k < n; ++k) {
    std::vector<size_t> window;
    for (size_t j = 0; j < k; ++j) window.push_back((k + j) % n);
    out.push_back(window);
  }
  for (size_t i = 0; i < n; ++i) {
    if (i != longest) out.push_back({i, longest});
    if (i != shortest) out.push_back({shortest, i});
  }
  return out;
}

bool same_result(const TranslationResult& a, const TranslationResult& b) {
  if (a.hypotheses.size() != b.hypotheses.size()) return false;
  for (size_t h = 0; h < a.hypotheses.size(); ++h) {
    const float x = a.hypotheses[h].score, y = b.hypotheses[h].score;
    if (a.hypotheses[h].ids != b.hypotheses[h].ids || std::memcmp(&x, &y, sizeof x) != 0) return false;
  }
  return true;
}

class TranslationInvariance : public ::testing::TestWithParam<std::string> {};

TEST_P(TranslationInvariance, SentenceAloneEqualsSentenceInAnyBatch) {
  ThreadCount restore;
  const InvarianceCase c = make_case(GetParam());
  const auto batches = compositions(c.sentences);
  ModelOptions two_workers;
  two_workers.inter_threads = 2;
  const Translator translator(c.dir), concurrent(c.dir, two_workers);
  size_t checks = 0, mismatches = 0;
  for (const int beam : {1, 4}) {
    DecodeOptions options = c.options;
    options.beam_size = beam;
    options.n_best = beam;
    BatchOptions one_by_one;
    one_by_one.batch_size = 1;
    at::set_num_threads(1);
    std::vector<TranslationResult> alone;
    for (const std::string& sentence : c.sentences)
      alone.push_back(translator.translate({sentence}, options, one_by_one)[0]);

    // Two threads: the first batch only (all sentences, shortest to longest). On a busy
    // 2-core machine, two OpenMP threads spend most of a call waiting for each other at
    // parallel regions; the layer tests above cover threads on many more shapes.
    struct Setting {
      const Translator* translator;
      int threads, batch_size;
      size_t batches;
      const char* label;
    };
    for (const Setting& s :
         {Setting{&translator, 1, 32, batches.size(), "1 thread"}, Setting{&translator, 2, 32, 1, "2 threads"},
          Setting{&concurrent, 2, 2, 1, "2 workers x 1 thread, batches of 2"}}) {
      at::set_num_threads(s.threads);
      BatchOptions batched;
      batched.batch_size = s.batch_size;
      for (size_t b = 0; b < std::min(s.batches, batches.size()); ++b) {
        const std::vector<size_t>& batch = batches[b];
        std::vector<std::string> inputs;
        for (size_t i : batch) inputs.push_back(c.sentences[i]);
        const auto results = s.translator->translate(inputs, options, batched);
        for (size_t j = 0; j < batch.size(); ++j) {
          ++checks;
          if (same_result(results[j], alone[batch[j]])) continue;
          ++mismatches;
          ADD_FAILURE() << c.name << " beam " << beam << ", " << s.label << ": sentence " << batch[j]
                        << " in a batch of " << batch.size() << " differs from it alone (score "
                        << results[j].hypotheses[0].score << " vs " << alone[batch[j]].hypotheses[0].score << ")";
        }
      }
    }
  }
  std::printf(
      "[ invariance ] %s: %zu sentences, %zu batches, greedy and beam 4, 3 thread settings: %zu checks, %zu "
      "mismatches\n",
      c.name.c_str(), c.sentences.size(), batches.size(), checks, mismatches);
  EXPECT_EQ(mismatches, 0u);
}

// Sampling: each hypothesis draws from its own generator (seed + its number), so a sampled
// sentence is the same alone and in any batch, in any position.
TEST(BatchInvariance, SampledSentenceIsTheSameAloneAndInAnyBatch) {
  const Translator translator(testing::fixture_dir("marian_tcbig_en_pt"));
  const auto sentences = testing::load_golden("marian_tcbig_en_pt")["sentences"].get<std::vector<std::string>>();
  DecodeOptions sample;
  sample.beam_size = 1;
  sample.max_new_tokens = 20;
  sample.sample = true;
  sample.temperature = 1.5f;
  sample.top_p = 0.9f;
  sample.seed = 42;
  sample.n_best = 2;
  const auto together = translator.translate(sentences, sample);
  const std::vector<std::string> reversed(sentences.rbegin(), sentences.rend());
  const auto backwards = translator.translate(reversed, sample);
  int differing = 0;
  for (size_t i = 0; i < sentences.size(); ++i) {
    const TranslationResult alone = translator.translate({sentences[i]}, sample)[0];
    EXPECT_TRUE(same_result(together[i], alone)) << "sentence " << i;
    EXPECT_TRUE(same_result(backwards[sentences.size() - 1 - i], alone)) << "sentence " << i;
    differing += alone.hypotheses[0].ids != alone.hypotheses[1].ids;
  }
  EXPECT_GT(differing, 0) << "a sentence's two samples were alike for every sentence";
}

std::vector<std::string> invariance_models() {
  std::vector<std::string> all = testing::seq2seq_fixtures();
  all.push_back("en-de");
  return all;
}

INSTANTIATE_TEST_SUITE_P(Models, TranslationInvariance, ::testing::ValuesIn(invariance_models()), [](const auto& info) {
  std::string name = info.param;
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
});

}  // namespace
}  // namespace ordo
