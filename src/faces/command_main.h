// How `ordo` runs a parsed command line, for both of its modules (src/cli/main.cpp and
// src/server/serve_main.cpp): a parse error is one line naming the option and the command's
// --help (exit 2), --help and --version exit 0, then the process is configured for decoding
// and the command runs; ordo::Error is "ordo: error: ..." (exit 1), anything else an internal
// error (exit 2).
#pragma once

#include <exception>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "ordo/error.h"
#include "ordo/process.h"

namespace ordo::faces {

template <class Run>
int run_command_line(CLI::App& app, int argc, char** argv, Run run) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // One line naming the option and what it accepts (CLI11's messages do), not the whole help.
    std::string command = "ordo";
    for (const CLI::App* sub : app.get_subcommands()) command += " " + sub->get_name();
    std::cerr << "ordo: error: " << e.what() << " (see '" << command << " --help')\n";
    return 2;
  }
  configure_process();  // the process is ours: glibc's and oneDNN's settings for decoding
  try {
    return run();
  } catch (const Error& e) {
    std::cerr << "ordo: error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "ordo: internal error: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace ordo::faces
