// libFuzzer harness: vocab.json (src/text/vocab.*) on arbitrary file bytes. An accepted
// vocabulary must be a bijection between its pieces and their ids.
#include "fuzz_util.h"
#include "ordo/error.h"
#include "text/vocab.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = ordo::fuzz::write_file("vocab.json", data, size);
  try {
    const ordo::text::Vocab vocab = ordo::text::Vocab::load(path);
    for (int64_t id = -1; id <= vocab.size(); ++id) {
      const std::string& piece = vocab.piece(id);
      if (piece.empty()) continue;
      const auto found = vocab.find(piece);
      if (!found || *found != id) ordo::fuzz::fail("piece of id " + std::to_string(id) + " maps back to another id");
    }
    try {
      (void)vocab.require("</s>");
    } catch (const ordo::Error&) {
    }
  } catch (const ordo::Error&) {
  }
  return 0;
}
