#include "cli/model_location.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

#include "ordo/error.h"

namespace ordo::cli {
namespace {

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

bool is_model_dir(const std::string& dir) { return exists(dir + "/config.json"); }

std::string executable_dir() {
  char buffer[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
  if (n <= 0) return ".";
  std::string path(buffer, static_cast<size_t>(n));
  return path.substr(0, path.find_last_of('/'));
}

// The first candidate that passes `usable`, or an error listing every place tried.
std::string first_found(const std::vector<std::string>& candidates, bool (*usable)(const std::string&),
                        const std::string& what, const std::string& hint) {
  for (const std::string& path : candidates)
    if (usable(path)) return path;
  std::string tried;
  for (const std::string& path : candidates) tried += "\n  " + path;
  throw Error(what + " was not found; looked in:" + tried + hint);
}

// $<env>/<name>, <exe>/../share/ordo/<folder>/<name>, the install prefix, the source tree.
std::vector<std::string> candidates(const char* env, const std::string& folder, const std::string& install_dir,
                                    const std::string& source_dir, const std::string& name) {
  std::vector<std::string> out;
  if (const char* value = std::getenv(env); value && *value) out.push_back(std::string(value) + "/" + name);
  out.push_back(executable_dir() + "/../share/ordo/" + folder + "/" + name);
  out.push_back(install_dir + "/" + name);
  out.push_back(source_dir + "/" + name);
  return out;
}

}  // namespace

std::string bundled_model_dir(const std::string& name) {
  return first_found(candidates("ORDO_MODELS_DIR", "models", ORDO_INSTALL_MODELS_DIR, ORDO_SOURCE_MODELS_DIR, name),
                     is_model_dir, "no --model given and the bundled model '" + name + "'",
                     "\nPass --model DIR with a Hugging Face model folder (config.json, model.safetensors, ...).");
}

std::string resolve_model_dir(const std::string& argument, const std::string& default_name) {
  if (argument.empty()) return bundled_model_dir(default_name);
  if (argument.find('/') != std::string::npos || exists(argument)) return argument;
  return first_found(candidates("ORDO_MODELS_DIR", "models", ORDO_INSTALL_MODELS_DIR, ORDO_SOURCE_MODELS_DIR, argument),
                     is_model_dir, "--model '" + argument + "' is not a folder, and a bundled model of that name",
                     "\nPass --model DIR with a Hugging Face model folder, or a bundled name (see models/README.md).");
}

std::string bundled_config_file(const std::string& name) {
  return first_found(
      candidates("ORDO_CONFIGS_DIR", "configs", ORDO_INSTALL_CONFIGS_DIR, ORDO_SOURCE_CONFIGS_DIR, name), exists,
      "preset '" + name + "'", "\nPass --preset FILE.json or a name from configs/.");
}

std::string preset_file(const std::string& name_or_path) {
  struct stat st;
  const bool is_file = ::stat(name_or_path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  const bool json_name = name_or_path.size() >= 5 && name_or_path.compare(name_or_path.size() - 5, 5, ".json") == 0;
  if (is_file || json_name || name_or_path.find('/') != std::string::npos) return name_or_path;
  return bundled_config_file(name_or_path + ".json");
}

}  // namespace ordo::cli
