// Writing a packed weight matrix (nn/packed_gemm.h): the memory it is written into and the
// transposes that write float32 rows into oneDNN's column panels. Apart from the oneDNN wrapper
// because they are kernels: raw memory and instruction-set bodies, chosen once per process
// (isa.h), that only move bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace ordo::kernels {

// Zeroed memory for a large float32 packed matrix, in a mapping of its own whose pages are
// faulted in before the rows are written: MADV_POPULATE_WRITE, 2 MB per call, on all the
// threads, instead of one trap per 4 KB page while writing. Not in transparent huge pages
// (MADV_HUGEPAGE): with the page cache full, the kernel's synchronous compaction for them costs
// more system time than the faults they save. nullptr under 4 MB or when mmap fails (the caller
// allocates then).
std::shared_ptr<const void> map_zeroed(size_t bytes);

// Writes float32 rows n0..n0+15 of W (`rows`: 16 x in, row-major) into a layout where, for every
// k, columns n0..n0+15 are 16 consecutive floats at column + k_offset[k]. Only moves bits (the
// same bytes as the scalar loop).
using WriteGroup16 = void (*)(const float* rows, int64_t in, const int64_t* k_offset, float* column);
// The body for this CPU; nullptr: none (the caller's scalar loop).
WriteGroup16 pick_write_group16();

}  // namespace ordo::kernels
