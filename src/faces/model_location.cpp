#include "faces/model_location.h"

#include "ordo/error.h"
#include "ordo/model_location.h"

namespace ordo::faces {

std::string bundled_model_dir(const std::string& name) {
  try {
    return ordo::bundled_model_dir(name);
  } catch (const Error& e) {
    throw Error(std::string("no --model given and ") + e.what() +
                "\nPass --model DIR with a Hugging Face model folder (config.json, model.safetensors, ...).");
  }
}

std::string resolve_model_dir(const std::string& argument, const std::string& default_name) {
  if (argument.empty()) return bundled_model_dir(default_name);
  try {
    return ordo::resolve_model_dir(argument);
  } catch (const Error& e) {
    throw Error(std::string("--model ") + e.what() +
                "\nPass --model DIR with a Hugging Face model folder, or a bundled name (see models/README.md).");
  }
}

std::string bundled_config_file(const std::string& name) {
  try {
    return ordo::bundled_config_file(name);
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + "\nPass --preset FILE.json or a name from configs/.");
  }
}

std::string preset_file(const std::string& name_or_path) {
  try {
    return ordo::preset_file(name_or_path);
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + "\nPass --preset FILE.json or a name from configs/.");
  }
}

}  // namespace ordo::faces
