// ordo-bench --gemm: the float32 decoding-step kernel (kernels/small_gemm.h) against the
// machine's memory. A decoder step of 1-8 rows reads every weight once, so what bounds it is how
// fast one or two cores can stream memory; this report prints that bound (a plain read of 1 GB)
// beside the kernel's own rate at the big models' layer shapes, on 1 and 2 threads, so that a
// change to the kernel (its prefetching, its blocking) is measured as a fraction of the machine.
#pragma once

namespace ordo::bench {

// Prints a markdown table; returns 0, or 1 where the kernel has no body (no AVX-512).
int run_gemm_report(int runs);

}  // namespace ordo::bench
