// ordo's own parallel loops (kernels/parallel.h): with 2 OpenMP threads they split the work and
// give the same bits as with 1 thread, and KeyValue::reorder, which moves no keys or values
// (KeyValue::origin), reads as select() does, in attention too. (That the loops are compiled with OpenMP at all is checked on libordo.so by the
// test Build.LibordoRunsItsOwnLoopsOnOpenMP in tests/CMakeLists.txt.)
// ctest-label: unit
#include <sys/resource.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include <ATen/Parallel.h>

#include "kernels/attention_kernel.h"
#include "kernels/fused_rows.h"
#include "kernels/isa.h"
#include "kernels/parallel.h"
#include "kernels/top_k.h"
#include "nn/attention.h"
#include "ordo/error.h"
#include "support/sanitizer.h"
#include "support/thread_count.h"

namespace ordo::nn {
namespace {

// Runs `f` with `threads` intra-op threads and restores the count.
template <class F>
auto with_threads(int threads, F f) {
  testing::ThreadCount restore;
  at::set_num_threads(threads);
  return f();
}

TEST(ParallelKernels, AttentionIsBitIdenticalOnOneAndTwoThreads) {
  at::manual_seed(11);
  const int64_t batch = 6, heads = 8, q_len = 4, kv_len = 96, head_dim = 64;
  ASSERT_LT(kernels::grain_for(2 * q_len * kv_len * head_dim), batch * heads) << "the shape must be split";
  const at::Tensor q = at::randn({batch, q_len, heads * head_dim});
  const at::Tensor k = at::randn({batch, heads, kv_len, head_dim}), v = at::randn({batch, heads, kv_len, head_dim});
  at::Tensor mask = at::zeros({batch, 1, 1, kv_len});
  mask.narrow(3, 80, 16).fill_(-1e9f);  // padded positions
  for (const kernels::ScoreOrder order : {kernels::ScoreOrder::kDimensionTree, kernels::ScoreOrder::kKeyChain}) {
    const auto run = [&] { return kernels::fixed_order_attention(q, k, v, mask, heads, 0.125f, order); };
    const at::Tensor one = with_threads(1, run), two = with_threads(2, run);
    EXPECT_TRUE(at::equal(one, two)) << static_cast<int>(order);
  }
}

TEST(ParallelKernels, TopKIsIdenticalOnOneAndTwoThreads) {
  at::manual_seed(12);
  const at::Tensor scores = at::randn({32, 50000});
  ASSERT_LT(kernels::grain_for(50000), 32);
  const auto run = [&] { return kernels::top_k_rows(scores, 8); };
  const kernels::TopK one = with_threads(1, run), two = with_threads(2, run);
  EXPECT_EQ(one.values, two.values);
  EXPECT_EQ(one.indices, two.indices);
}

// A cache grown by append() (so its length is less than the buffer's capacity), reordered in
// place, equals the same cache select()ed: rows kept, moved, duplicated, swapped; through more
// appends and a growth of its buffers; and its keys and values never move.
TEST(ParallelKernels, ReorderInPlaceEqualsSelect) {
  for (const auto type : {at::kFloat, at::kBFloat16})
    for (int threads : {1, 2}) {
      at::manual_seed(13);
      const int64_t rows = 8, heads = 16, head_dim = 64;
      KeyValue cache;
      for (int step = 0; step < 37; ++step)  // 37 positions: a buffer of capacity 64
        cache.append(
            {at::randn({rows, heads, 1, head_dim}).to(type), at::randn({rows, heads, 1, head_dim}).to(type), {}, {}});
      ASSERT_LT(cache.length(), cache.key_buffer.size(2));
      for (const std::vector<int64_t>& order :
           {std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7},
            {1, 0, 3, 2, 5, 4, 7, 6},
            {0, 0, 0, 1, 4, 4, 7, 2},
            {7, 6, 5, 4, 3, 2, 1, 0},
            {0, 0, 1, 2, 4, 4, 5, 6} /* chains: each row read before it is written */}) {
        const at::Tensor index = at::tensor(order, at::kLong);
        KeyValue expected = cache.select(index);
        const at::Tensor stored = cache.key.clone();
        with_threads(threads, [&] {
          cache.reorder(index);
          return 0;
        });
        EXPECT_TRUE(at::equal(cache.key, stored)) << "a reorder moves no keys";
        const KeyValue read = cache.select(at::arange(rows, at::kLong));  // each row's own positions
        EXPECT_TRUE(at::equal(read.key, expected.key)) << threads << " threads";
        EXPECT_TRUE(at::equal(read.value, expected.value)) << threads << " threads";
        // The unused capacity is not part of the cache; the next append still lands after it.
        EXPECT_EQ(cache.length(), expected.length());
        // Attention through the origin gives the bits attention over the copied rows gives.
        if (type == at::kFloat) {
          const at::Tensor q = at::randn({rows, 1, heads * head_dim});
          const at::Tensor through = kernels::fixed_order_attention(
              q, cache.key, cache.value, {}, heads, 0.125f, kernels::ScoreOrder::kDimensionTree, {}, cache.origin);
          EXPECT_TRUE(
              at::equal(through, kernels::fixed_order_attention(q, expected.key, expected.value, {}, heads, 0.125f)));
        }
      }
      // More positions after a reorder, past the capacity (64): the rows keep their histories.
      KeyValue expected = cache.select(at::tensor(std::vector<int64_t>{3, 3, 1, 0, 2, 6, 7, 5}, at::kLong));
      cache.reorder(at::tensor(std::vector<int64_t>{3, 3, 1, 0, 2, 6, 7, 5}, at::kLong));
      for (int step = 0; step < 30; ++step) {
        const KeyValue fresh{at::randn({rows, heads, 1, head_dim}).to(type),
                             at::randn({rows, heads, 1, head_dim}).to(type)};
        cache.append(fresh);
        expected.append(fresh);
        if (step == 10) {
          cache.reorder(at::tensor(std::vector<int64_t>{1, 1, 1, 0, 4, 4, 7, 2}, at::kLong));
          expected = expected.select(at::tensor(std::vector<int64_t>{1, 1, 1, 0, 4, 4, 7, 2}, at::kLong));
        }
      }
      ASSERT_EQ(cache.length(), 67);
      const KeyValue read = cache.select(at::arange(rows, at::kLong));
      EXPECT_TRUE(at::equal(read.key, expected.key));
      EXPECT_TRUE(at::equal(read.value, expected.value));
      EXPECT_THROW(cache.reorder(at::tensor(std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 8}, at::kLong)), Error);
    }
}

constexpr int64_t kCacheRows = 32, kCacheHeads = 16, kCacheHeadDim = 64;

// A cache of 40 positions grown a position at a time; the sum of its keys, all ones.
constexpr float kGrownCacheSum = 40.0f * kCacheRows * kCacheHeads * kCacheHeadDim;
float grown_cache_sum() {
  const at::Tensor position = at::ones({kCacheRows, kCacheHeads, 1, kCacheHeadDim});
  KeyValue cache;
  for (int step = 0; step < 40; ++step) cache.append({position, position, {}, {}});
  return cache.key.sum().item<float>();
}

// Cache buffers of 1 MB or more are mappings that a freed cache hands on (nn/attention.cpp): once
// two caches have grown to a size, a third writes into pages already resident. Without that,
// these 40 positions of 32 rows would fault in about 5,600 fresh pages (capacities 16, 32, 64).
TEST(ParallelKernels, ACacheGrownAgainToTheSameSizeFaultsInNoFreshPages) {
#ifdef ORDO_SANITIZER_ALLOCATOR
  GTEST_SKIP() << "a sanitizer's runtime faults in pages of its own (shadow, traces) as it checks writes";
#endif
  const auto minor_faults = [] {
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    return usage.ru_minflt;
  };
  EXPECT_EQ(grown_cache_sum(), kGrownCacheSum);
  EXPECT_EQ(grown_cache_sum(), kGrownCacheSum);
  const long before = minor_faults();
  EXPECT_EQ(grown_cache_sum(), kGrownCacheSum);
  EXPECT_LT(minor_faults() - before, 1000);
}

// release_kept_cache_mappings (ordo::release_idle_memory's) unmaps what freed caches left kept,
// each mapping once; caches grown afterwards map afresh and hold the same values.
TEST(ParallelKernels, ReleasingKeptCacheMappingsUnmapsEachOnce) {
  EXPECT_EQ(grown_cache_sum(), kGrownCacheSum);
  // At least the last buffers of keys and of values (capacity 64: 8 MB each) were kept.
  const size_t last_buffer = size_t{kCacheRows * kCacheHeads * 64 * kCacheHeadDim} * sizeof(float);
  EXPECT_GE(nn::release_kept_cache_mappings(), 2 * last_buffer);
  EXPECT_EQ(nn::release_kept_cache_mappings(), 0u);
  EXPECT_EQ(grown_cache_sum(), kGrownCacheSum);
  EXPECT_GE(nn::release_kept_cache_mappings(), 2 * last_buffer);
}

// ORDO_ISA caps the instruction set of ordo's kernels, never above what the CPU runs; an unknown
// value leaves the detected one. pick_for_isa, the kernels' one dispatch, follows best_isa.
TEST(ParallelKernels, OrdoIsaCapsTheDetectedInstructionSet) {
  const char* set = std::getenv("ORDO_ISA");
  const std::string saved = set ? set : "";
  const auto name = [](kernels::Isa isa) {
    return isa == kernels::Isa::kAvx512 ? "avx512" : isa == kernels::Isa::kAvx2 ? "avx2" : "baseline";
  };
  const auto picked = [] { return std::string(kernels::pick_for_isa<const char*>("avx512", "avx2", "baseline")); };
  ::unsetenv("ORDO_ISA");
  const kernels::Isa detected = kernels::detected_isa();
  EXPECT_EQ(kernels::best_isa(), detected);
  EXPECT_EQ(picked(), name(detected));
  ::setenv("ORDO_ISA", "avx2", 1);
  EXPECT_EQ(kernels::best_isa(), detected == kernels::Isa::kBaseline ? kernels::Isa::kBaseline : kernels::Isa::kAvx2);
  EXPECT_EQ(picked(), detected == kernels::Isa::kBaseline ? "baseline" : "avx2");
  ::setenv("ORDO_ISA", "baseline", 1);
  EXPECT_EQ(kernels::best_isa(), kernels::Isa::kBaseline);
  EXPECT_EQ(picked(), "baseline");
  ::setenv("ORDO_ISA", "avx512", 1);
  EXPECT_EQ(kernels::best_isa(), detected);
  EXPECT_EQ(picked(), name(detected));
  ::setenv("ORDO_ISA", "sse9", 1);
  EXPECT_EQ(kernels::best_isa(), detected);
  EXPECT_EQ(picked(), name(detected));
  if (set)
    ::setenv("ORDO_ISA", saved.c_str(), 1);
  else
    ::unsetenv("ORDO_ISA");
}

TEST(ParallelKernels, ASerialScopeRunsLibTorchOnThisThreadOnly) {
  testing::ThreadCount restore;
  at::set_num_threads(2);
  kernels::SerialScope serial(true);
  EXPECT_EQ(at::get_num_threads(), 1);
}

TEST(ParallelKernels, ASerialScopeRestoresTheThreadCountWhenItEnds) {
  testing::ThreadCount restore;
  at::set_num_threads(2);
  { kernels::SerialScope serial(true); }
  EXPECT_EQ(at::get_num_threads(), 2);
}

TEST(ParallelKernels, ANonSerialScopeKeepsTheThreadCount) {
  testing::ThreadCount restore;
  at::set_num_threads(2);
  kernels::SerialScope not_serial(false);
  EXPECT_EQ(at::get_num_threads(), 2);
}

// A slice that throws, on the calling thread or on the other one, does not end the process
// (an exception leaving an OpenMP region calls std::terminate): every slice runs to its end,
// or stops claiming, and the first exception reaches the caller; the loops work afterwards.
TEST(ParallelKernels, AnExceptionInASliceReachesTheCallerOnEitherThread) {
  testing::ThreadCount restore;
  at::set_num_threads(2);
  for (const bool claim : {false, true}) {
    for (const int64_t bad : {int64_t{0}, int64_t{63}}) {  // the first slice (this thread) or the last
      std::atomic<int64_t> visited{0};
      const auto body = [&](int64_t b, int64_t e) {
        visited += e - b;
        if (b <= bad && bad < e) throw Error("unit " + std::to_string(bad));
      };
      try {
        if (claim)
          kernels::parallel_claim(0, 64, 4, body);
        else
          kernels::parallel_for(0, 64, 4, body);
        FAIL() << "no exception, claim " << claim << ", bad unit " << bad;
      } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()), "unit " + std::to_string(bad));
      }
      EXPECT_GT(visited.load(), 0);
      EXPECT_LE(visited.load(), 64);
      if (!claim) EXPECT_EQ(visited.load(), 64);  // fixed slices: the other thread's ran whole
    }
    std::atomic<int64_t> sum{0};
    const auto add = [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) sum += i;
    };
    if (claim)
      kernels::parallel_claim(0, 64, 4, add);
    else
      kernels::parallel_for(0, 64, 4, add);
    EXPECT_EQ(sum.load(), 64 * 63 / 2);
  }
}

// kernels/fused_rows.h: T5's RMS norm and the gated feed-forward's act(a) * b equal their formulas
// evaluated in double (to float32 rounding), a row alone equals that row in a batch, and 2
// threads give the bits of 1. Widths that are not a multiple of the 16 lanes test the tails.
constexpr double kRmsEps = 1e-6;

// 70 rows of 771 values and a weight per column, normalized on one thread.
struct RmsRows {
  at::Tensor x, w, rms;
  RmsRows() {
    at::manual_seed(13);
    x = at::randn({70, 771}) * 3;
    w = at::randn({771});
    rms = with_threads(1, [&] { return kernels::rms_norm_rows(x, w, kRmsEps); });
  }
};

TEST(ParallelKernels, RmsNormRowsMatchTheirFormula) {
  const RmsRows r;
  const at::Tensor xd = r.x.to(at::kDouble);
  const at::Tensor rms_ref = r.w.to(at::kDouble) * (xd * at::rsqrt(xd.pow(2).mean(-1, true) + kRmsEps));
  EXPECT_TRUE(at::allclose(r.rms.to(at::kDouble), rms_ref, 1e-5, 1e-5))
      << (r.rms.to(at::kDouble) - rms_ref).abs().max();
}

TEST(ParallelKernels, AnRmsNormRowAloneEqualsItInABatch) {
  const RmsRows r;
  EXPECT_TRUE(at::equal(kernels::rms_norm_rows(r.x.narrow(0, 5, 1), r.w, kRmsEps), r.rms.narrow(0, 5, 1)));
}

TEST(ParallelKernels, RmsNormRowsOnTwoThreadsGiveTheBitsOfOne) {
  const RmsRows r;
  ASSERT_LT(kernels::grain_for(3 * 771), 70) << "the shape must be split";
  EXPECT_TRUE(at::equal(with_threads(2, [&] { return kernels::rms_norm_rows(r.x, r.w, kRmsEps); }), r.rms));
}

constexpr int64_t kHidden = 1000;

// 70 rows of [a | b], a with 0 and both saturations of the activations in row 0.
at::Tensor gated_input() {
  at::manual_seed(14);
  at::Tensor fused = at::randn({70, 2 * kHidden}) * 4;
  fused[0][0] = 0.0f;
  fused[0][1] = 40.0f;
  fused[0][2] = -40.0f;
  return fused;
}

const Activation kGatedActivations[] = {Activation::kGeluTanh, Activation::kSilu, Activation::kRelu};

TEST(ParallelKernels, GatedRowsMatchTheirFormulas) {
  const at::Tensor fused = gated_input();
  const at::Tensor a = fused.narrow(1, 0, kHidden).to(at::kDouble),
                   b = fused.narrow(1, kHidden, kHidden).to(at::kDouble);
  const at::Tensor gelu_new = 0.5 * a * (1 + at::tanh(std::sqrt(2.0 / M_PI) * (a + 0.044715 * a.pow(3))));
  for (const auto& [each_activation, ref] :
       {std::pair{Activation::kGeluTanh, gelu_new * b}, std::pair{Activation::kSilu, a * at::sigmoid(a) * b},
        std::pair{Activation::kRelu, at::relu(a) * b}}) {
    const Activation activation = each_activation;  // a structured binding cannot be captured in C++17 (clang)
    const at::Tensor out = with_threads(1, [&] { return kernels::gated_rows(fused, activation); });
    EXPECT_TRUE(at::allclose(out.to(at::kDouble), ref, 1e-5, 1e-5))
        << static_cast<int>(activation) << " " << (out.to(at::kDouble) - ref).abs().max();
  }
}

TEST(ParallelKernels, AGatedRowAloneEqualsItInABatch) {
  const at::Tensor fused = gated_input();
  for (const Activation activation : kGatedActivations) {
    const at::Tensor out = with_threads(1, [&] { return kernels::gated_rows(fused, activation); });
    EXPECT_TRUE(at::equal(kernels::gated_rows(fused.narrow(0, 5, 1), activation), out.narrow(0, 5, 1)))
        << static_cast<int>(activation);
  }
}

TEST(ParallelKernels, GatedRowsOnTwoThreadsGiveTheBitsOfOne) {
  const at::Tensor fused = gated_input();
  ASSERT_LT(kernels::grain_for(4 * kHidden), 70) << "the shape must be split";
  for (const Activation activation : kGatedActivations) {
    const at::Tensor out = with_threads(1, [&] { return kernels::gated_rows(fused, activation); });
    EXPECT_TRUE(at::equal(with_threads(2, [&] { return kernels::gated_rows(fused, activation); }), out))
        << static_cast<int>(activation);
  }
}

TEST(ParallelKernels, GatedRowsRefuseTheExactGelu) {
  EXPECT_FALSE(kernels::gated_rows_supported(Activation::kGelu));
  EXPECT_THROW(kernels::gated_rows(gated_input(), Activation::kGelu), Error);
}

TEST(ParallelKernels, GatedRowsRefuseAnOddWidth) {
  EXPECT_THROW(kernels::gated_rows(gated_input().narrow(1, 0, 2 * kHidden - 1), Activation::kGeluTanh), Error);
}

}  // namespace
}  // namespace ordo::nn
