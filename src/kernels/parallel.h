#pragma once
// How ordo's own loops (attention, top-k, int8 row scaling, embedding rows, cache reordering)
// split work among threads. They run on the OpenMP threads LibTorch and oneDNN already use
// (GNU libgomp, one pool for the process), called through libgomp's C interface: ATen's
// at::parallel_for is an inline `#pragma omp parallel`, which in a library built without
// -fopenmp silently runs on one thread, and with clang's -fopenmp would bring a second
// runtime (LLVM's libomp) into the process.
//
// A parallel region costs the wake-up of a sleeping thread (ordo's OpenMP wait policy is
// passive, docs/benchmarks.md, "Shared cores"), tens of microseconds, so a loop is split only into tasks
// that each hold more work than that; smaller loops run on the calling thread. How units are
// split never changes a unit's arithmetic.
#include <algorithm>
#include <cstdint>
#include <functional>

namespace ordo::kernels {

// Work (multiply-adds or elements touched) one task should hold at least.
constexpr int64_t kMinTaskWork = 1 << 17;

// The grain for parallel_for over units that each hold `unit_work`.
inline int64_t grain_for(int64_t unit_work) {
  return std::max<int64_t>(1, kMinTaskWork / std::max<int64_t>(1, unit_work));
}

// f(b, e) over consecutive slices of [begin, end), one per thread, each of at least `grain`
// units but the last; not split at all (f(begin, end) on the calling thread) when the range is
// at most `grain` units, when this thread's OpenMP thread count is 1, or inside a parallel
// region. The first exception thrown by a slice is rethrown here after every slice has ended.
void parallel_for(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)>& f);

// The same, but the pieces of `grain` units are claimed one after another by whichever thread
// is free, instead of one fixed slice per thread: a thread that wakes late (a sleeping thread
// takes tens of microseconds) takes only what is left, and the region ends about half its
// wake-up sooner. For loops of many units of equal cost (kernels/small_gemm.h's panels).
void parallel_claim(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)>& f);

// Within its scope, this thread's OpenMP thread count (LibTorch's, oneDNN's and parallel_for's
// loops on this thread) is `threads`, and the thread's own count is restored on exit: OpenMP's
// thread count is a per-thread setting, and a library call must leave its caller's as it was.
// 0 leaves it unchanged. (at::set_num_threads would also change LibTorch's process-wide
// default that every new thread starts with.)
class ThreadCountScope {
 public:
  explicit ThreadCountScope(int threads);
  ~ThreadCountScope();
  ThreadCountScope(const ThreadCountScope&) = delete;
  ThreadCountScope& operator=(const ThreadCountScope&) = delete;

 private:
  int saved_ = 0;
};

// Within its scope, LibTorch's and oneDNN's loops on this thread (and parallel_for) run on this
// thread alone when `serial`. For operations too small to pay for a wake-up that LibTorch would
// still split (its layer norm splits any two rows). Rows are computed the same way either way.
class SerialScope : public ThreadCountScope {
 public:
  explicit SerialScope(bool serial) : ThreadCountScope(serial ? 1 : 0) {}
};

}  // namespace ordo::kernels
