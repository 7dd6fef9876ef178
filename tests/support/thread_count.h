// Restores LibTorch's intra-op thread count when a test (or a scope of it) ends.
#pragma once

#include <ATen/Parallel.h>

namespace ordo::testing {

struct ThreadCount {
  int saved = at::get_num_threads();
  ~ThreadCount() { at::set_num_threads(saved); }
};

}  // namespace ordo::testing
