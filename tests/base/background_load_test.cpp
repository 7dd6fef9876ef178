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

TEST(BackgroundLoad, SpinsNicedOnOneCoreAndEndsByItself) {
  BackgroundLoad load(1.5);
  ASSERT_GT(load.pid(), 0);
  EXPECT_TRUE(load.running());
  std::this_thread::sleep_for(600ms);
  EXPECT_EQ(::getpriority(PRIO_PROCESS, static_cast<id_t>(load.pid())), 10);
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(::sched_getaffinity(load.pid(), sizeof set, &set), 0);
  EXPECT_EQ(CPU_COUNT(&set), 1);
  EXPECT_TRUE(CPU_ISSET(load.core(), &set));
  EXPECT_GT(cpu_ticks(load.pid()), 0) << "the loop does not run";
  // Past its deadline it is gone without being told (bounded wait: 10 s).
  bool ended = false;
  for (int i = 0; i < 200 && !ended; ++i) {
    std::this_thread::sleep_for(50ms);
    ended = !load.running();
  }
  EXPECT_TRUE(ended);
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
