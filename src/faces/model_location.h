// Where `ordo` and `ordo serve` find a model: --model as given, or a bundled model by name
// (models/). The search itself is the library's (ordo/model_location.h); these add the words
// of the command line's options to its errors.
#pragma once

#include <string>

namespace ordo::faces {

// The folder of the bundled model `name` (e.g. "en-de"): ordo::bundled_model_dir, its error
// saying that no --model was given.
std::string bundled_model_dir(const std::string& name);

// The folder --model means: `argument` itself when it is a path, a bundled model when it is a
// bare name that is not a folder here (`--model de-en`), the default model when it is empty.
std::string resolve_model_dir(const std::string& argument, const std::string& default_name);

// A file of the bundled configs/ (task presets): ordo::bundled_config_file.
std::string bundled_config_file(const std::string& name);

// The file --preset (and serve's --*-preset) means: ordo::preset_file.
std::string preset_file(const std::string& name_or_path);

}  // namespace ordo::faces
