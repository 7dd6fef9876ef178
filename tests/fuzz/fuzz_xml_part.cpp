// libFuzzer harness: the XML parts of files (src/document/xml_part.h) alone, with small limits:
// the pre-scan (entity declarations, depth), pugixml's parse and the write. Anything but an
// ordo::Error is a finding, and so is a written part that does not parse again or that a second
// round trip changes.
#include <string>

#include "document/xml_part.h"
#include "fuzz_util.h"
#include "ordo/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ordo::FileLimits limits;
  limits.max_xml_depth = 64;
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::string written;
  try {
    pugi::xml_document doc;
    ordo::document::parse_xml(doc, text, limits, "part.xml");
    written = ordo::document::write_xml(doc);
  } catch (const ordo::Error&) {
    return 0;
  }
  try {
    pugi::xml_document again;
    ordo::document::parse_xml(again, written, {}, "written part.xml");
    if (ordo::document::write_xml(again) != written) ordo::fuzz::fail("a second round trip changed the part");
  } catch (const ordo::Error& e) {
    ordo::fuzz::fail(std::string("a written part that does not parse: ") + e.what());
  }
  return 0;
}
