// Language codes as LibreTranslate's clients send them (ISO 639-1: "en", "de") and as models
// name them (M2M100: the same; NLLB: "eng_Latn"), with English names for GET /languages.
#pragma once

#include <string>

namespace ordo::server {

// "German" for "de" (also "deu_Latn"); the code itself when it is not in the table.
std::string language_name(const std::string& code);

// The ISO 639-1 code of an NLLB code ("deu_Latn" -> "de"), "" when there is none in the table.
std::string iso_code_of_nllb(const std::string& nllb_code);

}  // namespace ordo::server
