// A neighbour for benchmarks: a niced busy loop on one core, in a child process, so that every
// benchmark run can also measure how ordo's threads hold up when the cores are shared (a
// server or a laptop always has another process running). No LibTorch here.
#pragma once

#include <sys/types.h>

namespace ordo::bench {

class BackgroundLoad {
 public:
  // Forks a child that spins on the last core this process may run on, at `niceness` (10, what
  // `nice make` gives a build), until it is stopped or `max_seconds` have passed: it ends by
  // itself even if the benchmark is killed (and dies with its parent). Throws ordo::Error.
  explicit BackgroundLoad(double max_seconds, int niceness = 10);
  ~BackgroundLoad();  // stops and reaps the child
  BackgroundLoad(const BackgroundLoad&) = delete;
  BackgroundLoad& operator=(const BackgroundLoad&) = delete;

  pid_t pid() const { return pid_; }
  int core() const { return core_; }
  // True while the child runs; reaps it once it has ended (e.g. after max_seconds).
  bool running();

 private:
  pid_t pid_ = -1;
  int core_ = -1;
};

}  // namespace ordo::bench
