// HTML documents (ordo::HtmlDocument, src/document/html_layout.cpp): which text is translated,
// that every other byte is kept, where inline tags go back (given word alignments), and
// `ordo translate --format html` through the binary with the bundled en-de model.
// ctest-label: integration
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "ordo/ordo.h"
#include "support/cli_run.h"
#include "support/sanitizer.h"
#include "support/temp_dir.h"

namespace ordo {
namespace {

using Sentences = std::vector<std::string>;

// A translation of `text` with its words linked as `links` ("0-0 1-2": source-target).
AlignedTranslation aligned(const std::string& text, const std::vector<std::pair<int, int>>& links, int source_words) {
  AlignedTranslation out;
  out.text = text;
  for (auto [s, t] : links) out.words.push_back({s, t});
  out.source_words = source_words;
  int words = 0;
  bool in_word = false;
  for (char c : text) {
    if (c != ' ' && !in_word) ++words;
    in_word = c != ' ';
  }
  out.target_words = words;
  return out;
}

// Each sentence translated as itself, word i to word i.
std::vector<AlignedTranslation> identity(const HtmlDocument& doc) {
  std::vector<AlignedTranslation> out;
  for (const std::string& s : doc.sentences()) {
    std::vector<std::pair<int, int>> links;
    int words = 0;
    bool in_word = false;
    for (char c : s) {
      if (c != ' ' && !in_word) {
        links.push_back({words, words});
        ++words;
      }
      in_word = c != ' ';
    }
    out.push_back(aligned(s, links, words));
  }
  return out;
}

// A paragraph with one inline element, <b> around "brave" (word 1 of 4).
HtmlDocument brave_new_world() { return HtmlDocument("<p class=intro>Hello <b>brave</b> new world.</p>", "en"); }

TEST(HtmlLayout, ABlockIsOneSentenceThatNeedsAnAlignment) {
  const HtmlDocument doc = brave_new_world();
  EXPECT_EQ(doc.sentences(), Sentences{"Hello brave new world."});
  EXPECT_TRUE(doc.needs_alignment());
}

TEST(HtmlLayout, AnInlineTagFollowsItsWordWhenTheWordOrderChanges) {
  EXPECT_EQ(brave_new_world().rebuild({aligned("Hallo neue mutige Welt.", {{0, 0}, {1, 2}, {2, 1}, {3, 3}}, 4)}),
            "<p class=intro>Hallo neue <b>mutige</b> Welt.</p>");
}

TEST(HtmlLayout, AnInlineTagWrapsEveryTargetWordOfItsSourceWord) {
  EXPECT_EQ(
      brave_new_world().rebuild({aligned("Hallo du tapfere neue Welt.", {{0, 0}, {1, 1}, {1, 2}, {2, 3}, {3, 4}}, 4)}),
      "<p class=intro>Hallo <b>du tapfere</b> neue Welt.</p>");
}

TEST(HtmlLayout, WithoutAnAlignmentAnInlineTagGoesByRelativePosition) {
  EXPECT_EQ(brave_new_world().rebuild({aligned("Hallo mutige neue Welt.", {}, 0)}),
            "<p class=intro>Hallo <b>mutige</b> neue Welt.</p>");
}

// The alignment is only as good as the model's attention: an element whose word is aligned
// nowhere wraps the target word at the same relative place, rather than nothing.
TEST(HtmlLayout, AnUnalignedWordsTagWrapsTheWordAtTheSameRelativePlace) {
  EXPECT_EQ(brave_new_world().rebuild({aligned("Hallo mutige neue Welt.", {{0, 0}, {2, 2}, {3, 3}}, 4)}),
            "<p class=intro>Hallo <b>mutige</b> neue Welt.</p>");
}

TEST(HtmlLayout, AnUnalignedWordsPlaceIsRelativeToAShorterTranslation) {
  // Word 1 of 4 -> word 0 of 3.
  EXPECT_EQ(brave_new_world().rebuild({aligned("Hallo neue Welt.", {{0, 0}, {2, 1}, {3, 2}}, 4)}),
            "<p class=intro><b>Hallo</b> neue Welt.</p>");
}

// A list item with a link holding nested <i> and <b>, the full stop after the link.
const std::string kNestedLink =
    "<li>Read <a href=\"/a?x=1&amp;y=2\" title='say \"hi\"' data-n=3>the <i>new <b>book</b></i></a>.</li>";

TEST(HtmlLayout, ALinkHoldingNestedInlineTagsIsPartOfOneSentence) {
  EXPECT_EQ(HtmlDocument(kNestedLink, "en").sentences(), Sentences{"Read the new book."});
}

TEST(HtmlLayout, PunctuationAfterALinkStaysOutsideIt) {
  // "book." carries the full stop the link does not: it stays outside </a>.
  const HtmlDocument doc(kNestedLink, "en");
  EXPECT_EQ(doc.rebuild(identity(doc)), kNestedLink);
}

TEST(HtmlLayout, NestedTagsKeepTheirAttributesAroundTheirTranslatedWords) {
  EXPECT_EQ(
      HtmlDocument(kNestedLink, "en").rebuild({aligned("Lies das neue Buch.", {{0, 0}, {1, 1}, {2, 2}, {3, 3}}, 4)}),
      "<li>Lies <a href=\"/a?x=1&amp;y=2\" title='say \"hi\"' data-n=3>das <i>neue <b>Buch</b></i></a>.</li>");
}

TEST(HtmlLayout, ReorderedWordsKeepChildElementsInsideTheirParents) {
  // Each element wraps the hull of its words' translations.
  EXPECT_EQ(
      HtmlDocument(kNestedLink, "en").rebuild({aligned("Buch lies das neue.", {{0, 1}, {1, 2}, {2, 3}, {3, 0}}, 4)}),
      "<li><a href=\"/a?x=1&amp;y=2\" title='say \"hi\"' data-n=3><i><b>Buch</b> lies das neue</i></a>.</li>");
}

TEST(HtmlLayout, MarkupOutsideTextIsKeptByteForByte) {
  const std::string html =
      "<!DOCTYPE html>\n<html lang=en><head><title>The title</title>\n"
      "<style>p { color: red }</style><script>var s = \"Do not translate.\";</script></head>\n"
      "<body>\n  <!-- A comment. -->\n  <h1 id=\"top\" >Big news</h1>\n"
      "  <p>Tom &amp; Jerry &lt;3 &#8212; fun.</p>\n"
      "  <p>&nbsp;</p>\n"
      "  <pre>Keep   this text.</pre>\n"
      "  <p>Run <code>ls -l</code> now.<br/>Next line.<img src=a.png alt=\"An image\"></p>\n"
      "</body></html>\n";
  const HtmlDocument doc(html, "en");
  EXPECT_EQ(doc.sentences(),
            (Sentences{"The title", "Big news", "Tom & Jerry <3 \u2014 fun.", "Run now.", "Next line."}));
  // Unchanged sentences give the page back as it was (translated text is written as UTF-8,
  // only &, < and > escaped: the entity of a translated sentence is not kept).
  std::string same = html;
  same.replace(same.find("&#8212;"), 7, "\u2014");
  EXPECT_EQ(doc.rebuild(identity(doc)), same);
  std::vector<AlignedTranslation> t = {
      aligned("Der Titel", {{0, 0}, {1, 1}}, 2), aligned("Große Neuigkeiten", {{0, 0}, {1, 1}}, 2),
      aligned("Tom & Jerry <3 — Spaß.", {{0, 0}, {1, 1}, {2, 2}, {3, 3}, {4, 4}, {5, 5}}, 6),
      aligned("Führe jetzt aus.", {{0, 0}, {1, 1}, {0, 2}}, 2), aligned("Nächste Zeile.", {{0, 0}, {1, 1}}, 2)};
  EXPECT_EQ(doc.rebuild(t),
            "<!DOCTYPE html>\n<html lang=en><head><title>Der Titel</title>\n"
            "<style>p { color: red }</style><script>var s = \"Do not translate.\";</script></head>\n"
            "<body>\n  <!-- A comment. -->\n  <h1 id=\"top\" >Große Neuigkeiten</h1>\n"
            "  <p>Tom &amp; Jerry &lt;3 — Spaß.</p>\n"
            "  <p>&nbsp;</p>\n"
            "  <pre>Keep   this text.</pre>\n"
            "  <p>Führe <code>ls -l</code> jetzt aus.<br/>Nächste Zeile.<img src=a.png alt=\"An image\"></p>\n"
            "</body></html>\n");
}

TEST(HtmlLayout, TextWithoutTagsIsReplacedWhole) {
  EXPECT_EQ(HtmlDocument("Just text, no tags.", "en").rebuild({aligned("X", {}, 0)}), "X");
}

const std::string kTwoLines = "<p>\n  First line.\r\n  Second <i>line</i>.\n</p>";

TEST(HtmlLayout, EachLineOfABlockIsASentence) {
  EXPECT_EQ(HtmlDocument(kTwoLines, "en").sentences(), (Sentences{"First line.", "Second line."}));
}

TEST(HtmlLayout, TheWhitespaceAroundSentencesIsKeptByteForByte) {
  EXPECT_EQ(HtmlDocument(kTwoLines, "en").rebuild({aligned("1", {}, 0), aligned("2 3", {{0, 0}, {1, 1}}, 2)}),
            "<p>\r\n  1\r\n  2 <i>3</i>\n</p>");
}

TEST(HtmlLayout, SentencesOfOnlySymbolsAreNotSent) {
  EXPECT_EQ(HtmlDocument("<p> · </p><p>—</p><p>123</p>", "en").sentences(), Sentences{"123"});
}

const std::string kInlineFragment = "<span>Hello</span> <em>world</em>";

TEST(HtmlLayout, InlineElementsOfAFragmentAreOneSentence) {
  EXPECT_EQ(HtmlDocument(kInlineFragment, "en").sentences(), Sentences{"Hello world"});
}

TEST(HtmlLayout, InlineElementsOfAFragmentFollowTheirWords) {
  const HtmlDocument span(kInlineFragment, "en");
  EXPECT_EQ(span.rebuild({aligned("Hallo Welt", {{0, 0}, {1, 1}}, 2)}), "<span>Hallo</span> <em>Welt</em>");
  EXPECT_EQ(span.rebuild({aligned("Welt Hallo", {{0, 1}, {1, 0}}, 2)}), "<em>Welt</em> <span>Hallo</span>");
}

TEST(HtmlLayout, MalformedHtmlKeepsTheSourceBytes) {
  // What Gumbo repairs (unclosed and misnested tags, stray end tags, table text, unquoted
  // attributes, an unterminated comment) is not repaired in the output: translating each
  // sentence as itself gives the input back.
  for (const std::string html : {
           std::string("<p>One <b>two</p><p>three</b> four</p>"),
           std::string("<p>Unclosed <i>italic text."),
           std::string("<div>Stray </span>end tag here.</div>"),
           std::string("<table>Foster text<tr><td>Cell text</td></tr></table>"),
           std::string("<b>Bold <i>both</b> italic</i> plain."),
           std::string("<p>Open <b>bold<div>block inside</div> after</b> end.</p>"),
           std::string("<a href=x title=\"unterminated>Link text</a> rest."),
           std::string("<p>Text <!-- unterminated comment"),
           std::string("<ul><li>One<li>Two<li>Three</ul>"),
           std::string("</p>Text before any tag.<p>"),
       }) {
    const HtmlDocument doc(html, "en");
    EXPECT_EQ(doc.rebuild(identity(doc)), html) << html;
    // Another translation: still no crash, and no byte before the first text changes.
    std::vector<AlignedTranslation> other;
    for (const std::string& s : doc.sentences()) other.push_back(aligned("X & " + s, {{0, 2}}, 1));
    EXPECT_NO_THROW(doc.rebuild(other));
  }
}

// Text inside 5000 unclosed <span>s.
std::string deep_spans() {
  std::string deep;
  for (int i = 0; i < 5000; ++i) deep += "<span>";
  return deep + "Deep text.";
}

TEST(HtmlLayout, NestingBeyondTheDefaultDepthIsRefused) {
  // The parser's scope checks walk the nesting.
  EXPECT_THROW(HtmlDocument(deep_spans(), "en"), Error);
}

TEST(HtmlLayout, NestingWithinARaisedDepthLimitIsTranslated) {
  const std::string deep = deep_spans();
  HtmlLimits deeper;
  deeper.max_depth = 6000;
  const HtmlDocument doc(deep, "en", deeper);
  EXPECT_EQ(doc.sentences(), Sentences{"Deep text."});
  EXPECT_EQ(doc.rebuild({aligned("X", {}, 0)}), deep.substr(0, deep.size() - 10) + "X");
}

// The message of the Error `html` is refused with under `limits` (empty when it is accepted),
// and the refusal takes well under a second.
std::string refusal(const std::string& html, const HtmlLimits& limits = {}) {
  const auto start = std::chrono::steady_clock::now();
  std::string message;
  try {
    HtmlDocument doc(html, "en", limits);
  } catch (const Error& e) {
    message = e.what();
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 2.0 * testing::kTimeScale)
      << message;
  return message;
}

std::string repeat(const std::string& piece, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out += piece;
  return out;
}

// Pages whose parse grows without bound are refused before parsing, naming the limit.
TEST(HtmlLimits, DeepUnclosedElementsAreRefusedNamingMaxDepth) {
  EXPECT_NE(refusal("<p>" + repeat("<b>", 40000) + "A man.").find("(limit max_depth 512)"), std::string::npos);
  EXPECT_NE(refusal("<p>" + repeat("<div>", 20000) + "A man.").find("max_depth"), std::string::npos);
}

// 3000 distinct formatting elements left open in a paragraph.
std::string distinct_open_formatting() {
  std::string distinct = "<p>";
  for (int i = 0; i < 3000; ++i) distinct += "<b x=" + std::to_string(i) + ">";
  return distinct;
}

TEST(HtmlLimits, FormattingElementsReopenedInEveryBlockAreRefusedNamingTheLimit) {
  EXPECT_NE(refusal(distinct_open_formatting() + repeat("</p>x", 5000)).find("max_open_formatting 100"),
            std::string::npos);
  EXPECT_NE(refusal(distinct_open_formatting() + "</p>" + repeat("<p>x</p>", 5000)).find("max_open_formatting"),
            std::string::npos);
}

// Lists, paragraphs and cells.
TEST(HtmlLimits, UnclosedTagsTheParserClosesItselfDoNotCount) {
  EXPECT_EQ(refusal("<ul>" + repeat("<li>An item.", 5000) + "</ul>" + repeat("<p>Text.", 5000) + "<table>" +
                    repeat("<tr><td>A<td>B", 2000) + "</table>" + repeat("<b>x</b><i>y</i>", 5000)),
            "");
}

TEST(HtmlLimits, AnElementWithTooManyAttributesIsRefusedNamingTheLimit) {
  std::string attributes = "<p";
  for (int i = 0; i < 300; ++i) attributes += " a" + std::to_string(i) + "=\"v\"";
  EXPECT_NE(refusal(attributes + ">Text.</p>").find("max_attributes 256"), std::string::npos);
}

TEST(HtmlLimits, APagePastMaxBytesIsRefusedNamingTheLimit) {
  HtmlLimits small;
  small.max_bytes = 1000;
  EXPECT_NE(refusal(repeat("<p>Text.</p>", 100), small).find("max_bytes 1000"), std::string::npos);
}

TEST(HtmlLimits, APagePastMaxElementsIsRefusedNamingTheLimit) {
  HtmlLimits small;
  small.max_elements = 1000;
  EXPECT_NE(refusal(repeat("<p>Text.</p>", 1001), small).find("max_elements 1000"), std::string::npos);
}

TEST(HtmlLimits, APagePastMaxTotalAttributesIsRefusedNamingTheLimit) {
  HtmlLimits small;
  small.max_total_attributes = 1000;
  EXPECT_NE(refusal(repeat("<p a=1 b=2>Text.</p>", 501), small).find("max_total_attributes 1000"), std::string::npos);
}

TEST(HtmlLimits, LessThanSignsInScriptsAndCommentsStartNoElement) {
  EXPECT_EQ(
      refusal("<script>" + repeat("s = '<b>';", 10000) + "</script><!--" + repeat("<b>", 10000) + "--><p>Hi.</p>"), "");
}

// The parse itself runs within a memory budget and a deadline, whatever the pre-scan lets
// through: an allocation past them ends the parse with an Error, not an abort.

// 2000 paragraphs, each with a distinct attribute.
std::string numbered_page() {
  std::string page;
  for (int i = 0; i < 2000; ++i)
    page += "<p class=c" + std::to_string(i) + ">Sentence number " + std::to_string(i) + ".</p>\n";
  return page;
}

// Many formatting elements reopened after each block: the work the pre-scan allows (100
// reopened per paragraph).
std::string reopening_page() {
  std::string reopen = "<p>";
  for (int i = 0; i < 99; ++i) reopen += "<b x=" + std::to_string(i) + ">";
  return reopen + "</p>" + repeat("<p>x</p>", 300);
}

TEST(HtmlLimits, AParsePastItsMemoryBudgetIsRefused) {
  HtmlLimits tight;
  tight.max_memory = 256 << 10;
  EXPECT_NE(refusal(numbered_page(), tight).find("max_memory"), std::string::npos);
}

// The budget all parses of the process share (concurrent requests).
TEST(HtmlLimits, AParsePastTheBudgetOfAllParsesIsRefused) {
  HtmlLimits tight;
  tight.max_memory_all_parses = 1 << 20;
  EXPECT_NE(refusal(numbered_page(), tight).find("max_memory_all_parses"), std::string::npos);
}

TEST(HtmlLimits, ARefusedParseReleasesItsShareOfTheBudgetOfAllParses) {
  HtmlLimits tight;
  tight.max_memory_all_parses = 1 << 20;
  ASSERT_NE(refusal(numbered_page(), tight).find("max_memory_all_parses"), std::string::npos);
  EXPECT_EQ(refusal("<p>A small page.</p>", tight), "");
}

TEST(HtmlLimits, AParsePastItsDeadlineIsRefused) {
  HtmlLimits tight;
  tight.max_seconds = 1e-9;
  EXPECT_NE(refusal(repeat(numbered_page(), 10), tight).find("max_seconds"), std::string::npos);
}

TEST(HtmlLimits, ReopenedFormattingElementsParseWithinTheDefaultBudget) { EXPECT_EQ(refusal(reopening_page()), ""); }

TEST(HtmlLimits, ReopenedFormattingElementsAreRefusedPastASmallerMemoryBudget) {
  HtmlLimits tight;
  tight.max_memory = 1 << 20;
  EXPECT_NE(refusal(reopening_page(), tight).find("max_memory"), std::string::npos);
}

// Placing thousands of inline tags in one block would cost tags x words: such a block is
// translated text node by text node, and still every byte kept.
TEST(HtmlLimits, ABlockOfThousandsOfInlineTagsIsTranslatedInLinearTime) {
  const std::string dense = "<p>" + repeat("<b>w</b> ", 20000) + "</p>";
  const auto start = std::chrono::steady_clock::now();
  const HtmlDocument nodes(dense, "en");
  EXPECT_EQ(nodes.sentences().size(), 20000u);
  EXPECT_EQ(nodes.rebuild(identity(nodes)), dense);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 2.0 * testing::kTimeScale);
}

// Nothing of a refused parse leaks into the next one.
TEST(HtmlLimits, AMegabytePageParsesWithTheDefaultsAfterARefusal) {
  HtmlLimits tight;
  tight.max_memory = 256 << 10;
  ASSERT_NE(refusal(numbered_page(), tight).find("max_memory"), std::string::npos);
  std::string normal = "<!DOCTYPE html><html><head><title>A page</title></head><body>";
  while (normal.size() < (1u << 20))
    normal +=
        "<div class=\"section\"><h2>A heading</h2><p>A man is riding a <b>red</b> bicycle down "
        "<a href=\"/street?id=1&amp;x=2\">the street</a>.</p><ul><li>One item.<li>Two items.</ul>"
        "<table><tr><td>Cell one.<td>Cell two.</table></div>\n";
  normal += "</body></html>";
  const HtmlDocument doc(normal, "en");
  EXPECT_GT(doc.sentences().size(), 20000u);
  EXPECT_EQ(doc.rebuild(identity(doc)), normal);
}

// ---------------------------------------------------------------- through the binary

using testing::CliRun;
using testing::read_file;

CliRun ordo_cli(const std::string& args, const std::string& input) { return testing::run_ordo(args, input); }

std::string model_arg() { return "-q -m '" + std::string(ORDO_SOURCE_DIR) + "/models/en-de'"; }

// The plain translation of each line, as `ordo translate` gives it.
Sentences plain(const Sentences& lines) {
  std::string input;
  for (const std::string& l : lines) input += l + "\n";
  const CliRun run = ordo_cli("translate " + model_arg(), input);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  Sentences out;
  std::stringstream s(run.out);
  for (std::string line; std::getline(s, line);) out.push_back(line);
  EXPECT_EQ(out.size(), lines.size());
  return out;
}

std::string escaped(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : std::string(1, c);
  return out;
}

std::string without(std::string text, const Sentences& tags) {
  for (const std::string& tag : tags)
    for (size_t at = text.find(tag); at != std::string::npos; at = text.find(tag)) text.erase(at, tag.size());
  return text;
}

// A page with blocks of plain sentences, one with <b> and one with a link, translated once
// by `ordo translate --format html` for the tests below, and the plain translation of its
// sentences.
struct TranslatedPage {
  Sentences german;  // plain translations of the page's six sentences
  CliRun run;
  std::string head, tail;  // what the output must start and end with
};

const TranslatedPage& translated_page() {
  static const TranslatedPage page = [] {
    const Sentences source = {
        "A Small Test Page",          "Two men are playing soccer in a park.",          "A dog runs through the grass.",
        "A woman is reading a book.", "A man is riding a red bicycle down the street.", "A child is eating an apple."};
    TranslatedPage out;
    out.german = plain(source);
    const std::string html =
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + source[0] +
        "</title>\n<script>var t = \"A man is here.\";</script></head>\n<body>\n<!-- comment -->\n"
        "<p class='x' data-a=\"1&amp;2\">" +
        source[1] + " " + source[2] + "</p>\n<ul>\n  <li>" + source[3] +
        "</li>\n</ul>\n<p>A man is riding a <b>red</b> bicycle down the street.</p>\n"
        "<div>A child is eating <a href=\"/apple?id=1&amp;x=2\">an apple</a>.</div>\n<pre>A man is here.</pre>\n"
        "</body></html>\n";
    out.run = ordo_cli("translate --format html " + model_arg(), html);
    const Sentences& german = out.german;
    out.head = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + escaped(german[0]) +
               "</title>\n<script>var t = \"A man is here.\";</script></head>\n<body>\n<!-- comment -->\n"
               "<p class='x' data-a=\"1&amp;2\">" +
               escaped(german[1]) + " " + escaped(german[2]) + "</p>\n<ul>\n  <li>" + escaped(german[3]) +
               "</li>\n</ul>\n<p>";
    out.tail = "</div>\n<pre>A man is here.</pre>\n</body></html>\n";
    return out;
  }();
  return page;
}

// The output between the blocks without inline tags: the <b> paragraph's sentence and the
// link's, split at the block between them.
void sentences_with_inline_tags(std::string* bold, std::string* link) {
  const TranslatedPage& page = translated_page();
  ASSERT_EQ(page.run.exit_code, 0) << page.run.err;
  const std::string& out = page.run.out;
  ASSERT_GE(out.size(), page.head.size() + page.tail.size());
  const std::string middle = out.substr(page.head.size(), out.size() - page.head.size() - page.tail.size());
  const size_t p_end = middle.find("</p>\n<div>");
  ASSERT_NE(p_end, std::string::npos) << middle;
  *bold = middle.substr(0, p_end);
  *link = middle.substr(p_end + 10);
}

TEST(HtmlCli, BlocksWithoutInlineTagsAreThePlainTranslationInsideTheKeptMarkup) {
  const TranslatedPage& page = translated_page();
  ASSERT_EQ(page.run.exit_code, 0) << page.run.err;
  EXPECT_EQ(page.run.out.substr(0, page.head.size()), page.head);
  ASSERT_GE(page.run.out.size(), page.head.size() + page.tail.size());
  EXPECT_EQ(page.run.out.substr(page.run.out.size() - page.tail.size()), page.tail);
}

TEST(HtmlCli, SentencesWithInlineTagsHaveThePlainTranslationsWords) {
  std::string bold, link;
  ASSERT_NO_FATAL_FAILURE(sentences_with_inline_tags(&bold, &link));
  EXPECT_EQ(without(bold, {"<b>", "</b>"}), escaped(translated_page().german[4]));
  EXPECT_EQ(without(link, {"<a href=\"/apple?id=1&amp;x=2\">", "</a>"}), escaped(translated_page().german[5]));
}

TEST(HtmlCli, InlineTagsWrapAWordOfTheTranslation) {
  std::string bold, link;
  ASSERT_NO_FATAL_FAILURE(sentences_with_inline_tags(&bold, &link));
  EXPECT_NE(bold.find("<b>"), std::string::npos);
  EXPECT_LT(bold.find("<b>") + 3, bold.find("</b>")) << bold;
  EXPECT_NE(link.find("<a href=\"/apple?id=1&amp;x=2\">"), std::string::npos);
  EXPECT_LT(link.find("\">") + 2, link.find("</a>")) << link;
}

TEST(HtmlCli, TranslatesAPageFileIntoAnOutputFile) {
  testing::TempDir dir;
  const std::string in = dir.write("page.html", "<p>A dog runs.</p>");
  const CliRun run =
      ordo_cli("translate --format html " + model_arg() + " -i '" + in + "' -o '" + dir.file("out.html") + "'", "");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(read_file(dir.file("out.html")), "<p>" + escaped(plain({"A dog runs."})[0]) + "</p>");
}

TEST(HtmlCli, OptionsForPlainTextAreRefusedNamingTheFormat) {
  for (const std::string option :
       {"--json", "--paragraphs", "--document", "--split-sentences", "--alignment hard", "--beam-size 2 --n-best 2"}) {
    const CliRun run = ordo_cli("translate --format html " + model_arg() + " " + option, "<p>Hi.</p>");
    EXPECT_EQ(run.exit_code, 1) << option;
    EXPECT_NE(run.err.find("--format html"), std::string::npos) << option << ": " << run.err;
  }
}

TEST(HtmlCli, AnUnknownFormatIsRefused) {
  EXPECT_NE(ordo_cli("translate --format xml " + model_arg(), "").exit_code, 0);
}

TEST(HtmlCli, InvalidUtf8InAPageIsAnErrorNamingUtf8) {
  const CliRun run = ordo_cli("translate --format html " + model_arg(), "<p>bad \xff byte</p>");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("UTF-8"), std::string::npos) << run.err;
}

// Through the binary: the page that took 1 GB and ended in SIGABRT/SIGSEGV is
// a one-line error naming the limit, and no output.
TEST(HtmlCli, HostilePageIsAnErrorNamingTheLimit) {
  const auto start = std::chrono::steady_clock::now();
  const CliRun run = ordo_cli("translate --format html " + model_arg(), "<p>" + repeat("<b>", 40000) + "A man.\n");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_NE(run.err.find("max_depth 512"), std::string::npos) << run.err;
  EXPECT_EQ(run.out, "");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 20.0);
  // A page past max_bytes is refused while it is read, not read whole first.
  const CliRun big = ordo_cli("translate --format html " + model_arg(), std::string((16u << 20) + 10, 'a'));
  EXPECT_EQ(big.exit_code, 1) << big.err;
  EXPECT_NE(big.err.find("stdin: HTML input: the page has more than 16777216 bytes (limit max_bytes"),
            std::string::npos)
      << big.err;
}

}  // namespace
}  // namespace ordo
