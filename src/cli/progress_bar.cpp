#include "cli/progress_bar.h"

#include <unistd.h>

#include <cstdio>
#include <string>

namespace ordo::cli {

ProgressBar::ProgressBar(bool enabled, const char* unit)
    : enabled_(enabled && ::isatty(STDERR_FILENO)),
      unit_(unit),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

ProgressBar::~ProgressBar() {
  if (drawn_) std::fputc('\n', stderr);
}

void ProgressBar::update(uint64_t lines, uint64_t done, uint64_t total) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  const bool finished = total > 0 && done >= total;
  if (drawn_ && !finished && now - last_ < std::chrono::milliseconds(200)) return;
  last_ = now;
  drawn_ = true;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  const double rate = seconds > 0 ? lines / seconds : 0.0;
  char text[160];
  if (total > 0) {
    const double fraction = done >= total ? 1.0 : static_cast<double>(done) / total;
    const int width = 30, filled = static_cast<int>(fraction * width);
    std::string bar(filled, '=');
    if (filled < width) bar += '>' + std::string(width - filled - 1, ' ');
    const double eta = fraction > 0 ? seconds * (1 - fraction) / fraction : 0;
    std::snprintf(text, sizeof(text), "\r[%s] %3.0f%%  %llu %s  %.1f %s/s  ETA %.0fs ", bar.c_str(), fraction * 100,
                  static_cast<unsigned long long>(lines), unit_, rate, unit_, eta);
  } else {
    std::snprintf(text, sizeof(text), "\r%llu %s  %.1f %s/s ", static_cast<unsigned long long>(lines), unit_, rate,
                  unit_);
  }
  std::fputs(text, stderr);
  std::fflush(stderr);
}

}  // namespace ordo::cli
