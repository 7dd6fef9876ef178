// SentenceLayout (ordo/document.h): plain text cut into sentences and put back. The text
// between sentences is copied as it was, so rebuilding with the sentences themselves gives the
// text back byte for byte; only a sentence's own soft line breaks become spaces for the model.
#include "ordo/document.h"

namespace ordo {

SentenceLayout::SentenceLayout(const std::string& text, const std::string& language, LineBreaks breaks) : text_(text) {
  const auto add = [&](size_t offset, const std::string& part) {
    for (const SentenceSpan& span : split_sentences(part, language)) {
      SentenceSpan at{offset + span.begin, offset + span.end};
      if (at.begin >= at.end || at.end > text_.size() || (!spans_.empty() && at.begin < spans_.back().end)) continue;
      std::string sentence = text_.substr(at.begin, at.end - at.begin);
      for (char& c : sentence)
        if (c == '\n' || c == '\r') c = ' ';
      spans_.push_back(at);
      sentences_.push_back(std::move(sentence));
    }
  };
  if (breaks == LineBreaks::kSoftWrap) {
    add(0, text_);
    return;
  }
  // Line by line; the CR of a CR LF stays with the line break.
  for (size_t start = 0;;) {
    size_t stop = text_.find('\n', start);
    const bool last = stop == std::string::npos;
    if (last) stop = text_.size();
    size_t end = stop;
    if (end > start && text_[end - 1] == '\r') --end;
    add(start, text_.substr(start, end - start));
    if (last) break;
    start = stop + 1;
  }
}

std::string SentenceLayout::rebuild(const std::vector<std::string>& translations) const {
  std::string out;
  size_t copied = 0;
  for (size_t i = 0; i < spans_.size(); ++i) {
    out.append(text_, copied, spans_[i].begin - copied);
    if (i < translations.size()) out += translations[i];
    copied = spans_[i].end;
  }
  out.append(text_, copied, std::string::npos);
  return out;
}

}  // namespace ordo
