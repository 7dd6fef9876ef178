// Where bundled models and presets are found (include/ordo/model_location.h). Library code:
// the program's folder and libordo.so's folder both count, since the program may be `ordo`, a
// C program or python3.
#include "ordo/model_location.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

#include "ordo/error.h"

namespace ordo {
namespace {

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

bool is_model_dir(const std::string& dir) { return exists(dir + "/config.json"); }

std::string folder_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

std::string executable_dir() {
  char buffer[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
  if (n <= 0) return ".";
  return folder_of(std::string(buffer, static_cast<size_t>(n)));
}

// The folder of the binary this code is in (libordo.so, or a program linking it statically).
std::string library_dir() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&library_dir), &info) == 0 || !info.dli_fname) return "";
  return folder_of(info.dli_fname);
}

// The first candidate that passes `usable`, or an error listing every place tried.
std::string first_found(const std::vector<std::string>& candidates, bool (*usable)(const std::string&),
                        const std::string& what) {
  for (const std::string& path : candidates)
    if (usable(path)) return path;
  std::string tried;
  for (const std::string& path : candidates) tried += "\n  " + path;
  throw Error(what + " was not found; looked in:" + tried);
}

// $<env>/<name>, <exe>/../share/ordo/<folder>/<name>, <lib>/../share/ordo/<folder>/<name>, the
// install prefix, the source tree.
std::vector<std::string> candidates(const char* env, const std::string& folder, const std::string& install_dir,
                                    const std::string& source_dir, const std::string& name) {
  std::vector<std::string> out;
  if (const char* value = std::getenv(env); value && *value) out.push_back(std::string(value) + "/" + name);
  const std::string exe = executable_dir() + "/../share/ordo/" + folder + "/" + name;
  out.push_back(exe);
  const std::string lib = library_dir();
  if (!lib.empty() && lib + "/../share/ordo/" + folder + "/" + name != exe)
    out.push_back(lib + "/../share/ordo/" + folder + "/" + name);
  out.push_back(install_dir + "/" + name);
  out.push_back(source_dir + "/" + name);
  return out;
}

}  // namespace

std::string bundled_model_dir(const std::string& name) {
  return first_found(candidates("ORDO_MODELS_DIR", "models", ORDO_INSTALL_MODELS_DIR, ORDO_SOURCE_MODELS_DIR, name),
                     is_model_dir, "the bundled model '" + name + "'");
}

std::string resolve_model_dir(const std::string& name_or_path) {
  if (name_or_path.empty()) throw Error("no model given (a Hugging Face model folder or a bundled name such as en-de)");
  if (name_or_path.find('/') != std::string::npos || exists(name_or_path)) return name_or_path;
  return first_found(
      candidates("ORDO_MODELS_DIR", "models", ORDO_INSTALL_MODELS_DIR, ORDO_SOURCE_MODELS_DIR, name_or_path),
      is_model_dir, "'" + name_or_path + "' is not a folder, and a bundled model of that name");
}

std::string bundled_config_file(const std::string& name) {
  return first_found(candidates("ORDO_CONFIGS_DIR", "configs", ORDO_INSTALL_CONFIGS_DIR, ORDO_SOURCE_CONFIGS_DIR, name),
                     exists, "preset '" + name + "'");
}

std::string preset_file(const std::string& name_or_path) {
  struct stat st;
  const bool is_file = ::stat(name_or_path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  const bool json_name = name_or_path.size() >= 5 && name_or_path.compare(name_or_path.size() - 5, 5, ".json") == 0;
  if (is_file || json_name || name_or_path.find('/') != std::string::npos) return name_or_path;
  return bundled_config_file(name_or_path + ".json");
}

}  // namespace ordo
