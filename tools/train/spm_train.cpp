#include "train/spm_train.h"

#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>

#include "ordo/error.h"

extern char** environ;

namespace ordo::train {

void run_spm_train(const std::vector<std::string>& args) {
  std::vector<std::string> storage = {"spm_train"};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : storage) argv.push_back(arg.data());
  argv.push_back(nullptr);

  pid_t pid = 0;
  const int spawn_error = ::posix_spawnp(&pid, "spm_train", nullptr, nullptr, argv.data(), environ);
  if (spawn_error != 0)
    throw Error(std::string("cannot run spm_train (install Debian's 'sentencepiece' package): ") +
                std::strerror(spawn_error));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw Error(std::string("waiting for spm_train: ") + std::strerror(errno));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
    throw Error("cannot run spm_train (install Debian's 'sentencepiece' package)");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error("spm_train failed (" +
                (WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                   : "signal " + std::to_string(WTERMSIG(status))) +
                "); its messages are above");
}

}  // namespace ordo::train
