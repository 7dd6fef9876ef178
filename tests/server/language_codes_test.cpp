// LibreTranslate's ISO 639-1 codes against the codes multilingual models use: NLLB's
// "deu_Latn" and mBART-50's "de_DE" are reachable as "de" (server/language_codes.h).
// ctest-label: unit
#include <gtest/gtest.h>

#include "server/language_codes.h"

namespace ordo::server {
namespace {

TEST(LanguageCodes, AnNllbCodesIsoCodeIsItsLanguagePart) {
  EXPECT_EQ(iso_code_of("deu_Latn"), "de");
  EXPECT_EQ(iso_code_of("zho_Hans"), "zh");
}

TEST(LanguageCodes, AnMBart50CodesIsoCodeIsItsLanguagePart) {
  EXPECT_EQ(iso_code_of("de_DE"), "de");
  EXPECT_EQ(iso_code_of("en_XX"), "en");
  EXPECT_EQ(iso_code_of("zh_CN"), "zh");
  EXPECT_EQ(iso_code_of("xh_ZA"), "xh");
}

TEST(LanguageCodes, WhatIsNoModelCodeWithAKnownLanguagePartHasNoIsoCode) {
  EXPECT_EQ(iso_code_of("de"), "");
  EXPECT_EQ(iso_code_of("qq_XX"), "");
  EXPECT_EQ(iso_code_of("de_de"), "");
  EXPECT_EQ(iso_code_of("__de__"), "");
  EXPECT_EQ(iso_code_of(""), "");
}

// One language however it is named: models' codes, CLD2's tags and older codes (language_detect.h).
TEST(LanguageCodes, CanonicalLanguageOfEveryNaming) {
  EXPECT_EQ(canonical_language("de"), "de");
  EXPECT_EQ(canonical_language("deu_Latn"), "de");  // NLLB
  EXPECT_EQ(canonical_language("de_DE"), "de");     // mBART-50
  EXPECT_EQ(canonical_language("iw"), "he");        // CLD2's older codes
  EXPECT_EQ(canonical_language("jw"), "jv");
  EXPECT_EQ(canonical_language("no"), "nb");
  EXPECT_EQ(canonical_language("nob_Latn"), "nb");
  EXPECT_EQ(canonical_language("zh-Hant"), "zh");  // CLD2's tags
  EXPECT_EQ(canonical_language("sr-ME"), "sr");
  EXPECT_EQ(canonical_language("xyz"), "xyz");
  EXPECT_EQ(canonical_language(""), "");
}

// Every one of mBART-50's 52 codes (tokenization_mbart50.py) has its ISO code and a name.
TEST(LanguageCodes, EveryMBart50CodeMapsToItsLanguage) {
  const char* codes[] = {"ar_AR", "cs_CZ", "de_DE", "en_XX", "es_XX", "et_EE", "fi_FI", "fr_XX", "gu_IN",
                         "hi_IN", "it_IT", "ja_XX", "kk_KZ", "ko_KR", "lt_LT", "lv_LV", "my_MM", "ne_NP",
                         "nl_XX", "ro_RO", "ru_RU", "si_LK", "tr_TR", "vi_VN", "zh_CN", "af_ZA", "az_AZ",
                         "bn_IN", "fa_IR", "he_IL", "hr_HR", "id_ID", "ka_GE", "km_KH", "mk_MK", "ml_IN",
                         "mn_MN", "mr_IN", "pl_PL", "ps_AF", "pt_XX", "sv_SE", "sw_KE", "ta_IN", "te_IN",
                         "th_TH", "tl_XX", "uk_UA", "ur_PK", "xh_ZA", "gl_ES", "sl_SI"};
  for (const std::string code : codes) {
    EXPECT_EQ(iso_code_of(code), code.substr(0, 2)) << code;
    EXPECT_NE(language_name(code), code) << code;
  }
  EXPECT_EQ(language_name("de_DE"), "German");
  EXPECT_EQ(language_name("deu_Latn"), "German");
  EXPECT_EQ(language_name("de"), "German");
  EXPECT_EQ(language_name("qq_XX"), "qq_XX");
}

}  // namespace
}  // namespace ordo::server
