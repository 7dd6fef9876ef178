// The source language a model folder declares (tokenizer_config.json): for the sentence rules
// of documents and for refusing a --source-lang that contradicts a one-pair model.
#pragma once

#include <string>

namespace ordo::io {

// Marian's tokenizer_config.json source_lang, M2M100/NLLB's src_lang; "" when it declares none.
std::string model_source_language(const std::string& model_dir);

}  // namespace ordo::io
