// openai-whisper's repetition check for the temperature fallback: how much zlib shrinks a
// window's text. A model stuck repeating itself writes text that compresses far better than
// speech does (openai-whisper's threshold: 2.4).
#pragma once

#include <string>

namespace ordo::speech {

// len(text) / len(zlib.compress(text)) over the UTF-8 bytes, zlib's default level (Python's
// zlib.compress); 0 for an empty text.
double compression_ratio(const std::string& text);

}  // namespace ordo::speech
