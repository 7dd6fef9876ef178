// Reading JSON files with error messages a person can act on: "<file>:<line>:<column>: ..."
// for syntax errors, "<file>: field 'x' must be an integer" for type errors.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ordo::io {

// Parses `path`. Throws ordo::Error when the file is missing/unreadable ("<path>: cannot open
// file") or not valid JSON ("<path>:<line>:<col>: invalid JSON: ...").
nlohmann::json read_json_file(const std::string& path);
// Same, for JSON text that came from `where` (a file name, "safetensors header of X", ...).
nlohmann::json parse_json_text(const std::string& text, const std::string& where);

// Typed access to fields of a JSON object, with errors naming the file and the field.
class JsonFields {
 public:
  JsonFields(const nlohmann::json& object, std::string where);

  bool has(const std::string& key) const;  // present and not null
  int64_t required_int(const std::string& key) const;
  std::optional<int64_t> optional_int(const std::string& key) const;
  std::optional<double> optional_number(const std::string& key) const;
  std::optional<bool> optional_bool(const std::string& key) const;
  std::optional<std::string> optional_string(const std::string& key) const;
  std::optional<std::vector<std::string>> optional_strings(const std::string& key) const;
  std::optional<std::vector<std::vector<int64_t>>> optional_int_lists(const std::string& key) const;
  // Throws "<where>: field '<key>' <problem>".
  [[noreturn]] void fail(const std::string& key, const std::string& problem) const;

 private:
  const nlohmann::json& object_;
  std::string where_;
};

}  // namespace ordo::io
