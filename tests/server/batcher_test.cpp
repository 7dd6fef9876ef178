// The batching front with a stand-in translator (no model): merging, caps, fairness, limits.
// ctest-label: unit
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "ordo/error.h"
#include "server/batcher.h"
#include "server/request_fields.h"

namespace {

using namespace std::chrono_literals;
using ordo::DecodeOptions;
using ordo::TranslationResult;
using ordo::server::ApiError;
using ordo::server::Batcher;
using ordo::server::BatchingOptions;
using ordo::server::Clock;

// Echoes each source's ids as the hypothesis; records every batch; sleeps `delay` per batch.
// After hold(), the first batch waits in the model until release() (at most 10 s): a test
// queues work behind a busy worker without betting on a sleep outlasting a stalled thread.
struct FakeModel {
  std::chrono::milliseconds delay{0};
  std::mutex mutex;
  std::condition_variable gate;
  std::condition_variable started;  // told each time a batch starts (batches grew)
  bool held = false;                // guarded by mutex
  std::vector<std::vector<std::vector<int64_t>>> batches;
  std::atomic<int> running{0}, most_running{0};

  void hold() {
    std::lock_guard<std::mutex> lock(mutex);
    held = true;
  }
  void release() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      held = false;
    }
    gate.notify_all();
  }

  ordo::server::TranslateFn fn() {
    return [this](const std::vector<std::vector<int64_t>>& sources, const DecodeOptions& options) {
      const int now = ++running;
      for (int seen = most_running; now > seen && !most_running.compare_exchange_weak(seen, now);) {
      }
      {
        std::unique_lock<std::mutex> lock(mutex);
        batches.push_back(sources);
        started.notify_all();
        if (batches.size() == 1) gate.wait_for(lock, 10s, [&] { return !held; });
      }
      std::this_thread::sleep_for(delay);
      std::vector<TranslationResult> out;
      for (const auto& ids : sources) {
        if (!ids.empty() && ids[0] < 0) {
          --running;
          throw ordo::Error("bad sentence " + std::to_string(ids[0]));
        }
        TranslationResult r;
        r.hypotheses.push_back({"", {}, ids, 0.0f});
        out.push_back(r);
      }
      --running;
      return out;
    };
  }
};

// Waits (bounded) until the model has started `n` batches.
void wait_for_batches(FakeModel& model, size_t n) {
  std::unique_lock<std::mutex> lock(model.mutex);
  if (!model.started.wait_for(lock, 10s, [&] { return model.batches.size() >= n; }))
    FAIL() << "the batcher did not start " << n << " batches";
}

std::vector<std::vector<int64_t>> sentences(int n, int64_t first, size_t length = 3) {
  std::vector<std::vector<int64_t>> out;
  for (int i = 0; i < n; ++i) out.push_back(std::vector<int64_t>(length, first + i));
  return out;
}

// One request keeps the worker busy; 16 more, of one sentence each, arrive meanwhile.
class BatcherBusyWorker : public ::testing::Test {
 protected:
  static BatchingOptions busy_options() {
    BatchingOptions options;
    options.max_batch_size = 64;
    options.max_wait_ms = 20;
    return options;
  }
  void SetUp() override {
    model_.delay = 30ms;
    model_.hold();
    auto first = batcher_.submit("m", "s", model_.fn(), {}, sentences(1, 1000));
    wait_for_batches(model_, 1);
    for (int r = 0; r < 16; ++r) tickets_.push_back(batcher_.submit("m", "s", model_.fn(), {}, sentences(1, r * 10)));
    model_.release();
    ASSERT_TRUE(batcher_.wait(*first, Clock::now() + 10s));
    for (auto& t : tickets_) ASSERT_TRUE(batcher_.wait(*t, Clock::now() + 10s));
  }
  void TearDown() override { model_.release(); }
  FakeModel model_;  // outlives the batcher's workers
  Batcher batcher_{busy_options()};
  std::vector<std::shared_ptr<ordo::server::Ticket>> tickets_;
};

TEST_F(BatcherBusyWorker, RequestsArrivingMeanwhileShareOneBatch) {
  std::lock_guard<std::mutex> lock(model_.mutex);
  ASSERT_EQ(model_.batches.size(), 2u);
  EXPECT_EQ(model_.batches[1].size(), 16u);
}

TEST_F(BatcherBusyWorker, EachRequestGetsItsOwnResultsFromTheSharedBatch) {
  for (int r = 0; r < 16; ++r) EXPECT_EQ(tickets_[r]->result(0).hypotheses[0].ids, std::vector<int64_t>(3, r * 10));
}

TEST(Batcher, DifferentSettingsOrModelsNeverShareABatch) {
  FakeModel model;
  model.delay = 20ms;
  BatchingOptions options;
  options.max_wait_ms = 10;
  Batcher batcher(options);
  auto busy = batcher.submit("m", "s", model.fn(), {}, sentences(1, 0));
  wait_for_batches(model, 1);
  auto a = batcher.submit("m", "beam 1", model.fn(), {}, sentences(2, 10));
  auto b = batcher.submit("m", "beam 4", model.fn(), {}, sentences(2, 20));
  auto c = batcher.submit("other", "beam 1", model.fn(), {}, sentences(2, 30));
  for (auto* t : {&busy, &a, &b, &c}) ASSERT_TRUE(batcher.wait(**t, Clock::now() + 10s));
  for (const auto& batch : model.batches) {
    std::set<int64_t> groups;
    for (const auto& ids : batch) groups.insert(ids[0] / 10);
    EXPECT_EQ(groups.size(), 1u);
  }
  EXPECT_EQ(model.batches.size(), 4u);
}

// One request of ten sentences of mixed lengths (each sentence's ids are its length), batched
// at most 4 sentences and 40 tokens at a time.
class BatcherCaps : public ::testing::Test {
 protected:
  static BatchingOptions capped_options() {
    BatchingOptions options;
    options.max_batch_size = 4;
    options.max_batch_tokens = 40;
    return options;
  }
  void SetUp() override {
    for (size_t length : {12, 2, 9, 3, 11, 1, 10, 4, 30, 5}) sources_.push_back(std::vector<int64_t>(length, length));
    ticket_ = batcher_.submit("m", "s", model_.fn(), {}, sources_);
    ASSERT_TRUE(batcher_.wait(*ticket_, Clock::now() + 10s));
    batcher_.shutdown();  // the batches are all in
  }
  static size_t longest(const std::vector<std::vector<int64_t>>& batch) {
    size_t n = 0;
    for (const auto& ids : batch) n = std::max(n, ids.size());
    return n;
  }
  FakeModel model_;
  Batcher batcher_{capped_options()};
  std::vector<std::vector<int64_t>> sources_;
  std::shared_ptr<ordo::server::Ticket> ticket_;
};

TEST_F(BatcherCaps, ABatchHoldsAtMostMaxBatchSizeSentences) {
  for (const auto& batch : model_.batches) EXPECT_LE(batch.size(), 4u);
}

TEST_F(BatcherCaps, ABatchOfMoreThanOneSentenceHoldsAtMostMaxBatchTokens) {
  for (const auto& batch : model_.batches)
    EXPECT_TRUE(batch.size() == 1 || batch.size() * longest(batch) <= 40) << batch.size() << " x " << longest(batch);
}

TEST_F(BatcherCaps, ARequestsSentencesGoShortestFirst) {
  size_t previous_longest = 0;
  for (const auto& batch : model_.batches) {
    EXPECT_GE(longest(batch), previous_longest);
    previous_longest = longest(batch);
  }
}

TEST_F(BatcherCaps, EverySentenceIsTranslatedOnceIntoItsOwnResult) {
  size_t total = 0;
  for (const auto& batch : model_.batches) total += batch.size();
  EXPECT_EQ(total, sources_.size());
  for (size_t i = 0; i < sources_.size(); ++i) EXPECT_EQ(ticket_->result(i).hypotheses[0].ids, sources_[i]);
}

TEST(Batcher, MoreThanABatchWaitingIsGroupedByLengthAroundTheOldest) {
  FakeModel model;
  model.delay = 30ms;
  BatchingOptions options;
  options.max_batch_size = 5;
  Batcher batcher(options);
  model.hold();
  auto busy = batcher.submit("m", "s", model.fn(), {}, sentences(1, 0));
  wait_for_batches(model, 1);
  std::vector<std::shared_ptr<ordo::server::Ticket>> tickets;
  for (size_t length : {5, 50, 6, 49, 7, 48, 5, 51, 6, 50})
    tickets.push_back(batcher.submit("m", "s", model.fn(), {}, {std::vector<int64_t>(length, 1)}));
  model.release();
  for (auto& t : tickets) ASSERT_TRUE(batcher.wait(*t, Clock::now() + 10s));
  ASSERT_EQ(model.batches.size(), 3u);
  std::multiset<size_t> second, third;
  for (const auto& ids : model.batches[1]) second.insert(ids.size());
  for (const auto& ids : model.batches[2]) third.insert(ids.size());
  EXPECT_EQ(second, (std::multiset<size_t>{5, 5, 6, 6, 7}));
  EXPECT_EQ(third, (std::multiset<size_t>{48, 49, 50, 50, 51}));
}

TEST(Batcher, ALongRequestDoesNotStarveShortOnes) {
  FakeModel model;
  model.delay = 10ms;
  BatchingOptions options;
  options.max_batch_size = 8;
  options.max_wait_ms = 1;
  Batcher batcher(options);
  model.hold();
  auto big = batcher.submit("m", "s", model.fn(), {}, sentences(400, 0));  // 50 batches alone
  wait_for_batches(model, 1);
  auto small = batcher.submit("m", "s", model.fn(), {}, sentences(2, 100000));
  model.release();
  ASSERT_TRUE(batcher.wait(*small, Clock::now() + 10s));
  ASSERT_TRUE(batcher.wait(*big, Clock::now() + 30s));
  // Both of the short request's sentences went into the next batch, next to the long one's.
  ASSERT_GE(model.batches.size(), 2u);
  size_t small_in_next = 0, big_in_next = 0;
  for (const auto& ids : model.batches[1]) ++(ids[0] >= 100000 ? small_in_next : big_in_next);
  EXPECT_EQ(small_in_next, 2u);
  EXPECT_GT(big_in_next, 0u);
}

// Closed loop: the clients of the last batch send their next requests a moment after their
// answers. A free worker waits (briefly) for as many sentences as that batch had, instead of
// taking the first one back alone.
TEST(Batcher, ClientsOfTheLastBatchAreWaitedFor) {
  FakeModel model;
  model.delay = 30ms;
  BatchingOptions options;
  options.max_wait_ms = 2000;
  Batcher batcher(options);
  model.hold();
  auto busy = batcher.submit("m", "s", model.fn(), {}, sentences(1, 0));
  wait_for_batches(model, 1);
  std::vector<std::shared_ptr<ordo::server::Ticket>> six;
  for (int i = 0; i < 6; ++i) six.push_back(batcher.submit("m", "s", model.fn(), {}, sentences(1, 10 + i)));
  model.release();
  wait_for_batches(model, 2);  // the six together
  auto early = batcher.submit("m", "s", model.fn(), {}, sentences(1, 20));
  for (auto& t : six) ASSERT_TRUE(batcher.wait(*t, Clock::now() + 10s));
  std::this_thread::sleep_for(20ms);  // the clients' moment: the late arrival under test, not a wait
  std::vector<std::shared_ptr<ordo::server::Ticket>> rest;
  for (int i = 0; i < 5; ++i) rest.push_back(batcher.submit("m", "s", model.fn(), {}, sentences(1, 30 + i)));
  ASSERT_TRUE(batcher.wait(*early, Clock::now() + 10s));
  for (auto& t : rest) ASSERT_TRUE(batcher.wait(*t, Clock::now() + 10s));
  ASSERT_EQ(model.batches.size(), 3u);
  EXPECT_EQ(model.batches[1].size(), 6u);
  EXPECT_EQ(model.batches[2].size(), 6u);  // the early one waited for the other five
}

// A lone client is not held back: its last batch had one sentence (max_wait_ms is 2 s).
TEST(Batcher, ALoneClientIsNotWaitedFor) {
  FakeModel model;
  model.delay = 30ms;
  BatchingOptions options;
  options.max_wait_ms = 2000;
  Batcher batcher(options);
  const auto start = Clock::now();
  auto lone = batcher.submit("other", "s", model.fn(), {}, sentences(1, 40));
  ASSERT_TRUE(batcher.wait(*lone, Clock::now() + 10s));
  auto again = batcher.submit("other", "s", model.fn(), {}, sentences(1, 41));
  ASSERT_TRUE(batcher.wait(*again, Clock::now() + 10s));
  EXPECT_LT(Clock::now() - start, 1500ms);
}

// The clients of the last batch are counted in requests: after a request of two sentences (one
// batch of two), the same lone client's next request of one is not held back waiting for a
// second client that does not exist (max_wait_ms is 2 s).
TEST(Batcher, ALoneClientIsNotWaitedForAfterARequestOfSeveralSentences) {
  FakeModel model;
  BatchingOptions options;
  options.max_wait_ms = 2000;
  Batcher batcher(options);
  auto two = batcher.submit("m", "s", model.fn(), {}, sentences(2, 50));
  ASSERT_TRUE(batcher.wait(*two, Clock::now() + 10s));
  const auto start = Clock::now();
  auto one = batcher.submit("m", "s", model.fn(), {}, sentences(1, 60));
  ASSERT_TRUE(batcher.wait(*one, Clock::now() + 10s));
  EXPECT_LT(Clock::now() - start, 1500ms);
  ASSERT_EQ(model.batches.size(), 2u);
  EXPECT_EQ(model.batches[0].size(), 2u);
}

TEST(Batcher, OneBadSentenceFailsOnlyItself) {
  FakeModel model;
  BatchingOptions options;
  Batcher batcher(options);
  std::vector<std::vector<int64_t>> sources = {{1, 1}, {-7, 1}, {3, 3}};
  auto t = batcher.submit("m", "s", model.fn(), {}, sources);
  ASSERT_TRUE(batcher.wait(*t, Clock::now() + 10s));
  EXPECT_EQ(t->error(0), "");
  EXPECT_EQ(t->error(1), "bad sentence -7");
  EXPECT_TRUE(t->input_error(1));
  EXPECT_EQ(t->result(2).hypotheses[0].ids, sources[2]);
}

// A queue of 6 sentences, full: one request of six, its first sentence held in the model
// (one worker, one sentence per batch), the other five queued.
class BatcherFullQueue : public ::testing::Test {
 protected:
  static BatchingOptions full_options() {
    BatchingOptions options;
    options.max_batch_size = 1;
    options.max_queue = 6;
    return options;
  }
  void SetUp() override {
    model_.delay = 50ms;
    model_.hold();
    first_ = batcher_.submit("m", "s", model_.fn(), {}, sentences(6, 0));
    wait_for_batches(model_, 1);
  }
  void TearDown() override { model_.release(); }

  // The first request timed out: what had not started left the queue.
  void time_out_the_first() { ASSERT_FALSE(batcher_.wait(*first_, Clock::now() + 20ms)); }

  FakeModel model_;  // outlives the batcher's workers
  Batcher batcher_{full_options()};
  std::shared_ptr<ordo::server::Ticket> first_;
};

TEST_F(BatcherFullQueue, MoreWorkIsRefusedWith503AndRetryAfter) {
  try {
    batcher_.submit("m", "s", model_.fn(), {}, sentences(2, 10));
    FAIL() << "no 503";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 503);
    EXPECT_GE(e.retry_after, 1);
    EXPECT_NE(std::string(e.what()).find("limit 6"), std::string::npos) << e.what();
  }
}

TEST_F(BatcherFullQueue, ARequestLargerThanTheWholeQueueIs400) {
  try {
    batcher_.submit("m", "s", model_.fn(), {}, sentences(7, 10));
    FAIL() << "no 400";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 400);
  }
}

TEST_F(BatcherFullQueue, ATimedOutRequestsUnstartedSentencesLeaveTheQueue) {
  time_out_the_first();
  EXPECT_LE(batcher_.queued(), 0u);
  model_.release();
  batcher_.shutdown();
  EXPECT_EQ(model_.batches.size(), 1u) << "a timed-out request's queued sentences were translated";
}

TEST_F(BatcherFullQueue, TheQueueTakesNewWorkOnceATimedOutRequestLeftIt) {
  time_out_the_first();
  model_.release();
  auto next = batcher_.submit("m", "s", model_.fn(), {}, sentences(2, 20));
  EXPECT_TRUE(batcher_.wait(*next, Clock::now() + 10s));
  EXPECT_EQ(next->result(1).hypotheses[0].ids, std::vector<int64_t>(3, 21));
}

TEST_F(BatcherFullQueue, ShutdownTranslatesWhatIsQueuedFirst) {
  time_out_the_first();
  auto queued = batcher_.submit("m", "s", model_.fn(), {}, sentences(2, 20));
  model_.release();
  batcher_.shutdown();  // returns once the workers have stopped
  EXPECT_TRUE(batcher_.wait(*queued, Clock::now() + 10s));
  EXPECT_EQ(queued->result(1).hypotheses[0].ids, std::vector<int64_t>(3, 21));
}

TEST_F(BatcherFullQueue, NothingIsAcceptedAfterShutdown) {
  model_.release();
  batcher_.shutdown();
  try {
    batcher_.submit("m", "s", model_.fn(), {}, sentences(1, 10));
    FAIL() << "accepted after shutdown";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 503);
  }
}

TEST(Batcher, WorkersRunBatchesAtOnce) {
  FakeModel model;
  model.delay = 30ms;
  BatchingOptions options;
  options.workers = 2;
  options.max_batch_size = 2;
  Batcher batcher(options);
  model.hold();
  auto t = batcher.submit("m", "s", model.fn(), {}, sentences(8, 0));
  wait_for_batches(model, 2);  // the second worker started while the first is held
  model.release();
  ASSERT_TRUE(batcher.wait(*t, Clock::now() + 10s));
  EXPECT_EQ(model.most_running.load(), 2);
}

// Counts on_idle's calls and lets a test wait (bounded) for the n-th.
struct IdleCalls {
  std::mutex mutex;
  std::condition_variable called;
  int count = 0;
  std::function<void()> fn() {
    return [this] {
      std::lock_guard<std::mutex> lock(mutex);
      ++count;
      called.notify_all();
    };
  }
  // Two workers, idle after 1 ms without a batch.
  BatchingOptions options() {
    BatchingOptions o;
    o.workers = 2;
    o.idle_seconds = 0.001;
    o.on_idle = fn();
    return o;
  }
  bool wait_for(int n, std::chrono::milliseconds limit = 10s) {
    std::unique_lock<std::mutex> lock(mutex);
    return called.wait_for(lock, limit, [&] { return count >= n; });
  }
};

TEST(Batcher, AnIdleBatcherCallsOnIdleOnceAfterEachBusySpell) {
  FakeModel model;
  IdleCalls idle;
  Batcher batcher(idle.options());
  auto first = batcher.submit("m", "s", model.fn(), {}, sentences(1, 0));
  ASSERT_TRUE(batcher.wait(*first, Clock::now() + 10s));
  ASSERT_TRUE(idle.wait_for(1)) << "not called after the first batch";
  auto second = batcher.submit("m", "s", model.fn(), {}, sentences(1, 10));
  ASSERT_TRUE(batcher.wait(*second, Clock::now() + 10s));
  ASSERT_TRUE(idle.wait_for(2)) << "not called after the second batch";
  batcher.shutdown();  // the workers have ended: no call can still come
  EXPECT_EQ(idle.count, 2) << "called more than once per idle spell";
}

// While a worker holds a batch, the batcher is not idle: the other worker, done with its own
// batch and facing an empty queue, does not call on_idle (given 200 ms to do so wrongly).
TEST(Batcher, OnIdleWaitsForTheLastRunningBatch) {
  FakeModel model;
  IdleCalls idle;
  Batcher batcher(idle.options());
  model.hold();
  auto held = batcher.submit("m", "s", model.fn(), {}, sentences(1, 0));
  wait_for_batches(model, 1);
  auto quick = batcher.submit("m", "s", model.fn(), {}, sentences(1, 10));
  ASSERT_TRUE(batcher.wait(*quick, Clock::now() + 10s));
  EXPECT_FALSE(idle.wait_for(1, 200ms)) << "called while a batch was running";
  model.release();
  ASSERT_TRUE(batcher.wait(*held, Clock::now() + 10s));
  EXPECT_TRUE(idle.wait_for(1));
}

}  // namespace
