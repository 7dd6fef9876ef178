// ordo::configure_process: the process-wide settings a Translator no longer makes by itself
// (include/ordo/process.h says why each one helps).
#include "ordo/process.h"

#include <malloc.h>

#include <atomic>
#include <cstdlib>

#include <dnnl.hpp>

#include "pipeline/heap.h"

namespace ordo {
namespace {

std::atomic<bool> large_buffers_on_heap{false};

}  // namespace

void pipeline::release_free_heap() {
  if (large_buffers_on_heap.load(std::memory_order_relaxed)) ::malloc_trim(0);
}

void configure_process(const ProcessOptions& options) {
  if (options.keep_large_buffers_on_heap) {
    large_buffers_on_heap = true;  // and stays: false leaves the allocator as it is
    ::mallopt(M_MMAP_THRESHOLD, 1 << 30);
    ::mallopt(M_TRIM_THRESHOLD, 1 << 30);
  }
  if (options.onednn_primitive_cache_capacity > 0 && !std::getenv("ONEDNN_PRIMITIVE_CACHE_CAPACITY") &&
      !std::getenv("DNNL_PRIMITIVE_CACHE_CAPACITY"))
    dnnl::set_primitive_cache_capacity(options.onednn_primitive_cache_capacity);
}

}  // namespace ordo
