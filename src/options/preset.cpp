// Task presets (configs/*.json): decoding defaults named like DecodeOptions' fields, read
// through the tables of options (ordo/option_table.h), and how to batch
// (BatchOptions) in a section of its own.
#include "ordo/preset.h"

#include <string>
#include "io/json_file.h"

#include "ordo/error.h"
#include "ordo/option_table.h"

namespace ordo {

namespace {

// Reads the section `section` of a preset into `options` through `specs`, an entry per key;
// `accepts` says which entries a preset may set.
template <class Options, class Spec, class Accepts>
void read_section(const nlohmann::json& section, const io::JsonFields& f, const std::vector<Spec>& specs,
                  Accepts accepts, Options& options, std::vector<std::string>* set) {
  std::string known;
  for (const Spec& spec : specs)
    if (accepts(spec)) known += std::string(known.empty() ? "" : ", ") + spec.name;
  for (const auto& [key, value] : section.items()) {
    const Spec* spec = nullptr;
    for (const Spec& s : specs)
      if (accepts(s) && key == s.name) spec = &s;
    if (!spec)
      f.fail(key, std::string("is not a ") + (std::is_same_v<Options, DecodeOptions> ? "decoding" : "batching") +
                      " option (known: " + known + ")");
    if (value.is_null()) continue;
    try {
      spec->set(options, json_option_value(value));
    } catch (const OptionError& e) {
      f.fail(key, e.must);
    }
    if (set) set->push_back(key);
  }
}

}  // namespace

DecodeOptions load_preset(const std::string& path) {
  const nlohmann::json json = io::read_json_file(path);
  const io::JsonFields top(json, path);
  if (!json.contains("decoding")) top.fail("decoding", "is missing (an object of decoding options)");
  const io::JsonFields f(json["decoding"], path + " (decoding)");
  for (const BatchOptionSpec& spec : batch_option_specs())
    if (json["decoding"].contains(spec.name))
      f.fail(spec.name, "is how to run, not what to decode: put it in the \"batching\" section");
  DecodeOptions o;
  read_section(
      json["decoding"], f, decode_option_specs(), [](const DecodeOptionSpec& s) { return s.in_preset; }, o, nullptr);
  return o;
}

BatchOptions load_preset_batching(const std::string& path, std::vector<std::string>* set) {
  const nlohmann::json json = io::read_json_file(path);
  BatchOptions o;
  if (!json.contains("batching")) return o;
  const io::JsonFields f(json["batching"], path + " (batching)");
  read_section(
      json["batching"], f, batch_option_specs(), [](const BatchOptionSpec&) { return true; }, o, set);
  return o;
}

}  // namespace ordo
