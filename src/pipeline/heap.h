// Returning malloc's free pages after each batch. configure_process keeps large buffers on the
// heap (ProcessOptions::keep_large_buffers_on_heap: no fresh zeroed pages at every step); the
// buffers of a batch whose sizes differ from the last one's (a new source length) then land in
// free heap that was never touched, and the holes they leave stay resident. Released after
// each batch, the next batch only touches what it uses: int8, 100 newstest lines one at a
// time, tc-big peaked at 466 MB instead of 480, NLLB-600M (10 lines) at 857-861 instead of
// 909 (docs/benchmarks.md, issue 36).
#pragma once

namespace ordo::pipeline {

// malloc_trim(0) when configure_process kept large buffers on the heap; nothing otherwise.
// Thread-safe (other batches may be decoding meanwhile: they fault their pages in again).
void release_free_heap();

}  // namespace ordo::pipeline
