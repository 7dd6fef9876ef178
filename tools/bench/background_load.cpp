#include "bench/background_load.h"

#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "ordo/error.h"

namespace ordo::bench {

namespace {

double now_seconds() {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

int last_allowed_core() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return -1;
  for (int c = CPU_SETSIZE - 1; c >= 0; --c)
    if (CPU_ISSET(c, &set)) return c;
  return -1;
}

// The child: only system calls from here on (the parent may have had threads when it forked).
[[noreturn]] void spin(double deadline, int core, pid_t parent, int niceness) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(0);  // the parent died before prctl
  ::setpriority(PRIO_PROCESS, 0, niceness);
  if (core >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(core, &set);
    ::sched_setaffinity(0, sizeof set, &set);
  }
  volatile unsigned long sink = 0;
  while (now_seconds() < deadline)
    for (int i = 0; i < 1000000; ++i) sink = sink + static_cast<unsigned long>(i);
  ::_exit(0);
}

}  // namespace

BackgroundLoad::BackgroundLoad(double max_seconds, int niceness) {
  if (!(max_seconds > 0)) throw Error("background load: max_seconds must be positive");
  core_ = last_allowed_core();
  const double deadline = now_seconds() + max_seconds;
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) throw Error(std::string("background load: fork failed: ") + std::strerror(errno));
  if (pid_ == 0) spin(deadline, core_, parent, niceness);
}

bool BackgroundLoad::running() {
  if (pid_ <= 0) return false;
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == 0) return true;
  pid_ = -1;  // ended (reaped) or gone
  return false;
}

BackgroundLoad::~BackgroundLoad() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace ordo::bench
