// Glossary terms put where the model's own words for them stand (ordo/glossary.h): the search
// is left alone, the translation it made is edited. The cross-attention says which target words
// translate a source term; their tokens give way to the target term's, and everything else
// (tokens, text, the other words) stays as the model wrote it.
#pragma once

#include <string>
#include <vector>

#include "ordo/glossary.h"
#include "ordo/translator.h"
#include "text/tokenizer.h"

namespace ordo::pipeline {

// What place_terms needs to know of how the source was encoded.
struct SourceEncoding {
  std::string task_prefix;  // put before the sentence ("summarize: "), as the call did
  std::string source_lang;  // multilingual models' source language ("" = the default)
};

// `result`, the translation of `sentence` made with return_attention, with each match's target
// term in place of the target words its source words attend to most, in every hypothesis that
// has attention. A match whose words the model left untranslated still replaces the words that
// attend to it most; two matches whose words fall on one target word replace it once.
void place_terms(const text::Tokenizer& tokenizer, const SourceEncoding& encoding, const std::string& sentence,
                 const std::vector<Glossary::Match>& matches, TranslationResult& result);

}  // namespace ordo::pipeline
