// Where `ordo` finds a model: --model as given, or a bundled model by name (models/).
#pragma once

#include <string>

namespace ordo::cli {

// The folder of the bundled model `name` (e.g. "en-de"), searched in order:
//   $ORDO_MODELS_DIR/<name>, <exe>/../share/ordo/models/<name> (installed), the source
//   tree's models/<name> (build tree). Throws ordo::Error listing the places tried.
std::string bundled_model_dir(const std::string& name);

// The folder --model means: `argument` itself when it is a path, a bundled model when it is a
// bare name that is not a folder here (`--model de-en`), the default model when it is empty.
std::string resolve_model_dir(const std::string& argument, const std::string& default_name);

// A file of the bundled configs/ (task presets), searched in $ORDO_CONFIGS_DIR,
// <exe>/../share/ordo/configs, then the source tree's configs/.
std::string bundled_config_file(const std::string& name);

// The file --preset (and serve's --*-preset) means: a path (a slash in it, or ending in .json)
// or an existing file is that file (a missing one is an error naming it, when read); anything
// else names a preset of configs/.
std::string preset_file(const std::string& name_or_path);

}  // namespace ordo::cli
