// Task presets (configs/*.json): decoding defaults named like DecodeOptions' fields, read
// through the table of decoding options (ordo/decode_option_table.h), plus batch_size.
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
  known += ", batch_size";
  for (const auto& [key, value] : json["decoding"].items()) {
    bool found = key == "batch_size";
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
  if (const auto batch = f.optional_int("batch_size")) {
    if (*batch < 1 || *batch > (1 << 16)) f.fail("batch_size", "must be an integer from 1 to 65536");
    o.batch_size = static_cast<int>(*batch);
  }
  return o;
}

}  // namespace ordo
