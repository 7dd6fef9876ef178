// `ordo serve` as a module of its own, libordo_serve.so: the `ordo` launcher (src/cli/launcher.cpp)
// loads it instead of the command line's module when the first argument is "serve", so the
// command line carries no server (cpp-httplib, prometheus-cpp, CLD2) and the server no command
// line. Its arguments are parsed as `ordo`'s, so help, errors and exit codes are the same.
#include <iostream>

#include <CLI/CLI.hpp>

#include "ordo/ordo.h"
#include "server/serve_command.h"

extern "C" __attribute__((visibility("default"))) int ordo_serve_main(int argc, char** argv) {
  CLI::App app{"", "ordo"};
  app.set_version_flag("--version", std::string("ordo ") + ordo::version());
  app.require_subcommand(1);
  ordo::server::ServeArgs serve_args;
  ordo::server::add_serve_command(app, serve_args);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::string command = "ordo";
    for (const CLI::App* sub : app.get_subcommands()) command += " " + sub->get_name();
    std::cerr << "ordo: error: " << e.what() << " (see '" << command << " --help')\n";
    return 2;
  }
  ordo::configure_process();  // the process is ours: glibc's and oneDNN's settings for decoding
  try {
    return ordo::server::run_serve(serve_args);
  } catch (const ordo::Error& e) {
    std::cerr << "ordo: error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "ordo: internal error: " << e.what() << "\n";
    return 2;
  }
}
