// `ordo`: sets OpenMP's wait policy (cli/openmp_wait.h), then loads the module that runs the
// command and runs it: libordo_serve.so (src/server/serve_main.cpp) for `ordo serve`,
// libordo_cli.so (src/cli/main.cpp) for every other command (cli/entry_point.h). They are
// modules rather than this executable's own code because linking LibTorch here would start GNU
// OpenMP, which reads its environment once, before main() runs; loading them afterwards costs
// nothing extra. This file includes neither: it knows them by their file and entry point names.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli/crash_report.h"
#include "cli/entry_point.h"
#include "cli/openmp_wait.h"

namespace {

std::string executable_dir() {
  char buffer[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
  if (n <= 0) return ".";
  const std::string path(buffer, static_cast<size_t>(n));
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

}  // namespace

int main(int argc, char** argv) {
  ordo::cli::install_crash_report();
  const bool chosen = ordo::cli::choose_openmp_wait_policy();
  const std::string dir = executable_dir();
  const bool serve = ordo::cli::runs_server(argc, argv);
  const std::string name = serve ? ORDO_SERVE_MODULE_NAME : ORDO_CLI_MODULE_NAME;
  const char* const entry = serve ? "ordo_serve_main" : "ordo_cli_main";
  // Build tree: next to this executable; install tree: <prefix>/<libdir>, relative or configured.
  const std::vector<std::string> candidates = {dir + "/" + name, dir + "/../" ORDO_CLI_INSTALL_LIBDIR "/" + name,
                                               ORDO_CLI_INSTALL_FULL_LIBDIR "/" + name};
  std::string errors;
  void* module = nullptr;
  for (const std::string& path : candidates) {
    if (::access(path.c_str(), F_OK) != 0) continue;
    if ((module = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
    errors += std::string("; ") + ::dlerror();
  }
  if (!module) {
    std::fprintf(stderr, "ordo: error: cannot load %s (looked next to %s and in %s)%s\n", name.c_str(), dir.c_str(),
                 ORDO_CLI_INSTALL_FULL_LIBDIR, errors.c_str());
    return 2;
  }
  // OpenMP has read it: programs ordo starts see the user's environment.
  if (chosen) ::unsetenv("GOMP_SPINCOUNT");
  using Main = int (*)(int, char**);
  const auto run = reinterpret_cast<Main>(::dlsym(module, entry));
  if (!run) {
    std::fprintf(stderr, "ordo: error: %s has no %s\n", name.c_str(), entry);
    return 2;
  }
  const int code = run(argc, argv);
  // Done: the command has closed its files. Leaving through exit() would run the static
  // destructors of the ~290 libraries LibTorch brings in, faulting in their pages on the way
  // out, and the peak resident set of a short run would be set at exit. stdio (std::cout and
  // std::cerr write through it) is flushed, then the process ends without them.
  std::fflush(nullptr);
  std::_Exit(code);
}
