// What of a client's text is translated, and how the translations are put back.
//
// Sentence-level models translate one sentence well and a paragraph badly: each line is cut
// into sentences (ordo::split_sentences, ICU's rules for the source language), each sentence
// goes to the model, and the line is rebuilt with the text between sentences as it was, as
// `ordo translate --split-sentences` does.
// format=text: line by line; blank lines and line ends are kept.
// format=html: the text of an HTML document or fragment is translated, its markup is not.
// Gumbo (a complete HTML5 parser) finds the text nodes and where each lies in the source;
// only those byte ranges are replaced, so every tag, attribute, comment and entity outside the
// text is returned byte for byte. No regular expressions.
#pragma once

#include <string>
#include <vector>

namespace ordo::server {

// A line cut into the sentences to translate and the text around them:
// keep[0] sentence[0] keep[1] sentence[1] ... keep[n].
struct LinePieces {
  std::vector<std::string> keep;
  std::vector<size_t> runs;  // index of each sentence in the layout's runs()
};

class LineText {
 public:
  // `language`: the source language, for the sentence rules ("" = ICU's root rules).
  LineText(const std::string& text, const std::string& language);
  // The sentences of the lines, in order.
  const std::vector<std::string>& runs() const { return runs_; }
  // The text with run i replaced by `translated[i]`.
  std::string rebuild(const std::vector<std::string>& translated) const;

 private:
  std::vector<LinePieces> lines_;  // without the CR of a CR LF
  std::vector<bool> crs_;          // the line ended with CR LF
  std::vector<std::string> runs_;
};

class HtmlText {
 public:
  HtmlText(const std::string& html, const std::string& language);

  // The runs to translate, in document order: the sentences of each text node (a line break
  // inside a paragraph does not end one), entities decoded. Text inside <script>, <style>, <noscript> and <template>, and sentences
  // of only punctuation or symbols ("|", "»"), are not included.
  const std::vector<std::string>& runs() const { return runs_; }

  // The source with run i replaced by `translated[i]` (HTML-escaped); everything else as it was.
  std::string rebuild(const std::vector<std::string>& translated) const;

 private:
  struct Node {
    size_t begin = 0, end = 0;  // byte range of the text node in the source
    bool crlf = false;          // the parser turned the source's CR LF into LF
    LinePieces pieces;
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
