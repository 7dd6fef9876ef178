// A Translator leaves the process as it found it (issue 12, "no hidden process state"): the
// caller's OpenMP thread count is restored after loading and after each call, glibc's
// allocator settings change only through ordo::configure_process, and the inter_threads
// workers are a pool that lives with the Translator (pipeline/worker_pool.h).
// ctest-label: integration
#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <set>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

#include "ordo/ordo.h"
#include "pipeline/worker_pool.h"
#include "support/fixtures.h"
#include "support/sanitizer.h"
#include "support/thread_count.h"

namespace ordo {
namespace {

using testing::fixture_dir;

DecodeOptions greedy(int max_new_tokens) {
  DecodeOptions options;
  options.beam_size = 1;
  options.max_new_tokens = max_new_tokens;
  return options;
}

TEST(ProcessState, TranslatorRestoresTheCallersThreadCount) {
  const testing::ThreadCount restore;
  at::set_num_threads(2);
  ModelOptions options;
  options.threads = 1;
  const Translator translator(fixture_dir("marian_opus_en_mg"), options);
  EXPECT_EQ(at::get_num_threads(), 2) << "after loading";
  const auto one = translator.translate({"Hello world."}, greedy(8));
  EXPECT_EQ(at::get_num_threads(), 2) << "after a call";
  // A call on another thread gets the Translator's count there, and that thread's own back.
  std::thread([&] {
    at::set_num_threads(2);
    const auto again = translator.translate({"Hello world."}, greedy(8));
    EXPECT_EQ(again[0].hypotheses[0].ids, one[0].hypotheses[0].ids);
    EXPECT_EQ(at::get_num_threads(), 2) << "after a call on another thread";
  }).join();
}

// 64 MB is above glibc's largest automatic mmap threshold (32 MB on 64-bit): such a block is
// its own mapping (counted in mallinfo2().hblks) unless M_MMAP_THRESHOLD was raised.
bool big_block_is_mapped() {
  const size_t before = mallinfo2().hblks;
  void* block = std::malloc(64 << 20);
  static_cast<volatile char*>(block)[0] = 1;  // a used block: the compiler may not drop the pair
  const bool mapped = mallinfo2().hblks > before;
  std::free(block);
  return mapped;
}

TEST(ProcessState, OnlyConfigureProcessChangesTheAllocator) {
#ifdef ORDO_SANITIZER_ALLOCATOR
  GTEST_SKIP() << "the sanitizer's allocator replaces glibc's: mallopt's effect cannot be seen here";
#endif
  ASSERT_TRUE(big_block_is_mapped()) << "glibc's defaults expected at the start of this test";
  {
    const Translator translator(fixture_dir("marian_opus_en_mg"));
    translator.translate({"Hello world."}, greedy(8));
  }
  EXPECT_TRUE(big_block_is_mapped()) << "a Translator changed glibc's mmap threshold";
  configure_process();
  EXPECT_FALSE(big_block_is_mapped()) << "configure_process() did not raise glibc's mmap threshold";
  ProcessOptions defaults;
  defaults.keep_large_buffers_on_heap = false;  // leaves the allocator as it is now
  configure_process(defaults);
  EXPECT_FALSE(big_block_is_mapped());
}

TEST(ProcessState, InterThreadsWorkersGiveTheSameResultsAndLiveWithTheTranslator) {
  const std::vector<std::string> sentences = {"Hello world.", "How are you?", "A man rides a bike.",
                                              "The cat sleeps.", "Good morning to all of you."};
  const DecodeOptions options = greedy(12);
  BatchOptions one;
  one.batch_size = 1;
  const auto serial = Translator(fixture_dir("marian_opus_en_mg")).translate(sentences, options, one);
  ModelOptions pooled;
  pooled.inter_threads = 2;
  const Translator translator(fixture_dir("marian_opus_en_mg"), pooled);
  for (int call = 0; call < 3; ++call) {
    const auto results = translator.translate(sentences, options, one);
    ASSERT_EQ(results.size(), serial.size());
    for (size_t i = 0; i < results.size(); ++i)
      EXPECT_EQ(results[i].hypotheses[0].ids, serial[i].hypotheses[0].ids) << "call " << call << ", sentence " << i;
  }
}

TEST(WorkerPool, RunsEachTaskOnTheWorkersAndWaits) {
  pipeline::WorkerPool pool(2);
  std::atomic<int> ran{0};
  std::mutex mutex;
  std::set<std::thread::id> threads;
  pool.run(6, [&] {
    ++ran;
    std::lock_guard<std::mutex> lock(mutex);
    threads.insert(std::this_thread::get_id());
  });
  EXPECT_EQ(ran.load(), 6);
  EXPECT_EQ(threads.count(std::this_thread::get_id()), 0u) << "tasks run on the workers, not the caller";
  EXPECT_LE(threads.size(), 2u);
}

TEST(WorkerPool, RethrowsTheFirstErrorAfterEveryTaskEnded) {
  pipeline::WorkerPool pool(2);
  std::atomic<int> ended{0};
  EXPECT_THROW(pool.run(4,
                        [&] {
                          const int n = ++ended;
                          if (n == 1) throw std::runtime_error("first");
                        }),
               std::runtime_error);
  EXPECT_EQ(ended.load(), 4);
  pool.run(1, [&] { ++ended; });  // still usable
  EXPECT_EQ(ended.load(), 5);
}

TEST(WorkerPool, CallsFromSeveralThreadsShareTheWorkers) {
  pipeline::WorkerPool pool(2);
  std::atomic<int> ran{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c)
    callers.emplace_back([&] {
      for (int i = 0; i < 10; ++i) pool.run(3, [&] { ++ran; });
    });
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(ran.load(), 4 * 10 * 3);
}

}  // namespace
}  // namespace ordo
