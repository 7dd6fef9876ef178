// The languages of the document layer: which rules cut a text into sentences (the language a
// call names, else the options', else the model folder's), and a model's language code as
// ICU's rules and files name the language. One place for the layouts and the file formats.
#pragma once

#include <string>

#include "ordo/options.h"
#include "ordo/translator.h"

namespace ordo::document {

// "en", "eng", "__en__", "eng_Latn", "de-DE" -> the ISO 639-1 language ("en", "de") ICU and
// files name it by; "" if none (sentences.cpp).
std::string icu_language(const std::string& code);

// `language` when given, else options.source_lang, else the model folder's source language
// (tokenizer_config.json), else "" (ICU's root rules) (translate_documents.cpp).
std::string sentence_language(const Translator& translator, const DecodeOptions& options,
                              const std::string& language = "");

}  // namespace ordo::document
