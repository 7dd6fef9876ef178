// A Translator leaves the process as it found it ("no hidden process state"): the
// caller's OpenMP thread count is restored after loading and after each call, glibc's
// allocator settings change only through ordo::configure_process, and the inter_threads
// workers are a pool that lives with the Translator (pipeline/worker_pool.h).
// ctest-label: integration
#include <dlfcn.h>
#include <malloc.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "ordo/ordo.h"
#include "pipeline/heap.h"
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

// The process's resident and peak resident kB (/proc/self/status), read apart from the code
// under test.
long status_kb(const char* field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind(field, 0) == 0) return std::stol(line.substr(std::strlen(field)));
  return -1;
}

// A block of `bytes` from the heap, every page touched, then freed: as a batch's buffers.
void touch_and_free(size_t bytes) {
  void* block = std::malloc(bytes);
  ASSERT_NE(block, nullptr);
  std::memset(block, 1, bytes);
  asm volatile("" : : "r"(block) : "memory");  // the pages are written: the compiler may not drop the memset
  std::free(block);
}

// After configure_process, freed heap stays resident (its trim threshold is raised), and
// release_free_heap returns it only after the resident set grew by more than 8 MB past its
// size at the last release: a creep of a few MB (a fragmented heap, one sentence at a time)
// keeps its pages for the next batch.
TEST(ProcessState, FreedHeapIsReleasedOnlyAfterTheResidentSetGrewByMoreThan8MB) {
#ifdef ORDO_SANITIZER_ALLOCATOR
  GTEST_SKIP() << "the sanitizer's allocator replaces glibc's: freed memory does not go back to it";
#endif
  configure_process();
  // Past any earlier release's mark (at most the peak so far): this one releases.
  const size_t block = static_cast<size_t>(status_kb("VmHWM:") - status_kb("VmRSS:")) * 1024 + (size_t{64} << 20);
  touch_and_free(block);
  const long high = status_kb("VmRSS:");
  pipeline::release_free_heap();
  ASSERT_LT(status_kb("VmRSS:"), high - 32 * 1024) << "the first growth is released";
  // 4 MB past that mark: kept.
  touch_and_free(block + (size_t{4} << 20));
  const long crept = status_kb("VmRSS:");
  ASSERT_GT(crept, high) << "the freed block stays resident until a release";
  pipeline::release_free_heap();
  EXPECT_GT(status_kb("VmRSS:"), crept - 1024) << "4 MB of growth released the free heap";
  // 16 MB past it: released.
  touch_and_free(block + (size_t{16} << 20));
  const long grown = status_kb("VmRSS:");
  pipeline::release_free_heap();
  EXPECT_LT(status_kb("VmRSS:"), grown - 32 * 1024) << "16 MB of growth kept the free heap";
}

// Resident kB of the process's shared-library mappings that are read-only and hold no page of
// their own (smaps' Anonymous 0): what release_library_pages() may drop. Read here apart
// from the code under test.
long clean_library_kb() {
  std::ifstream smaps("/proc/self/smaps");
  std::string line, perms, path;
  long total = 0, rss = 0;
  bool candidate = false;
  const auto close = [&] {
    if (candidate) total += rss;
    candidate = false;
    rss = 0;
  };
  while (std::getline(smaps, line)) {
    if (line.empty()) continue;
    if (std::isxdigit(static_cast<unsigned char>(line[0])) && line.find('-') < line.find(' ')) {
      close();
      std::istringstream fields(line);
      std::string range, offset, device, inode;
      fields >> range >> perms >> offset >> device >> inode >> path;
      candidate = perms[1] == '-' && path.find(".so") != std::string::npos;
    } else if (line.rfind("Rss:", 0) == 0) {
      rss = std::stol(line.substr(4));
    } else if (line.rfind("Anonymous:", 0) == 0 && std::stol(line.substr(10)) != 0) {
      candidate = false;
    }
  }
  close();
  return total;
}

ProcessOptions release_only() {
  ProcessOptions options;
  options.keep_large_buffers_on_heap = false;
  options.onednn_primitive_cache_capacity = 0;
  options.release_library_pages = true;
  return options;
}

TEST(ProcessState, ReleasingLibraryPagesDropsMostOfTheLibrariesCleanPages) {
  const Translator translator(fixture_dir("marian_opus_en_mg"));
  translator.translate({"Hello world."}, greedy(8));
  configure_process(release_only());
  const long resident = clean_library_kb();
  ASSERT_GT(resident, 10 * 1024)
      << "LibTorch's libraries hold more than 10 MB of resident clean pages after a translation";
  const size_t released = pipeline::release_library_pages();
  const long after = clean_library_kb();
  EXPECT_GT(released, size_t{5} << 20);
  EXPECT_LT(after, resident / 2) << "resident clean library pages: " << resident << " kB before the release";
}

// The code dropped comes back from the files: a Translator loaded and run afterwards (and the
// one loaded before) give the same tokens.
TEST(ProcessState, ReleasedLibraryPagesComeBackWhenUsed) {
  const DecodeOptions options = greedy(8);
  const Translator translator(fixture_dir("marian_opus_en_mg"));
  const auto before = translator.translate({"Hello world."}, options);
  configure_process(release_only());
  ASSERT_GT(pipeline::release_library_pages(), 0u);
  const Translator reloaded(fixture_dir("marian_opus_en_mg"));
  EXPECT_EQ(reloaded.translate({"Hello world."}, options)[0].hypotheses[0].ids, before[0].hypotheses[0].ids);
  EXPECT_EQ(translator.translate({"Hello world."}, options)[0].hypotheses[0].ids, before[0].hypotheses[0].ids);
}

// Releasing library pages while another thread loads libraries (as the tokenizer's thread
// loads the SentencePiece shim while the weights load): only segments of objects already in
// the loader's list, read-only ones, are dropped, so a library being mapped and relocated
// meanwhile keeps its relocations. The first version (ranges read from /proc/self/maps, dropped
// ms later) lost them: the same loop outside the suite crashed within 5 s, 2 runs of 3, and
// `ordo summarize` died of it once in CI.
TEST(ProcessState, ReleasingLibraryPagesWhileAThreadLoadsLibrariesLosesNoRelocation) {
  configure_process(release_only());
  static const char* const kWords[] = {"zero", "one", "two", "three", "four", "five", "six", "seven"};
  std::atomic<bool> stop{false};
  std::atomic<long> loads{0}, wrong{0};
  std::string failure;
  std::thread loader([&] {
    while (!stop.load()) {
      void* library = ::dlopen(ORDO_DLOPEN_TARGET, RTLD_NOW | RTLD_LOCAL);
      if (!library) {
        failure = ::dlerror();
        return;
      }
      using Word = const char* (*)(int);
      const auto word = reinterpret_cast<Word>(::dlsym(library, "ordo_dlopen_target_word"));
      for (int i = 0; word && i < 8; ++i) wrong += std::strcmp(word(i), kWords[i]) != 0;
      wrong += word == nullptr;
      ::dlclose(library);
      ++loads;
    }
  });
  long releases = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (std::chrono::steady_clock::now() < deadline) {
    pipeline::release_library_pages();
    ++releases;
  }
  stop = true;
  loader.join();
  EXPECT_EQ(failure, "");
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GT(loads.load(), 0);
  EXPECT_GT(releases, 0);
  std::cout << releases << " releases beside " << loads.load() << " loads\n";
}

// The workers live as long as the Translator: every call on it uses them.
TEST(ProcessState, InterThreadsWorkersGiveTheSerialResultsCallAfterCall) {
  const std::vector<std::string> sentences = {"Hello world.", "How are you?", "A man rides a bike.", "The cat sleeps.",
                                              "Good morning to all of you."};
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

TEST(WorkerPool, RunReturnsAfterEveryTaskRan) {
  pipeline::WorkerPool pool(2);
  std::atomic<int> ran{0};
  pool.run(6, [&] { ++ran; });
  EXPECT_EQ(ran.load(), 6);
}

TEST(WorkerPool, TasksRunOnTheWorkersNotTheCaller) {
  pipeline::WorkerPool pool(2);
  std::mutex mutex;
  std::set<std::thread::id> threads;
  pool.run(6, [&] {
    std::lock_guard<std::mutex> lock(mutex);
    threads.insert(std::this_thread::get_id());
  });
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
