// ctest-label: unit
// Subtitles (src/document/subtitles.cpp) read into sentences and written back with made-up
// translations: cue numbers, timings, settings and notes stay byte for byte, a sentence over
// two cues is one unit shared back over both, dialogue lines stay lines of their own, and
// files that are not subtitles are refused with the line at fault. Files that aeidon (gaupol's
// library, which translate-toolkit's sub2po uses) wrote (tests/data/files/weather.srt and .vtt,
// tools/codegen/files/make_translate_toolkit_files.sh) are translated and read back by sub2po
// and aeidon.
#include <gtest/gtest.h>

#include <cctype>
#include <sstream>

#include "document/file_content.h"
#include "document/markup_fragment.h"
#include "files/file_test_support.h"
#include "ordo/error.h"
#include "ordo/files.h"
#include "support/errors.h"
#include "support/temp_dir.h"

namespace ordo::document {
namespace {

using namespace ordo::testing;

std::vector<std::string> texts(const FileContent& content) {
  std::vector<std::string> out;
  for (const Unit& unit : content.units) out.push_back(unit.text);
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

const char* const kSrt =
    "1\n"
    "00:00:01,000 --> 00:00:03,000\n"
    "Hello there, my friend.\n"
    "\n"
    "2\n"
    "00:00:03,500 --> 00:00:06,000\n"
    "I wanted to tell you\n"
    "\n"
    "3\n"
    "00:00:06,500 --> 00:00:08,000\n"
    "something important about the weather.\n"
    "\n"
    "4\n"
    "00:00:09,000 --> 00:00:11,000\n"
    "- Who is there?\n"
    "- It is me.\n"
    "\n"
    "5\n"
    "00:00:12,000 --> 00:00:14,000\n"
    "<i>The rain stops</i>\n"
    "<i>at noon.</i>\n";

std::unique_ptr<FileContent> srt(const std::string& text) { return read_subtitles(text, FileFormat::kSrt, {}); }
std::unique_ptr<FileContent> vtt(const std::string& text) { return read_subtitles(text, FileFormat::kVtt, {}); }

TEST(Srt, EveryCueNumberAndTimingLineIsKeptAsItWas) {
  const std::vector<std::string> source = lines_of(kSrt), result = lines_of(shouted(*srt(kSrt)));
  ASSERT_EQ(result.size(), source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    const bool number = !source[i].empty() && std::isdigit(static_cast<unsigned char>(source[i][0]));
    if (number || source[i].empty()) EXPECT_EQ(result[i], source[i]) << "line " << i + 1;
  }
  EXPECT_NE(result[2], source[2]);
  EXPECT_EQ(result[2], "HELLO THERE, MY FRIEND.");
}

TEST(Srt, ASentenceOverTwoCuesIsOneUnit) {
  const auto content = srt(kSrt);
  EXPECT_EQ(texts(*content), (std::vector<std::string>{"Hello there, my friend.",
                                                       "I wanted to tell you something important about the weather.",
                                                       "Who is there?", "It is me.", content->units[4].text}));
  EXPECT_FALSE(content->units[1].markup);
  EXPECT_TRUE(content->units[4].markup);
}

TEST(Srt, ASentenceOverTwoCuesIsSharedBackOverBothByLength) {
  const auto content = srt(kSrt);
  std::vector<std::string> translations;
  for (const Unit& unit : content->units) translations.push_back(shout(unit.text));
  translations[1] = "Ich wollte dir etwas Wichtiges über das Wetter sagen.";
  const std::vector<std::string> result = lines_of(content->rebuild(translations));
  // "I wanted to tell you" was 20 of the sentence's 59 characters: 18 of these 53, and the
  // space nearest that is after "etwas" (20).
  EXPECT_EQ(result[6], "Ich wollte dir etwas");
  EXPECT_EQ(result[10], "Wichtiges über das Wetter sagen.");
}

TEST(Srt, ATranslationOfTwoWordsLeavesNoCueEmpty) {
  const auto content = srt(kSrt);
  std::vector<std::string> translations;
  for (const Unit& unit : content->units) translations.push_back(unit.text);
  translations[1] = "Zwei Wörter";
  const std::vector<std::string> result = lines_of(content->rebuild(translations));
  EXPECT_EQ(result[6], "Zwei");
  EXPECT_EQ(result[10], "Wörter");
}

TEST(Srt, AWordIsNeverCutButTextWithoutSpacesIsCutBetweenCharacters) {
  const auto content = srt(kSrt);
  std::vector<std::string> translations;
  for (const Unit& unit : content->units) translations.push_back(unit.text);
  translations[1] = "Ja";
  std::vector<std::string> result = lines_of(content->rebuild(translations));
  EXPECT_EQ(result[6], "Ja");
  EXPECT_EQ(result[7], "");  // the cue left without text
  translations[1] = "我想告诉你天气的重要事情。";
  result = lines_of(content->rebuild(translations));
  EXPECT_EQ(result[6], "我想告诉");
  EXPECT_EQ(result[10], "你天气的重要事情。");
}

TEST(Srt, DialogueLinesAreSentencesOfTheirOwnAndKeepTheirDashes) {
  const std::vector<std::string> result = lines_of(shouted(*srt(kSrt)));
  EXPECT_EQ(result[14], "- WHO IS THERE?");
  EXPECT_EQ(result[15], "- IT IS ME.");
}

TEST(Srt, CueTagsGoBackAroundTheirWordsAndCuesKeepTheirLines) {
  const std::vector<std::string> result = lines_of(shouted(*srt(kSrt)));
  EXPECT_EQ(result[19], "<i>THE RAIN STOPS</i>");
  EXPECT_EQ(result[20], "<i>AT NOON.</i>");
}

TEST(Srt, RebuildWithTheSourceSentencesGivesTheFileBack) {
  const auto content = srt(kSrt);
  EXPECT_EQ(content->rebuild(texts(*content)), kSrt);
}

TEST(Srt, ToleratesAByteOrderMarkCrLfExtraBlankLinesAndNoFinalBlankLine) {
  const std::string text =
      "\xEF\xBB\xBF"
      "1\r\n00:00:01,000 --> 00:00:02,000\r\nGood morning.\r\n\r\n\r\n\r\n"
      "2\r\n00:00:03,000 --> 00:00:04,000\r\nGood night.";
  const auto content = srt(text);
  EXPECT_EQ(texts(*content), (std::vector<std::string>{"Good morning.", "Good night."}));
  EXPECT_EQ(shouted(*content),
            "\xEF\xBB\xBF"
            "1\r\n00:00:01,000 --> 00:00:02,000\r\nGOOD MORNING.\r\n\r\n\r\n\r\n"
            "2\r\n00:00:03,000 --> 00:00:04,000\r\nGOOD NIGHT.");
}

TEST(Srt, AWrappedCueIsWrappedAgainNearTheMiddle) {
  const auto content = srt("1\n00:00:01,000 --> 00:00:04,000\nThis line is long\nand goes on.\n");
  ASSERT_EQ(content->units.size(), 1u);
  EXPECT_EQ(content->rebuild({"Diese Zeile ist lang und geht immer weiter."}),
            "1\n00:00:01,000 --> 00:00:04,000\nDiese Zeile ist lang\nund geht immer weiter.\n");
}

TEST(Srt, ATimingLineThatDoesNotParseIsAnErrorNamingTheLine) {
  const std::string text = "1\n00:00:01,000 --> 00:00:02,000\nFine.\n\n2\n00:00:03,000 -> 00:00:04,000\nBroken.\n";
  EXPECT_EQ(error_of([&] { srt(text); }),
            "SRT file: line 6: the timing line does not parse (expected 00:00:01,000 --> 00:00:02,500)");
}

TEST(Srt, AFileThatIsNotSubtitlesIsRefused) {
  EXPECT_NE(error_of([] { srt("Just a paragraph of text.\nAnd another line.\n"); }).find("SRT file: line 1"),
            std::string::npos);
  EXPECT_EQ(error_of([] { srt(""); }), "SRT file: no subtitle cue found: not an SRT file");
  EXPECT_NE(error_of([] { srt(std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR\xff\xfe", 18)); }).find("SRT file: line"),
            std::string::npos);
  EXPECT_NE(error_of([] { srt("1\n00:00:01,0"); }).find("SRT file: line 2: the timing line does not parse"),
            std::string::npos);
  EXPECT_NE(error_of([] { srt("1\n"); }).find("SRT file: line 1: a cue number without a timing line"),
            std::string::npos);
}

TEST(Srt, ACueWithoutTheBlankLineAfterItEndsAtTheNextNumberAndTiming) {
  const auto content =
      srt("1\n00:00:01,000 --> 00:00:02,000\nFirst cue.\n2\n00:00:03,000 --> 00:00:04,000\nSecond cue.\n");
  EXPECT_EQ(texts(*content), (std::vector<std::string>{"First cue.", "Second cue."}));
  EXPECT_EQ(shouted(*content),
            "1\n00:00:01,000 --> 00:00:02,000\nFIRST CUE.\n2\n00:00:03,000 --> 00:00:04,000\nSECOND CUE.\n");
}

TEST(Srt, ALineOfManyAngleBracketsIsReadInOnePass) {
  const auto content = srt("1\n00:00:01,000 --> 00:00:02,000\nA " + std::string(300000, '<') + " b.\n");
  EXPECT_EQ(content->units.size(), 1u);
}

TEST(Srt, ThousandsOfNestedTagsAreReadAndWritten) {
  std::string line;
  for (int i = 0; i < 20000; ++i) line += "<i>";
  line += "Deep.";
  for (int i = 0; i < 20000; ++i) line += "</i>";
  const auto content = srt("1\n00:00:01,000 --> 00:00:02,000\n" + line + "\n");
  ASSERT_EQ(content->units.size(), 1u);
  EXPECT_NE(shouted(*content).find("DEEP."), std::string::npos);
}

TEST(Srt, NotUtf8IsAnErrorNamingTheLine) {
  EXPECT_EQ(error_of([] { srt("1\n00:00:01,000 --> 00:00:02,000\nCaf\xE9 au lait.\n"); }),
            "SRT file: line 3: not UTF-8 text (convert the file to UTF-8)");
}

TEST(Srt, ASentenceWithoutAnEndSpansAtMostFourCues) {
  std::string text;
  for (int i = 1; i <= 9; ++i)
    text += std::to_string(i) + "\n00:00:0" + std::to_string(i) + ",000 --> 00:00:0" + std::to_string(i) +
            ",500\nla la la\n\n";
  const auto content = srt(text);
  EXPECT_EQ(content->units.size(), 3u);
  EXPECT_EQ(content->units[0].text, "la la la la la la la la la la la la");
}

const char* const kVtt =
    "WEBVTT - a test\n"
    "Kind: captions\n"
    "\n"
    "NOTE This note stays\n"
    "as it is.\n"
    "\n"
    "STYLE\n"
    "::cue { color: yellow }\n"
    "\n"
    "intro\n"
    "00:01.000 --> 00:04.000 align:start line:0\n"
    "<v Bob>Where are you going</v>\n"
    "\n"
    "00:00:04.500 --> 00:00:06.000 position:10%\n"
    "<v Bob>so early?</v> Tom &amp; Ann.\n"
    "\n"
    "00:07.000 --> 00:09.000\n"
    "<c.yellow>Home.</c>\n";

TEST(Vtt, SettingsIdentifiersNotesAndStylesAreKeptAsTheyWere) {
  const std::vector<std::string> source = lines_of(kVtt), result = lines_of(shouted(*vtt(kVtt)));
  ASSERT_EQ(result.size(), source.size());
  for (size_t i : {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 13, 15, 16}) EXPECT_EQ(result[i], source[i]) << i + 1;
  EXPECT_EQ(result[17], "<c.yellow>HOME.</c>");
}

TEST(Vtt, CueTagsAreSpansAndTheSentenceOverTwoCuesKeepsThem) {
  const auto content = vtt(kVtt);
  ASSERT_EQ(content->units.size(), 3u);
  EXPECT_TRUE(content->units[0].markup);
  std::vector<FragmentPiece> pieces = read_fragment(content->units[0].text);
  std::string text;
  for (const FragmentPiece& p : pieces) text += p.text;
  EXPECT_EQ(text, "Where are you going so early?");
  const std::vector<std::string> result = lines_of(shouted(*content));
  EXPECT_EQ(result[11], "<v Bob>WHERE ARE YOU GOING</v>");
  EXPECT_EQ(result[14], "<v Bob>SO EARLY?</v> TOM &amp; ANN.");
}

TEST(Srt, ATagLeftOpenAtTheEndOfACueStaysInThatCue) {
  const std::string text =
      "1\n00:00:01,000 --> 00:00:02,000\nIt is late. <i>\n\n2\n00:00:03,000 --> 00:00:04,000\nGo home.\n";
  const auto content = srt(text);
  ASSERT_EQ(content->units.size(), 2u);
  EXPECT_FALSE(content->units[1].markup);
  EXPECT_EQ(shouted(*content),
            "1\n00:00:01,000 --> 00:00:02,000\nIT IS LATE.\n\n2\n00:00:03,000 --> 00:00:04,000\nGO HOME.\n");
}

TEST(Vtt, RebuildWithTheSourceSentencesGivesTheFileBack) {
  const auto content = vtt(kVtt);
  EXPECT_EQ(content->rebuild(texts(*content)), kVtt);
}

// Every cut of a file reads as subtitles or is refused with an ordo::Error; none crashes.
TEST(Srt, EveryTruncationIsReadOrRefused) {
  for (const auto& [text, format] :
       {std::pair<std::string, FileFormat>{kSrt, FileFormat::kSrt}, {kVtt, FileFormat::kVtt}}) {
    for (size_t n = 0; n <= text.size(); ++n) {
      try {
        const auto content = read_subtitles(text.substr(0, n), format, {});
        shouted(*content);
      } catch (const Error&) {
      }
    }
  }
}

TEST(Vtt, AFileWithoutTheWebVttHeaderIsRefused) {
  EXPECT_EQ(error_of([] { vtt("00:01.000 --> 00:02.000\nHello.\n"); }),
            "WebVTT file: line 1: does not start with WEBVTT: not a WebVTT file");
  EXPECT_EQ(error_of([] { vtt(std::string("\x1a\x45\xdf\xa3\0\0", 6)); }),
            "WebVTT file: line 1: does not start with WEBVTT: not a WebVTT file");
  EXPECT_EQ(error_of([] { vtt(kSrt); }), "WebVTT file: line 1: does not start with WEBVTT: not a WebVTT file");
  EXPECT_EQ(error_of([] { vtt("WEBVTT\n\nNOTE nothing else\n"); }),
            "WebVTT file: no subtitle cue found: not a WebVTT file");
  EXPECT_NE(error_of([] {
              vtt("WEBVTT\n\n00:01.000 --> 00:02\nHello.\n");
            }).find("WebVTT file: line 3: the timing line does not parse"),
            std::string::npos);
}

}  // namespace
}  // namespace ordo::document

namespace ordo::document {
namespace {

TEST(SubtitleFile, SentencesGivenBackAsTheyWereGiveTheFileBack) {
  EXPECT_EQ(given_back(kSrt, FileFormat::kSrt), kSrt);
  EXPECT_EQ(given_back(kVtt, FileFormat::kVtt), kVtt);
}

}  // namespace
}  // namespace ordo::document

namespace ordo::document {
namespace {

bool is_timing(const std::string& line) { return line.find(" --> ") != std::string::npos; }
bool is_number(const std::string& line) {
  return !line.empty() && line.find_first_not_of("0123456789") == std::string::npos;
}

// The file with every cue text line shouted and all other lines as they were.
std::string cue_lines_shouted(const std::string& file) {
  std::string out;
  std::istringstream in(file);
  for (std::string line; std::getline(in, line);)
    out += (line.empty() || is_timing(line) || is_number(line) || line == "WEBVTT" ? line : shout(line)) + "\n";
  return out;
}

TEST(SrtFromAeidon, TimingLinesAreKeptByteForByteAndCueTextsTranslated) {
  const std::string source = data_file("weather.srt");
  const std::string result = shouted(*srt(source));
  EXPECT_EQ(result, cue_lines_shouted(source));
  EXPECT_TRUE(result.find("\n00:00:06,500 --> 00:00:08,250\nSOMETHING IMPORTANT ABOUT THE WEATHER.\n") !=
              std::string::npos)
      << result;
}

TEST(VttFromAeidon, TimingLinesAreKeptByteForByteAndCueTextsTranslated) {
  const std::string source = data_file("weather.vtt");
  const std::string result = shouted(*vtt(source));
  EXPECT_EQ(result, cue_lines_shouted(source));
  EXPECT_TRUE(result.find("\n00:12.000 --> 00:14.000\n<i>THE RAIN STOPS AT NOON.</i>\n") != std::string::npos)
      << result;
}

TEST(SubtitlesFromAeidon, SentencesGivenBackAsTheyWereGiveTheFilesBack) {
  EXPECT_EQ(given_back(data_file("weather.srt"), FileFormat::kSrt), data_file("weather.srt"));
  EXPECT_EQ(given_back(data_file("weather.vtt"), FileFormat::kVtt), data_file("weather.vtt"));
}

TEST(SrtFromAeidon, Sub2poReadsTheOutputAgainstTheSourceCueByCue) {
  if (!succeeds("command -v sub2po")) GTEST_SKIP() << "translate-toolkit's sub2po is not installed";
  ordo::testing::TempDir dir;
  const std::string source = dir.write("source.srt", data_file("weather.srt"));
  const std::string output = dir.write("output.srt", shouted(*srt(data_file("weather.srt"))));
  const auto [status, said] =
      run("sub2po --progress=none -t '" + source + "' -i '" + output + "' -o '" + dir.file("output.po") + "'");
  ASSERT_EQ(status, 0) << said;
  EXPECT_EQ(po_entries(read_file_bytes(dir.file("output.po"))),
            (std::vector<std::vector<std::string>>{
                {"00:00:01.000--%3E00:00:03.000", "Hello there, my friend.", "HELLO THERE, MY FRIEND."},
                {"00:00:03.500--%3E00:00:06.000", "I wanted to tell you", "I WANTED TO TELL YOU"},
                {"00:00:06.500--%3E00:00:08.250", "something important about the weather.",
                 "SOMETHING IMPORTANT ABOUT THE WEATHER."},
                {"00:00:09.000--%3E00:00:11.000", "- Who is there?\\n- It is me.", "- WHO IS THERE?\\n- IT IS ME."},
                {"00:00:12.000--%3E00:00:14.000", "<i>The rain stops at noon.</i>", "<i>THE RAIN STOPS AT NOON.</i>"}}))
      << read_file_bytes(dir.file("output.po"));
}

TEST(VttFromAeidon, AeidonReadsTheOutputWithTheSameTimesAndTheTranslatedTexts) {
  // translate-toolkit has no WebVTT converter; aeidon, which wrote the file, reads it back.
  if (!succeeds("/usr/bin/python3 -c 'import aeidon'")) GTEST_SKIP() << "python3-aeidon is not installed";
  ordo::testing::TempDir dir;
  const std::string output = dir.write("output.vtt", shouted(*vtt(data_file("weather.vtt"))));
  const auto [status, said] =
      run("/usr/bin/python3 -c 'import sys, aeidon\n"
          "project = aeidon.Project()\n"
          "project.open_main(sys.argv[1], \"utf_8\")\n"
          "for s in project.subtitles: print(s.start_time, s.end_time, repr(s.main_text))' '" +
          output + "'");
  ASSERT_EQ(status, 0) << said;
  EXPECT_EQ(said,
            "00:00:01.000 00:00:03.000 'HELLO THERE, MY FRIEND.'\n"
            "00:00:03.500 00:00:06.000 'I WANTED TO TELL YOU'\n"
            "00:00:06.500 00:00:08.250 'SOMETHING IMPORTANT ABOUT THE WEATHER.'\n"
            "00:00:09.000 00:00:11.000 '- WHO IS THERE?\\n- IT IS ME.'\n"
            "00:00:12.000 00:00:14.000 '<i>THE RAIN STOPS AT NOON.</i>'\n");
}

}  // namespace
}  // namespace ordo::document
