// Sentence splitting (ICU's rules with CLDR abbreviation suppressions) on hard cases, and
// units translated sentence by sentence and rejoined around their original separators.
// ctest-label: integration
#include <gtest/gtest.h>

#include "ordo/ordo.h"
#include "support/errors.h"
#include "support/fixtures.h"

namespace ordo {
namespace {

std::vector<std::string> sentences_of(const std::string& text, const std::string& language) {
  std::vector<std::string> out;
  for (const SentenceSpan& span : split_sentences(text, language))
    out.push_back(text.substr(span.begin, span.end - span.begin));
  return out;
}

using Sentences = std::vector<std::string>;

TEST(SentenceSplitting, HardCases) {
  // Abbreviations (CLDR suppressions for the language), decimals, quotes, ellipses, CJK and
  // Cyrillic punctuation, a missing final full stop, URLs.
  EXPECT_EQ(sentences_of("Mr. Smith went to Washington. He arrived on Monday.", "en"),
            (Sentences{"Mr. Smith went to Washington.", "He arrived on Monday."}));
  EXPECT_EQ(sentences_of("The price rose 3.5 percent in 2023. Analysts were surprised.", "en"),
            (Sentences{"The price rose 3.5 percent in 2023.", "Analysts were surprised."}));
  EXPECT_EQ(sentences_of("He said \"Stop.\" Then he left.", "en"), (Sentences{"He said \"Stop.\"", "Then he left."}));
  EXPECT_EQ(sentences_of("Wait... what happened? Nothing at all.", "en"),
            (Sentences{"Wait... what happened?", "Nothing at all."}));
  EXPECT_EQ(sentences_of("你好。我很好！谢谢？", "zh"), (Sentences{"你好。", "我很好！", "谢谢？"}));
  EXPECT_EQ(sentences_of("今日は晴れです。明日は雨でしょう。", "ja"),
            (Sentences{"今日は晴れです。", "明日は雨でしょう。"}));
  EXPECT_EQ(sentences_of("Привет. Как дела?", "ru"), (Sentences{"Привет.", "Как дела?"}));
  EXPECT_EQ(sentences_of("One sentence without an end", "en"), (Sentences{"One sentence without an end"}));
  EXPECT_EQ(sentences_of("First one. Second without an end", "en"), (Sentences{"First one.", "Second without an end"}));
  EXPECT_EQ(sentences_of("Visit www.example.com/a.html today. Thanks.", "en"),
            (Sentences{"Visit www.example.com/a.html today.", "Thanks."}));
  EXPECT_EQ(sentences_of("", "en"), Sentences{});
  EXPECT_EQ(sentences_of(" \n\t ", "en"), Sentences{});
}

TEST(SentenceSplitting, LanguageCodesAsModelsWriteThem) {
  // "Mr." is an English abbreviation: suppressed for en, eng, __en__ and eng_Latn alike.
  for (const std::string code : {"en", "eng", "__en__", "eng_Latn", "en-US"})
    EXPECT_EQ(sentences_of("Mr. Smith is here. Good.", code).size(), 2u) << code;
  // Without a language (ICU's root rules) there is no suppression: "Mr." ends a sentence.
  EXPECT_EQ(sentences_of("Mr. Smith is here. Good.", "").size(), 3u);
}

TEST(SentenceSplitting, ASingleLineBreakInsideASentenceIsAWrap) {
  EXPECT_EQ(sentences_of("A line that wraps\nhere. Next one.", "en"),
            (Sentences{"A line that wraps\nhere.", "Next one."}));
}

TEST(SentenceSplitting, ABlankLineAlwaysEndsAUnit) {
  EXPECT_EQ(sentences_of("A heading\n\nThe body text.", "en"), (Sentences{"A heading", "The body text."}));
}

TEST(SentenceSplitting, CrLfLineBreaksActAsLfOnes) {
  EXPECT_EQ(sentences_of("Windows lines\r\nwrap too.\r\n\r\nNew paragraph.", "en"),
            (Sentences{"Windows lines\r\nwrap too.", "New paragraph."}));
}

// SentenceLayout, the one split-and-rejoin of plain text (translate_documents and the server's
// format=text): the same text cut as paragraphs (soft wraps) or line by line, every byte
// between sentences kept.
const std::string kWrappedText = "  A line that wraps\r\nhere. Next one.\n\n\tLast";

SentenceLayout as_paragraphs() { return SentenceLayout(kWrappedText, "en"); }

SentenceLayout line_by_line() { return SentenceLayout(kWrappedText, "en", LineBreaks::kEndLine); }

TEST(SentenceLayout, AParagraphsSoftWrapIsASpaceInsideItsSentence) {
  EXPECT_EQ(as_paragraphs().sentences(), (Sentences{"A line that wraps  here.", "Next one.", "Last"}));
}

TEST(SentenceLayout, ParagraphTranslationsAreRejoinedAroundTheTextBetweenSentences) {
  EXPECT_EQ(as_paragraphs().rebuild({"1", "2", "3"}), "  1 2\n\n\t3");
}

TEST(SentenceLayout, LineByLineEachLineBreakEndsASentence) {
  EXPECT_EQ(line_by_line().sentences(), (Sentences{"A line that wraps", "here.", "Next one.", "Last"}));
}

TEST(SentenceLayout, LineByLineTranslationsKeepEachLineBreak) {
  EXPECT_EQ(line_by_line().rebuild({"1", "2", "3", "4"}), "  1\r\n2 3\n\n\t4");
}

TEST(SentenceLayout, MissingTranslationsAreEmpty) { EXPECT_EQ(line_by_line().rebuild({"1"}), "  1\r\n \n\n\t"); }

TEST(SentenceLayout, TheSentencesOwnSpansGiveTheTextBack) {
  for (const SentenceLayout& layout : {as_paragraphs(), line_by_line()}) {
    std::vector<std::string> same;
    for (const SentenceSpan& span : layout.spans())
      same.push_back(kWrappedText.substr(span.begin, span.end - span.begin));
    EXPECT_EQ(layout.rebuild(same), kWrappedText);
  }
}

TEST(SentenceLayout, AnEmptyTextHasNoSentences) {
  EXPECT_TRUE(SentenceLayout("", "en").sentences().empty());
  EXPECT_EQ(SentenceLayout("", "en").rebuild({}), "");
}

TEST(SentenceLayout, InvalidUtf8IsAnError) {
  EXPECT_NE(
      testing::error_of([] { SentenceLayout("bad \xff byte.", "en", LineBreaks::kEndLine); }).find("invalid UTF-8"),
      std::string::npos);
}

TEST(SentenceSplitting, InvalidUtf8IsAnError) {
  EXPECT_NE(testing::error_of([] { split_sentences("bad \xff byte.", "en"); }).find("invalid UTF-8"),
            std::string::npos);
}

// Four units (leading spaces and three between sentences, one line, an empty one, a wrapped
// sentence) translated as documents, and their five sentences translated in one call.
struct TranslatedUnits {
  std::vector<DocumentTranslation> docs;
  std::vector<TranslationResult> direct;
  TranslatedUnits() {
    const Translator translator(testing::fixture_dir("marian_opus_en_mg"));
    DecodeOptions options;
    options.beam_size = 2;
    options.max_new_tokens = 6;
    docs = translate_documents(
        translator, {"  Hello there.   How are you?\n", "One line only", "", "A wrapped\nsentence. And another."},
        options, "en");
    direct = translator.translate(
        {"Hello there.", "How are you?", "One line only", "A wrapped sentence.", "And another."}, options);
  }
};

const TranslatedUnits& translated_units() {
  static const TranslatedUnits made;
  return made;
}

TEST(DocumentTranslation, SentencesAreTranslatedAsOneStream) {
  const TranslatedUnits& units = translated_units();
  ASSERT_EQ(units.docs.size(), 4u);
  // The same sentences translated in one call give the same hypotheses.
  std::vector<const TranslationResult*> joined;
  for (const DocumentTranslation& doc : units.docs)
    for (const TranslationResult& r : doc.results) joined.push_back(&r);
  ASSERT_EQ(joined.size(), units.direct.size());
  for (size_t i = 0; i < units.direct.size(); ++i)
    EXPECT_EQ(joined[i]->hypotheses[0].ids, units.direct[i].hypotheses[0].ids) << i;
}

// Leading spaces, three spaces between, the final newline.
TEST(DocumentTranslation, TranslationsAreRejoinedAroundTheUnitsOwnSeparators) {
  const TranslatedUnits& units = translated_units();
  ASSERT_EQ(units.docs.size(), 4u);
  ASSERT_EQ(units.direct.size(), 5u);
  const auto text = [&](size_t i) { return units.direct[i].hypotheses[0].text; };
  EXPECT_EQ(units.docs[0].text, "  " + text(0) + "   " + text(1) + "\n");
  EXPECT_EQ(units.docs[1].text, text(2));
  EXPECT_EQ(units.docs[2].text, "");
  EXPECT_EQ(units.docs[3].text, text(3) + " " + text(4));
}

}  // namespace
}  // namespace ordo
