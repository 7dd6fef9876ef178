#include "io/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "ordo/error.h"

namespace ordo::io {
namespace {

std::string not_regular(const std::string& path, mode_t mode) {
  if (S_ISDIR(mode)) return path + ": is a directory, not a file";
  const char* what = S_ISFIFO(mode)                     ? "a FIFO"
                     : S_ISSOCK(mode)                   ? "a socket"
                     : (S_ISCHR(mode) || S_ISBLK(mode)) ? "a device"
                                                        : "not a file";
  return path + ": is " + std::string(what) + ", not a regular file";
}

}  // namespace

PathKind path_kind(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return errno == ENOENT || errno == ENOTDIR ? PathKind::kMissing : PathKind::kUnreadable;
  if (S_ISREG(st.st_mode)) return PathKind::kRegular;
  if (S_ISDIR(st.st_mode)) return PathKind::kDirectory;
  return PathKind::kOther;
}

const std::string& require_regular_file(const std::string& path, const std::string& hint) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR)
      throw Error(path + ": file not found" + (hint.empty() ? "" : " (" + hint + ")"));
    throw Error(path + ": cannot open file (" + std::strerror(errno) + ")");
  }
  if (!S_ISREG(st.st_mode)) throw Error(not_regular(path, st.st_mode));
  return path;
}

int open_regular_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw Error(path + ": cannot open file (" + std::strerror(errno) + ")");
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw Error(path + ": cannot open file (" + std::strerror(err) + ")");
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(not_regular(path, st.st_mode));
  }
  return fd;
}

std::string over_byte_limit(const std::string& path, int64_t bytes, int64_t max_bytes, const std::string& limit_name) {
  return path + ": " + std::to_string(bytes) + " bytes, over the limit of " + std::to_string(max_bytes) + " bytes (" +
         limit_name + ")";
}

namespace {

// Reads `fd` to its end (and closes it), held to `max_bytes` when it is not negative.
std::string read_all(int fd, const std::string& path, int64_t max_bytes, const std::string& limit_name) {
  std::string content;
  try {
    if (max_bytes >= 0) {
      struct stat st;
      if (::fstat(fd, &st) != 0) throw Error(path + ": cannot read file (" + std::strerror(errno) + ")");
      if (st.st_size > max_bytes) throw Error(over_byte_limit(path, st.st_size, max_bytes, limit_name));
      content.reserve(static_cast<size_t>(st.st_size));
    }
    char buffer[1 << 16];
    while (true) {
      const ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n == 0) break;
      if (n < 0) {
        if (errno == EINTR) continue;
        throw Error(path + ": read error (" + std::strerror(errno) + ")");
      }
      content.append(buffer, static_cast<size_t>(n));
      if (max_bytes >= 0 && static_cast<int64_t>(content.size()) > max_bytes)
        throw Error(over_byte_limit(path, static_cast<int64_t>(content.size()), max_bytes, limit_name));
    }
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return content;
}

}  // namespace

std::string read_regular_file(const std::string& path) { return read_all(open_regular_file(path), path, -1, ""); }

std::string read_regular_file(const std::string& path, int64_t max_bytes, const std::string& limit_name) {
  return read_all(open_regular_file(path), path, max_bytes, limit_name);
}

}  // namespace ordo::io
