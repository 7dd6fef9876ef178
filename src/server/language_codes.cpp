#include "server/language_codes.h"

#include <map>

namespace ordo::server {
namespace {

struct Language {
  const char* iso;
  const char* nllb;
  const char* name;
};

// Languages with one usual script (NLLB's code for it); others keep their model code.
const Language kLanguages[] = {
    {"af", "afr_Latn", "Afrikaans"},   {"am", "amh_Ethi", "Amharic"},    {"ar", "arb_Arab", "Arabic"},
    {"az", "azj_Latn", "Azerbaijani"}, {"be", "bel_Cyrl", "Belarusian"}, {"bg", "bul_Cyrl", "Bulgarian"},
    {"bn", "ben_Beng", "Bengali"},     {"bs", "bos_Latn", "Bosnian"},    {"ca", "cat_Latn", "Catalan"},
    {"cs", "ces_Latn", "Czech"},       {"cy", "cym_Latn", "Welsh"},      {"da", "dan_Latn", "Danish"},
    {"de", "deu_Latn", "German"},      {"el", "ell_Grek", "Greek"},      {"en", "eng_Latn", "English"},
    {"eo", "epo_Latn", "Esperanto"},   {"es", "spa_Latn", "Spanish"},    {"et", "est_Latn", "Estonian"},
    {"eu", "eus_Latn", "Basque"},      {"fa", "pes_Arab", "Persian"},    {"fi", "fin_Latn", "Finnish"},
    {"fr", "fra_Latn", "French"},      {"ga", "gle_Latn", "Irish"},      {"gl", "glg_Latn", "Galician"},
    {"gu", "guj_Gujr", "Gujarati"},    {"ha", "hau_Latn", "Hausa"},      {"he", "heb_Hebr", "Hebrew"},
    {"hi", "hin_Deva", "Hindi"},       {"hr", "hrv_Latn", "Croatian"},   {"hu", "hun_Latn", "Hungarian"},
    {"hy", "hye_Armn", "Armenian"},    {"id", "ind_Latn", "Indonesian"}, {"ig", "ibo_Latn", "Igbo"},
    {"is", "isl_Latn", "Icelandic"},   {"it", "ita_Latn", "Italian"},    {"ja", "jpn_Jpan", "Japanese"},
    {"jv", "jav_Latn", "Javanese"},    {"ka", "kat_Geor", "Georgian"},   {"kk", "kaz_Cyrl", "Kazakh"},
    {"km", "khm_Khmr", "Khmer"},       {"kn", "kan_Knda", "Kannada"},    {"ko", "kor_Hang", "Korean"},
    {"lo", "lao_Laoo", "Lao"},         {"lt", "lit_Latn", "Lithuanian"}, {"lv", "lvs_Latn", "Latvian"},
    {"mg", "plt_Latn", "Malagasy"},    {"mk", "mkd_Cyrl", "Macedonian"}, {"ml", "mal_Mlym", "Malayalam"},
    {"mn", "khk_Cyrl", "Mongolian"},   {"mr", "mar_Deva", "Marathi"},    {"ms", "zsm_Latn", "Malay"},
    {"mt", "mlt_Latn", "Maltese"},     {"my", "mya_Mymr", "Burmese"},    {"nb", "nob_Latn", "Norwegian Bokmål"},
    {"ne", "npi_Deva", "Nepali"},      {"nl", "nld_Latn", "Dutch"},      {"pa", "pan_Guru", "Punjabi"},
    {"pl", "pol_Latn", "Polish"},      {"ps", "pbt_Arab", "Pashto"},     {"pt", "por_Latn", "Portuguese"},
    {"ro", "ron_Latn", "Romanian"},    {"ru", "rus_Cyrl", "Russian"},    {"si", "sin_Sinh", "Sinhala"},
    {"sk", "slk_Latn", "Slovak"},      {"sl", "slv_Latn", "Slovenian"},  {"so", "som_Latn", "Somali"},
    {"sq", "als_Latn", "Albanian"},    {"sr", "srp_Cyrl", "Serbian"},    {"sv", "swe_Latn", "Swedish"},
    {"sw", "swh_Latn", "Swahili"},     {"ta", "tam_Taml", "Tamil"},      {"te", "tel_Telu", "Telugu"},
    {"th", "tha_Thai", "Thai"},        {"tl", "tgl_Latn", "Tagalog"},    {"tr", "tur_Latn", "Turkish"},
    {"uk", "ukr_Cyrl", "Ukrainian"},   {"ur", "urd_Arab", "Urdu"},       {"uz", "uzn_Latn", "Uzbek"},
    {"vi", "vie_Latn", "Vietnamese"},  {"xh", "xho_Latn", "Xhosa"},      {"yo", "yor_Latn", "Yoruba"},
    {"zh", "zho_Hans", "Chinese"},     {"zu", "zul_Latn", "Zulu"},
};

}  // namespace

std::string iso_code_of(const std::string& model_code) {
  for (const Language& l : kLanguages)
    if (model_code == l.nllb) return l.iso;
  // mBART-50: two lowercase letters, '_', two uppercase letters or "XX".
  const std::string& c = model_code;
  const auto lower = [](char x) { return x >= 'a' && x <= 'z'; };
  const auto upper = [](char x) { return x >= 'A' && x <= 'Z'; };
  if (c.size() == 5 && lower(c[0]) && lower(c[1]) && c[2] == '_' && upper(c[3]) && upper(c[4]))
    for (const Language& l : kLanguages)
      if (c.compare(0, 2, l.iso) == 0) return l.iso;
  return "";
}

std::string canonical_language(const std::string& code) {
  const std::string iso = iso_code_of(code);
  if (!iso.empty()) return iso;
  const std::string language = code.substr(0, code.find('-'));  // a BCP 47 tag's language part
  // Codes ISO 639 has withdrawn for another, and Norwegian for its usual written form.
  static const std::map<std::string, std::string> kOlder = {
      {"iw", "he"}, {"jw", "jv"}, {"in", "id"}, {"ji", "yi"}, {"no", "nb"}};
  const auto it = kOlder.find(language);
  return it == kOlder.end() ? language : it->second;
}

std::string language_name(const std::string& code) {
  const std::string iso = iso_code_of(code);
  for (const Language& l : kLanguages)
    if (code == l.iso || iso == l.iso) return l.name;
  return code;
}

}  // namespace ordo::server
