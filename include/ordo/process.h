// ordo — process-wide tuning, made explicitly by the program that owns the process.
//
// A Translator changes nothing outside itself: settings that hold for the whole process
// (the C library's allocator, oneDNN's kernel cache) are made here, once, by the program's
// main(): the `ordo` command and `ordo serve` call configure_process() at start-up. A program
// that embeds ordo calls it too when ordo's speed matters more than those process-wide
// settings, or leaves it out (ordo then runs with glibc's and oneDNN's defaults: the same
// results, somewhat slower decoding at large beam x vocabulary sizes).
#pragma once

#include <cstddef>

#include "ordo/export.h"

namespace ordo {

struct ProcessOptions {
  // Decoding allocates the same large buffers at every step (logits of rows x vocabulary:
  // 30 MB for 128 beams of a 58k vocabulary). Above glibc's mmap threshold each is a fresh
  // mmap whose pages the kernel zeroes on first touch; true raises glibc's mmap and trim
  // thresholds (mallopt) so that they come from the heap and freed memory is reused, at the
  // cost of keeping the peak allocation resident.
  bool keep_large_buffers_on_heap = true;
  // Kernels oneDNN keeps in its process-wide cache (oneDNN's default: 1024). Each packed GEMM
  // keeps its own recent kernels, so the cache only has to cover one forward pass's shapes;
  // 1024 holds far more than needed on a server meeting thousands of batch shapes. 0 leaves
  // oneDNN's setting alone; ONEDNN_PRIMITIVE_CACHE_CAPACITY in the environment always wins.
  int onednn_primitive_cache_capacity = 128;
  // Once a model is loaded, the resident pages of shared libraries that hold only the file's
  // own bytes are dropped from the process (they come back from the page cache when used):
  // the pages of LibTorch's libraries that only start-up touched.
  bool release_library_pages = true;
};

// Applies `options` to the process. Call it before the first Translator; calling it again
// applies the new values.
ORDO_API void configure_process(const ProcessOptions& options = {});

// Returns to the system what decoding keeps for the next batch: the self-attention caches'
// freed mappings (kept so that the next batch faults in no fresh pages) and the C library's
// free heap. For a process that has gone idle: `ordo serve` calls it after --idle-release
// seconds without a batch. The next batch pays for the pages it faults in again; decoding
// meanwhile is safe. Returns how many bytes the resident set shrank by.
ORDO_API size_t release_idle_memory();

}  // namespace ordo
