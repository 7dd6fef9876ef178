// The source language a model folder declares, for the sentence rules of documents.
#pragma once

#include <string>

namespace ordo::document {

// Marian's tokenizer_config.json source_lang, M2M100/NLLB's src_lang; "" when it declares none.
std::string model_source_language(const std::string& model_dir);

}  // namespace ordo::document
