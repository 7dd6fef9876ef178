// ctest-label: unit
// EPUB books (src/document/epub.cpp) read from LibreOffice's EPUB export
// (tests/data/files/sample.epub, tools/codegen/files/make_open_document_files.py) and written
// back through ordo::FileDocument with made-up translations (each sentence upper-cased, its
// words linked to themselves): chapters, the title and the table of contents are translated,
// the chapters stay well-formed XML, every other part is unchanged, and broken books are
// refused with an error that names the fault.
#include <pugixml.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "document/file_content.h"
#include "document/zip_archive.h"
#include "ordo/error.h"
#include "ordo/files.h"

namespace ordo {
namespace {

const char* const kChapter1 = "OEBPS/sections/section0001.xhtml";
const char* const kChapter2 = "OEBPS/sections/section0002.xhtml";

std::string data_file(const std::string& name) {
  std::ifstream in(std::string(ORDO_TEST_DATA_DIR) + "/files/" + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << name;
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

AlignedTranslation upper_cased(const std::string& sentence) {
  AlignedTranslation out;
  std::istringstream in(sentence);
  int n = 0;
  for (std::string word; in >> word; ++n) {
    std::transform(word.begin(), word.end(), word.begin(), [](unsigned char c) { return std::toupper(c); });
    out.text += (n ? " " : "") + word;
    out.words.push_back({n, n});
  }
  out.source_words = out.target_words = n;
  return out;
}

std::string translate(const std::string& bytes, const FileOptions& options = {}) {
  FileDocument document(bytes, FileFormat::kEpub, options);
  std::vector<AlignedTranslation> translations;
  for (const std::string& sentence : document.sentences()) translations.push_back(upper_cased(sentence));
  const std::string out = document.rebuild(translations);
  // ORDO_FILES_TEST_OUT=dir keeps each output (out-N.ext) for opening in LibreOffice or a reader.
  if (const char* dir = std::getenv("ORDO_FILES_TEST_OUT")) {
    static int written = 0;
    std::ofstream(std::string(dir) + "/out-" + std::to_string(++written) + std::string(".epub"), std::ios::binary)
        << out;
  }
  return out;
}

std::string part_of(const std::string& zip_bytes, const std::string& name) {
  document::ZipArchive zip(zip_bytes, FileLimits{}, "test file");
  return zip.read(name);
}

// The sample book with part `name` replaced by `bytes`.
std::string with_part(const std::string& name, const std::string& bytes) {
  document::ZipArchive zip(data_file("sample.epub"), FileLimits{}, "input");
  zip.replace(name, bytes);
  return zip.write();
}

std::string error_of(const std::string& bytes) {
  try {
    FileDocument document(bytes, FileFormat::kEpub);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
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
  const std::string out = translate(data_file("sample.epub"));
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
  const std::string chapter = part_of(translate(in), kChapter1);
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
  parse_strict(opf, part_of(translate(data_file("sample.epub"), options), "OEBPS/content.opf"));
  EXPECT_STREQ(opf.select_node("//dc:title").node().child_value(), "A SMALL BOOK");
  EXPECT_STREQ(opf.select_node("//dc:language").node().child_value(), "de");
  EXPECT_STREQ(opf.select_node("//dc:creator").node().child_value(), "Unknown Author");
}

TEST(Epub, LanguageStaysWithoutATarget) {
  pugi::xml_document opf;
  parse_strict(opf, part_of(translate(data_file("sample.epub")), "OEBPS/content.opf"));
  EXPECT_STREQ(opf.select_node("//dc:language").node().child_value(), "en");
}

TEST(Epub, TableOfContentsLabelsAndNavigationAreTranslated) {
  const std::string out = translate(data_file("sample.epub"));
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
  const std::string out = translate(in);
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
  const std::string out = part_of(translate(with_part(kChapter1, chapter)), kChapter1);
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
  EXPECT_EQ(error_of(data_file("no_container.epub")), "EPUB file: no META-INF/container.xml part");
}

TEST(Epub, ChapterPathOutsideTheBookIsRefused) {
  std::string opf = part_of(data_file("sample.epub"), "OEBPS/content.opf");
  const std::string href = "href=\"sections/section0002.xhtml\"";
  ASSERT_NE(opf.find(href), std::string::npos);
  opf.replace(opf.find(href), href.size(), "href=\"../../secret.xhtml\"");
  EXPECT_EQ(error_of(with_part("OEBPS/content.opf", opf)),
            "EPUB file: OEBPS/content.opf: manifest item 'section0002': path '../../secret.xhtml' leaves the book's "
            "root");
}

TEST(Epub, ChapterPathUpAndBackInsideTheBookIsRead) {
  std::string opf = part_of(data_file("sample.epub"), "OEBPS/content.opf");
  const std::string href = "href=\"sections/section0002.xhtml\"";
  opf.replace(opf.find(href), href.size(), "href=\"../OEBPS/sections/section%30002.xhtml\"");
  const std::string out = translate(with_part("OEBPS/content.opf", opf));
  EXPECT_NE(part_of(out, kChapter2).find("THE DOG RUNS"), std::string::npos);
}

TEST(Epub, MissingChapterIsRefused) {
  std::string opf = part_of(data_file("sample.epub"), "OEBPS/content.opf");
  const std::string href = "href=\"sections/section0002.xhtml\"";
  opf.replace(opf.find(href), href.size(), "href=\"sections/gone.xhtml\"");
  EXPECT_EQ(error_of(with_part("OEBPS/content.opf", opf)),
            "EPUB file: chapter OEBPS/sections/gone.xhtml (manifest item 'section0002') is missing");
}

TEST(Epub, WrongMimetypeIsRefused) {
  EXPECT_EQ(error_of(with_part("mimetype", "application/zip")),
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
  EXPECT_EQ(error_of(with_part("META-INF/encryption.xml", encryption)),
            "EPUB file: chapter OEBPS/sections/section0002.xhtml is encrypted (DRM): it cannot be translated");
}

}  // namespace
}  // namespace ordo
