// ordo — C++ inference for encoder-decoder transformers (Marian, Pegasus, M2M100, NLLB, FSMT,
// BART, mBART, T5: supported_model_types()).
// The whole public API; no LibTorch type appears in it.
#pragma once

#include "ordo/alignment.h"
#include "ordo/document.h"
#include "ordo/error.h"
#include "ordo/files.h"
#include "ordo/glossary.h"
#include "ordo/model_location.h"
#include "ordo/model_types.h"
#include "ordo/options.h"
#include "ordo/positions.h"
#include "ordo/process.h"
#include "ordo/speech.h"
#include "ordo/text.h"
#include "ordo/translator.h"

namespace ordo {
// Library version, "MAJOR.MINOR.PATCH".
ORDO_API const char* version();
}  // namespace ordo
