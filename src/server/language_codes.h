// Language codes as LibreTranslate's clients send them (ISO 639-1: "en", "de") and as models
// name them (M2M100: the same; NLLB: "eng_Latn"; mBART-50: "en_XX", "de_DE"), with English
// names for GET /languages.
#pragma once

#include <string>

namespace ordo::server {

// "German" for "de" (also "deu_Latn", "de_DE"); the code itself when it is not in the table.
std::string language_name(const std::string& code);

// The ISO 639-1 code of a model's language code: NLLB's "deu_Latn" -> "de", mBART-50's
// "de_DE" -> "de" (its language part, when the table has it); "" otherwise.
std::string iso_code_of(const std::string& model_code);

}  // namespace ordo::server
