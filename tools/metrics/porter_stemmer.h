// The Porter stemmer exactly as NLTK's PorterStemmer() behaves in its default
// NLTK_EXTENSIONS mode, which is what Google's `rouge_score` calls when use_stemmer=True.
// That mode is Porter (1980) plus Martin Porter's later amendments plus NLTK's own:
// a table of irregular forms (sky/skies, dying, news, proceed ...), words of 1-2 letters
// left alone, 4-letter "-ies"/"-ied" -> "-ie" (dies -> die, but flies -> fli), the cvc test
// also true for a 2-letter vowel-consonant stem, y -> i only after a consonant that is not
// the first letter, "alli" -> "al" tried first in step 2 and then step 2 again, "bli" -> "ble",
// "fulli" -> "ful" and "logi" -> "log" with the measure taken before the "l".
// Input is expected in lower case ASCII (rouge_score stems its [a-z0-9]+ tokens).
#pragma once

#include <string>
#include <string_view>

namespace ordo::metrics {

std::string porter_stem(std::string_view word);

}  // namespace ordo::metrics
