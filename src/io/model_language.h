// The languages a model folder declares (tokenizer_config.json): the source's for the sentence
// rules of documents and for refusing a --source-lang that contradicts a one-pair model; the
// target's for the files that name their language (a .po header, XLIFF, EPUB).
#pragma once

#include <string>

namespace ordo::io {

// Marian's tokenizer_config.json source_lang, M2M100/NLLB's src_lang; "" when it declares none.
std::string model_source_language(const std::string& model_dir);
// Marian's target_lang, M2M100/NLLB's tgt_lang; "" when it declares none.
std::string model_target_language(const std::string& model_dir);

}  // namespace ordo::io
