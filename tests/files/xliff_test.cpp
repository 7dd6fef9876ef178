// ctest-label: unit
// XLIFF 1.2 and 2.0 (src/document/xliff.cpp) with made-up translations: targets are filled or
// created after their source, with the source's inline codes, state set to translated and the
// target language written; translated and translate="no" units are left alone. A file that
// translate-toolkit's po2xliff made (tests/data/files/hello_de.xlf,
// tools/codegen/files/make_translate_toolkit_files.sh) is filled and read back by its xliff2po.
#include <gtest/gtest.h>

#include <cctype>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

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
using ordo::testing::shouted;  // beside the local shouted() below, which would hide it

// The XLIFF file rebuilt with each unit shouted.
std::string shouted(const std::string& xliff, const FileOptions& options) {
  return shouted(*read_xliff(xliff, options));
}

const char* const kXliff12 =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<xliff version=\"1.2\" xmlns=\"urn:oasis:names:tc:xliff:document:1.2\">\n"
    "  <file source-language=\"en\" datatype=\"plaintext\" original=\"app.txt\">\n"
    "    <body>\n"
    "      <trans-unit id=\"1\">\n"
    "        <source>Hello world.</source>\n"
    "      </trans-unit>\n"
    "      <group id=\"g\">\n"
    "        <trans-unit id=\"2\">\n"
    "          <source>Click <g id=\"b1\">here</g> to see<x id=\"img1\"/> the picture.</source>\n"
    "          <target/>\n"
    "        </trans-unit>\n"
    "      </group>\n"
    "      <trans-unit id=\"3\">\n"
    "        <source>Already done.</source>\n"
    "        <target state=\"final\">Schon fertig.</target>\n"
    "      </trans-unit>\n"
    "      <trans-unit id=\"4\" translate=\"no\">\n"
    "        <source>BrandName</source>\n"
    "      </trans-unit>\n"
    "    </body>\n"
    "  </file>\n"
    "</xliff>\n";

const char* const kXliff20 =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<xliff xmlns=\"urn:oasis:names:tc:xliff:document:2.0\" version=\"2.0\" srcLang=\"en\">\n"
    "  <file id=\"f1\">\n"
    "    <unit id=\"u1\">\n"
    "      <segment>\n"
    "        <source>Press <pc id=\"1\">Save</pc> now.</source>\n"
    "      </segment>\n"
    "      <segment state=\"final\">\n"
    "        <source>Done.</source>\n"
    "        <target>Fertig.</target>\n"
    "      </segment>\n"
    "    </unit>\n"
    "    <unit id=\"u2\" translate=\"no\">\n"
    "      <segment><source>Keep me.</source></segment>\n"
    "    </unit>\n"
    "    <unit id=\"u3\">\n"
    "      <segment>\n"
    "        <source>Hello <ph id=\"2\"/>friend.</source>\n"
    "      </segment>\n"
    "    </unit>\n"
    "  </file>\n"
    "</xliff>\n";

TEST(Xliff12, UnitsWithoutATargetAreTheUnits) {
  const auto content = read_xliff(kXliff12, {});
  ASSERT_EQ(content->units.size(), 2u);
  EXPECT_EQ(content->units[0].text, "Hello world.");
  EXPECT_FALSE(content->units[0].markup);
  EXPECT_TRUE(content->units[1].markup);
}

TEST(Xliff12, AMissingTargetIsMadeAfterTheSourceWithItsStateAndLanguage) {
  const std::string result = shouted(kXliff12, to("de"));
  EXPECT_TRUE(Contains(result,
                       "<file source-language=\"en\" datatype=\"plaintext\" original=\"app.txt\" "
                       "target-language=\"de\">"))
      << result;
  EXPECT_TRUE(Contains(result,
                       "        <source>Hello world.</source>\n"
                       "        <target state=\"translated\">HELLO WORLD.</target>\n"
                       "      </trans-unit>"))
      << result;
}

TEST(Xliff12, AnEmptyTargetIsFilledWithTheSourcesInlineCodes) {
  const std::string result = shouted(kXliff12, to("de"));
  EXPECT_TRUE(Contains(result,
                       "<target state=\"translated\">CLICK <g id=\"b1\">HERE</g> TO SEE<x id=\"img1\"/> THE "
                       "PICTURE.</target>"))
      << result;
}

TEST(Xliff12, TranslatedAndUntranslatableUnitsAreLeftAlone) {
  const std::string result = shouted(kXliff12, to("de"));
  EXPECT_TRUE(Contains(result, "<target state=\"final\">Schon fertig.</target>")) << result;
  EXPECT_TRUE(Contains(result,
                       "<trans-unit id=\"4\" translate=\"no\">\n        <source>BrandName</source>\n"
                       "      </trans-unit>"))
      << result;
}

TEST(Xliff12, RetranslateFillsTranslatedUnitsToo) {
  FileOptions options = to("de");
  options.retranslate = true;
  const auto content = read_xliff(kXliff12, options);
  EXPECT_EQ(content->units.size(), 3u);
  EXPECT_TRUE(Contains(shouted(kXliff12, options), "<target state=\"translated\">ALREADY DONE.</target>"));
}

TEST(Xliff20, SegmentsWithoutATargetGetOneWithTheSegmentStateSet) {
  const auto content = read_xliff(kXliff20, {});
  ASSERT_EQ(content->units.size(), 2u);
  const std::string result = shouted(kXliff20, to("de"));
  EXPECT_TRUE(Contains(result, "srcLang=\"en\" trgLang=\"de\">")) << result;
  EXPECT_TRUE(Contains(result,
                       "      <segment state=\"translated\">\n"
                       "        <source>Press <pc id=\"1\">Save</pc> now.</source>\n"
                       "        <target>PRESS <pc id=\"1\">SAVE</pc> NOW.</target>\n"))
      << result;
  EXPECT_TRUE(Contains(result, "<target>HELLO <ph id=\"2\"/>FRIEND.</target>")) << result;
}

TEST(Xliff20, TranslatedAndUntranslatableSegmentsAreLeftAlone) {
  const std::string result = shouted(kXliff20, to("de"));
  EXPECT_TRUE(Contains(result,
                       "      <segment state=\"final\">\n"
                       "        <source>Done.</source>\n"
                       "        <target>Fertig.</target>\n"))
      << result;
  EXPECT_TRUE(Contains(result, "<segment><source>Keep me.</source></segment>")) << result;
}

// Every cut of a file reads or is refused with an ordo::Error; none crashes.
TEST(Xliff, EveryTruncationIsReadOrRefused) {
  for (const std::string text : {kXliff12, kXliff20}) {
    for (size_t n = 0; n <= text.size(); ++n) {
      try {
        shouted(text.substr(0, n), to("de"));
      } catch (const Error&) {
      }
    }
  }
}

TEST(Xliff, FilesThatAreNotXliffAreRefused) {
  EXPECT_EQ(error_of([] { read_xliff("<html><body>Hi</body></html>", {}); }),
            "XLIFF file: the root element is <html>, not <xliff>: not an XLIFF file");
  EXPECT_EQ(error_of([] {
              read_xliff("<xliff version=\"1.2\"><file><body><trans-unit>", {});
            }).rfind("XLIFF file: malformed XML", 0),
            0u);
  EXPECT_EQ(error_of([] { read_xliff(std::string("\x89PNG\r\n\x1a\n\0\0", 10), {}); }).rfind("XLIFF file: ", 0), 0u);
  EXPECT_EQ(error_of([] { read_xliff("", {}); }).rfind("XLIFF file: ", 0), 0u);
  EXPECT_EQ(error_of([] { read_xliff("<xliff version=\"3.0\"/>", {}); }),
            "XLIFF file: version 3.0 is not supported (1.2 or 2.x)");
}

}  // namespace
}  // namespace ordo::document

namespace ordo::document {
namespace {

TEST(XliffFile, SourcesGivenBackAsTheyWereMakeTargetsEqualToThem) {
  const std::string result = given_back(kXliff12, FileFormat::kXliff, to("de"));
  EXPECT_TRUE(Contains(result,
                       "<target state=\"translated\">Click <g id=\"b1\">here</g> to see<x id=\"img1\"/> the "
                       "picture.</target>"))
      << result;
}

}  // namespace
}  // namespace ordo::document

namespace ordo::document {
namespace {

// Upper case but for what follows a %: a "translation" that keeps printf placeholders, which
// XLIFF files hold as plain text.
std::string shout_keeping_printf(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i)
    out += i > 0 && text[i - 1] == '%' ? text[i] : static_cast<char>(std::toupper(static_cast<unsigned char>(text[i])));
  return out;
}

// hello_de.xlf filled through ordo::FileDocument, its sentences shouted.
std::string po2xliff_file_translated() {
  FileDocument document(data_file("hello_de.xlf"), FileFormat::kXliff, to("de"));
  std::vector<AlignedTranslation> translations;
  for (const std::string& sentence : document.sentences())
    translations.push_back({shout_keeping_printf(sentence), {}, 0, 0});
  return document.rebuild(translations);
}

// A catalogue's keywords (msgid, msgid_plural, msgstr, msgstr[0], ...) with their strings joined
// as written (escapes kept), in file order; comments other than flags (#,) are left out.
std::vector<std::pair<std::string, std::string>> po_fields(const std::string& po) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in(po);
  const auto quoted = [](const std::string& s) {
    const size_t a = s.find('"'), b = s.rfind('"');
    return a == std::string::npos || b <= a ? std::string() : s.substr(a + 1, b - a - 1);
  };
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("#,", 0) == 0) {
      out.push_back({"#,", line.substr(2)});
    } else if (line.rfind("msg", 0) == 0) {
      out.push_back({line.substr(0, line.find(' ')), quoted(line)});
    } else if (line.rfind("\"", 0) == 0 && !out.empty()) {
      out.back().second += quoted(line);
    }
  }
  return out;
}

std::vector<std::string> values_of(const std::vector<std::pair<std::string, std::string>>& fields,
                                   const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& [key, value] : fields)
    if (key.rfind(prefix, 0) == 0) out.push_back(value);
  return out;
}

TEST(XliffFromPo2xliff, TheUnitsAreTheEntriesWithoutATranslationOrNeedingOne) {
  const auto content = read_xliff(data_file("hello_de.xlf"), {});
  std::vector<std::string> texts;
  // Placeholders are points (their text comes back from the source), a line break a break.
  for (const Unit& unit : content->units) {
    std::string text;
    for (const FragmentPiece& piece : unit.markup ? read_fragment(unit.text) : std::vector<FragmentPiece>{})
      text += piece.kind == FragmentPiece::kText    ? piece.text
              : piece.kind == FragmentPiece::kPoint ? std::string("<point>")
                                                    : std::string("\n");
    texts.push_back(unit.markup ? text : unit.text);
  }
  EXPECT_EQ(texts, (std::vector<std::string>{
                       "Hello, <point>! Welcome back.\n", "<point> file was copied.", "<point> files were copied.",
                       "The disk is full. Delete some files and try again.", "Saved <point> in <point> seconds.",
                       "This is a long message that xgettext wraps over several lines, because it is longer than a "
                       "line of a catalogue."}));
}

TEST(XliffFromPo2xliff, TargetsAreFilledAndMarkedTranslatedAndTheTargetLanguageIsSet) {
  const std::string result = po2xliff_file_translated();
  EXPECT_TRUE(Contains(result,
                       "<file original=\"hello_de.po\" source-language=\"en-US\" datatype=\"plaintext\" "
                       "target-language=\"de\">"))
      << result;
  EXPECT_TRUE(Contains(result,
                       "<source>The disk is full. Delete some files and try again.</source>\n"
                       "        <target state=\"translated\">THE DISK IS FULL. DELETE SOME FILES AND TRY "
                       "AGAIN.</target>\n"))
      << result;
  EXPECT_TRUE(Contains(result,
                       "<source>%d files were copied.</source><target state=\"translated\">%d FILES WERE "
                       "COPIED.</target>"))
      << result;
  EXPECT_TRUE(Contains(result, "<target state=\"translated\">SAVED %s IN %d SECONDS.</target>")) << result;
  EXPECT_TRUE(Contains(result, "<target state=\"translated\">Öffnen</target>")) << result;
  EXPECT_FALSE(Contains(result, "<target></target>")) << result;
  EXPECT_FALSE(Contains(result, "needs-translation")) << result;
}

TEST(XliffFromPo2xliff, ALineBreakThatEndsASourceEndsItsTarget) {
  const std::string result = po2xliff_file_translated();
  EXPECT_TRUE(Contains(result, "<target state=\"translated\">HELLO, %s! WELCOME BACK.\n</target>")) << result;
}

TEST(XliffFromPo2xliff, Xliff2poReadsTheOutputWithItsSourcesUnchanged) {
  if (!installed("xliff2po")) GTEST_SKIP() << "translate-toolkit's xliff2po is not installed";
  ordo::testing::TempDir dir;
  const std::string source = dir.write("source.xlf", data_file("hello_de.xlf"));
  const std::string output = dir.write("output.xlf", po2xliff_file_translated());
  for (const std::string& name : {std::string("source"), std::string("output")}) {
    const auto [status, said] =
        run("xliff2po --progress=none -i '" + dir.file(name + ".xlf") + "' -o '" + dir.file(name + ".po") + "'");
    ASSERT_EQ(status, 0) << said;
  }
  const auto before = po_fields(read_file_bytes(dir.file("source.po")));
  const auto after = po_fields(read_file_bytes(dir.file("output.po")));
  EXPECT_EQ(values_of(after, "msgid"), values_of(before, "msgid"));
  EXPECT_EQ(
      values_of(after, "msgstr"),
      (std::vector<std::string>{values_of(before, "msgstr")[0], "HELLO, %s! WELCOME BACK.\\n", "%d FILE WAS COPIED.",
                                "%d FILES WERE COPIED.", "Öffnen", "THE DISK IS FULL. DELETE SOME FILES AND TRY AGAIN.",
                                "SAVED %s IN %d SECONDS.", "Einfacher Text ohne Platzhalter",
                                "THIS IS A LONG MESSAGE THAT XGETTEXT WRAPS OVER SEVERAL LINES, BECAUSE IT IS "
                                "LONGER THAN A LINE OF A CATALOGUE."}));
}

TEST(XliffFromPo2xliff, TheCatalogueXliff2poMakesOfTheOutputPassesMsgfmtCheck) {
  if (!installed("xliff2po") || !installed("msgfmt")) GTEST_SKIP() << "xliff2po or msgfmt is not installed";
  ordo::testing::TempDir dir;
  dir.write("output.xlf", po2xliff_file_translated());
  auto [status, said] =
      run("xliff2po --progress=none -i '" + dir.file("output.xlf") + "' -o '" + dir.file("output.po") + "'");
  ASSERT_EQ(status, 0) << said;
  std::tie(status, said) = run("msgfmt --check -o /dev/null '" + dir.file("output.po") + "'");
  EXPECT_EQ(status, 0) << said << read_file_bytes(dir.file("output.po"));
}

}  // namespace
}  // namespace ordo::document
