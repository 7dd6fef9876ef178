// ctest-label: unit
// EPUB books (src/document/epub.cpp) read from LibreOffice's EPUB export
// (tests/data/files/sample.epub, tools/codegen/files/make_open_document_files.py) and written
// back through ordo::FileDocument with made-up translations (each sentence upper-cased, its
// words linked to themselves): chapters, the title and the table of contents are translated,
// the chapters stay well-formed XML, every other part is unchanged, and broken books are
// refused with an error that names the fault.
#include <pugixml.hpp>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "document/file_content.h"
#include "document/zip_archive.h"
#include "files/file_test_support.h"
#include "ordo/error.h"
#include "ordo/files.h"

namespace ordo {
namespace {

const char* const kChapter1 = "OEBPS/sections/section0001.xhtml";
const char* const kChapter2 = "OEBPS/sections/section0002.xhtml";

using namespace ordo::testing;

// The sample book with part `name` replaced by `bytes`.
std::string sample_with_part(const std::string& name, const std::string& bytes) {
  return with_part(data_file("sample.epub"), name, bytes);
}

// The text of an element and its descendants.
std::string text_of(const pugi::xml_node& node) {
  std::string text;
  for (pugi::xml_node child = node.first_child(); child; child = child.next_sibling()) {
    if (child.type() == pugi::node_pcdata) text += child.value();
    if (child.type() == pugi::node_element) text += text_of(child);
  }
  return text;
}

void parse_strict(pugi::xml_document& doc, const std::string& xml) {
  const pugi::xml_parse_result result =
      doc.load_string(xml.c_str(), pugi::parse_default | pugi::parse_declaration | pugi::parse_ws_pcdata);
  ASSERT_TRUE(result) << result.description() << " at " << result.offset << ": " << xml;
}

TEST(Epub, ChaptersAreTranslatedAndStayWellFormedXml) {
  const std::string out = translate(data_file("sample.epub"), FileFormat::kEpub);
  pugi::xml_document first, second;
  parse_strict(first, part_of(out, kChapter1));
  parse_strict(second, part_of(out, kChapter2));
  const std::string body = text_of(first.select_node("//body").node());
  EXPECT_NE(body.find("THE FIRST CHAPTER"), std::string::npos) << body;
  EXPECT_NE(body.find("THE CAT SLEEPS ON THE RED SOFA."), std::string::npos) << part_of(out, kChapter1);
  EXPECT_NE(body.find("NOTE SAYS HELLO."), std::string::npos) << body;
  EXPECT_EQ(text_of(second.select_node("//body").node()),
            "THE SECOND CHAPTERTHE DOG RUNS IN THE PARK. THE SUN IS WARM.");
}

TEST(Epub, ChapterMarkupIsKept) {
  const std::string in = data_file("sample.epub");
  const std::string chapter = part_of(translate(in, FileFormat::kEpub), kChapter1);
  EXPECT_NE(chapter.find("<span class=\"span2\">RED</span>"), std::string::npos) << chapter;
  EXPECT_NE(chapter.find("<a href=\"https://example.org/manual\"><span class=\"span3\">MANUAL</span></a>"),
            std::string::npos)
      << chapter;
  EXPECT_NE(chapter.find("<br/>"), std::string::npos);
  const std::string source = part_of(in, kChapter1);
  EXPECT_EQ(chapter.substr(0, chapter.find("<body")), source.substr(0, source.find("<body")));
}

TEST(Epub, TitleIsTranslatedAndLanguageSetToTheTarget) {
  FileOptions options;
  options.target_language = "de";
  pugi::xml_document opf;
  parse_strict(opf, part_of(translate(data_file("sample.epub"), FileFormat::kEpub, /*reverse=*/false, options),
                            "OEBPS/content.opf"));
  EXPECT_STREQ(opf.select_node("//dc:title").node().child_value(), "A SMALL BOOK");
  EXPECT_STREQ(opf.select_node("//dc:language").node().child_value(), "de");
  EXPECT_STREQ(opf.select_node("//dc:creator").node().child_value(), "Unknown Author");
}

TEST(Epub, LanguageStaysWithoutATarget) {
  pugi::xml_document opf;
  parse_strict(opf, part_of(translate(data_file("sample.epub"), FileFormat::kEpub), "OEBPS/content.opf"));
  EXPECT_STREQ(opf.select_node("//dc:language").node().child_value(), "en");
}

TEST(Epub, TableOfContentsLabelsAndNavigationAreTranslated) {
  const std::string out = translate(data_file("sample.epub"), FileFormat::kEpub);
  pugi::xml_document ncx, nav;
  parse_strict(ncx, part_of(out, "OEBPS/toc.ncx"));
  parse_strict(nav, part_of(out, "OEBPS/toc.xhtml"));
  std::vector<std::string> labels;
  for (pugi::xpath_node node : ncx.select_nodes("//navLabel/text")) labels.push_back(node.node().child_value());
  EXPECT_EQ(labels, (std::vector<std::string>{"THE FIRST CHAPTER", "THE SECOND CHAPTER"}));
  EXPECT_EQ(text_of(nav.select_node("//nav").node()), "THE FIRST CHAPTERTHE SECOND CHAPTER");
  EXPECT_STREQ(nav.select_node("//a").node().attribute("href").value(), "sections/section0001.xhtml");
}

TEST(Epub, OtherPartsAreByteIdenticalAndMimetypeStaysFirstAndStored) {
  const std::string in = data_file("sample.epub");
  const std::string out = translate(in, FileFormat::kEpub);
  document::ZipArchive before(in, FileLimits{}, "input"), after(out, FileLimits{}, "output");
  ASSERT_EQ(before.names(), after.names());
  EXPECT_EQ(before.read("OEBPS/styles/stylesheet.css"), after.read("OEBPS/styles/stylesheet.css"));
  EXPECT_EQ(before.read("META-INF/container.xml"), after.read("META-INF/container.xml"));
  // The first local header: "mimetype", method 0 (stored), its bytes right after the name.
  ASSERT_GT(out.size(), 58u);
  EXPECT_EQ(out.substr(0, 4), std::string("PK\x03\x04", 4));
  EXPECT_EQ(out[8], 0);
  EXPECT_EQ(out[9], 0);
  EXPECT_EQ(out.substr(30, 8), "mimetype");
  EXPECT_NE(out.find("application/epub+zip"), std::string::npos);
  EXPECT_LT(out.find("application/epub+zip"), 100u);
}

TEST(Epub, XhtmlWithSelfClosingTagsAndEntitiesStaysXml) {
  const std::string chapter =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<!DOCTYPE html>\n"
      "<html xmlns=\"http://www.w3.org/1999/xhtml\" xml:lang=\"en\"><head><title>Fish &amp; chips</title>"
      "<style><![CDATA[ p > b { color: red } ]]></style></head>\n"
      "<body><p>One&#160;day <a id=\"page5\"/>the cat&nbsp;ate <b>fish</b> &amp; chips.<br/>It was "
      "&lt;good&gt;.</p>\n<p><img src=\"cat.png\" alt=\"A cat\"/> Tom &amp; Jerry <span/>say "
      "hello.</p></body></html>\n";
  const std::string out = part_of(translate(sample_with_part(kChapter1, chapter), FileFormat::kEpub), kChapter1);
  pugi::xml_document doc;
  parse_strict(doc, out);
  EXPECT_STREQ(doc.select_node("//title").node().child_value(), "FISH & CHIPS");
  const std::string body = text_of(doc.select_node("//body").node());
  EXPECT_NE(body.find("ATE FISH & CHIPS."), std::string::npos) << out;
  EXPECT_NE(body.find("<GOOD>"), std::string::npos) << out;
  EXPECT_TRUE(doc.select_node("//a[@id='page5']"));
  EXPECT_TRUE(doc.select_node("//img[@alt='A cat']"));
}

TEST(Epub, BookWithoutContainerIsRefused) {
  EXPECT_EQ(error_of_reading(data_file("no_container.epub"), FileFormat::kEpub),
            "EPUB file: no META-INF/container.xml part");
}

TEST(Epub, ChapterPathOutsideTheBookIsRefused) {
  std::string opf = part_of(data_file("sample.epub"), "OEBPS/content.opf");
  const std::string href = "href=\"sections/section0002.xhtml\"";
  ASSERT_NE(opf.find(href), std::string::npos);
  opf.replace(opf.find(href), href.size(), "href=\"../../secret.xhtml\"");
  EXPECT_EQ(error_of_reading(sample_with_part("OEBPS/content.opf", opf), FileFormat::kEpub),
            "EPUB file: OEBPS/content.opf: manifest item 'section0002': path '../../secret.xhtml' leaves the book's "
            "root");
}

TEST(Epub, ChapterPathUpAndBackInsideTheBookIsRead) {
  std::string opf = part_of(data_file("sample.epub"), "OEBPS/content.opf");
  const std::string href = "href=\"sections/section0002.xhtml\"";
  opf.replace(opf.find(href), href.size(), "href=\"../OEBPS/sections/section%30002.xhtml\"");
  const std::string out = translate(sample_with_part("OEBPS/content.opf", opf), FileFormat::kEpub);
  EXPECT_NE(part_of(out, kChapter2).find("THE DOG RUNS"), std::string::npos);
}

TEST(Epub, MissingChapterIsRefused) {
  std::string opf = part_of(data_file("sample.epub"), "OEBPS/content.opf");
  const std::string href = "href=\"sections/section0002.xhtml\"";
  opf.replace(opf.find(href), href.size(), "href=\"sections/gone.xhtml\"");
  EXPECT_EQ(error_of_reading(sample_with_part("OEBPS/content.opf", opf), FileFormat::kEpub),
            "EPUB file: chapter OEBPS/sections/gone.xhtml (manifest item 'section0002') is missing");
}

TEST(Epub, WrongMimetypeIsRefused) {
  EXPECT_EQ(error_of_reading(sample_with_part("mimetype", "application/zip"), FileFormat::kEpub),
            "EPUB file: mimetype is 'application/zip': not an EPUB");
}

TEST(Epub, EachChapterIsOnePageUnit) {
  const auto content = document::read_epub(data_file("sample.epub"), {});
  size_t pages = 0;
  for (const document::Unit& unit : content->units) pages += unit.page ? 1 : 0;
  EXPECT_EQ(pages, 3u);  // two chapters and the navigation document
}

TEST(Epub, EncryptedChapterIsRefused) {
  const std::string encryption =
      "<?xml version=\"1.0\"?><encryption xmlns=\"urn:oasis:names:tc:opendocument:xmlns:container\" "
      "xmlns:enc=\"http://www.w3.org/2001/04/xmlenc#\"><enc:EncryptedData><enc:CipherData>"
      "<enc:CipherReference URI=\"OEBPS/sections/section0002.xhtml\"/></enc:CipherData></enc:EncryptedData>"
      "</encryption>";
  EXPECT_EQ(error_of_reading(sample_with_part("META-INF/encryption.xml", encryption), FileFormat::kEpub),
            "EPUB file: chapter OEBPS/sections/section0002.xhtml is encrypted (DRM): it cannot be translated");
}

}  // namespace
}  // namespace ordo
