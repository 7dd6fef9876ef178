// What of a client's text is translated, and how the translations are put back.
//
// format=text: each line that is not blank is one sentence for the model, as `ordo translate`
// reads lines; blank lines and line ends are kept.
// format=html: the text of an HTML document or fragment is translated, its markup is not.
// Gumbo (a complete HTML5 parser) finds the text nodes and where each lies in the source;
// only those byte ranges are replaced, so every tag, attribute, comment and entity outside the
// text is returned byte for byte. No regular expressions.
#pragma once

#include <string>
#include <vector>

namespace ordo::server {

class LineText {
 public:
  explicit LineText(const std::string& text);
  // The lines with something other than whitespace (a trailing CR removed), in order.
  const std::vector<std::string>& runs() const { return runs_; }
  // The text with run i replaced by `translated[i]`.
  std::string rebuild(const std::vector<std::string>& translated) const;

 private:
  std::vector<std::string> lines_;  // as given, without the CR of a CR LF
  std::vector<bool> crs_;           // the line ended with CR LF
  std::vector<int> run_of_line_;    // index into runs_, -1 for a blank line
  std::vector<std::string> runs_;
};

class HtmlText {
 public:
  explicit HtmlText(const std::string& html);

  // The runs to translate, in document order: each line of each text node with its leading
  // and trailing whitespace removed and entities decoded. Text inside <script>, <style>,
  // <noscript> and <template>, and lines of only punctuation or symbols, are not included.
  const std::vector<std::string>& runs() const { return runs_; }

  // The source with run i replaced by `translated[i]` (HTML-escaped); everything else as it was.
  std::string rebuild(const std::vector<std::string>& translated) const;

 private:
  struct Line {
    std::string before, after;  // whitespace around the run (the whole line when run < 0)
    int run = -1;               // index into runs_, -1 when the line has only whitespace
  };
  struct Node {
    size_t begin = 0, end = 0;  // byte range of the text node in the source
    bool crlf = false;          // the parser turned the source's CR LF into LF
    std::vector<Line> lines;
  };
  std::string source_;
  std::vector<Node> nodes_;
  std::vector<std::string> runs_;
};

// Start tags in `html` (an upper bound of its tree's depth). Gumbo frees its tree recursively:
// the server refuses documents with more than kMaxHtmlTags so that no input can exhaust a
// thread's stack.
size_t html_tag_count(const std::string& html);
constexpr size_t kMaxHtmlTags = 10000;

// "&", "<", ">" as entities (text content; quotes need no escaping outside attributes).
std::string escape_html_text(const std::string& text);

}  // namespace ordo::server
