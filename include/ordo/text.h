// ordo — text helpers of the public API.
#pragma once

#include <string>

#include "ordo/export.h"

namespace ordo {

// Throws ordo::Error "<where>: invalid UTF-8 at byte N" if `text` is not valid UTF-8
// (overlong forms, surrogates and truncated sequences are rejected, as SentencePiece needs).
ORDO_API void check_utf8(const std::string& text, const std::string& where);

}  // namespace ordo
