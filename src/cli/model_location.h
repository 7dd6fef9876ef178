// Where `ordo` finds a model when --model is not given: the bundled default model.
#pragma once

#include <string>

namespace ordo::cli {

// The folder of the bundled model `name` (e.g. "en-de"), searched in order:
//   $ORDO_MODELS_DIR/<name>, <exe>/../share/ordo/models/<name> (installed), the source
//   tree's models/<name> (build tree). Throws ordo::Error listing the places tried.
std::string bundled_model_dir(const std::string& name);

// A file of the bundled configs/ (task presets), searched in $ORDO_CONFIGS_DIR,
// <exe>/../share/ordo/configs, then the source tree's configs/.
std::string bundled_config_file(const std::string& name);

}  // namespace ordo::cli
