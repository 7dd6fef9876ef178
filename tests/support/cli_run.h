// Runs the built `ordo` binary as a user does: arguments on a command line, stdin from a file,
// stdout and stderr captured (tests of the command line and of what it prints).
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "support/temp_dir.h"

namespace ordo::testing {

struct CliRun {
  int exit_code;
  std::string out, err;
};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A shell command line with stdout and stderr captured in `dir` (for redirections).
inline CliRun run_shell(const std::string& command, const TempDir& dir) {
  const int status = std::system((command + " > '" + dir.file("stdout") + "' 2> '" + dir.file("stderr") + "'").c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_file(dir.file("stdout")), read_file(dir.file("stderr"))};
}

// `ordo <args>` with `input` on stdin.
inline CliRun run_ordo(const std::string& args, const std::string& input = "") {
  TempDir dir;
  const std::string in = dir.write("stdin", input);
  return run_shell(std::string(ORDO_BINARY_DIR) + "/ordo " + args + " < '" + in + "'", dir);
}

}  // namespace ordo::testing
