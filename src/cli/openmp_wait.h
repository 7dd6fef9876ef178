// What ordo's programs do before the OpenMP runtime starts: ask GNU OpenMP for worker threads
// that spin only briefly when they run out of work, then sleep (GOMP_SPINCOUNT=10000: a
// fraction of a millisecond), unless the user chose a policy (OMP_WAIT_POLICY or GOMP_SPINCOUNT
// set: theirs is kept).
//
// Why: by default a waiting libgomp thread spins for 300,000 iterations (milliseconds) before it
// sleeps. On cores shared with another process (a server, a laptop, a build running) the two
// intra-op threads end up spinning while the thread they wait for needs that very core, and
// ordo with 2 threads runs many times slower than with 1 (docs/benchmarks.md, "Shared cores").
// Sleeping at once (passive) avoids that but wakes a thread for each of the hundred parallel
// regions of a decoding step: a sentence decoded alone on 2 threads took 1.3-1.6 x as long. A
// short spin catches the next region of the same step and still leaves a shared core within a
// fraction of a millisecond.
//
// Why here: libgomp reads these variables once, in its constructor, when it is loaded, which
// is before any code of libordo (or main()) runs. So only a program can set them, before it
// loads LibTorch: `ordo` is a small launcher that does this and then loads the command line
// (src/cli/launcher.cpp); ordo-bench re-executes itself; `import ordo` sets the same.
#pragma once

#include <cstdlib>

namespace ordo::cli {

inline constexpr const char* kOpenMPSpinCount = "10000";

// Sets GOMP_SPINCOUNT unless the user set OMP_WAIT_POLICY or GOMP_SPINCOUNT; true if it did.
inline bool choose_openmp_wait_policy() {
  if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT")) return false;
  return ::setenv("GOMP_SPINCOUNT", kOpenMPSpinCount, 1) == 0;
}

}  // namespace ordo::cli
