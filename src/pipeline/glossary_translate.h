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

// Translator::translate with a glossary: the sentences holding a source term are translated
// with return_attention and their terms put in place (Translator::place_terms), the others as
// without the glossary. Results in input order; on_token events keep their input's index (a
// sentence with a term has only its done event).
std::vector<TranslationResult> translate_with_glossary(const Translator& translator,
                                                       const std::vector<std::string>& sentences,
                                                       const Glossary& glossary, const DecodeOptions& options = {},
                                                       const BatchOptions& batching = {});

}  // namespace ordo
