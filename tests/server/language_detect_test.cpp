// The language identifier behind POST /detect and source "auto" (server/language_detect.h):
// CLD2's answers restricted to the server's languages and named by the server's codes, its
// best-effort guess on short text never called reliable, any bytes safe (invalid UTF-8, control
// characters and noncharacters), and the same answers from many threads at once.
// ctest-label: unit
#include <gtest/gtest.h>

#include <random>
#include <thread>

#include "server/language_detect.h"

namespace ordo::server {
namespace {

const std::string kGerman = "Ein Mann fährt mit dem Fahrrad die Straße entlang, und die Kinder spielen im Park.";
const std::string kEnglish = "A man is riding a bicycle down the street, and the children are playing in the park.";
const std::string kFrench = "Un homme descend la rue à vélo pendant que les enfants jouent dans le parc.";
const std::vector<std::string> kServed = {"en", "de"};

TEST(LanguageDetect, AGermanSentenceIsReliablyGerman) {
  const Detection de = detect_language(kGerman, kServed);
  ASSERT_FALSE(de.languages.empty());
  EXPECT_EQ(de.languages[0].language, "de");
  EXPECT_GT(de.languages[0].confidence, 80);
  EXPECT_LE(de.languages[0].confidence, 100);
  EXPECT_TRUE(de.reliable);
}

TEST(LanguageDetect, AnEnglishSentenceIsReliablyEnglish) {
  const Detection en = detect_language(kEnglish, kServed);
  ASSERT_FALSE(en.languages.empty());
  EXPECT_EQ(en.languages[0].language, "en");
  EXPECT_TRUE(en.reliable);
}

TEST(LanguageDetect, AnswersInTheServersCodes) {
  // An NLLB server names German deu_Latn; a Hebrew text (CLD2: "iw") is the server's "he".
  const Detection de = detect_language(kGerman, {"eng_Latn", "deu_Latn"});
  ASSERT_FALSE(de.languages.empty());
  EXPECT_EQ(de.languages[0].language, "deu_Latn");
  const Detection he = detect_language("שלום עולם, מה שלומך היום? אני מקווה שהכל בסדר איתך ועם המשפחה.", {"en", "he"});
  ASSERT_FALSE(he.languages.empty());
  EXPECT_EQ(he.languages[0].language, "he");
}

// Languages only CLD2's full tables know (libcld2_full, linked ahead of libcld2: CMakeLists.txt),
// which M2M100 and NLLB translate.
// Languages only CLD2's full tables know.
const std::vector<std::string> kServedYorubaHausa = {"en", "yo", "ha"};

TEST(LanguageDetect, TheFullTablesKnowYoruba) {
  const Detection yo = detect_language("Ẹ kú àárọ̀, ṣé dáadáa ni? Mo fẹ́ lọ sí ọjà lónìí láti ra oúnjẹ fún àwọn ọmọ mi.",
                                       kServedYorubaHausa);
  ASSERT_FALSE(yo.languages.empty());
  EXPECT_EQ(yo.languages[0].language, "yo");
}

TEST(LanguageDetect, TheFullTablesKnowHausa) {
  const Detection ha = detect_language(
      "Sannu da zuwa, yaya aikin ku? Ina fatan kuna lafiya tare da iyalan ku baki daya a yau.", kServedYorubaHausa);
  ASSERT_FALSE(ha.languages.empty());
  EXPECT_EQ(ha.languages[0].language, "ha");
}

TEST(LanguageDetect, MixedTextGivesBothSortedByConfidence) {
  const Detection mixed = detect_language(kGerman + " " + kGerman + " " + kEnglish, kServed);
  ASSERT_EQ(mixed.languages.size(), 2u);
  EXPECT_EQ(mixed.languages[0].language, "de");
  EXPECT_EQ(mixed.languages[1].language, "en");
  EXPECT_GT(mixed.languages[0].confidence, mixed.languages[1].confidence);
  EXPECT_GT(mixed.languages[1].confidence, 10);
  EXPECT_LE(mixed.languages[0].confidence + mixed.languages[1].confidence, 100);
}

TEST(LanguageDetect, OnlyTheServersLanguages) {
  // French, reliably: not served, so nothing of it is answered, and `other` names it.
  const Detection fr = detect_language(kFrench, kServed);
  EXPECT_TRUE(fr.languages.empty());
  EXPECT_FALSE(fr.reliable);
  EXPECT_EQ(fr.other, "fr");
  const Detection served = detect_language(kFrench, {"en", "fr"});
  ASSERT_FALSE(served.languages.empty());
  EXPECT_EQ(served.languages[0].language, "fr");
  EXPECT_EQ(served.other, "");
}

TEST(LanguageDetect, ShortTextIsAGuessNeverReliable) {
  // Too short for CLD2's own threshold: its best-effort guess ("Straße": German; "Hallo" is
  // English to it), which CLD2 may call reliable but the detector never does.
  const Detection strasse = detect_language("Straße", kServed);
  ASSERT_FALSE(strasse.languages.empty());
  EXPECT_EQ(strasse.languages[0].language, "de");
  EXPECT_FALSE(strasse.reliable);
  EXPECT_FALSE(detect_language("Hallo", kServed).reliable);
  for (const std::string text : {"", "   ", "12345 !!!", "\n"}) {
    const Detection none = detect_language(text, kServed);
    EXPECT_TRUE(none.languages.empty()) << text;
    EXPECT_FALSE(none.reliable) << text;
  }
}

TEST(LanguageDetect, AControlCharacterOrNoncharacterCountsAsASpace) {
  // CLD2's checking call refuses all of these; the text around them is still German.
  for (const std::string bad :
       {std::string("\x01"), std::string("\x7f"), std::string("\xc2\x85"), std::string("\xef\xbf\xbe"),
        std::string("\xef\xb7\x90"), std::string("\xf4\x8f\xbf\xbf"), std::string(1, '\0')}) {
    const Detection d = detect_language("Ein Mann fährt mit" + bad + "dem Fahrrad die Straße entlang.", kServed);
    ASSERT_FALSE(d.languages.empty());
    EXPECT_EQ(d.languages[0].language, "de");
  }
}

TEST(LanguageDetect, InvalidUtf8DetectsNothing) {
  for (const std::string bad : {std::string("\xff"), std::string("\xc0\x80"), std::string("\xed\xa0\x80"),
                                std::string("\xe2\x82"), std::string("\x80")}) {
    const Detection d = detect_language("Ein Mann fährt mit " + bad + " dem Fahrrad die Straße entlang.", kServed);
    EXPECT_TRUE(d.languages.empty());
    EXPECT_FALSE(d.reliable);
  }
}

// Every code point in a German sentence (all of the BMP's first 0x3000, all noncharacters and
// the last two of every plane, every 61st otherwise): CLD2 takes each text whole (never refuses
// a byte, which would answer nothing), and never crashes.
TEST(LanguageDetect, EveryKindOfCodePointIsTaken) {
  const auto utf8 = [](uint32_t c) {
    std::string s;
    if (c < 0x80) {
      s += static_cast<char>(c);
    } else if (c < 0x800) {
      s += static_cast<char>(0xc0 | (c >> 6));
      s += static_cast<char>(0x80 | (c & 0x3f));
    } else if (c < 0x10000) {
      s += static_cast<char>(0xe0 | (c >> 12));
      s += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
      s += static_cast<char>(0x80 | (c & 0x3f));
    } else {
      s += static_cast<char>(0xf0 | (c >> 18));
      s += static_cast<char>(0x80 | ((c >> 12) & 0x3f));
      s += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
      s += static_cast<char>(0x80 | (c & 0x3f));
    }
    return s;
  };
  size_t tried = 0;
  for (uint32_t c = 0; c <= 0x10ffff; ++c) {
    if (c >= 0xd800 && c <= 0xdfff) continue;
    const bool always = c < 0x3000 || (c >= 0xfdd0 && c <= 0xfdef) || (c & 0xfffe) == 0xfffe;
    if (!always && c % 61 != 0) continue;
    ++tried;
    const Detection d = detect_language("Ein Mann fährt mit dem Fahrrad " + utf8(c) + " die Straße entlang.", kServed);
    ASSERT_FALSE(d.languages.empty()) << "U+" << std::hex << c;
    ASSERT_EQ(d.languages[0].language, "de") << "U+" << std::hex << c;
  }
  EXPECT_GT(tried, 30000u);
}

TEST(LanguageDetect, RandomBytesNeverCrash) {
  std::mt19937 random(33);
  for (int i = 0; i < 3000; ++i) {
    std::string bytes(random() % 300, '\0');
    for (char& b : bytes) b = static_cast<char>(random() % 256);
    if (i % 2) bytes = kGerman.substr(0, random() % kGerman.size()) + bytes;
    (void)detect_language(bytes, kServed, i % 3 == 0);
  }
}

// The server detects from many request threads at once, without a lock (language_detect.h says
// why CLD2 allows it): each thread gets the answers one thread gets.
TEST(LanguageDetect, ManyThreadsGetTheSameAnswers) {
  const std::vector<std::string> texts = {kGerman, kEnglish, kFrench, kGerman + " " + kEnglish, "Hallo", "<p>x</p>"};
  std::vector<Detection> expected;
  for (const std::string& t : texts) expected.push_back(detect_language(t, kServed));
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k)
    threads.emplace_back([&, k] {
      for (int round = 0; round < 200; ++round)
        for (size_t i = 0; i < texts.size(); ++i) {
          const Detection d = detect_language(texts[i], kServed);
          bool same = d.reliable == expected[i].reliable && d.other == expected[i].other &&
                      d.languages.size() == expected[i].languages.size();
          for (size_t j = 0; same && j < d.languages.size(); ++j)
            same = d.languages[j].language == expected[i].languages[j].language &&
                   d.languages[j].confidence == expected[i].languages[j].confidence;
          if (!same) ++mismatches[static_cast<size_t>(k)];
        }
    });
  for (std::thread& t : threads) t.join();
  for (int k = 0; k < 4; ++k) EXPECT_EQ(mismatches[static_cast<size_t>(k)], 0) << k;
}

TEST(LanguageDetect, HtmlTagsAreSkipped) {
  // English markup around a German sentence: as HTML, the German text decides.
  const std::string page =
      "<div class=\"the main content of the page\" title=\"hello world this is english\">" + kGerman + "</div>";
  const Detection html = detect_language(page, kServed, true);
  ASSERT_FALSE(html.languages.empty());
  EXPECT_EQ(html.languages[0].language, "de");
}

}  // namespace
}  // namespace ordo::server
