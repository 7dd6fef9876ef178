// `ordo serve` as a module of its own, libordo_serve.so: the `ordo` launcher (src/cli/launcher.cpp)
// loads it instead of the command line's module when the first argument is "serve", so the
// command line carries no server (cpp-httplib, prometheus-cpp, CLD2) and the server no command
// line. Its arguments are parsed as `ordo`'s, so help, errors and exit codes are the same.
#include <CLI/CLI.hpp>

#include "faces/command_main.h"
#include "ordo/ordo.h"
#include "server/serve_command.h"

extern "C" __attribute__((visibility("default"))) int ordo_serve_main(int argc, char** argv) {
  CLI::App app{"", "ordo"};
  app.set_version_flag("--version", std::string("ordo ") + ordo::version());
  app.require_subcommand(1);
  ordo::server::ServeArgs serve_args;
  ordo::server::add_serve_command(app, serve_args);
  return ordo::faces::run_command_line(app, argc, argv, [&] { return ordo::server::run_serve(serve_args); });
}
