// ordo-bench --background-load's neighbour (tools/bench/background_load.h): a niced busy loop on
// one core that really runs, is niced and pinned, ends by itself at its deadline, and is stopped
// and reaped when the benchmark is done with it.
// ctest-label: unit
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "bench/background_load.h"
#include "ordo/error.h"

namespace ordo::bench {
namespace {

using namespace std::chrono_literals;

// Field 14 (utime) + 15 (stime) of /proc/<pid>/stat: the CPU time it has used, in clock ticks.
long cpu_ticks(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));  // after "pid (comm) "
  std::string field;
  long utime = 0, stime = 0;
  for (int i = 3; fields >> field; ++i) {
    if (i == 14) utime = std::stol(field);
    if (i == 15) {
      stime = std::stol(field);
      break;
    }
  }
  return utime + stime;
}

// Whether `done` holds within `bound`, asked every millisecond: the child's state is read
// from the kernel as it changes, not guessed from how long it has had.
template <typename Done>
bool within(std::chrono::milliseconds bound, Done done) {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

// The child's CPU affinity (empty when it cannot be read).
std::vector<int> cores_of(pid_t pid) {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cores;
  if (::sched_getaffinity(pid, sizeof set, &set) != 0) return cores;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cores.push_back(c);
  return cores;
}

TEST(BackgroundLoad, TheLoopRuns) {
  BackgroundLoad load(600);
  ASSERT_GT(load.pid(), 0);
  EXPECT_TRUE(load.running());
  EXPECT_TRUE(within(10s, [&] { return cpu_ticks(load.pid()) > 0; })) << "the loop does not run";
}

TEST(BackgroundLoad, TheChildIsNiced) {
  BackgroundLoad load(600);
  ASSERT_GT(load.pid(), 0);
  EXPECT_TRUE(within(10s, [&] { return ::getpriority(PRIO_PROCESS, static_cast<id_t>(load.pid())) == 10; }))
      << "niceness " << ::getpriority(PRIO_PROCESS, static_cast<id_t>(load.pid()));
}

TEST(BackgroundLoad, TheChildIsPinnedToOneCore) {
  BackgroundLoad load(600);
  ASSERT_GT(load.pid(), 0);
  EXPECT_TRUE(within(10s, [&] { return cores_of(load.pid()) == std::vector<int>{load.core()}; }))
      << cores_of(load.pid()).size() << " cores, expected only core " << load.core();
}

TEST(BackgroundLoad, EndsByItselfAtItsDeadline) {
  BackgroundLoad load(0.2);
  ASSERT_GT(load.pid(), 0);
  EXPECT_TRUE(within(10s, [&] { return !load.running(); })) << "still running long past its deadline";
}

TEST(BackgroundLoad, StoppedAndReapedWhenDestroyed) {
  pid_t pid = -1;
  {
    BackgroundLoad load(600);
    pid = load.pid();
    EXPECT_TRUE(load.running());
  }
  // Reaped: no such child any more (not even a zombie).
  EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), -1);
  EXPECT_EQ(::kill(pid, 0), -1);
}

TEST(BackgroundLoad, RejectsAnUnboundedRun) {
  EXPECT_THROW(BackgroundLoad(0), Error);
  EXPECT_THROW(BackgroundLoad(-1), Error);
}

}  // namespace
}  // namespace ordo::bench
