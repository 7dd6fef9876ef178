#include "server/batcher.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "ordo/error.h"
#include "server/request_fields.h"

namespace ordo::server {

Batcher::Batcher(BatchingOptions options, BatchObserver* observer) : options_(options), observer_(observer) {
  const int workers = std::max(1, options_.workers);
  for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { work(); });
}

Batcher::~Batcher() { shutdown(); }

std::shared_ptr<Ticket> Batcher::submit(const std::string& model, const std::string& settings, TranslateFn translate,
                                        const DecodeOptions& options, std::vector<std::vector<int64_t>> sources,
                                        StreamFn on_token) {
  auto ticket = std::make_shared<Ticket>();
  ticket->on_token_ = std::move(on_token);
  const size_t n = sources.size();
  ticket->remaining_ = n;
  ticket->results_.resize(n);
  ticket->errors_.resize(n);
  ticket->input_errors_.resize(n);
  ticket->order_.resize(n);
  std::iota(ticket->order_.begin(), ticket->order_.end(), 0);
  std::stable_sort(ticket->order_.begin(), ticket->order_.end(),
                   [&](size_t a, size_t b) { return sources[a].size() < sources[b].size(); });
  ticket->sources_ = std::move(sources);
  ticket->group_ = model + '\n' + settings;
  if (n == 0) return ticket;

  std::lock_guard<std::mutex> lock(mutex_);
  if (stopping_) throw ApiError(503, "the server is shutting down", 1);
  if (n > options_.max_queue)
    throw ApiError(400, "Invalid request: " + std::to_string(n) +
                            " sentences in one request, more than the queue holds (" +
                            std::to_string(options_.max_queue) + ")");
  if (queued_ + n > options_.max_queue)
    throw ApiError(503,
                   "the server is busy: " + std::to_string(queued_) + " sentences are queued (limit " +
                       std::to_string(options_.max_queue) + "); retry later",
                   retry_after_seconds());
  ticket->arrived_ = Clock::now();
  Group& group = groups_[ticket->group_];
  if (group.tickets.empty() && group.queued == 0) {
    group.model = model;
    group.translate = std::move(translate);
    group.options = options;
  }
  group.tickets.push_back(ticket);
  group.queued += n;
  queued_ += n;
  if (observer_) observer_->queue_depth(queued_);
  wake_.notify_all();
  return ticket;
}

bool Batcher::wait(Ticket& ticket, Clock::time_point deadline, const std::function<bool()>& give_up) {
  {
    std::unique_lock<std::mutex> lock(ticket.mutex_);
    while (true) {
      const Clock::time_point until =
          give_up ? std::min(deadline, Clock::now() + std::chrono::milliseconds(100)) : deadline;
      if (ticket.done_.wait_until(lock, until, [&] { return ticket.remaining_ == 0; })) return true;
      if (Clock::now() >= deadline) break;
      lock.unlock();
      const bool gone = give_up();
      lock.lock();
      if (gone && ticket.remaining_ != 0) break;
    }
  }
  cancel(ticket);
  return false;
}

void Batcher::cancel(Ticket& ticket) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!ticket.cancelled_) {
    ticket.cancelled_ = true;
    const size_t dropped = ticket.order_.size() - ticket.next_;
    ticket.next_ = ticket.order_.size();
    queued_ -= dropped;
    const auto group = groups_.find(ticket.group_);
    if (group != groups_.end()) group->second.queued -= dropped;
    if (observer_) observer_->queue_depth(queued_);
  }
}

size_t Batcher::queued() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return queued_;
}

void Batcher::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& worker : workers_)
    if (worker.joinable()) worker.join();
  workers_.clear();
}

int Batcher::retry_after_seconds() const {
  if (sentences_per_second_ <= 0) return 1;
  return static_cast<int>(std::clamp(std::ceil(static_cast<double>(queued_) / sentences_per_second_), 1.0, 60.0));
}

void Batcher::work() {
  const auto max_wait =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(options_.max_wait_ms));
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    // Groups whose requests were all scheduled or cancelled are dropped here.
    for (auto it = groups_.begin(); it != groups_.end();) {
      Group& g = it->second;
      while (!g.tickets.empty() && g.tickets.front()->next_ >= g.tickets.front()->order_.size()) g.tickets.pop_front();
      it = g.tickets.empty() ? groups_.erase(it) : std::next(it);
    }
    if (groups_.empty()) {
      if (stopping_) return;
      if (idle_called_ || running_ > 0 || !options_.on_idle || options_.idle_seconds <= 0) {
        wake_.wait(lock);
        continue;
      }
      const Clock::time_point idle_at = last_done_ + std::chrono::duration_cast<Clock::duration>(
                                                         std::chrono::duration<double>(options_.idle_seconds));
      if (Clock::now() < idle_at) {
        wake_.wait_until(lock, idle_at);
        continue;
      }
      idle_called_ = true;
      lock.unlock();
      options_.on_idle();
      lock.lock();
      continue;
    }
    // The group whose oldest waiting sentence arrived first.
    Group* group = nullptr;
    for (auto& [key, g] : groups_)
      if (!group || g.tickets.front()->arrived_ < group->tickets.front()->arrived_) group = &g;
    const Clock::time_point due = group->tickets.front()->arrived_ + max_wait;
    const size_t max_size = static_cast<size_t>(std::max(1, options_.max_batch_size));
    // Under concurrent load the clients of the last batch send their next requests a moment
    // after their answers: wait (briefly) until as many requests wait as that batch had, or a
    // batch's worth of sentences. Requests, not sentences: a lone client (last batch: one
    // request) never waits, also when its last request had several sentences.
    const auto last = last_batch_.find(group->model);
    const size_t expected = last == last_batch_.end() ? 1 : last->second;
    const size_t waiting = static_cast<size_t>(
        std::count_if(group->tickets.begin(), group->tickets.end(),
                      [](const std::shared_ptr<Ticket>& t) { return t->next_ < t->order_.size(); }));
    if (waiting < expected && group->queued < max_size && !stopping_ && Clock::now() < due) {
      wake_.wait_until(lock, due);
      continue;
    }
    Batch batch = take(*group);
    if (batch.sentences.empty()) continue;
    last_batch_[batch.model] = requests_of(batch).size();
    ++running_;
    queued_ -= batch.sentences.size();
    if (observer_) observer_->queue_depth(queued_);
    lock.unlock();
    const auto start = Clock::now();
    run(batch);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    lock.lock();
    --running_;
    idle_called_ = false;
    last_done_ = Clock::now();
    if (seconds > 0) {
      const double rate = static_cast<double>(batch.sentences.size()) * std::max(1, options_.workers) / seconds;
      sentences_per_second_ = sentences_per_second_ <= 0 ? rate : 0.8 * sentences_per_second_ + 0.2 * rate;
    }
  }
}

Batcher::Batch Batcher::take(Group& group) {
  Batch batch{group.model, group.translate, group.options, {}};
  const size_t max_size = static_cast<size_t>(std::max(1, options_.max_batch_size));
  const size_t max_tokens = static_cast<size_t>(std::max(0, options_.max_batch_tokens));
  const auto next_length = [](const Ticket& t) { return std::max<size_t>(1, t.sources_[t.order_[t.next_]].size()); };
  // When more is waiting than one batch holds, the batch is built around the oldest waiting
  // sentence: the others closest to it in length go with it (less padding, beams that finish
  // together). The oldest always goes, so nothing waits for ever.
  const Ticket& oldest = *group.tickets.front();
  const size_t target = oldest.next_ < oldest.order_.size() ? next_length(oldest) : 1;
  const bool choose = group.queued > max_size;
  size_t longest = 0;
  bool capped = false;
  std::vector<std::shared_ptr<Ticket>> turn;
  // Round robin over the waiting requests: one sentence from each per turn, so a request of
  // many sentences shares the batch with the short ones that arrived after it.
  while (batch.sentences.size() < max_size && !capped) {
    turn.clear();
    for (const std::shared_ptr<Ticket>& ticket : group.tickets)
      if (ticket->next_ < ticket->order_.size()) turn.push_back(ticket);
    if (turn.empty()) break;
    if (choose) {
      const auto distance = [&](const std::shared_ptr<Ticket>& t) {
        const size_t length = next_length(*t);
        return length > target ? length - target : target - length;
      };
      std::stable_sort(turn.begin(), turn.end(),
                       [&](const std::shared_ptr<Ticket>& a, const std::shared_ptr<Ticket>& b) {
                         return distance(a) < distance(b);
                       });
    }
    for (const std::shared_ptr<Ticket>& ticket : turn) {
      const size_t index = ticket->order_[ticket->next_];
      const size_t new_longest = std::max(longest, next_length(*ticket));
      if (max_tokens > 0 && !batch.sentences.empty() && (batch.sentences.size() + 1) * new_longest > max_tokens) {
        capped = true;
        break;
      }
      batch.sentences.emplace_back(ticket, index);
      ++ticket->next_;
      longest = new_longest;
      if (batch.sentences.size() >= max_size) break;
    }
  }
  group.queued -= batch.sentences.size();
  while (!group.tickets.empty() && group.tickets.front()->next_ >= group.tickets.front()->order_.size())
    group.tickets.pop_front();
  return batch;
}

std::vector<const Ticket*> Batcher::requests_of(const Batch& batch) {
  std::vector<const Ticket*> out;
  for (const auto& [ticket, index] : batch.sentences)
    if (std::find(out.begin(), out.end(), ticket.get()) == out.end()) out.push_back(ticket.get());
  return out;
}

void Batcher::deliver(Ticket& ticket, size_t index, TranslationResult* result, const std::string& error,
                      bool input_error) {
  std::lock_guard<std::mutex> lock(ticket.mutex_);
  if (result) ticket.results_[index] = std::move(*result);
  ticket.errors_[index] = error;
  ticket.input_errors_[index] = input_error;
  if (--ticket.remaining_ == 0) ticket.done_.notify_all();
}

void Batcher::run(Batch& batch) {
  std::vector<std::vector<int64_t>> sources;
  size_t longest = 0;
  for (const auto& [ticket, index] : batch.sentences) {
    sources.push_back(ticket->sources_[index]);
    longest = std::max(longest, sources.back().size());
  }
  DecodeOptions options = batch.options;
  struct Outcome {
    TranslationResult result;
    std::string error;
    bool input_error = false;
  };
  std::vector<Outcome> outcomes(sources.size());
  // The batch stops (within a decoding step) once every request in it has given up.
  const std::vector<const Ticket*> owners = requests_of(batch);
  const auto all_cancelled = [&owners] {
    return std::all_of(owners.begin(), owners.end(), [](const Ticket* t) { return t->cancelled_.load(); });
  };
  options.cancelled = all_cancelled;
  // Streaming requests in the batch get their sentences' events; a cancelled one stops.
  const auto stream_to = [](const Ticket& ticket, size_t index, const TokenEvent& event) {
    if (ticket.cancelled_) return false;
    return !ticket.on_token_ || ticket.on_token_(index, event);
  };
  if (std::any_of(owners.begin(), owners.end(), [](const Ticket* t) { return static_cast<bool>(t->on_token_); }))
    options.on_token = [&batch, &stream_to](const TokenEvent& event) {
      const auto& [ticket, index] = batch.sentences[event.input];
      return stream_to(*ticket, index, event);
    };
  const auto start = Clock::now();
  try {
    std::vector<TranslationResult> results = batch.translate(sources, options);
    if (results.size() != sources.size()) throw std::runtime_error("the translator returned a wrong number of results");
    for (size_t k = 0; k < results.size(); ++k) outcomes[k].result = std::move(results[k]);
  } catch (...) {
    // One bad sentence must not fail the others: translate them one by one (none when all
    // gave up; each stops as soon as its own request gives up).
    for (size_t k = 0; k < sources.size(); ++k) {
      Outcome& out = outcomes[k];
      const Ticket* owner = batch.sentences[k].first.get();
      if (owner->cancelled_) {
        out.error = "cancelled";
        continue;
      }
      try {
        DecodeOptions one = options;
        one.cancelled = [owner] { return owner->cancelled_.load(); };
        if (options.on_token)
          one.on_token = [&stream_to, owner, index = batch.sentences[k].second](const TokenEvent& event) {
            return stream_to(*owner, index, event);
          };
        std::vector<TranslationResult> results = batch.translate({sources[k]}, one);
        if (results.size() != 1) throw std::runtime_error("the translator returned a wrong number of results");
        out.result = std::move(results[0]);
      } catch (const Error& e) {
        out.error = e.what();
        out.input_error = true;
      } catch (const std::exception& e) {
        out.error = e.what();
      } catch (...) {
        out.error = "unknown error";
      }
    }
  }
  // Counted before the answers go out: a client that reads /metrics after its answer sees it.
  if (observer_) {
    size_t generated = 0;
    for (const Outcome& out : outcomes)
      if (!out.result.hypotheses.empty()) generated += out.result.hypotheses[0].ids.size();
    observer_->batch_done(batch.model, sources.size(), sources.size() * longest, generated,
                          std::chrono::duration<double>(Clock::now() - start).count());
  }
  for (size_t k = 0; k < outcomes.size(); ++k) {
    Outcome& out = outcomes[k];
    deliver(*batch.sentences[k].first, batch.sentences[k].second, out.error.empty() ? &out.result : nullptr, out.error,
            out.input_error);
  }
}

}  // namespace ordo::server
