// Writes results in the order of the input: plain text (best hypothesis per line), Moses/Marian
// style n-best lists ("index ||| text ||| score"), or JSON lines.
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "faces/result_json.h"
#include "ordo/document.h"
#include "ordo/options.h"

namespace ordo::cli {

enum class OutputFormat { kText, kNBest, kJson };

// What each hypothesis carries besides its text (translate --attention / --alignment).
struct OutputExtras {
  bool attention = false;        // JSON: the full cross-attention and the source pieces
  std::string alignment;         // "", "hard" or "soft"
  bool alignment_words = false;  // hard alignment between words instead of pieces
};

class OutputWriter {
 public:
  // `path` empty or "-" writes stdout. Throws ordo::Error if the file cannot be created.
  OutputWriter(const std::string& path, OutputFormat format);
  // The result for input line `index` (0-based); an empty input line gives an empty result.
  void write(uint64_t index, const TranslationResult& result);
  // A unit translated sentence by sentence (ordo/document.h): its rejoined text; JSON lines
  // also list each sentence with its best hypothesis. With `blank_line_between` (paragraphs),
  // units are separated by an empty line as in the input.
  // `crlf`: the unit's last line ended with CR LF, and so do its output line and the blank
  // line before it.
  void write(uint64_t index, const DocumentTranslation& document, const std::string& unit, bool crlf = false);
  void set_blank_line_between_units(bool on) { blank_line_between_ = on; }
  void set_extras(const OutputExtras& extras) { extras_ = extras; }
  // Flushes; throws ordo::Error on a write error (disk full, closed pipe).
  void flush();
  // --stream: the final words of the text line being generated, written and flushed at once;
  // the next write() of a text line writes only the rest, so the output is byte for byte
  // what it would have been without streaming.
  void stream(const std::string& final_words);

 private:
  std::string name_;
  OutputFormat format_;
  std::unique_ptr<std::ofstream> file_;
  std::ostream* out_;
  bool blank_line_between_ = false;
  OutputExtras extras_;
  std::string streamed_;  // what stream() wrote of the current line
  // " ||| <alignment>" for text and n-best lines ("" without --alignment).
  std::string alignment_field(const TranslationResult& result, const Hypothesis& h) const;
  // "text", "tokens", "score" and the extras of one hypothesis.
  void write_hypothesis(faces::JsonObjectWriter& out, const TranslationResult& result, const Hypothesis& h) const;
};

}  // namespace ordo::cli
