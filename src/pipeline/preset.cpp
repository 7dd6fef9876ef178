// Task presets (configs/*.json): decoding defaults named like DecodeOptions' fields.
#include "ordo/preset.h"

#include "io/json_file.h"
#include <algorithm>

#include "ordo/error.h"

namespace ordo {

DecodeOptions load_preset(const std::string& path) {
  const nlohmann::json json = io::read_json_file(path);
  const io::JsonFields top(json, path);
  if (!json.contains("decoding")) top.fail("decoding", "is missing (an object of decoding options)");
  const std::string where = path + " (decoding)";
  const io::JsonFields f(json["decoding"], where);
  static const std::vector<std::string> known = {
      "beam_size", "n_best", "max_new_tokens", "max_length", "min_length", "min_new_tokens", "length_penalty",
      "early_stopping", "no_repeat_ngram_size", "repetition_penalty", "sample", "temperature", "top_k", "top_p",
      "seed", "batch_size"};
  for (const auto& [key, value] : json["decoding"].items())
    if (std::find(known.begin(), known.end(), key) == known.end())
      f.fail(key, "is not a decoding option (known: beam_size, n_best, max_new_tokens, max_length, min_length, "
                  "min_new_tokens, length_penalty, early_stopping, no_repeat_ngram_size, repetition_penalty, "
                  "sample, temperature, top_k, top_p, seed, batch_size)");
  auto as_int = [&](const char* key) -> std::optional<int> {
    const auto v = f.optional_int(key);
    if (v && (*v < 0 || *v > (1 << 30))) f.fail(key, "is out of range");
    return v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
  };
  auto as_float = [&](const char* key) -> std::optional<float> {
    const auto v = f.optional_number(key);
    return v ? std::optional<float>(static_cast<float>(*v)) : std::nullopt;
  };
  DecodeOptions o;
  o.beam_size = as_int("beam_size");
  o.n_best = as_int("n_best");
  o.max_new_tokens = as_int("max_new_tokens");
  o.max_length = as_int("max_length");
  o.min_length = as_int("min_length");
  o.min_new_tokens = as_int("min_new_tokens");
  o.length_penalty = as_float("length_penalty");
  o.early_stopping = f.optional_bool("early_stopping");
  o.no_repeat_ngram_size = as_int("no_repeat_ngram_size");
  o.repetition_penalty = as_float("repetition_penalty");
  o.sample = f.optional_bool("sample");
  o.temperature = as_float("temperature");
  o.top_k = as_int("top_k");
  o.top_p = as_float("top_p");
  if (const auto seed = f.optional_int("seed")) o.seed = static_cast<uint64_t>(*seed);
  if (const auto batch = as_int("batch_size")) {
    if (*batch < 1) f.fail("batch_size", "must be at least 1");
    o.batch_size = *batch;
  }
  return o;
}

}  // namespace ordo
