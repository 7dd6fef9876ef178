// ctest-label: unit
// OpenDocument files (src/document/open_document.cpp) read from LibreOffice's own .odt, .odp
// and .ods (tests/data/files/, tools/codegen/files/make_open_document_files.py) and written back
// through ordo::FileDocument with made-up translations (each sentence upper-cased, or its words
// reversed, with the word links that say so): the paragraphs are translated, their spans, links,
// tabs, notes and breaks kept around and between the right words, every other part unchanged.
#include <pugixml.hpp>

#include <algorithm>
#include <sstream>

#include <gtest/gtest.h>

#include "document/file_content.h"
#include "document/zip_archive.h"
#include "files/file_test_support.h"
#include "ordo/error.h"
#include "ordo/files.h"

namespace ordo {
namespace {

using namespace ordo::testing;

pugi::xml_node first(const pugi::xml_node& root, const std::string& name) {
  return root.find_node([&](const pugi::xml_node& node) { return name == node.name(); });
}

// The text of a node and its descendants, text:s counted as a space.
std::string text_of(const pugi::xml_node& node) {
  std::string text;
  for (pugi::xml_node child = node.first_child(); child; child = child.next_sibling()) {
    if (child.type() == pugi::node_pcdata) text += child.value();
    if (child.type() == pugi::node_element) text += std::string(child.name()) == "text:s" ? " " : text_of(child);
  }
  return text;
}

// The names of the elements in document order, text:s left out (spaces may change).
std::vector<std::string> element_names(const pugi::xml_node& root) {
  std::vector<std::string> names;
  struct Walker : pugi::xml_tree_walker {
    std::vector<std::string>* names;
    bool for_each(pugi::xml_node& node) override {
      if (node.type() == pugi::node_element && std::string(node.name()) != "text:s") names->push_back(node.name());
      return true;
    }
  } walker;
  walker.names = &names;
  const_cast<pugi::xml_node&>(root).traverse(walker);
  return names;
}

void parse(pugi::xml_document& doc, const std::string& xml) {
  const pugi::xml_parse_result result = doc.load_string(xml.c_str());
  ASSERT_TRUE(result) << result.description();
}

TEST(OpenDocument, OdtParagraphsHeadingsAndCellsAreTranslated) {
  const std::string out = translate(data_file("sample.odt"), FileFormat::kOdt);
  pugi::xml_document doc;
  parse(doc, part_of(out, "content.xml"));
  std::vector<std::string> texts;
  for (pugi::xpath_node node : doc.select_nodes("//text:p | //text:h")) texts.push_back(text_of(node.node()));
  EXPECT_NE(std::find(texts.begin(), texts.end(), "THE FIRST CHAPTER"), texts.end());
  EXPECT_NE(std::find(texts.begin(), texts.end(), "THE CAT SLEEPS ON THE RED SOFA. IT DREAMS OF FISH."), texts.end());
  EXPECT_NE(std::find(texts.begin(), texts.end(), "READ THE MANUAL BEFORE YOU START."), texts.end());
  EXPECT_NE(std::find(texts.begin(), texts.end(), "FRESH EVERY DAY"), texts.end());
  EXPECT_NE(std::find(texts.begin(), texts.end(), "THE DOG RUNS IN THE PARK. THE SUN IS WARM."), texts.end());
}

TEST(OpenDocument, OdtKeepsItsElementStructure) {
  const std::string in = data_file("sample.odt");
  const std::string out = translate(in, FileFormat::kOdt);
  pugi::xml_document before, after;
  parse(before, part_of(in, "content.xml"));
  parse(after, part_of(out, "content.xml"));
  EXPECT_EQ(element_names(before), element_names(after));
}

TEST(OpenDocument, OdtBoldSpanAndLinkStayAroundTheirWords) {
  const std::string out = translate(data_file("sample.odt"), FileFormat::kOdt);
  pugi::xml_document doc;
  parse(doc, part_of(out, "content.xml"));
  const pugi::xml_node span = first(doc, "text:span");
  EXPECT_EQ(text_of(span), "RED");
  EXPECT_STREQ(span.attribute("text:style-name").value(), "T1");
  const pugi::xml_node link = first(doc, "text:a");
  EXPECT_EQ(text_of(link), "MANUAL");
  EXPECT_STREQ(link.attribute("xlink:href").value(), "https://example.org/manual");
}

TEST(OpenDocument, OdtSpanFollowsItsWordWhenTheTranslationReordersThem) {
  const std::string out = translate(data_file("sample.odt"), FileFormat::kOdt, /*reverse=*/true);
  pugi::xml_document doc;
  parse(doc, part_of(out, "content.xml"));
  const pugi::xml_node span = first(doc, "text:span");
  EXPECT_EQ(text_of(span), "RED");
  // "The cat sleeps on the red sofa." reversed: "SOFA. RED THE ON SLEEPS CAT THE".
  EXPECT_EQ(text_of(span.parent()).substr(0, 31), "SOFA. RED THE ON SLEEPS CAT THE");
}

TEST(OpenDocument, OdtTabLineBreakAndFootnoteStayInTheirParagraphs) {
  const std::string out = translate(data_file("sample.odt"), FileFormat::kOdt);
  pugi::xml_document doc;
  parse(doc, part_of(out, "content.xml"));
  const pugi::xml_node tab = first(doc, "text:tab");
  ASSERT_TRUE(tab);
  EXPECT_TRUE(first(tab.parent(), "text:line-break"));
  EXPECT_EQ(text_of(tab.parent()), "NAME:ANNATWO SPACES HERE.");
  const pugi::xml_node note = first(doc, "text:note");
  ASSERT_TRUE(note);
  EXPECT_STREQ(note.attribute("text:id").value(), "ftn1");
  EXPECT_EQ(text_of(first(note, "text:note-citation")), "1");
  EXPECT_EQ(text_of(first(note, "text:note-body")), "THE NOTE SAYS HELLO.");
  EXPECT_EQ(std::string(note.parent().name()), "text:p");
}

TEST(OpenDocument, OdtPageHeaderInStylesIsTranslated) {
  const std::string out = translate(data_file("sample.odt"), FileFormat::kOdt);
  pugi::xml_document doc;
  parse(doc, part_of(out, "styles.xml"));
  EXPECT_EQ(text_of(first(doc, "style:header")), "COMPANY REPORT");
}

TEST(OpenDocument, OdtOtherPartsAreByteIdenticalAndMimetypeStaysFirstAndStored) {
  const std::string in = data_file("sample.odt");
  const std::string out = translate(in, FileFormat::kOdt);
  document::ZipArchive before(in, FileLimits{}, "input"), after(out, FileLimits{}, "output");
  ASSERT_EQ(before.names(), after.names());
  for (const std::string& name : before.names())
    if (name != "content.xml" && name != "styles.xml") EXPECT_EQ(before.read(name), after.read(name)) << name;
  // The first local header: "mimetype", method 0 (stored), its bytes right after the name.
  ASSERT_GT(out.size(), 30u);
  EXPECT_EQ(out.substr(0, 4), std::string("PK\x03\x04", 4));
  EXPECT_EQ(out[8], 0);
  EXPECT_EQ(out[9], 0);
  EXPECT_EQ(out.substr(30, 8), "mimetype");
  EXPECT_NE(out.find("application/vnd.oasis.opendocument.text"), std::string::npos);
  EXPECT_LT(out.find("application/vnd.oasis.opendocument.text"), 100u);
}

// The reader's fragments handed back as they are: the writer rebuilds every paragraph as it was.
TEST(OpenDocument, UnchangedFragmentsRebuildTheSameContent) {
  for (const char* name : {"sample.odt", "sample.odp", "sample.ods"}) {
    const std::string in = data_file(name);
    const FileFormat format = *file_format_of(name);
    auto content = document::read_open_document(in, format, {});
    std::vector<std::string> same;
    for (const document::Unit& unit : content->units) same.push_back(unit.text);
    const std::string out = content->rebuild(same);
    for (const char* part : {"content.xml", "styles.xml"}) {
      pugi::xml_document before, after;
      parse(before, part_of(in, part));
      parse(after, part_of(out, part));
      std::ostringstream a, b;
      before.save(a, "", pugi::format_raw);
      after.save(b, "", pugi::format_raw);
      const std::string x = a.str(), y = b.str();
      const size_t at = std::mismatch(x.begin(), x.end(), y.begin(), y.end()).first - x.begin();
      EXPECT_EQ(x.substr(at > 200 ? at - 200 : 0, 400), y.substr(at > 200 ? at - 200 : 0, 400)) << name << " " << part;
    }
  }
}

TEST(OpenDocument, RunsOfSpacesAreWrittenAsTextS) {
  std::string in = data_file("sample.odt");
  auto content = document::read_open_document(in, FileFormat::kOdt, {});
  std::vector<std::string> translated;
  for (const document::Unit& unit : content->units) translated.push_back(unit.text);
  ASSERT_FALSE(translated.empty());
  translated[0] = "  Two   spaces";  // the heading
  pugi::xml_document doc;
  parse(doc, part_of(content->rebuild(translated), "content.xml"));
  const pugi::xml_node heading = first(doc, "text:h");
  std::ostringstream xml;
  for (pugi::xml_node child : heading.children()) child.print(xml, "", pugi::format_raw);
  EXPECT_EQ(xml.str(), "<text:s text:c=\"2\"/>Two <text:s text:c=\"2\"/>spaces");
}

TEST(OpenDocument, OdtWhoseMimetypeSaysSpreadsheetIsRefused) {
  document::ZipArchive zip(data_file("sample.odt"), FileLimits{}, "input");
  zip.replace("mimetype", "application/vnd.oasis.opendocument.spreadsheet");
  try {
    FileDocument document(zip.write(), FileFormat::kOdt);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "ODT file: mimetype is 'application/vnd.oasis.opendocument.spreadsheet': not an OpenDocument text");
  }
}

TEST(OpenDocument, TextDocumentReadAsSpreadsheetIsRefused) {
  EXPECT_THROW(FileDocument(data_file("sample.odt"), FileFormat::kOds), Error);
}

TEST(OpenDocument, ParagraphWithTrackedChangesIsLeftAsItWas) {
  const std::string in = data_file("sample.odt");
  document::ZipArchive zip(in, FileLimits{}, "input");
  std::string xml = zip.read("content.xml");
  const std::string sentence = "The dog runs in the park.";
  const size_t at = xml.find(sentence);
  ASSERT_NE(at, std::string::npos);
  xml.insert(at + sentence.size(),
             "<text:change-start text:change-id=\"ct1\"/>X<text:change-end text:change-id=\"ct1\"/>");
  zip.replace("content.xml", xml);
  const std::string out = translate(zip.write(), FileFormat::kOdt);
  const std::string content = part_of(out, "content.xml");
  EXPECT_NE(content.find("The dog runs in the park.<text:change-start text:change-id=\"ct1\""), std::string::npos);
  EXPECT_NE(content.find("THE CAT SLEEPS"), std::string::npos);
}

TEST(OpenDocument, OdpTitlesBodiesAndNotesAreTranslated) {
  const std::string in = data_file("sample.odp");
  const std::string out = translate(in, FileFormat::kOdp);
  pugi::xml_document before, after;
  parse(before, part_of(in, "content.xml"));
  parse(after, part_of(out, "content.xml"));
  EXPECT_EQ(element_names(before), element_names(after));
  std::vector<std::string> texts;
  for (pugi::xpath_node node : after.select_nodes("//text:p")) texts.push_back(text_of(node.node()));
  const std::vector<std::string> expected = {"WELCOME", "LOOK: VERY OUR NEW PRODUCT IS FAST.", "SPEAK SLOWLY HERE.",
                                             "PRICES",  "LOOK: VERY IT COSTS LITTLE.",         "SPEAK SLOWLY HERE."};
  EXPECT_EQ(texts, expected);
  EXPECT_EQ(text_of(first(after, "text:span")), "VERY");
  // The frames' geometry stays.
  EXPECT_STREQ(first(after, "draw:frame").attribute("svg:width").value(), "24cm");
}

TEST(OpenDocument, OdsTextCellsAreTranslatedAndNumbersAndFormulasKept) {
  const std::string in = data_file("sample.ods");
  const std::string out = translate(in, FileFormat::kOds);
  pugi::xml_document doc;
  parse(doc, part_of(out, "content.xml"));
  std::vector<std::string> cells;
  for (pugi::xpath_node node : doc.select_nodes("//table:table-cell")) cells.push_back(text_of(node.node()));
  const std::vector<std::string> expected = {"NAME", "COUNT", "NOTE", "APPLE", "3", "SWEET AND RED",
                                             "PEAR", "4",     "SOFT", "TOTAL", "7", "ab"};
  EXPECT_EQ(cells, expected);
  const pugi::xml_node formula = doc.select_node("//table:table-cell[@table:formula][2]").node();
  EXPECT_STREQ(formula.attribute("office:string-value").value(), "ab");
}

TEST(OpenDocument, OdsPageFooterIsTranslatedAndItsFieldKept) {
  pugi::xml_document doc;
  parse(doc, part_of(translate(data_file("sample.ods"), FileFormat::kOds), "styles.xml"));
  const pugi::xml_node footer = first(doc, "style:footer");
  EXPECT_EQ(text_of(footer), "PAGE 1");
  EXPECT_TRUE(first(footer, "text:page-number"));
}

TEST(OpenDocument, HugeSpaceCountStandsForAtMostAHundredSpaces) {
  document::ZipArchive zip(data_file("sample.odt"), FileLimits{}, "input");
  std::string xml = zip.read("content.xml");
  const std::string spaces = "Two <text:s/>spaces";
  ASSERT_NE(xml.find(spaces), std::string::npos);
  xml.replace(xml.find(spaces), spaces.size(), "Two <text:s text:c=\"4000000000\"/>spaces");
  zip.replace("content.xml", xml);
  const auto content = document::read_open_document(zip.write(), FileFormat::kOdt, {});
  size_t longest = 0;
  for (const document::Unit& unit : content->units) longest = std::max(longest, unit.text.size());
  EXPECT_LT(longest, 300u);
}

TEST(OpenDocument, TabPartsWordsAndAddsNoSpaceWhereverTheTranslationPutsIt) {
  const auto content = document::read_open_document(data_file("sample.odt"), FileFormat::kOdt, {});
  std::vector<std::string> translated;
  size_t tab_unit = 0;
  for (const document::Unit& unit : content->units) {
    if (unit.text.find("Name:") != std::string::npos) tab_unit = translated.size();
    translated.push_back(unit.text);
  }
  const std::string fragment = translated[tab_unit];
  ASSERT_NE(fragment.find("Name: <img data-o=\"0\">Anna"), std::string::npos) << fragment;
  for (const std::string& moved : {"Name: <img data-o=\"0\">Anna", "Name:<img data-o=\"0\"> Anna"}) {
    translated[tab_unit] = fragment;
    translated[tab_unit].replace(fragment.find("Name: <img data-o=\"0\">Anna"), moved.size(), moved);
    pugi::xml_document doc;
    parse(doc, part_of(content->rebuild(translated), "content.xml"));
    std::ostringstream xml;
    for (pugi::xml_node child : first(doc, "text:tab").parent().children()) child.print(xml, "", pugi::format_raw);
    EXPECT_EQ(xml.str(), "Name:<text:tab/>Anna<text:line-break/>Two <text:s/>spaces here.") << moved;
  }
}

}  // namespace
}  // namespace ordo
