// ordo — which model folders the library reads: the families, by config.json's model_type.
#pragma once

#include <string>
#include <vector>

#include "ordo/export.h"

namespace ordo {

// The config.json model_type values the library reads ("marian", "pegasus", "m2m_100", "nllb",
// "fsmt", "bart", "mbart", "t5", "mt5"), in the order its families are tried. One list for the
// help texts and for the error a folder of another type gets; a folder whose model_type is not
// listed is still read when its config.json architectures name a class a family serves.
ORDO_API std::vector<std::string> supported_model_types();

}  // namespace ordo
