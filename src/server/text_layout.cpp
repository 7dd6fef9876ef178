#include "server/text_layout.h"

#include "ordo/document.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <memory>

namespace ordo::server {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// `line` cut into its sentences (appended to `runs`) and the text around them.
LinePieces cut(const std::string& line, const std::string& language, std::vector<std::string>& runs) {
  LinePieces pieces;
  std::vector<ordo::SentenceSpan> spans;
  try {
    spans = ordo::split_sentences(line, language);
  } catch (const std::exception&) {
    spans.clear();  // not expected (the text is valid UTF-8): the line as one sentence
    size_t a = 0, b = line.size();
    while (a < b && is_space(line[a])) ++a;
    while (b > a && is_space(line[b - 1])) --b;
    if (a < b) spans.push_back({a, b});
  }
  std::string keep;
  size_t at = 0;
  for (const ordo::SentenceSpan& span : spans) {
    if (span.begin < at || span.end > line.size() || span.begin >= span.end) continue;
    keep += line.substr(at, span.begin - at);
    std::string sentence = line.substr(span.begin, span.end - span.begin);
    at = span.end;
    pieces.keep.push_back(std::move(keep));
    keep.clear();
    pieces.runs.push_back(runs.size());
    // A line break inside a sentence is a soft wrap: the model sees a space (as the CLI's).
    for (char& c : sentence)
      if (c == '\n' || c == '\r') c = ' ';
    runs.push_back(std::move(sentence));
  }
  keep += line.substr(at);
  pieces.keep.push_back(std::move(keep));
  return pieces;
}

void join(const LinePieces& pieces, const std::vector<std::string>& translated, std::string& out) {
  for (size_t i = 0; i < pieces.runs.size(); ++i) {
    out += pieces.keep[i];
    if (pieces.runs[i] < translated.size()) out += translated[pieces.runs[i]];
  }
  out += pieces.keep.back();
}

}  // namespace

LineText::LineText(const std::string& text, const std::string& language) {
  size_t start = 0;
  while (true) {
    size_t stop = text.find('\n', start);
    const bool last = stop == std::string::npos;
    if (last) stop = text.size();
    std::string line = text.substr(start, stop - start);
    const bool cr = !line.empty() && line.back() == '\r';
    if (cr) line.pop_back();
    lines_.push_back(cut(line, language, runs_));
    crs_.push_back(cr);
    if (last) break;
    start = stop + 1;
  }
}

std::string LineText::rebuild(const std::vector<std::string>& translated) const {
  std::string out;
  for (size_t i = 0; i < lines_.size(); ++i) {
    if (i > 0) out += '\n';
    join(lines_[i], translated, out);
    if (crs_[i]) out += '\r';
  }
  return out;
}

}  // namespace ordo::server
