// What of a client's text is translated, and how the translations are put back.
//
// Sentence-level models translate one sentence well and a paragraph badly: each line is cut
// into sentences (ordo::split_sentences, ICU's rules for the source language), each sentence
// goes to the model, and the line is rebuilt with the text between sentences as it was, as
// `ordo translate --split-sentences` does.
// format=text: line by line; blank lines and line ends are kept.
// format=html: ordo::HtmlDocument (include/ordo/document.h, src/document/html_layout.cpp), the
// same layout as `ordo translate --format html`.
#pragma once

#include <cstddef>
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

// The server refuses documents with more than kMaxHtmlTags start tags (ordo::html_tag_count),
// a request-size limit of its own beside the parser's HtmlLimits (src/document/html_parse.h).
constexpr size_t kMaxHtmlTags = 10000;

}  // namespace ordo::server
