// Reading Translator::resolved_settings() back as numbers: the server sizes a request's cost
// and the command line its warnings by the beam size and lengths a call really runs with.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ordo/options.h"
#include "ordo/preset.h"

namespace ordo::faces {

// The integer `settings` resolved for `member`'s option, e.g. the beam size or max_length a
// call runs with; nullopt when the resolution does not list it.
std::optional<int64_t> resolved_int(const std::vector<ResolvedSetting>& settings,
                                    std::optional<int> DecodeOptions::*member);

}  // namespace ordo::faces
