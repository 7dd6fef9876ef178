#include "pipeline/worker_pool.h"

#include <exception>
#include <string>
#include <system_error>

#include "ordo/error.h"

namespace ordo::pipeline {

WorkerPool::WorkerPool(size_t workers) {
  try {
    threads_.reserve(workers);
    for (size_t i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
  } catch (const std::exception& e) {  // std::system_error (no thread to be had), std::bad_alloc
    const size_t started = threads_.size();
    stop();  // a destructor does not run for a constructor that throws: the started ones end here
    throw Error("cannot start " + std::to_string(workers) + " inter_threads workers: the system gave " +
                std::to_string(started) + " threads (" + e.what() + "); ask for fewer");
  }
}

WorkerPool::~WorkerPool() { stop(); }

void WorkerPool::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

void WorkerPool::work() {
  while (true) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, nothing left
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

void WorkerPool::run(size_t count, const std::function<void()>& task) {
  std::mutex done_mutex;
  std::condition_variable done;
  size_t left = count;
  std::exception_ptr error;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t i = 0; i < count; ++i)
      queue_.emplace_back([&] {
        std::exception_ptr thrown;
        try {
          task();
        } catch (...) {
          thrown = std::current_exception();
        }
        std::lock_guard<std::mutex> lock(done_mutex);
        if (thrown && !error) error = thrown;
        if (--left == 0) done.notify_one();
      });
  }
  wake_.notify_all();
  std::unique_lock<std::mutex> lock(done_mutex);
  done.wait(lock, [&] { return left == 0; });
  if (error) std::rethrow_exception(error);
}

}  // namespace ordo::pipeline
