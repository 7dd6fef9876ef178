// ctest-label: unit
// JSON string files (src/document/json_strings.cpp) with made-up translations: values are
// translated at any depth, keys, their order and non-strings stay, placeholders come back, and
// the file keeps its indentation; invalid JSON names its line and column. A file that
// translate-toolkit's po2json wrote (tests/data/files/strings_en.json,
// tools/codegen/files/make_translate_toolkit_files.sh) is translated and read back by json2po.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "document/file_content.h"
#include "files/file_test_support.h"
#include "ordo/error.h"
#include "ordo/files.h"
#include "support/errors.h"
#include "support/temp_dir.h"

namespace ordo::document {
namespace {

using namespace ordo::testing;
using ordo::testing::shouted;  // beside the local shouted() below, which would hide it

// The JSON file rebuilt with each string shouted.
std::string shouted(const std::string& json) { return shouted(*read_json_strings(json, {})); }

TEST(JsonStrings, ValuesAreTranslatedAndKeysTheirOrderAndOtherValuesKept) {
  const std::string source =
      "{\n"
      "  \"zebra\": \"Hello world\",\n"
      "  \"apple\": {\n"
      "    \"items\": [\n"
      "      \"One item\",\n"
      "      \"Two items\"\n"
      "    ],\n"
      "    \"count\": 3,\n"
      "    \"on\": true,\n"
      "    \"none\": null\n"
      "  }\n"
      "}\n";
  EXPECT_EQ(shouted(source),
            "{\n"
            "  \"zebra\": \"HELLO WORLD\",\n"
            "  \"apple\": {\n"
            "    \"items\": [\n"
            "      \"ONE ITEM\",\n"
            "      \"TWO ITEMS\"\n"
            "    ],\n"
            "    \"count\": 3,\n"
            "    \"on\": true,\n"
            "    \"none\": null\n"
            "  }\n"
            "}\n");
}

TEST(JsonStrings, PlaceholdersComeBackUnchanged) {
  const std::string source = "{\"a\": \"Hello {name}, you have {{count}} new messages from %s and ${sender}.\"}";
  const auto content = read_json_strings(source, {});
  ASSERT_EQ(content->units.size(), 1u);
  EXPECT_TRUE(content->units[0].markup);
  EXPECT_EQ(shouted(source), "{\"a\": \"HELLO {name}, YOU HAVE {{count}} NEW MESSAGES FROM %s AND ${sender}.\"}");
}

TEST(JsonStrings, ValuesThatAreNotTextAreLeftAlone) {
  const std::string source =
      R"({"a": "{name}", "b": "42", "c": "https://example.com/x", "d": "images/logo.png", "e": "app.title", )"
      R"("f": "", "g": "snake_case_key", "h": "%d", "i": "Save"})";
  const auto content = read_json_strings(source, {});
  ASSERT_EQ(content->units.size(), 1u);
  EXPECT_EQ(content->units[0].text, "Save");
}

TEST(JsonStrings, EverythingButTheTranslatedStringsIsKeptByteForByte) {
  const std::string source = "{ \"n\" : 1.50e3 , \"list\": [\"Yes\", \"No\"],\n\"u\": \"\\u00fcber\" }";
  EXPECT_EQ(shouted(source), "{ \"n\" : 1.50e3 , \"list\": [\"YES\", \"NO\"],\n\"u\": \"üBER\" }");
}

TEST(JsonStrings, TranslationsAreEscapedAsJsonNeeds) {
  const auto content = read_json_strings("[\"Say hello\"]", {});
  EXPECT_EQ(content->rebuild({"Sag \"hallo\"\\ \t"}), "[\"Sag \\\"hallo\\\"\\\\\"]");
}

TEST(JsonStrings, TheIndentationOfTheSourceIsKept) {
  EXPECT_EQ(shouted("{\n    \"a\": [\n        \"Yes\"\n    ]\n}"), "{\n    \"a\": [\n        \"YES\"\n    ]\n}");
  EXPECT_EQ(shouted("{\n\t\"a\": \"Yes\"\n}\n"), "{\n\t\"a\": \"YES\"\n}\n");
  EXPECT_EQ(shouted("{\"a\":\"Yes\",\"b\":[\"No\"]}\n"), "{\"a\":\"YES\",\"b\":[\"NO\"]}\n");
  EXPECT_EQ(shouted("{\r\n  \"a\": \"Yes\"\r\n}\r\n"), "{\r\n  \"a\": \"YES\"\r\n}\r\n");
}

TEST(JsonStrings, NonAsciiTextIsWrittenAsItIs) {
  const auto content = read_json_strings("{\n  \"a\": \"Hello\"\n}", {});
  EXPECT_EQ(content->rebuild({"Grüße aus Köln"}), "{\n  \"a\": \"Grüße aus Köln\"\n}");
}

TEST(JsonStrings, InvalidJsonIsAnErrorNamingTheLineAndColumn) {
  const std::string error = error_of([] { read_json_strings("{\n  \"a\": \"b\",\n  \"c\": }\n", {}); });
  EXPECT_EQ(error.rfind("JSON file: line 3 column 8: syntax error", 0), 0u) << error;
}

TEST(JsonStrings, TruncatedBinaryAndOtherFilesAreRefused) {
  EXPECT_EQ(error_of([] { read_json_strings("{\"a\": \"Hel", {}); }).rfind("JSON file: line 1 column", 0), 0u);
  EXPECT_EQ(error_of([] {
              read_json_strings(std::string("\x89PNG\r\n\x1a\n\0\0", 10), {});
            }).rfind("JSON file: line 1 column 1: syntax error", 0),
            0u);
  EXPECT_EQ(error_of([] { read_json_strings("msgid \"x\"\nmsgstr \"\"\n", {}); }).rfind("JSON file: line 1", 0), 0u);
  EXPECT_EQ(error_of([] { read_json_strings("", {}); }).rfind("JSON file: line 1 column 1", 0), 0u);
  EXPECT_EQ(error_of([] { read_json_strings("[1e999]", {}); }).rfind("JSON file: ", 0), 0u);
}

// Every cut of a file reads or is refused with an ordo::Error; none crashes.
TEST(JsonStrings, TextAfterANulByteIsRefusedNotScanned) {
  const std::string bytes("{\"a\": \"Hello.\"}\0\"b\u0001\0\": 1}", 25);
  EXPECT_NE(error_of([&] { read_json_strings(bytes, {}); }).find("a NUL byte: not a JSON text file"),
            std::string::npos);
}

TEST(JsonStrings, EveryTruncationIsReadOrRefused) {
  const std::string text = "{\n  \"a\": [\"Hello {name}\", {\"b\": \"Good <0>day</0>\"}],\n  \"n\": -1.5e3\n}\n";
  for (size_t n = 0; n <= text.size(); ++n) {
    try {
      shouted(text.substr(0, n));
    } catch (const Error&) {
    }
  }
}

TEST(JsonStrings, NestingPastTheLimitIsRefusedBeforeTheParse) {
  EXPECT_EQ(error_of([] { read_json_strings(std::string(100000, '['), {}); }),
            "JSON file: line 1 column 257: nested deeper than 256 (limit max_xml_depth)");
}

}  // namespace
}  // namespace ordo::document

namespace ordo::document {
namespace {

TEST(JsonFile, StringsGivenBackAsTheyWereGiveTheFileBack) {
  const std::string source = "{\n  \"a\": \"Hello {name}, how are you?\",\n  \"b\": [\"One. Two.\", 3]\n}\n";
  EXPECT_EQ(given_back(source, FileFormat::kJson), source);
}

}  // namespace
}  // namespace ordo::document

namespace ordo::document {
namespace {

TEST(JsonFromPo2json, KeysAreKeptAndValuesTranslatedAroundTheirPlaceholders) {
  EXPECT_EQ(shouted(data_file("strings_en.json")),
            "{\n"
            "    \"greeting\": \"HELLO {name}, WELCOME BACK!\",\n"
            "    \"files\": \"%d FILES WERE COPIED.\",\n"
            "    \"inbox\": {\n"
            "        \"unread\": \"YOU HAVE {{count}} UNREAD MESSAGES.\",\n"
            "        \"empty\": \"YOUR INBOX IS EMPTY. ENJOY YOUR DAY.\"\n"
            "    },\n"
            "    \"menu\": {\n"
            "        \"open\": \"OPEN THE FILE\",\n"
            "        \"quit\": \"QUIT\"\n"
            "    }\n"
            "}\n");
}

TEST(JsonFromPo2json, SentencesGivenBackAsTheyWereGiveTheFileBack) {
  const std::string source = data_file("strings_en.json");
  EXPECT_EQ(given_back(source, FileFormat::kJson), source);
}

TEST(JsonFromPo2json, Json2poReadsTheOutputAgainstTheSourceKeyByKey) {
  if (!installed("json2po")) GTEST_SKIP() << "translate-toolkit's json2po is not installed";
  ordo::testing::TempDir dir;
  const std::string source = dir.write("source.json", data_file("strings_en.json"));
  const std::string output = dir.write("output.json", shouted(data_file("strings_en.json")));
  const auto [status, said] =
      run("json2po --progress=none -t '" + source + "' -i '" + output + "' -o '" + dir.file("output.po") + "'");
  ASSERT_EQ(status, 0) << said;
  EXPECT_EQ(po_entries(read_file_bytes(dir.file("output.po"))),
            (std::vector<std::vector<std::string>>{
                {".greeting", "Hello {name}, welcome back!", "HELLO {name}, WELCOME BACK!"},
                {".files", "%d files were copied.", "%d FILES WERE COPIED."},
                {".inbox.unread", "You have {{count}} unread messages.", "YOU HAVE {{count}} UNREAD MESSAGES."},
                {".inbox.empty", "Your inbox is empty. Enjoy your day.", "YOUR INBOX IS EMPTY. ENJOY YOUR DAY."},
                {".menu.open", "Open the file", "OPEN THE FILE"},
                {".menu.quit", "Quit", "QUIT"}}))
      << read_file_bytes(dir.file("output.po"));
}

}  // namespace
}  // namespace ordo::document
