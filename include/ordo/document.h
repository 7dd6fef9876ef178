// ordo — translating text longer than a sentence. Sentence-level models (opus-mt and most
// others) translate one sentence well and a paragraph badly, so paragraphs and documents are
// split into sentences with ICU's sentence-boundary rules for the source language (with its
// abbreviation suppressions: "Mr." and "z.B." do not end a sentence), the sentences of all
// units are translated as one stream of length-sorted batches, and each unit is rejoined with
// its original spacing and line structure: only the sentences change.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ordo/export.h"
#include "ordo/options.h"
#include "ordo/translator.h"

namespace ordo {

// Bytes [begin, end) of one sentence in a UTF-8 text.
struct SentenceSpan {
  size_t begin = 0, end = 0;
};

// The sentences of `text`, in order, each trimmed of surrounding white space; the text between
// them (spaces, line breaks) separates them. A single line break inside a paragraph is a soft
// wrap, not a boundary; a blank line always is. `language`: a language code as models name it
// ("en", "deu", "__de__", "deu_Latn"; "" = ICU's root rules). Throws ordo::Error on invalid
// UTF-8.
ORDO_API std::vector<SentenceSpan> split_sentences(const std::string& text, const std::string& language);

struct DocumentTranslation {
  std::string text;                         // the unit, each sentence replaced by its translation
  std::vector<SentenceSpan> sentences;      // where the source sentences are in the unit
  std::vector<TranslationResult> results;   // per sentence: hypotheses, scores, truncation
};

// Translates each unit (a line, paragraph or document) sentence by sentence, as above. The
// sentence rules follow `language`, else options.source_lang, else the model folder's
// tokenizer_config.json (source_lang / src_lang), else ICU's root rules. Only the best
// hypothesis of each sentence is joined into `text`.
ORDO_API std::vector<DocumentTranslation> translate_documents(const Translator& translator,
                                                              const std::vector<std::string>& units,
                                                              const DecodeOptions& options = {},
                                                              const std::string& language = "");

}  // namespace ordo
