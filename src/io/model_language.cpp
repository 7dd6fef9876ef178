#include "io/model_language.h"

#include "io/file.h"
#include "io/json_file.h"

namespace ordo::io {

std::string model_source_language(const std::string& model_dir) {
  const std::string path = model_dir + "/tokenizer_config.json";
  if (!path_exists(path)) return "";
  const nlohmann::json config = read_json_file(path);
  if (!config.is_object()) return "";
  const JsonFields fields(config, path);
  for (const char* key : {"source_lang", "src_lang"})
    if (auto value = fields.optional_string(key)) return *value;
  return "";
}

}  // namespace ordo::io
