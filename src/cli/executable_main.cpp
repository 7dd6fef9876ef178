// `ordo` as one executable (ORDO_CLI_LAUNCHER=OFF, the sanitizer builds; CMakeLists.txt says
// why): the command line's and the server's code linked in, their entry points called directly
// where the launcher would load their modules.
#include "cli/entry_point.h"

extern "C" int ordo_cli_main(int argc, char** argv);
extern "C" int ordo_serve_main(int argc, char** argv);

int main(int argc, char** argv) {
  return ordo::cli::runs_server(argc, argv) ? ordo_serve_main(argc, argv) : ordo_cli_main(argc, argv);
}
