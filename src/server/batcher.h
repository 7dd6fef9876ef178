// Dynamic batching. Sentences of concurrent requests for the same model and the same decoding
// settings are translated together: a worker that becomes free takes the group whose oldest
// sentence has waited longest; when fewer requests wait than the model's last batch had (the
// clients of that batch are about to send their next requests) and less than a batch, it waits
// for them at most a few milliseconds after the oldest arrived (a lone client never waits,
// however many sentences its requests have); then it takes up to `max_batch_size` sentences (and
// at most `max_batch_tokens` padded source tokens), one sentence from each waiting request in
// turn, so that a request of a thousand sentences shares every batch with the short requests
// that arrive after it instead of making them wait. When more waits than a batch holds, the
// batch is built around the oldest sentence with the ones closest to it in length; each
// request's own sentences go shortest first. One Translator call per batch.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ordo/options.h"

namespace ordo::server {

using Clock = std::chrono::steady_clock;

// How a batch is translated, all its sources as one batch: a Translator's translate_ids (or a
// stand-in in tests).
using TranslateFn = std::function<std::vector<TranslationResult>(const std::vector<std::vector<int64_t>>& sources,
                                                                 const DecodeOptions& options)>;

// A streaming request's token events (DecodeOptions::on_token), with the index of its sentence
// in the request; false stops that sentence. Called from the workers: it must not block.
using StreamFn = std::function<bool(size_t sentence, const TokenEvent& event)>;

struct BatchingOptions {
  int workers = 1;           // batches translated at once (--inter-threads)
  int max_batch_size = 32;   // sentences per batch
  int max_batch_tokens = 0;  // rows x longest source, padding included; 0 = no cap
  double max_wait_ms = 5;    // how long a free worker waits for a batch to fill
  size_t max_queue = 4096;   // sentences waiting, all models; past it: 503
  // Called once (on a worker) when no batch has run or waited for this long since the last
  // one ended: ordo serve returns what decoding keeps for the next batch
  // (ordo::release_idle_memory). 0 or no function: never.
  double idle_seconds = 0;
  std::function<void()> on_idle;
};

// What the metrics see.
class BatchObserver {
 public:
  virtual ~BatchObserver() = default;
  virtual void queue_depth(size_t sentences) {}
  virtual void batch_done(const std::string& model, size_t sentences, size_t padded_tokens, size_t generated_tokens,
                          double seconds) {}
};

// One request's sentences. Filled by the workers; the request's thread waits on it.
class Ticket {
 public:
  size_t size() const { return sources_.size(); }
  const TranslationResult& result(size_t i) const { return results_[i]; }
  // Why sentence i failed ("" when it did not); `input_error` when it was an ordo::Error
  // (the input or the options), not an internal failure.
  const std::string& error(size_t i) const { return errors_[i]; }
  bool input_error(size_t i) const { return input_errors_[i]; }
  // Every sentence answered (what Batcher::wait waits for).
  bool finished() {
    std::lock_guard<std::mutex> lock(mutex_);
    return remaining_ == 0;
  }

 private:
  friend class Batcher;
  std::vector<std::vector<int64_t>> sources_;
  std::vector<size_t> order_;  // sentence indices, shortest first
  Clock::time_point arrived_;
  std::string group_;
  StreamFn on_token_;  // a streaming request's; unset otherwise
  // Guarded by the Batcher's mutex.
  size_t next_ = 0;  // position in order_ of the next sentence to schedule
  // Set under the Batcher's mutex; read by running batches without it.
  std::atomic<bool> cancelled_{false};
  // Guarded by mutex_.
  std::mutex mutex_;
  std::condition_variable done_;
  size_t remaining_ = 0;
  std::vector<TranslationResult> results_;
  std::vector<std::string> errors_;
  std::vector<bool> input_errors_;
};

class Batcher {
 public:
  explicit Batcher(BatchingOptions options, BatchObserver* observer = nullptr);
  ~Batcher();
  Batcher(const Batcher&) = delete;
  Batcher& operator=(const Batcher&) = delete;

  // Queues `sources` (source token ids). Sentences submitted with the same `model` and
  // `settings` (a canonical text of the decoding options) may share a batch; `translate` and
  // `options` are used for it. Throws ApiError 503 with Retry-After when the queue is full
  // or the batcher is stopping, 400 when the request alone exceeds the queue.
  // With `on_token` (a streaming request), its sentences' token events go there wherever they
  // are batched: streaming does not change what is decoded, so it shares batches as any request.
  std::shared_ptr<Ticket> submit(const std::string& model, const std::string& settings, TranslateFn translate,
                                 const DecodeOptions& options, std::vector<std::vector<int64_t>> sources,
                                 StreamFn on_token = {});

  // Waits until every sentence of `ticket` is translated (true), or `deadline` passes or
  // `give_up` (asked every 100 ms) says the client is gone (false). Then the ticket is
  // cancelled: its sentences not yet started leave the queue, and a batch whose requests are
  // all cancelled stops within a decoding step (DecodeOptions::cancelled).
  bool wait(Ticket& ticket, Clock::time_point deadline, const std::function<bool()>& give_up = {});

  // What wait() does when it gives up: its sentences not yet started leave the queue, and its
  // running ones stop (a streamed sentence at its next token).
  void cancel(Ticket& ticket);

  size_t queued() const;
  // Translates what is queued, then stops the workers. Later submits get 503.
  void shutdown();

 private:
  struct Group {
    std::string model;
    TranslateFn translate;
    DecodeOptions options;
    std::deque<std::shared_ptr<Ticket>> tickets;  // with sentences not yet scheduled, oldest first
    size_t queued = 0;                            // their sentences not yet scheduled
  };
  struct Batch {
    std::string model;
    TranslateFn translate;
    DecodeOptions options;
    std::vector<std::pair<std::shared_ptr<Ticket>, size_t>> sentences;
  };

  void work();
  Batch take(Group& group);
  static std::vector<const Ticket*> requests_of(const Batch& batch);  // each once, in order
  void run(Batch& batch);
  static void deliver(Ticket& ticket, size_t index, TranslationResult* result, const std::string& error,
                      bool input_error);
  int retry_after_seconds() const;

  const BatchingOptions options_;
  BatchObserver* observer_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::map<std::string, Group> groups_;
  std::map<std::string, size_t> last_batch_;  // by model: requests in its last batch
  size_t queued_ = 0;
  int running_ = 0;
  bool stopping_ = false;
  bool idle_called_ = true;  // on_idle ran since the last batch ended (or no batch ran yet)
  Clock::time_point last_done_;
  double sentences_per_second_ = 0;  // recent throughput, for Retry-After
  std::vector<std::thread> workers_;
};

}  // namespace ordo::server
