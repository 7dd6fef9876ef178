// Helpers shared by the libFuzzer harnesses (tests/fuzz/README.md): the parsers under test
// take file paths, so each input is written to a scratch file (on /dev/shm when available)
// and the public load function is called on it, as ordo does.
#pragma once

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace ordo::fuzz {

// A scratch folder for this process, removed at exit.
inline const std::string& scratch_dir() {
  static const std::string dir = [] {
    const char* base = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    std::string templ = std::string(base) + "/ordo-fuzz-XXXXXX";
    if (!::mkdtemp(templ.data())) {
      std::perror("mkdtemp");
      std::abort();
    }
    static std::string removed = templ;
    std::atexit([] { std::system(("rm -rf '" + removed + "'").c_str()); });
    return templ;
  }();
  return dir;
}

// Writes `size` bytes to `<scratch>/<name>` (replacing it) and returns the path.
inline std::string write_file(const std::string& name, const uint8_t* data, size_t size) {
  const std::string path = scratch_dir() + "/" + name;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    std::perror(path.c_str());
    std::abort();
  }
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n <= 0) {
      std::perror(path.c_str());
      std::abort();
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return path;
}

// A bug the harness checks beyond "no crash": report and abort so libFuzzer saves the input.
[[noreturn]] inline void fail(const std::string& message) {
  std::fprintf(stderr, "fuzz invariant violated: %s\n", message.c_str());
  std::abort();
}

}  // namespace ordo::fuzz
