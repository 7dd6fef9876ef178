// Markup fragments: how a format hands a text with inline formatting to the HTML layout. The
// fragment is HTML that only ordo writes: escaped text, <span data-o="N">...</span> around the
// words of formatted run N (nested as the file nests them), <img data-o="N"> for a thing kept
// in place (a tab, a picture, a field, a placeholder such as {name}), <br data-o="N"> for a line
// break inside the text. HtmlDocument translates it as any page (spans go back around the target
// words their source words align to, points before the word aligned to the word after them),
// and read_fragment() reads its rebuild back into pieces for the format to write its own markup
// from: the ids say which of the source's runs and points each piece is.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ordo::document {

class FragmentWriter {
 public:
  void text(std::string_view text);  // escaped; line breaks and tabs are written as spaces
  void open(int id);                 // <span data-o="id">
  void close();                      // </span> of the innermost open span
  void point(int id);                // <img data-o="id">
  void line_break(int id);           // <br data-o="id">
  // Whether anything but spaces was written as text.
  bool has_text() const { return has_text_; }
  // The fragment; open spans are closed.
  std::string str() const;

 private:
  std::string out_;
  int open_ = 0;
  bool has_text_ = false;
};

struct FragmentPiece {
  enum Kind { kText, kOpen, kClose, kPoint, kBreak } kind = kText;
  int id = -1;       // kOpen, kPoint, kBreak: the id written; kClose: the id of the span it closes
  std::string text;  // kText: unescaped
};

// The pieces of a fragment that FragmentWriter wrote and HtmlDocument::rebuild() gave back
// (the same tags, moved; text escaped as HTML). Throws ordo::Error on anything else.
std::vector<FragmentPiece> read_fragment(const std::string& fragment);

// Placeholders of software strings that must come back unchanged: printf's %s %d %1$s %.2f %%,
// Python's %(name)s, {0} {name} {{count}} ${name}, ICU's {count, plural, ...} as a whole, and
// <tags> of string catalogues. Writes `text` to `out` with each placeholder as a point whose id
// is `first_id` + its index in `placeholders` (appended), and each '\n' as a line break.
void write_with_placeholders(std::string_view text, FragmentWriter& out, std::vector<std::string>& placeholders,
                             int first_id = 0);
// Plain text of pieces, each point replaced by placeholders[id] (an unknown id by nothing) and
// each line break by '\n'.
std::string text_with_placeholders(const std::vector<FragmentPiece>& pieces,
                                   const std::vector<std::string>& placeholders);

}  // namespace ordo::document
