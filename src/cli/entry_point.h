// Which module runs a command line: `ordo serve` is the server's (libordo_serve.so,
// src/server/serve_main.cpp), every other command the command line's (libordo_cli.so,
// src/cli/main.cpp). Asked by the launcher and by the one-executable build alike.
#pragma once

#include <cstring>

namespace ordo::cli {

inline bool runs_server(int argc, char** argv) { return argc > 1 && std::strcmp(argv[1], "serve") == 0; }

}  // namespace ordo::cli
