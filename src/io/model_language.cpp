#include "io/model_language.h"

#include "io/file.h"
#include "io/json_file.h"

namespace ordo::io {

namespace {

std::string declared(const std::string& model_dir, std::initializer_list<const char*> keys) {
  const std::string path = model_dir + "/tokenizer_config.json";
  if (!path_exists(path)) return "";
  const nlohmann::json config = read_json_file(path);
  if (!config.is_object()) return "";
  const JsonFields fields(config, path);
  for (const char* key : keys)
    if (auto value = fields.optional_string(key)) return *value;
  return "";
}

}  // namespace

std::string model_source_language(const std::string& model_dir) {
  return declared(model_dir, {"source_lang", "src_lang"});
}

std::string model_target_language(const std::string& model_dir) {
  return declared(model_dir, {"target_lang", "tgt_lang"});
}

}  // namespace ordo::io
