#pragma once
// How ordo's own loops (attention, top-k, int8 row scaling, embedding rows) split work among
// OpenMP threads: at::parallel_for, compiled into libordo with OpenMP (without -fopenmp its
// `#pragma omp parallel` is ignored and every such loop ran on one thread). A parallel region
// costs the wake-up of a sleeping thread (ordo's OpenMP wait policy is passive, README "Shared
// cores"), tens of microseconds, so a loop is split only into tasks that each hold more work
// than that; smaller loops run on the calling thread. How units are split never changes a
// unit's arithmetic.
#include <algorithm>
#include <cstdint>

#include <omp.h>

namespace ordo::nn {

// Work (multiply-adds or elements touched) one task should hold at least.
constexpr int64_t kMinTaskWork = 1 << 17;

// The grain for at::parallel_for over units that each hold `unit_work`.
inline int64_t grain_for(int64_t unit_work) {
  return std::max<int64_t>(1, kMinTaskWork / std::max<int64_t>(1, unit_work));
}

// Within its scope, LibTorch's own loops on this thread run on this thread alone (its OpenMP
// thread count is a per-thread setting, restored on exit): for operations too small to pay
// for a wake-up that LibTorch would still split (its layer norm splits any two rows). Rows
// are computed the same way either way.
class SerialScope {
 public:
  explicit SerialScope(bool serial) : saved_(serial ? omp_get_max_threads() : 0) {
    if (saved_ > 1) omp_set_num_threads(1);
  }
  ~SerialScope() {
    if (saved_ > 1) omp_set_num_threads(saved_);
  }
  SerialScope(const SerialScope&) = delete;
  SerialScope& operator=(const SerialScope&) = delete;

 private:
  int saved_;
};

}  // namespace ordo::nn
