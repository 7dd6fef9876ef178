#include "cli/model_location.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

#include "ordo/error.h"

namespace ordo::cli {
namespace {

bool is_model_dir(const std::string& dir) {
  struct stat st;
  return ::stat((dir + "/config.json").c_str(), &st) == 0;
}

std::string executable_dir() {
  char buffer[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
  if (n <= 0) return ".";
  std::string path(buffer, static_cast<size_t>(n));
  return path.substr(0, path.find_last_of('/'));
}

}  // namespace

std::string bundled_model_dir(const std::string& name) {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("ORDO_MODELS_DIR"); env && *env) candidates.push_back(std::string(env) + "/" + name);
  candidates.push_back(executable_dir() + "/../share/ordo/models/" + name);
  candidates.push_back(std::string(ORDO_INSTALL_MODELS_DIR) + "/" + name);
  candidates.push_back(std::string(ORDO_SOURCE_MODELS_DIR) + "/" + name);
  for (const std::string& dir : candidates)
    if (is_model_dir(dir)) return dir;
  std::string tried;
  for (const std::string& dir : candidates) tried += "\n  " + dir;
  throw Error("no --model given and the bundled model '" + name + "' was not found; looked in:" + tried +
              "\nPass --model DIR with a Hugging Face model folder (config.json, model.safetensors, ...).");
}

std::string bundled_config_file(const std::string& name) {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("ORDO_CONFIGS_DIR"); env && *env) candidates.push_back(std::string(env) + "/" + name);
  candidates.push_back(executable_dir() + "/../share/ordo/configs/" + name);
  candidates.push_back(std::string(ORDO_INSTALL_CONFIGS_DIR) + "/" + name);
  candidates.push_back(std::string(ORDO_SOURCE_CONFIGS_DIR) + "/" + name);
  for (const std::string& path : candidates) {
    struct stat st;
    if (::stat(path.c_str(), &st) == 0) return path;
  }
  std::string tried;
  for (const std::string& path : candidates) tried += "\n  " + path;
  throw Error("preset '" + name + "' not found; looked in:" + tried);
}

}  // namespace ordo::cli
