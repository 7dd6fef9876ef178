// What ordo's programs do before the OpenMP runtime starts: ask GNU OpenMP for worker threads
// that sleep while they wait for work (OMP_WAIT_POLICY=passive), unless the user chose a policy
// (OMP_WAIT_POLICY or GOMP_SPINCOUNT set: theirs is kept).
//
// Why: by default a waiting libgomp thread spins for 300,000 iterations (milliseconds) before it
// sleeps. On cores shared with another process (a server, a laptop, a build running) the two
// intra-op threads end up spinning while the thread they wait for needs that very core, and
// ordo with 2 threads runs many times slower than with 1 (docs/benchmarks.md, "Shared cores").
//
// Why here: libgomp reads these variables once, in its constructor, when it is loaded, which
// is before any code of libordo (or main()) runs. So only a program can set them, before it
// loads LibTorch: `ordo` is a small launcher that does this and then loads the command line
// (src/cli/launcher.cpp); ordo-bench re-executes itself.
#pragma once

#include <cstdlib>

namespace ordo::cli {

inline constexpr const char* kOpenMPWaitPolicy = "passive";

// Sets OMP_WAIT_POLICY unless the user set OMP_WAIT_POLICY or GOMP_SPINCOUNT; true if it did.
inline bool choose_openmp_wait_policy() {
  if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT")) return false;
  return ::setenv("OMP_WAIT_POLICY", kOpenMPWaitPolicy, 1) == 0;
}

}  // namespace ordo::cli
