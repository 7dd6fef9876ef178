// Returning malloc's free pages after a batch. configure_process keeps large buffers on the
// heap (ProcessOptions::keep_large_buffers_on_heap: no fresh zeroed pages at every step); the
// buffers of a batch whose sizes differ from the last one's (a new source length) then land in
// free heap that was never touched, and the holes they leave stay resident. So after a batch
// that made the resident set grow by more than 8 MB past its size at the last release, the free
// heap is released, and the next batch only touches what it uses: lines of many lengths peak
// at what their longest line needs (docs/benchmarks.md, "Memory and start-up"). A batch that
// fitted in the heap is not followed by a release: it reused pages that earlier batches had made
// resident, and releasing them would make the next batch fault every page of its buffers in
// afresh (about 11 us a page on a virtual machine: a tenth of a 32-sentence greedy batch's
// time). The growth is read from the resident set (/proc/self/statm: a constant cost), not from
// mallinfo2(), which walks every free chunk of every arena: in ordo serve's profiles, after
// some hundred requests of one sentence each, up to 0.5 ms a request. The 8 MB keep the resident
// set's own small moves (pages faulted back, a cache mapping kept) from releasing.
#pragma once

#include <cstddef>

namespace ordo::pipeline {

// malloc_trim(0) when configure_process kept large buffers on the heap and the resident set is
// now more than 8 MB larger than at the last release (or at the first call); nothing
// otherwise. Thread-safe (other batches may be decoding meanwhile: they fault their pages in
// again).
void release_free_heap();

// Library pages that start-up touched and decoding does not need, out of the resident set.
// Loading LibTorch (Debian's brings ~290 libraries) relocates them and runs their static
// constructors: their code and constants stay resident, most of them never used again, as
// much memory as a small model's weights. The read-only segments of each
// loaded library (its program headers, read under the loader's lock: dl_iterate_phdr) whose
// resident pages are all the file's own (no private copy, none swapped out:
// /proc/self/pagemap) are dropped from this process (madvise MADV_DONTNEED): what is used
// again comes back from the page cache at its next touch, as after the kernel reclaimed it.
// Segments with copied pages (a debugger's breakpoints) and objects with text relocations are
// left as they are; writable segments (relocated data, RELRO) are never touched. Safe while
// other threads load or unload libraries (process.cpp says what happened when it was not).
// Only when configure_process asked for it (ProcessOptions::release_library_pages); returns
// the bytes dropped.
size_t release_library_pages();

}  // namespace ordo::pipeline
