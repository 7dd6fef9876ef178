// A scratch directory for tests that write malformed files; removed when the test ends.
#pragma once

#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>

namespace ordo::testing {

class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/ordo-test-XXXXXX";
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  std::string write(const std::string& name, const std::string& content) const {
    std::ofstream out(file(name), std::ios::binary);
    out << content;
    return file(name);
  }

 private:
  std::string path_;
};

// Copies a whole directory (e.g. a fixture) into `dest`.
inline void copy_dir(const std::string& src, const std::string& dest) {
  if (std::system(("cp -r '" + src + "/.' '" + dest + "'").c_str()) != 0)
    throw std::runtime_error("cannot copy " + src);
}

}  // namespace ordo::testing
