// Task presets (configs/*.json): decoding defaults named like DecodeOptions' fields, read
// through the table of decoding options (ordo/decode_option_table.h), and how to batch
// (BatchOptions) in a section of its own.
#include "ordo/preset.h"

#include "io/json_file.h"
#include <string>

#include "ordo/decode_option_table.h"
#include "ordo/error.h"

namespace ordo {

DecodeOptions load_preset(const std::string& path) {
  const nlohmann::json json = io::read_json_file(path);
  const io::JsonFields top(json, path);
  if (!json.contains("decoding")) top.fail("decoding", "is missing (an object of decoding options)");
  const std::string where = path + " (decoding)";
  const io::JsonFields f(json["decoding"], where);
  std::string known;
  for (const DecodeOptionSpec& spec : decode_option_specs())
    if (spec.in_preset) known += std::string(known.empty() ? "" : ", ") + spec.name;
  for (const auto& [key, value] : json["decoding"].items()) {
    if (key == "batch_size" || key == "batch_tokens")
      f.fail(key, "is how to run, not what to decode: put it in the \"batching\" section");
    bool found = false;
    for (const DecodeOptionSpec& spec : decode_option_specs()) found = found || (spec.in_preset && key == spec.name);
    if (!found) f.fail(key, "is not a decoding option (known: " + known + ")");
  }
  DecodeOptions o;
  for (const DecodeOptionSpec& spec : decode_option_specs()) {
    if (!spec.in_preset) continue;
    const std::string key = spec.name;
    switch (spec.type) {
      case DecodeOptionSpec::Type::kInt:
      case DecodeOptionSpec::Type::kSeed:
        if (const auto v = f.optional_int(key)) {
          if (*v < spec.min || *v > spec.max) f.fail(key, spec.accepted());
          if (spec.type == DecodeOptionSpec::Type::kInt) o.*spec.int_member = static_cast<int>(*v);
          else o.*spec.seed_member = static_cast<uint64_t>(*v);
        }
        break;
      case DecodeOptionSpec::Type::kFloat:
        if (const auto v = f.optional_number(key)) {
          if (!(*v >= spec.min && *v <= spec.max)) f.fail(key, spec.accepted());
          o.*spec.float_member = static_cast<float>(*v);
        }
        break;
      case DecodeOptionSpec::Type::kBool:
        o.*spec.bool_member = f.optional_bool(key);
        break;
      case DecodeOptionSpec::Type::kText:
        break;  // no text option is a preset's
    }
  }
  return o;
}

BatchOptions load_preset_batching(const std::string& path, std::vector<std::string>* set) {
  const nlohmann::json json = io::read_json_file(path);
  BatchOptions o;
  if (!json.contains("batching")) return o;
  const io::JsonFields f(json["batching"], path + " (batching)");
  for (const auto& [key, value] : json["batching"].items()) {
    if (key != "batch_size" && key != "batch_tokens") f.fail(key, "is not a batching option (known: batch_size, batch_tokens)");
    if (set) set->push_back(key);
  }
  if (const auto batch = f.optional_int("batch_size")) {
    if (*batch < 1 || *batch > (1 << 16)) f.fail("batch_size", "must be an integer from 1 to 65536");
    o.batch_size = static_cast<int>(*batch);
  }
  if (const auto tokens = f.optional_int("batch_tokens")) {
    if (*tokens < 0 || *tokens > (1 << 24)) f.fail("batch_tokens", "must be an integer from 0 to 16777216");
    o.batch_tokens = static_cast<int>(*tokens);
  }
  return o;
}

}  // namespace ordo
