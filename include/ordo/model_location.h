// ordo — where a model or task preset named by the user lies: a folder as given, or a bundled
// model by name ("en-de", models/), and the bundled presets (configs/). One lookup for every
// face: the command line's --model and --preset, `ordo serve`, the C ABI, the Python package.
#pragma once

#include <string>

#include "ordo/export.h"

namespace ordo {

// The folder of the bundled model `name` (e.g. "en-de"), searched in order: $ORDO_MODELS_DIR,
// <exe>/../share/ordo/models, <libordo's folder>/../share/ordo/models, the install prefix's
// share/ordo/models, the source tree's models/. Throws ordo::Error listing the places tried.
ORDO_API std::string bundled_model_dir(const std::string& name);

// The folder `name_or_path` means: itself when it is a path (has a '/' or exists), else the
// bundled model of that name ("de-en"). Throws ordo::Error when it is empty or neither.
ORDO_API std::string resolve_model_dir(const std::string& name_or_path);

// A file of the bundled configs/ (task presets), searched like bundled_model_dir() in
// $ORDO_CONFIGS_DIR and share/ordo/configs.
ORDO_API std::string bundled_config_file(const std::string& name);

// The file a preset argument means: a path (a slash in it, or ending in .json) or an existing
// file is that file (a missing one is an error naming it, when read); anything else names a
// preset of configs/ ("translation" -> configs/translation.json).
ORDO_API std::string preset_file(const std::string& name_or_path);

}  // namespace ordo
