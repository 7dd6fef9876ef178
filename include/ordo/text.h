// ordo — text helpers of the public API.
#pragma once

#include <string>

#include "ordo/export.h"

namespace ordo {

// Throws ordo::Error "<where>: invalid UTF-8 at byte N" if `text` is not valid UTF-8
// (overlong forms, surrogates and truncated sequences are rejected, as SentencePiece needs).
ORDO_API void check_utf8(const std::string& text, const std::string& where);

// Whether `text` has anything to translate: false when it is empty or holds only white space,
// control characters (NUL included) and invisible format characters (zero-width spaces,
// direction marks, the byte order mark). Models asked to translate such an input make text up
// ("   " -> "Ein Mann."), so ordo never runs them: Translator::translate() gives such an input
// one empty hypothesis with score 0, and so every caller (the CLI, the server, documents)
// gives an empty output for it. The one policy for blank input.
ORDO_API bool has_text(const std::string& text);

// A UTF-8 byte order mark (EF BB BF) at the start of a text file is the mark of the editor that
// saved it (Notepad, Excel's "CSV UTF-8"), not text: left in, it would be glued to the first
// line's first word (a glossary's first term that never matches, an API key that is never
// equal). Every text file ordo reads goes through this one function (docs/cli.md#text-files).
// Removes one leading BOM from `text`; returns whether there was one.
ORDO_API bool drop_byte_order_mark(std::string& text);

}  // namespace ordo
