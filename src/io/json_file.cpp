#include "io/json_file.h"

#include <cstdint>

#include "io/file.h"
#include "ordo/error.h"

namespace ordo::io {
namespace {

// nlohmann reports a byte offset; people want line and column.
std::string line_column(const std::string& text, size_t byte) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return std::to_string(line) + ":" + std::to_string(column);
}

const char* type_name(const nlohmann::json& value) { return value.type_name(); }

}  // namespace

nlohmann::json parse_json_text(const std::string& text, const std::string& where) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is 1-based and points just past the offending character.
    const size_t byte = e.byte > 0 ? e.byte - 1 : 0;
    std::string what = e.what();
    const size_t colon = what.find("syntax error");
    if (colon != std::string::npos) what = what.substr(colon);
    throw Error(where + ":" + line_column(text, byte) + ": invalid JSON: " + what);
  } catch (const nlohmann::json::exception& e) {
    // E.g. out_of_range.406 "number overflow parsing '1E400'" (found by fuzzing): no position.
    std::string what = e.what();
    const size_t bracket = what.find("] ");
    if (bracket != std::string::npos) what = what.substr(bracket + 2);
    throw Error(where + ": invalid JSON: " + what);
  }
}

nlohmann::json read_json_file(const std::string& path) { return parse_json_text(read_regular_file(path), path); }

JsonFields::JsonFields(const nlohmann::json& object, std::string where) : object_(object), where_(std::move(where)) {
  if (!object_.is_object())
    throw Error(where_ + ": expected a JSON object at the top level, found " + type_name(object_));
}

void JsonFields::fail(const std::string& key, const std::string& problem) const {
  throw Error(where_ + ": field '" + key + "' " + problem);
}

bool JsonFields::has(const std::string& key) const {
  const auto it = object_.find(key);
  return it != object_.end() && !it->is_null();
}

std::optional<int64_t> JsonFields::optional_int(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  const nlohmann::json& v = object_.at(key);
  // Out of int64's range: an unsigned above INT64_MAX, or a float (JSON integers too long for
  // uint64 parse as floats) whose conversion would be undefined (found by fuzzing).
  constexpr double kLimit = 9223372036854775808.0;  // 2^63
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
    fail(key, "is out of range, found " + v.dump());
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!(d >= -kLimit && d < kLimit)) fail(key, "is out of range, found " + v.dump());
    if (d == static_cast<double>(static_cast<int64_t>(d))) return static_cast<int64_t>(d);
  }
  fail(key, std::string("must be an integer, found ") + type_name(v) + " " + v.dump());
}

int64_t JsonFields::required_int(const std::string& key) const {
  const std::optional<int64_t> v = optional_int(key);
  if (!v) fail(key, "is missing");
  return *v;
}

std::optional<double> JsonFields::optional_number(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  const nlohmann::json& v = object_.at(key);
  if (!v.is_number()) fail(key, std::string("must be a number, found ") + type_name(v) + " " + v.dump());
  return v.get<double>();
}

std::optional<bool> JsonFields::optional_bool(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  const nlohmann::json& v = object_.at(key);
  if (!v.is_boolean()) fail(key, std::string("must be true or false, found ") + type_name(v) + " " + v.dump());
  return v.get<bool>();
}

std::optional<std::string> JsonFields::optional_string(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  const nlohmann::json& v = object_.at(key);
  if (!v.is_string()) fail(key, std::string("must be a string, found ") + type_name(v) + " " + v.dump());
  return v.get<std::string>();
}

std::optional<std::vector<std::string>> JsonFields::optional_strings(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  const nlohmann::json& v = object_.at(key);
  if (!v.is_array()) fail(key, std::string("must be a list of strings, found ") + type_name(v));
  std::vector<std::string> out;
  for (const auto& item : v) {
    if (!item.is_string()) fail(key, "must be a list of strings, found element " + item.dump());
    out.push_back(item.get<std::string>());
  }
  return out;
}

std::optional<std::vector<std::vector<int64_t>>> JsonFields::optional_int_lists(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  const nlohmann::json& v = object_.at(key);
  if (!v.is_array()) fail(key, std::string("must be a list of lists of token ids, found ") + type_name(v));
  std::vector<std::vector<int64_t>> out;
  for (const auto& row : v) {
    if (!row.is_array()) fail(key, "must be a list of lists of token ids, found element " + row.dump());
    std::vector<int64_t> ids;
    for (const auto& id : row) {
      if (!id.is_number_integer() || id.get<int64_t>() < 0)
        fail(key, "must contain non-negative token ids, found " + id.dump());
      ids.push_back(id.get<int64_t>());
    }
    out.push_back(std::move(ids));
  }
  return out;
}

}  // namespace ordo::io
