// `ordo` sets GNU OpenMP's wait policy before the runtime starts (src/cli/openmp_wait.h): its
// threads spin briefly, then sleep, while they wait, unless the user chose otherwise. Checked from the outside, with
// what libgomp itself reports at start-up (OMP_DISPLAY_ENV=verbose prints the spin count it
// took from its environment), so the test fails if the variable is set too late.
// ctest-label: integration
#include <sys/wait.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "support/temp_dir.h"

namespace {

using ordo::testing::TempDir;

struct Outcome {
  int status = -1;
  std::string out, err;
};

Outcome run(const std::string& environment, const std::string& binary = std::string(ORDO_BINARY_DIR) + "/ordo") {
  TempDir dir;
  const std::string command = "env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT " + environment + " OMP_DISPLAY_ENV=verbose '" +
                              binary + "' --version > '" + dir.file("out") + "' 2> '" + dir.file("err") + "'";
  Outcome r;
  r.status = std::system(command.c_str());
  const auto slurp = [](const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  };
  r.out = slurp(dir.file("out"));
  r.err = slurp(dir.file("err"));
  return r;
}

// The spin count libgomp reports, e.g. "300000" (its default), "0" (passive).
std::string spin_count(const Outcome& r) {
  const std::string key = "GOMP_SPINCOUNT = '";
  const size_t at = r.err.find(key);
  if (at == std::string::npos) return "(not reported: is the OpenMP runtime libgomp?)\n" + r.err;
  return r.err.substr(at + key.size(), r.err.find('\'', at + key.size()) - at - key.size());
}

TEST(OpenMPWaitPolicy, ShortSpinThenSleepUnlessTheUserChose) {
  if (!ORDO_CLI_LAUNCHER) GTEST_SKIP() << "built with ORDO_CLI_LAUNCHER=OFF (sanitizer builds): no launcher";
  const Outcome plain = run("");
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_NE(plain.out.find("ordo "), std::string::npos) << plain.out;
  EXPECT_EQ(spin_count(plain), "10000") << "GOMP_SPINCOUNT=10000 did not reach libgomp before it started";
}

TEST(OpenMPWaitPolicy, TheUsersPolicyIsKept) {
  EXPECT_EQ(spin_count(run("OMP_WAIT_POLICY=active")), "30000000000");
  EXPECT_EQ(spin_count(run("OMP_WAIT_POLICY=passive")), "0");
  EXPECT_EQ(spin_count(run("GOMP_SPINCOUNT=12345")), "12345");
  EXPECT_EQ(spin_count(run("GOMP_SPINCOUNT=300000")), "300000");  // libgomp's own default, by choice
}

TEST(OpenMPWaitPolicy, LauncherWithoutItsModuleFailsInOneLine) {
  if (!ORDO_CLI_LAUNCHER) GTEST_SKIP() << "built with ORDO_CLI_LAUNCHER=OFF (sanitizer builds): no launcher";
  TempDir dir;
  ASSERT_EQ(std::system(("cp '" + std::string(ORDO_BINARY_DIR) + "/ordo' '" + dir.file("ordo") + "'").c_str()), 0);
  const Outcome r = run("", dir.file("ordo"));
  ASSERT_TRUE(WIFEXITED(r.status));
  EXPECT_EQ(WEXITSTATUS(r.status), 2);
  EXPECT_EQ(r.err.rfind("ordo: error: cannot load libordo_cli.so", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

}  // namespace
