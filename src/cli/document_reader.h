// Splits the input into the units a command works on: one per line (translate, and summarize
// by default), blank-line-separated paragraphs, or the whole input as one document.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/line_reader.h"

namespace ordo::cli {

enum class InputUnit { kLine, kParagraph, kDocument };

struct Unit {
  std::string text;
  uint64_t first_line = 0;  // 1-based line where it starts, for messages
  // Where each of its lines starts in `text` (its k-th line is input line first_line + k).
  std::vector<size_t> line_starts;
  // Translate's paragraphs and documents keep the input's line breaks: lines inside the text
  // keep their CR of CR LF, and `crlf` says that its last line ended with CR LF (the CR is
  // not in `text`).
  bool crlf = false;
};

class DocumentReader {
 public:
  // `line_separator`: what joins the lines of a paragraph (summarize: a space; translate keeps
  // the line breaks, CR LF included, so the output keeps the input's line structure).
  DocumentReader(const std::string& path, InputUnit unit, char line_separator = ' ')
      : lines_(path, unit != InputUnit::kLine && line_separator == '\n'),
        unit_(unit),
        line_separator_(line_separator) {}
  // Appends up to `max_units` units; false at end of input with nothing read.
  bool read(size_t max_units, std::vector<Unit>& units);
  const LineReader& lines() const { return lines_; }

 private:
  bool next_line(std::string& line);
  // Appends `line` to `unit` (after the separator unless it is the first).
  void append(Unit& unit, std::string& line) const;

  LineReader lines_;
  InputUnit unit_;
  char line_separator_;
  std::vector<std::string> pending_;
  size_t pending_pos_ = 0;
  bool done_ = false;
};

}  // namespace ordo::cli
