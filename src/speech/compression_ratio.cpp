// zlib's compress2 at Z_DEFAULT_COMPRESSION writes the same stream as Python's zlib.compress.
#include "speech/compression_ratio.h"

#include <zlib.h>

#include <vector>

#include "ordo/error.h"

namespace ordo::speech {

double compression_ratio(const std::string& text) {
  if (text.empty()) return 0.0;
  uLongf size = compressBound(static_cast<uLong>(text.size()));
  std::vector<Bytef> out(size);
  if (compress2(out.data(), &size, reinterpret_cast<const Bytef*>(text.data()), static_cast<uLong>(text.size()),
                Z_DEFAULT_COMPRESSION) != Z_OK)
    throw Error("compressing a window's text of " + std::to_string(text.size()) + " bytes failed (zlib)");
  return static_cast<double>(text.size()) / static_cast<double>(size);
}

}  // namespace ordo::speech
