#include "faces/resolved_settings.h"

#include <string>

#include "ordo/option_table.h"

namespace ordo::faces {

std::optional<int64_t> resolved_int(const std::vector<ResolvedSetting>& settings,
                                    std::optional<int> DecodeOptions::*member) {
  const std::string name = decode_option_spec(member).name;
  for (const ResolvedSetting& s : settings)
    if (s.name == name) return std::stoll(s.value);
  return std::nullopt;
}

}  // namespace ordo::faces
