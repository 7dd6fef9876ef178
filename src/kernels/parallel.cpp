#include "kernels/parallel.h"

#include <atomic>
#include <exception>
#include <mutex>

// libgomp's C interface (what GCC's -fopenmp emits calls to); declared here rather than taken
// from <omp.h>, which under clang is LLVM's.
extern "C" {
void GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags);
int omp_get_thread_num(void);
int omp_get_num_threads(void);
int omp_get_max_threads(void);
int omp_in_parallel(void);
void omp_set_num_threads(int);
}

// ThreadSanitizer cannot see libgomp's (uninstrumented) hand-over to its workers: tell it.
#if defined(__SANITIZE_THREAD__)
#define ORDO_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ORDO_TSAN 1
#endif
#endif
#ifdef ORDO_TSAN
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#define ORDO_TSAN_ACQUIRE(p) __tsan_acquire(p)
#define ORDO_TSAN_RELEASE(p) __tsan_release(p)
#else
#define ORDO_TSAN_ACQUIRE(p) ((void)(p))
#define ORDO_TSAN_RELEASE(p) ((void)(p))
#endif

namespace ordo::kernels {
namespace {

// The first exception any thread's work threw, kept for the calling thread to rethrow.
struct FirstError {
  std::mutex mutex;
  std::exception_ptr error;
  void keep_current() {
    std::lock_guard<std::mutex> lock(mutex);
    if (!error) error = std::current_exception();
  }
};

struct Job {
  int64_t begin, end, grain;
  const std::function<void(int64_t, int64_t)>* f;
  FirstError failure;
};

void run_slice(void* data) {
  Job& job = *static_cast<Job*>(data);
  ORDO_TSAN_ACQUIRE(&job);
  // Equal slices of at least `grain` units, one per thread; threads past the end idle.
  const int64_t threads = omp_get_num_threads(), n = job.end - job.begin;
  const int64_t slice = std::max(job.grain, (n + threads - 1) / threads);
  const int64_t b = job.begin + omp_get_thread_num() * slice, e = std::min(job.end, b + slice);
  if (b < e) {
    try {
      (*job.f)(b, e);
    } catch (...) {
      job.failure.keep_current();
    }
  }
  ORDO_TSAN_RELEASE(&job);
}

struct ClaimJob {
  int64_t end, grain;
  std::atomic<int64_t> next;
  const std::function<void(int64_t, int64_t)>* f;
  FirstError failure;
};

void run_claims(void* data) {
  ClaimJob& job = *static_cast<ClaimJob*>(data);
  ORDO_TSAN_ACQUIRE(&job);
  try {
    for (int64_t b = job.next.fetch_add(job.grain); b < job.end; b = job.next.fetch_add(job.grain))
      (*job.f)(b, std::min(job.end, b + job.grain));
  } catch (...) {
    job.failure.keep_current();
    job.next.store(job.end);  // the others stop claiming
  }
  ORDO_TSAN_RELEASE(&job);
}

}  // namespace

void parallel_claim(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)>& f) {
  if (begin >= end) return;
  grain = std::max<int64_t>(1, grain);
  if (end - begin <= grain || omp_get_max_threads() <= 1 || omp_in_parallel()) {
    f(begin, end);
    return;
  }
  ClaimJob job{end, grain, {begin}, &f, {}};
  ORDO_TSAN_RELEASE(&job);
  GOMP_parallel(&run_claims, &job, 0, 0);
  ORDO_TSAN_ACQUIRE(&job);
  if (job.failure.error) std::rethrow_exception(job.failure.error);
}

void parallel_for(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)>& f) {
  if (begin >= end) return;
  if (end - begin <= grain || omp_get_max_threads() <= 1 || omp_in_parallel()) {
    f(begin, end);
    return;
  }
  Job job{begin, end, std::max<int64_t>(1, grain), &f, {}};
  ORDO_TSAN_RELEASE(&job);
  GOMP_parallel(&run_slice, &job, 0, 0);  // 0: this thread's OpenMP thread count
  ORDO_TSAN_ACQUIRE(&job);
  if (job.failure.error) std::rethrow_exception(job.failure.error);
}

ThreadCountScope::ThreadCountScope(int threads) {
  if (threads <= 0) return;
  const int current = omp_get_max_threads();
  if (current == threads) return;
  saved_ = current;
  omp_set_num_threads(threads);
}

ThreadCountScope::~ThreadCountScope() {
  if (saved_ > 0) omp_set_num_threads(saved_);
}

}  // namespace ordo::kernels
