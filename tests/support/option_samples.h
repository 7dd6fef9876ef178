// A value inside an option's range for each entry of the table of decoding options, for tests
// that set every option through one face or another.
#pragma once

#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "ordo/option_table.h"

namespace ordo::testing {

// A value inside the entry's range, as JSON, and the text text() gives for it.
inline std::pair<nlohmann::json, std::string> sample_value(const DecodeOptionSpec& spec) {
  switch (spec.type) {
    case OptionType::kInt: {
      const int v = static_cast<int>(spec.min) + 1;
      return {v, std::to_string(v)};
    }
    case OptionType::kFloat: return {0.5, "0.5"};
    case OptionType::kBool: return {true, "true"};
    case OptionType::kText: return {"de", "de"};
    case OptionType::kChoice: return {spec.choices.back(), spec.choices.back()};
  }
  return {};
}

}  // namespace ordo::testing
