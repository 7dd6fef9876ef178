// A one-line progress bar on stderr, drawn only when stderr is a terminal (so logs and pipes
// stay clean) and at most a few times per second.
#pragma once

#include <chrono>
#include <cstdint>

namespace ordo::cli {

class ProgressBar {
 public:
  // `unit`: what the counts count ("lines", "sentences").
  explicit ProgressBar(bool enabled, const char* unit = "lines");
  ~ProgressBar();  // finishes the line
  // `done`/`total` in bytes (total 0 = unknown: only counts are shown).
  void update(uint64_t lines, uint64_t done, uint64_t total);

 private:
  bool enabled_;
  const char* unit_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace ordo::cli
