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

// The ISO 639-1 code of a language however it is named: the code itself ("de"), a model's
// code (iso_code_of: "deu_Latn", "de_DE"), a language identifier's tag (CLD2: "zh-Hant" -> "zh",
// "sr-ME" -> "sr") or an older code (CLD2 still says "iw" -> "he", "jw" -> "jv", "no" -> "nb");
// the code itself when the table does not know it. Two codes name the same language when
// their canonical codes are equal.
std::string canonical_language(const std::string& code);

}  // namespace ordo::server
