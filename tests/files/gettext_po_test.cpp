// ctest-label: unit
// gettext catalogues (src/document/gettext_po.cpp) filled with made-up translations: a template
// xgettext made (tests/data/files/hello.pot, tools/codegen/files/make_gettext_files.sh) comes
// out as a catalogue msgfmt --check accepts, plurals filled for the target language, fuzzy and
// translated entries left alone, comments kept, and a lost placeholder makes its entry fuzzy.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
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

// msgfmt --check on `catalogue`: its exit status and what it said.
std::pair<int, std::string> msgfmt_check(const std::string& catalogue) {
  ordo::testing::TempDir dir;
  return run("msgfmt --check -o /dev/null '" + dir.write("out.po", catalogue) + "'");
}

TEST(Po, ATemplateFilledForGermanPassesMsgfmtCheck) {
  const auto content = read_po(data_file("hello.pot"), to("de"));
  const std::string result = shouted(*content);
  const auto [status, said] = msgfmt_check(result);
  EXPECT_EQ(status, 0) << said << result;
  EXPECT_TRUE(Contains(result, "\"Language: de\\n\"")) << result;
  EXPECT_TRUE(Contains(result, "\"Plural-Forms: nplurals=2; plural=(n != 1);\\n\"")) << result;
  EXPECT_TRUE(Contains(result, "\"Content-Type: text/plain; charset=UTF-8\\n\"")) << result;
  EXPECT_TRUE(Contains(result, "msgid \"Open\"\nmsgstr \"OPEN\"\n")) << result;
}

TEST(Po, EveryMsgidOfATemplateIsAUnitAndPlaceholdersArePoints) {
  const auto content = read_po(data_file("hello.pot"), {});
  ASSERT_EQ(content->units.size(), 8u);  // six entries, one with a plural
  EXPECT_TRUE(content->units[0].markup);
  EXPECT_EQ(text_with_placeholders(read_fragment(content->units[0].text), {"<%s>"}), "Hello, <%s>! Welcome back.");
  EXPECT_EQ(content->units[4].text, "The disk is full. Delete some files and try again.");
  EXPECT_FALSE(content->units[4].markup);
}

TEST(Po, PluralFormsAreFilledFromMsgidAndMsgidPlural) {
  const auto content = read_po(data_file("hello.pot"), to("de"));
  const std::string result = shouted(*content);
  EXPECT_TRUE(Contains(result, "msgstr[0] \"%d FILE WAS COPIED.\"\nmsgstr[1] \"%d FILES WERE COPIED.\"\n")) << result;
}

TEST(Po, ALanguageWithThreePluralFormsGetsThree) {
  const auto content = read_po(data_file("hello.pot"), to("rus_Cyrl"));
  const std::string result = shouted(*content);
  EXPECT_TRUE(Contains(result, "\"Language: ru\\n\"")) << result;
  EXPECT_TRUE(Contains(result, "msgstr[2] \"%d FILES WERE COPIED.\"\n")) << result;
  EXPECT_EQ(msgfmt_check(result).first, 0) << msgfmt_check(result).second;
}

TEST(Po, TheLineBreakAtTheEndOfAMsgidIsKept) {
  const auto content = read_po(data_file("hello.pot"), to("de"));
  std::vector<std::string> translations = shouted_units(*content);
  translations[0] = "Hallo, <img data-o=\"0\">! Willkommen zurück. ";
  const std::string result = content->rebuild(translations);
  EXPECT_TRUE(Contains(result, "msgstr \"Hallo, %s! Willkommen zurück.\\n\"\n")) << result;
}

TEST(Po, FuzzyAndTranslatedEntriesAreLeftAlone) {
  const std::string source = data_file("hello_de.po");
  const auto content = read_po(source, to("de"));
  EXPECT_EQ(content->units.size(), 5u);
  const std::string result = shouted(*content);
  EXPECT_TRUE(Contains(result, "msgctxt \"menu\"\nmsgid \"Open\"\nmsgstr \"Öffnen\"\n")) << result;
  EXPECT_TRUE(Contains(result,
                       "#, fuzzy, c-format\nmsgid \"Saved %s in %d seconds.\"\n"
                       "msgstr \"%s in %d Sekunden gespeichert.\"\n"))
      << result;
  EXPECT_EQ(msgfmt_check(result).first, 0) << msgfmt_check(result).second;
}

TEST(Po, FuzzyEntriesAreTranslatedWhenAskedAndStayFuzzy) {
  FileOptions options = to("de");
  options.translate_fuzzy = true;
  const auto content = read_po(data_file("hello_de.po"), options);
  EXPECT_EQ(content->units.size(), 6u);
  const std::string result = shouted(*content);
  EXPECT_TRUE(Contains(result,
                       "#, fuzzy, c-format\nmsgid \"Saved %s in %d seconds.\"\n"
                       "msgstr \"SAVED %s IN %d SECONDS.\"\n"))
      << result;
}

TEST(Po, CommentsReferencesAndFlagsAreKeptInOrder) {
  const std::string source = data_file("hello.pot");
  const auto content = read_po(source, to("de"));
  const std::string result = shouted(*content);
  std::istringstream in(source);
  size_t from = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] != '#') continue;
    const size_t at = result.find(line + "\n", from);
    EXPECT_NE(at, std::string::npos) << line;
    if (at != std::string::npos) from = at + line.size();
  }
}

TEST(Po, AMergedCatalogueKeepsItsPreviousMsgidsAndObsoleteEntries) {
  const std::string source = data_file("hello_de_merged.po");
  FileOptions options = to("de");
  options.translate_fuzzy = true;
  const auto content = read_po(source, options);
  const std::string result = shouted(*content);
  EXPECT_TRUE(Contains(result,
                       "#, fuzzy\n#| msgid \"Plain text without any placeholder\"\n"
                       "msgid \"Plain text without a placeholder\"\nmsgstr \"PLAIN TEXT WITHOUT A PLACEHOLDER\"\n"))
      << result;
  const size_t obsolete = source.find("#~ msgctxt");
  ASSERT_NE(obsolete, std::string::npos);
  EXPECT_TRUE(Contains(result, source.substr(obsolete))) << result;
  EXPECT_EQ(msgfmt_check(result).first, 0) << msgfmt_check(result).second;
}

TEST(Po, ATranslationThatLosesAPlaceholderMarksTheEntryFuzzy) {
  const auto content = read_po(data_file("hello.pot"), to("de"));
  std::vector<std::string> translations = shouted_units(*content);
  // "Saved %s in %d seconds.": the second placeholder lost.
  ASSERT_EQ(text_with_placeholders(read_fragment(content->units[5].text), {"A", "B"}), "Saved A in B seconds.");
  translations[5] = "Gespeichert: <img data-o=\"0\">.";
  const std::string result = content->rebuild(translations);
  EXPECT_TRUE(Contains(result, "#, fuzzy, c-format\nmsgid \"Saved %s in %d seconds.\"\nmsgstr \"Gespeichert: %s.\"\n"))
      << result;
  EXPECT_EQ(msgfmt_check(result).first, 0) << msgfmt_check(result).second;
}

TEST(Po, ALongStringIsWrappedAsXgettextWrapsIt) {
  const auto content = read_po(data_file("hello.pot"), to("de"));
  std::vector<std::string> translations = shouted_units(*content);
  translations.back() = content->units.back().text;
  const std::string result = content->rebuild(translations);
  EXPECT_TRUE(Contains(result,
                       "msgstr \"\"\n"
                       "\"This is a long message that xgettext wraps over several lines, because it is \"\n"
                       "\"longer than a line of a catalogue.\"\n"))
      << result;
}

TEST(Po, EscapesAndMultiLineStringsAreRead) {
  const std::string source =
      "msgid \"\"\nmsgstr \"\"\n\"Content-Type: text/plain; charset=UTF-8\\n\"\n\n"
      "msgid \"\"\n\"Say \\\"hi\\\"\\t\"\n\"to me\"\nmsgstr \"\"\n";
  const auto content = read_po(source, {});
  ASSERT_EQ(content->units.size(), 1u);
  EXPECT_EQ(content->units[0].text, "Say \"hi\"\tto me");
  EXPECT_EQ(content->rebuild({"Sag \"hallo\"\tzu mir"}),
            "msgid \"\"\nmsgstr \"\"\n\"Content-Type: text/plain; charset=UTF-8\\n\"\n\n"
            "msgid \"\"\n\"Say \\\"hi\\\"\\t\"\n\"to me\"\nmsgstr \"Sag \\\"hallo\\\"\\tzu mir\"\n");
}

TEST(Po, ObsoleteEntriesAreKeptAsTheyAre) {
  const std::string source =
      "msgid \"Cat\"\nmsgstr \"\"\n\n#, fuzzy\n#~ msgid \"Dog\"\n#~ msgstr \"Hund\"\n\nmsgid \"Cow\"\nmsgstr \"\"\n";
  const auto content = read_po(source, {});
  ASSERT_EQ(content->units.size(), 2u);
  EXPECT_EQ(
      content->rebuild({"Katze", "Kuh"}),
      "msgid \"Cat\"\nmsgstr \"Katze\"\n\n#, fuzzy\n#~ msgid \"Dog\"\n#~ msgstr \"Hund\"\n\nmsgid \"Cow\"\nmsgstr "
      "\"Kuh\"\n");
}

// Every cut of a catalogue reads or is refused with an ordo::Error; none crashes.
TEST(Po, EveryTruncationIsReadOrRefused) {
  const std::string text = data_file("hello_de.po");
  for (size_t n = 0; n <= text.size(); ++n) {
    try {
      const auto content = read_po(text.substr(0, n), to("de"));
      shouted(*content);
    } catch (const Error&) {
    }
  }
}

TEST(Po, BadInputIsAnErrorNamingTheLine) {
  EXPECT_EQ(error_of([] { read_po("msgid \"Hello\"\n", {}); }),
            "PO file: line 1: msgid without msgstr (a truncated catalogue?)");
  EXPECT_EQ(error_of([] { read_po("msgid \"Hello\nmsgstr \"\"\n", {}); }),
            "PO file: line 1: a malformed string after msgid");
  EXPECT_EQ(error_of([] { read_po("msgid \"a\"\nmsgid \"b\"\nmsgstr \"\"\n", {}); }),
            "PO file: line 2: msgid twice in one entry (a msgstr missing before it?)");
  EXPECT_EQ(error_of([] { read_po("Hello world.\n", {}); }),
            "PO file: line 1: expected msgctxt, msgid, msgid_plural, msgstr or a comment: not a gettext catalogue");
  EXPECT_EQ(error_of([] { read_po("# only a comment\n", {}); }), "PO file: no msgid found: not a gettext catalogue");
  EXPECT_EQ(error_of([] { read_po(std::string("\x1f\x8b\x08\0\xff\xfe", 6), {}); }), "PO file: line 1: not UTF-8 text");
  EXPECT_NE(error_of([] {
              read_po("msgid \"\"\nmsgstr \"Content-Type: text/plain; charset=ISO-8859-1\\n\"\n", {});
            }).find("charset is ISO-8859-1"),
            std::string::npos);
}

}  // namespace
}  // namespace ordo::document

namespace ordo::document {
namespace {

TEST(PoFile, ATemplateThroughFileDocumentPassesMsgfmtCheck) {
  const std::string result = given_back(data_file("hello.pot"), FileFormat::kPo, to("de"));
  EXPECT_TRUE(Contains(result, "msgid \"Hello, %s! Welcome back.\\n\"\nmsgstr \"Hello, %s! Welcome back.\\n\"\n"))
      << result;
  EXPECT_EQ(msgfmt_check(result).first, 0) << msgfmt_check(result).second;
}

}  // namespace
}  // namespace ordo::document
