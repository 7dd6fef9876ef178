#pragma once
// The inter_threads workers of a Translator (ModelOptions::inter_threads): started with it and
// ended with it, so that a call neither pays for new threads nor leaves any behind, and each
// worker's OpenMP pool is created once. Calls from several threads share the workers: a
// call's tasks queue behind those of calls made before it.
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ordo::pipeline {

class WorkerPool {
 public:
  // Throws ordo::Error when the system cannot start them all (the ones started are ended
  // first, so that no joinable thread is left to terminate the process).
  explicit WorkerPool(size_t workers);
  ~WorkerPool();  // waits for queued tasks, then ends the workers
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  size_t size() const { return threads_.size(); }

  // Runs task() `count` times on the workers and returns when all have ended; the first
  // exception a task threw is rethrown here (the other tasks still end first).
  void run(size_t count, const std::function<void()>& task);

 private:
  void work();
  void stop();  // waits for queued tasks, then ends and joins the workers

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace ordo::pipeline
