// XML parts of files (Office Open XML, OpenDocument, EPUB package files, XLIFF) through pugixml,
// within FileLimits. pugixml expands no entity but the five predefined and character
// references, so an entity bomb cannot grow; a part that declares entities at all (<!ENTITY in
// its DOCTYPE) is refused anyway, as is one nested deeper than max_xml_depth (checked by a
// scan before the parse, so no walk of the tree recurses past it). A part is written back
// with the whole tree as read (comments, processing instructions, the declaration, white
// space), only the nodes a format changed being different.
#pragma once

#include <pugixml.hpp>

#include <string>

#include "ordo/files.h"

namespace ordo::document {

// Parses `text` into `doc`; throws ordo::Error naming `part` (and the line) on malformed XML or
// a limit.
void parse_xml(pugi::xml_document& doc, const std::string& text, const FileLimits& limits, const std::string& part);
std::string write_xml(const pugi::xml_document& doc);

}  // namespace ordo::document
