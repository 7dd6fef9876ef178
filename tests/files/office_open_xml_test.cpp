// ctest-label: unit
// Office Open XML files (src/document/office_open_xml.cpp) read from what python-docx, openpyxl
// and LibreOffice write (tests/data/files/, tools/codegen/files/make_office_files.py), plus a few
// document.xml parts written here for what those tools do not make (tracked changes, fields, text
// boxes), and translated through ordo::FileDocument with made-up translations (each sentence
// upper-cased, or its words reversed, with the word links that say so): paragraphs, cells and
// slides are translated, runs keep their properties around the right words, tabs, breaks,
// links, fields and notes stay, every other part is unchanged. Hostile files are ordo::Errors.
#include <pugixml.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>

#include "document/zip_archive.h"
#include "files/file_test_support.h"
#include "ordo/error.h"
#include "ordo/files.h"

namespace ordo {
namespace {

using document::ZipArchive;
using namespace ordo::testing;

pugi::xml_document parse(const std::string& xml) {
  pugi::xml_document doc;
  EXPECT_TRUE(doc.load_string(xml.c_str(), pugi::parse_default | pugi::parse_ws_pcdata)) << xml;
  return doc;
}

// The text of each paragraph (`p`, with `t` texts in runs or links directly inside it).
std::vector<std::string> paragraphs(const std::string& xml, const std::string& p = "w:p",
                                    const std::string& t = "w:t") {
  const pugi::xml_document doc = parse(xml);
  std::vector<std::string> out;
  for (const pugi::xpath_node& node : doc.select_nodes(("//" + p).c_str())) {
    std::string text;
    for (const pugi::xpath_node& piece : node.node().select_nodes(("./*/" + t + " | ./*/*/" + t).c_str()))
      text += piece.node().text().get();
    out.push_back(text);
  }
  return out;
}

bool has(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// The text of the runs whose properties have `property` (an element such as w:b or attribute b="1").
std::vector<std::string> runs_with(const std::string& xml, const std::string& xpath) {
  const pugi::xml_document doc = parse(xml);
  std::vector<std::string> out;
  for (const pugi::xpath_node& node : doc.select_nodes(xpath.c_str())) out.push_back(node.node().text().get());
  return out;
}

// A document.xml with `body` in its w:body.
std::string word_document(const std::string& body) {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\r\n"
         "<w:document xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\" "
         "xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\" "
         "xmlns:mc=\"http://schemas.openxmlformats.org/markup-compatibility/2006\" "
         "xmlns:wps=\"http://schemas.microsoft.com/office/word/2010/wordprocessingShape\" "
         "xmlns:wp=\"http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing\" "
         "xmlns:a=\"http://schemas.openxmlformats.org/drawingml/2006/main\" "
         "xmlns:v=\"urn:schemas-microsoft-com:vml\"><w:body>" +
         body + "<w:sectPr/></w:body></w:document>";
}

std::string docx_with_body(const std::string& body) {
  return with_part(data_file("report.docx"), "word/document.xml", word_document(body));
}

// ---------------------------------------------------------------- Word

TEST(Docx, ParagraphsAndTableCellsAreTranslated) {
  const std::string out = translate(data_file("report.docx"), FileFormat::kDocx);
  const std::vector<std::string> texts = paragraphs(part_of(out, "word/document.xml"));
  EXPECT_TRUE(has(texts, "RESULTS OF THE YEAR"));
  EXPECT_TRUE(has(texts, "THE CAT SLEEPS ON THE RED SOFA. IT DREAMS OF FISH."));
  EXPECT_TRUE(has(texts, "THE DOG RUNS IN THE PARK. THE SUN IS WARM."));
  for (const char* cell : {"APPLE", "GREEN FRUIT", "BREAD", "FRESH EVERY DAY"}) EXPECT_TRUE(has(texts, cell)) << cell;
  const pugi::xml_document doc = parse(part_of(out, "word/document.xml"));
  EXPECT_EQ(doc.select_nodes("//w:tbl/w:tr").size(), 2u);
  EXPECT_EQ(doc.select_nodes("//w:tbl/w:tr/w:tc").size(), 4u);
  EXPECT_EQ(doc.select_nodes("//w:body/w:p").size(), 5u);
}

TEST(Docx, AParagraphOfOnlyANumberIsLeftAsItWas) {
  const std::string out = translate(data_file("report.docx"), FileFormat::kDocx);
  EXPECT_TRUE(Contains(part_of(out, "word/document.xml"), "<w:p><w:r><w:t>2024</w:t></w:r></w:p>"));
}

TEST(Docx, TheBoldRunStaysAroundTheRightWord) {
  for (const bool reverse : {false, true}) {
    const std::string document =
        part_of(translate(data_file("report.docx"), FileFormat::kDocx, reverse), "word/document.xml");
    EXPECT_EQ(runs_with(document, "//w:r[w:rPr/w:b]/w:t"), std::vector<std::string>{"RED"}) << reverse;
    EXPECT_EQ(runs_with(document, "//w:r[w:rPr/w:i]/w:t"), std::vector<std::string>{"FISH"}) << reverse;
  }
}

TEST(Docx, ReversedWordsAreWrittenInTheirNewOrder) {
  const std::string out = translate(data_file("report.docx"), FileFormat::kDocx, true);
  EXPECT_TRUE(has(paragraphs(part_of(out, "word/document.xml")), "YEAR THE OF RESULTS"));
}

TEST(Docx, PartsNotTranslatedAreByteIdentical) {
  const std::string in = data_file("report.docx");
  const std::string out = translate(in, FileFormat::kDocx);
  ZipArchive before(in, {}, "before"), after(out, {}, "after");
  ASSERT_EQ(before.names(), after.names());
  for (const std::string& name : before.names()) {
    if (name == "word/document.xml" || name == "word/header1.xml") continue;
    EXPECT_EQ(before.read(name), after.read(name)) << name;
  }
}

TEST(Docx, TheHeaderIsTranslated) {
  const std::string out = translate(data_file("report.docx"), FileFormat::kDocx);
  EXPECT_TRUE(has(paragraphs(part_of(out, "word/header1.xml")), "QUARTERLY REPORT"));
}

TEST(Docx, TabsAndLineBreaksStayBetweenTheirWords) {
  for (const std::string& file : {"report.docx", "linked.docx"}) {
    const pugi::xml_document doc = parse(part_of(translate(data_file(file), FileFormat::kDocx), "word/document.xml"));
    std::string sequence;
    for (const pugi::xpath_node& p : doc.select_nodes("//w:p[.//w:tab]"))
      for (const pugi::xpath_node& node : p.node().select_nodes("./w:r/*[not(self::w:rPr)]")) {
        const std::string name = node.node().name();
        sequence += name == "w:t" ? std::string("[") + node.node().text().get() + "]" : " " + name + " ";
      }
    EXPECT_TRUE(sequence == "[NAME:] w:tab [ANNA] w:br [SECOND LINE OF THE ADDRESS.]" ||
                sequence == "[NAME:] w:tab [ANNA] w:br [TWO SPACES HERE.]")
        << file << ": " << sequence;
  }
}

TEST(Docx, AHyperlinkStaysAroundItsWords) {
  for (const bool reverse : {false, true}) {
    const std::string document =
        part_of(translate(data_file("linked.docx"), FileFormat::kDocx, reverse), "word/document.xml");
    EXPECT_EQ(runs_with(document, "//w:hyperlink[@r:id='rId2']/w:r/w:t"), std::vector<std::string>{"MANUAL"});
    EXPECT_EQ(runs_with(document, "//w:hyperlink/w:r[w:rPr/w:rStyle/@w:val='InternetLink']/w:t"),
              std::vector<std::string>{"MANUAL"});
  }
}

TEST(Docx, FootnotesAreTranslatedAndTheirReferenceKept) {
  const std::string out = translate(data_file("linked.docx"), FileFormat::kDocx);
  const std::vector<std::string> notes = paragraphs(part_of(out, "word/footnotes.xml"));
  EXPECT_TRUE(std::any_of(notes.begin(), notes.end(),
                          [](const std::string& t) { return t.find("THE NOTE SAYS HELLO.") != std::string::npos; }));
  const std::string document = part_of(out, "word/document.xml");
  EXPECT_EQ(parse(document)
                .select_nodes("//w:r[w:rPr/w:rStyle/@w:val='FootnoteAnchor']/w:footnoteReference[@w:id='2']")
                .size(),
            1u);
  EXPECT_TRUE(has(paragraphs(document), "A SENTENCE WITH A NOTE IN IT."));
  EXPECT_TRUE(Contains(part_of(out, "word/footnotes.xml"), "<w:footnoteRef/>"));
}

TEST(Docx, TheOutputOpensInPythonDocx) {
  if (std::system("/usr/bin/python3 -c 'import docx' 2>/dev/null") != 0) GTEST_SKIP() << "python3-docx is missing";
  const std::string path = ::testing::TempDir() + "ordo_office_open_xml_test.docx";
  {
    std::ofstream out(path, std::ios::binary);
    out << translate(data_file("report.docx"), FileFormat::kDocx);
  }
  const std::string script =
      "import docx, sys\n"
      "d = docx.Document(sys.argv[1])\n"
      "texts = [p.text for p in d.paragraphs]\n"
      "assert 'THE CAT SLEEPS ON THE RED SOFA. IT DREAMS OF FISH.' in texts, texts\n"
      "assert [r.text for p in d.paragraphs for r in p.runs if r.bold] == ['RED']\n"
      "assert d.tables[0].cell(1, 1).text == 'FRESH EVERY DAY'\n"
      "assert d.sections[0].header.paragraphs[0].text == 'QUARTERLY REPORT'\n";
  const std::string script_path = path + ".py";
  std::ofstream(script_path) << script;
  EXPECT_EQ(std::system(("/usr/bin/python3 " + script_path + " " + path).c_str()), 0);
  std::remove(path.c_str());
  std::remove(script_path.c_str());
}

TEST(Docx, ParagraphsWithTrackedChangesStayAsTheyWere) {
  const std::string tracked =
      "<w:p><w:r><w:t xml:space=\"preserve\">The old </w:t></w:r><w:ins w:id=\"1\" w:author=\"A\">"
      "<w:r><w:t>new</w:t></w:r></w:ins><w:del w:id=\"2\" w:author=\"A\"><w:r><w:delText>gone</w:delText></w:r>"
      "</w:del><w:r><w:t xml:space=\"preserve\"> text.</w:t></w:r></w:p>";
  const std::string out = part_of(
      translate(docx_with_body(tracked + "<w:p><w:r><w:t>Plain words here.</w:t></w:r></w:p>"), FileFormat::kDocx),
      "word/document.xml");
  EXPECT_TRUE(Contains(out, tracked));
  EXPECT_TRUE(has(paragraphs(out), "PLAIN WORDS HERE."));
}

TEST(Docx, AFieldIsKeptWholeBetweenTheWords) {
  const std::string field =
      "<w:r><w:fldChar w:fldCharType=\"begin\"/></w:r><w:r><w:instrText xml:space=\"preserve\"> PAGE </w:instrText>"
      "</w:r><w:r><w:fldChar w:fldCharType=\"separate\"/></w:r><w:r><w:t>seven</w:t></w:r>"
      "<w:r><w:fldChar w:fldCharType=\"end\"/></w:r>";
  const std::string out =
      part_of(translate(docx_with_body("<w:p><w:r><w:t xml:space=\"preserve\">See page </w:t></w:r>" + field +
                                       "<w:r><w:t xml:space=\"preserve\"> for more.</w:t></w:r></w:p>"),
                        FileFormat::kDocx),
              "word/document.xml");
  EXPECT_TRUE(Contains(out, field)) << out;
  EXPECT_TRUE(Contains(out, "SEE PAGE")) << out;
  EXPECT_TRUE(Contains(out, "FOR MORE.")) << out;
  EXPECT_LT(out.find("SEE PAGE"), out.find(field));
}

TEST(Docx, AParagraphWhereAFieldOnlyBeginsStaysAsItWas) {
  const std::string toc =
      "<w:p><w:r><w:fldChar w:fldCharType=\"begin\"/></w:r><w:r><w:instrText>TOC \\o</w:instrText></w:r>"
      "<w:r><w:fldChar w:fldCharType=\"separate\"/></w:r><w:r><w:t>Contents entry</w:t></w:r></w:p>";
  const std::string out = part_of(
      translate(docx_with_body(
                    toc + "<w:p><w:r><w:t>Second entry</w:t></w:r></w:p>"
                          "<w:p><w:r><w:fldChar w:fldCharType=\"end\"/></w:r><w:r><w:t>After it</w:t></w:r></w:p>"),
                FileFormat::kDocx),
      "word/document.xml");
  EXPECT_TRUE(Contains(out, toc));
  EXPECT_TRUE(Contains(out, "SECOND ENTRY"));
  EXPECT_TRUE(Contains(out, "<w:t>After it</w:t>"));
}

TEST(Docx, TextBoxParagraphsAreTranslatedInsideTheirDrawing) {
  const std::string box =
      "<w:p><w:r><w:t>Before the box</w:t></w:r><w:r><mc:AlternateContent><mc:Choice "
      "Requires=\"wps\"><w:drawing><wp:anchor><a:graphic><a:graphicData><wps:wsp><wps:txbx><w:txbxContent><w:p><w:r>"
      "<w:t>Words in the box.</w:t></w:r></w:p></w:txbxContent></wps:txbx></wps:wsp></a:graphicData></a:graphic>"
      "</wp:anchor></w:drawing></mc:Choice><mc:Fallback><w:pict><v:shape><v:textbox><w:txbxContent><w:p><w:r>"
      "<w:t>Words in the box.</w:t></w:r></w:p></w:txbxContent></v:textbox></v:shape></w:pict></mc:Fallback>"
      "</mc:AlternateContent></w:r><w:r><w:t xml:space=\"preserve\"> and after it.</w:t></w:r></w:p>";
  const std::string out = part_of(translate(docx_with_body(box), FileFormat::kDocx), "word/document.xml");
  const pugi::xml_document doc = parse(out);
  EXPECT_EQ(runs_with(out, "//mc:Choice//w:txbxContent/w:p/w:r/w:t"), std::vector<std::string>{"WORDS IN THE BOX."});
  EXPECT_EQ(runs_with(out, "//mc:Fallback//w:txbxContent/w:p/w:r/w:t"), std::vector<std::string>{"Words in the box."});
  EXPECT_TRUE(has(paragraphs(out), "BEFORE THE BOX AND AFTER IT.")) << out;
  EXPECT_EQ(doc.select_nodes("//w:drawing").size(), 1u);
}

TEST(Docx, TheDeclarationAndItsLineEndAreKept) {
  const std::string out =
      part_of(translate(docx_with_body("<w:p><w:r><w:t>Hello there.</w:t></w:r></w:p>"), FileFormat::kDocx),
              "word/document.xml");
  EXPECT_EQ(out.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\r\n<w:document ", 0), 0u) << out;
}

// ---------------------------------------------------------------- PowerPoint

TEST(Pptx, SlideTextIsTranslatedAndTheBoldWordKept) {
  for (const bool reverse : {false, true}) {
    const std::string out = translate(data_file("slides.pptx"), FileFormat::kPptx, reverse);
    const std::string slide = part_of(out, "ppt/slides/slide1.xml");
    EXPECT_TRUE(has(paragraphs(slide, "a:p", "a:t"), "WELCOME"));
    EXPECT_EQ(runs_with(slide, "//a:r[a:rPr/@b='1']/a:t"), std::vector<std::string>{"VERY"}) << reverse;
    EXPECT_TRUE(has(paragraphs(part_of(out, "ppt/slides/slide2.xml"), "a:p", "a:t"), "PRICES"));
  }
}

TEST(Pptx, SpeakerNotesAreTranslated) {
  const std::string out = translate(data_file("slides.pptx"), FileFormat::kPptx);
  EXPECT_TRUE(has(paragraphs(part_of(out, "ppt/notesSlides/notesSlide1.xml"), "a:p", "a:t"), "SPEAK SLOWLY HERE."));
}

TEST(Pptx, LayoutsMastersAndOtherPartsAreByteIdentical) {
  const std::string in = data_file("slides.pptx");
  const std::string out = translate(in, FileFormat::kPptx);
  ZipArchive before(in, {}, "before"), after(out, {}, "after");
  ASSERT_EQ(before.names(), after.names());
  for (const std::string& name : before.names()) {
    if (name.find("ppt/slides/slide") == 0 || name.find("ppt/notesSlides/notesSlide") == 0) continue;
    EXPECT_EQ(before.read(name), after.read(name)) << name;
  }
}

// ---------------------------------------------------------------- Excel

TEST(Xlsx, InlineStringsAreTranslatedAndNumbersAndFormulasKept) {
  const std::string out = translate(data_file("table.xlsx"), FileFormat::kXlsx);
  const std::string sheet = part_of(out, "xl/worksheets/sheet1.xml");
  const std::vector<std::string> texts = runs_with(sheet, "//c/is/t");
  EXPECT_EQ(texts, (std::vector<std::string>{"FRUIT", "PRICE", "NOTE", "APPLE", "GREEN AND SWEET", "BREAD",
                                             "FRESH EVERY DAY", "TOTAL", "12345"}));
  EXPECT_TRUE(Contains(sheet, "<c r=\"B2\" t=\"n\"><v>1.5</v></c>"));
  EXPECT_TRUE(Contains(sheet, "<c r=\"B4\"><f>SUM(B2:B3)</f><v/></c>"));
  EXPECT_TRUE(Contains(sheet, "<c r=\"D1\" s=\"1\" t=\"n\"><v>46023</v></c>"));
}

TEST(Xlsx, SharedStringsAreTranslated) {
  const std::string out = translate(data_file("rich.xlsx"), FileFormat::kXlsx);
  const std::vector<std::string> texts = runs_with(part_of(out, "xl/sharedStrings.xml"), "//si/t");
  EXPECT_TRUE(has(texts, "SWEET AND RED"));
  EXPECT_TRUE(has(texts, "TOTAL"));
  ZipArchive before(data_file("rich.xlsx"), {}, "before"), after(out, {}, "after");
  EXPECT_EQ(before.read("xl/worksheets/sheet1.xml"), after.read("xl/worksheets/sheet1.xml"));
}

TEST(Xlsx, RichTextRunsKeepTheirFormatting) {
  const std::string strings =
      "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
      "<sst xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\" count=\"2\" uniqueCount=\"2\">"
      "<si><r><t xml:space=\"preserve\">A very </t></r><r><rPr><b/><sz val=\"11\"/></rPr><t>hot</t></r>"
      "<r><t xml:space=\"preserve\"> soup today</t></r></si><si><t>3.5 %</t></si></sst>";
  const std::string out =
      part_of(translate(with_part(data_file("rich.xlsx"), "xl/sharedStrings.xml", strings), FileFormat::kXlsx, true),
              "xl/sharedStrings.xml");
  EXPECT_EQ(runs_with(out, "//si/r[rPr/b]/t"), std::vector<std::string>{"HOT"}) << out;
  EXPECT_TRUE(Contains(out, "<si><t>3.5 %</t></si>"));
}

// ---------------------------------------------------------------- hostile files

TEST(OfficeOpenXml, AnEntityBombPartIsRefused) {
  std::string laughs = "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [<!ENTITY lol \"lol\">";
  for (int i = 1; i < 10; ++i)
    laughs += "<!ENTITY lol" + std::to_string(i) + " \"" + std::string("&lol") + (i > 1 ? std::to_string(i - 1) : "") +
              ";&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">";
  laughs +=
      "]>\n<w:document xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\"><w:body><w:p>"
      "<w:r><w:t>&lol9;</w:t></w:r></w:p></w:body></w:document>";
  const std::string docx = with_part(data_file("report.docx"), "word/document.xml", laughs);
  EXPECT_TRUE(Contains(error_of([&] { FileDocument(docx, FileFormat::kDocx); }),
                       "DOCX file: word/document.xml: declares entities (<!ENTITY"));
}

TEST(OfficeOpenXml, APartNestedTenThousandDeepIsRefused) {
  std::string deep = "<w:document xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\">";
  for (int i = 0; i < 10000; ++i) deep += "<w:x>";
  for (int i = 0; i < 10000; ++i) deep += "</w:x>";
  deep += "</w:document>";
  const std::string docx = with_part(data_file("report.docx"), "word/document.xml", deep);
  EXPECT_TRUE(Contains(error_of([&] { FileDocument(docx, FileFormat::kDocx); }),
                       "DOCX file: word/document.xml: elements nested deeper than 256 (limit max_xml_depth)"));
}

TEST(OfficeOpenXml, AZipBombPartStopsAtTheLimit) {
  const std::string big =
      word_document("<!--" + std::string(8 << 20, ' ') + "--><w:p><w:r><w:t>Hi there.</w:t></w:r></w:p>");
  const std::string docx = with_part(data_file("report.docx"), "word/document.xml", big);
  EXPECT_LT(docx.size(), size_t{1} << 20);
  FileOptions options;
  options.limits.max_part_bytes = 4 << 20;
  EXPECT_TRUE(Contains(error_of([&] { FileDocument(docx, FileFormat::kDocx, options); }),
                       "DOCX file: part 'word/document.xml' inflates past 4 MiB (limit max_part_bytes)"));
  options.limits.max_part_bytes = 64 << 20;
  options.limits.max_compression_ratio = 100;
  EXPECT_TRUE(Contains(error_of([&] { FileDocument(docx, FileFormat::kDocx, options); }),
                       "DOCX file: part 'word/document.xml' inflates more than 100 times its packed size "
                       "(limit max_compression_ratio)"));
}

TEST(OfficeOpenXml, APathTraversalNameIsRefused) {
  const std::string docx = with_part(data_file("report.docx"), "../../etc/passwd", "root:x:0:0");
  EXPECT_TRUE(Contains(error_of([&] { FileDocument(docx, FileFormat::kDocx); }),
                       "DOCX file: part name '../../etc/passwd' has a '..' component (unsafe name)"));
}

TEST(OfficeOpenXml, ATruncatedFileIsNotAZipArchive) {
  const std::string docx = data_file("report.docx");
  EXPECT_TRUE(Contains(error_of([&] { FileDocument(docx.substr(0, docx.size() / 2), FileFormat::kDocx); }),
                       "DOCX file: not a zip archive ("));
  EXPECT_TRUE(Contains(error_of([&] { FileDocument(docx.substr(0, docx.size() - 30), FileFormat::kDocx); }),
                       "DOCX file: not a zip archive ("));
}

TEST(OfficeOpenXml, APdfOrTextFileIsNotAZipArchive) {
  EXPECT_TRUE(Contains(
      error_of([&] { FileDocument("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n", FileFormat::kDocx); }),
      "DOCX file: not a zip archive ("));
  EXPECT_TRUE(Contains(error_of([&] { FileDocument("Just some text.\n", FileFormat::kXlsx); }),
                       "XLSX file: not a zip archive ("));
}

TEST(OfficeOpenXml, AnArchiveOfAnotherKindIsNotThisFormat) {
  EXPECT_TRUE(
      Contains(error_of([&] { FileDocument(data_file("slides.pptx"), FileFormat::kDocx); }), "not a Word document"));
  EXPECT_TRUE(
      Contains(error_of([&] { FileDocument(data_file("table.xlsx"), FileFormat::kPptx); }),
               "PPTX file: xl/workbook.xml holds <workbook>, not <presentation>: not a PowerPoint presentation"));
  EXPECT_TRUE(Contains(error_of([&] { FileDocument(data_file("sample.odt"), FileFormat::kXlsx); }),
                       "XLSX file: no xl/workbook.xml: not an Excel workbook"));
}

TEST(OfficeOpenXml, MalformedXmlNamesThePartAndLine) {
  const std::string docx =
      with_part(data_file("report.docx"), "word/header1.xml", "<?xml version=\"1.0\"?>\n<w:hdr>\n<w:p></w:hdr>");
  EXPECT_TRUE(Contains(error_of([&] { FileDocument(docx, FileFormat::kDocx); }),
                       "DOCX file: word/header1.xml: malformed XML at line 3"));
}

}  // namespace
}  // namespace ordo
