// ctest-label: unit
// Markup fragments (src/document/markup_fragment.h): what the formats write is what they read
// back, and placeholders of software strings stay whole.
#include <gtest/gtest.h>

#include "document/markup_fragment.h"
#include "ordo/error.h"

namespace ordo::document {
namespace {

TEST(MarkupFragment, ReadsBackWhatTheWriterWrote) {
  FragmentWriter out;
  out.text("Fish & <chips> ");
  out.open(3);
  out.text("bold");
  out.close();
  out.point(7);
  out.line_break(8);
  out.text("end");
  const std::vector<FragmentPiece> pieces = read_fragment(out.str());
  ASSERT_EQ(pieces.size(), 7u);
  EXPECT_EQ(pieces[0].text, "Fish & <chips> ");
  EXPECT_EQ(pieces[1].kind, FragmentPiece::kOpen);
  EXPECT_EQ(pieces[1].id, 3);
  EXPECT_EQ(pieces[2].text, "bold");
  EXPECT_EQ(pieces[3].kind, FragmentPiece::kClose);
  EXPECT_EQ(pieces[3].id, 3);
  EXPECT_EQ(pieces[4].kind, FragmentPiece::kPoint);
  EXPECT_EQ(pieces[4].id, 7);
  EXPECT_EQ(pieces[5].kind, FragmentPiece::kBreak);
  EXPECT_EQ(pieces[6].text, "end");
}

TEST(MarkupFragment, ATagItDidNotWriteIsAnError) {
  EXPECT_THROW(read_fragment("a <script>x</script>"), Error);
  EXPECT_THROW(read_fragment("a </span>"), Error);
}

TEST(MarkupFragment, PlaceholdersBecomePointsAndComeBackUnchanged) {
  const std::string source =
      "Hello {name}, %d files in %(dir)s: {{count}} of ${total} at %1$s, 100%% {n, plural, one {# item} other {# "
      "items}} <0>link</0>";
  FragmentWriter out;
  std::vector<std::string> placeholders;
  write_with_placeholders(source, out, placeholders);
  EXPECT_EQ(placeholders, (std::vector<std::string>{"{name}", "%d", "%(dir)s", "{{count}}", "${total}", "%1$s", "%%",
                                                    "{n, plural, one {# item} other {# items}}", "<0>", "</0>"}));
  EXPECT_EQ(text_with_placeholders(read_fragment(out.str()), placeholders), source);
}

TEST(MarkupFragment, TextInBracesWithSpacesIsNotAPlaceholder) {
  FragmentWriter out;
  std::vector<std::string> placeholders;
  write_with_placeholders("see {the note below} and 50 % off", out, placeholders);
  EXPECT_TRUE(placeholders.empty());
}

TEST(MarkupFragment, LineBreaksOfAStringComeBackAsLineBreaks) {
  FragmentWriter out;
  std::vector<std::string> placeholders;
  write_with_placeholders("one\ntwo", out, placeholders);
  EXPECT_EQ(text_with_placeholders(read_fragment(out.str()), placeholders), "one\ntwo");
}

TEST(MarkupFragment, APlaceholderPutBeforeAWordIsAWordOfItsOwn) {
  const std::vector<FragmentPiece> pieces = read_fragment("Hallo, <img data-o=\"0\">von dir. x<img data-o=\"0\">y");
  EXPECT_EQ(text_with_placeholders(pieces, {"{name}"}), "Hallo, {name} von dir. x{name}y");
}

}  // namespace
}  // namespace ordo::document
