// What Translator::translate does with DecodeOptions::glossary and force_words text; internal
// (the public way is DecodeOptions::glossary).
#pragma once

#include <string>
#include <vector>

#include "ordo/glossary.h"
#include "ordo/options.h"
#include "ordo/translator.h"

namespace ordo {

// DecodeOptions::force_words text <-> phrases: split at '|', each phrase trimmed of spaces;
// an empty phrase throws ordo::Error naming `where`.
std::vector<std::string> split_force_words(const std::string& text, const std::string& where = "force_words");

// Translator::translate with a glossary: each sentence gets DecodeOptions::force_words plus the
// target terms of the source terms it contains; sentences that force the same phrases are
// translated together. Results in input order; on_token events keep their input's index.
std::vector<TranslationResult> translate_with_glossary(const Translator& translator,
                                                       const std::vector<std::string>& sentences,
                                                       const Glossary& glossary, const DecodeOptions& options = {},
                                                       const BatchOptions& batching = {});

}  // namespace ordo
