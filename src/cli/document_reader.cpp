#include "cli/document_reader.h"

namespace ordo::cli {

bool DocumentReader::next_line(std::string& line) {
  if (pending_pos_ == pending_.size()) {
    pending_.clear();
    pending_pos_ = 0;
    if (!lines_.read(256, pending_)) return false;
  }
  line = std::move(pending_[pending_pos_++]);
  return true;
}

void DocumentReader::append(Unit& unit, std::string& line) const {
  if (!unit.line_starts.empty()) {
    if (unit.crlf) unit.text += '\r';  // an inner line keeps its CR LF
    unit.text += line_separator_;
  }
  unit.crlf = !line.empty() && line.back() == '\r';  // only with CRs kept (LineReader keep_cr)
  if (unit.crlf) line.pop_back();
  unit.line_starts.push_back(unit.text.size());
  unit.text += line;
}

bool DocumentReader::read(size_t max_units, std::vector<Unit>& units) {
  if (done_) return false;
  size_t count = 0;
  std::string line;
  const auto line_number = [&] { return lines_.lines_read() - (pending_.size() - pending_pos_); };
  if (unit_ == InputUnit::kLine) {
    while (count < max_units && next_line(line)) {
      units.push_back({std::move(line), line_number(), {0}});
      ++count;
    }
    if (count == 0) done_ = true;
    return count > 0;
  }
  if (unit_ == InputUnit::kDocument) {
    Unit doc;
    doc.first_line = 1;
    while (next_line(line)) append(doc, line);
    done_ = true;
    if (doc.line_starts.empty()) return false;
    units.push_back(std::move(doc));
    return true;
  }
  // Paragraphs: runs of non-blank lines, joined with spaces.
  Unit paragraph;
  bool open = false;
  while (count < max_units && next_line(line)) {
    const bool blank = line.find_first_not_of(" \t\r") == std::string::npos;
    if (blank) {
      if (open) {
        units.push_back(std::move(paragraph));
        paragraph = Unit{};
        open = false;
        ++count;
      }
      continue;
    }
    if (!open) {
      paragraph.first_line = line_number();
      open = true;
    }
    append(paragraph, line);
  }
  if (open) {
    units.push_back(std::move(paragraph));
    ++count;
  }
  if (count == 0) done_ = true;
  return count > 0;
}

}  // namespace ordo::cli
