// Writes results in the order of the input: plain text (best hypothesis per line), Moses/Marian
// style n-best lists ("index ||| text ||| score"), or JSON lines.
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <ostream>
#include <string>

#include "ordo/options.h"

namespace ordo::cli {

enum class OutputFormat { kText, kNBest, kJson };

class OutputWriter {
 public:
  // `path` empty or "-" writes stdout. Throws ordo::Error if the file cannot be created.
  OutputWriter(const std::string& path, OutputFormat format);
  // The result for input line `index` (0-based); an empty input line gives an empty result.
  void write(uint64_t index, const TranslationResult& result);
  // Flushes; throws ordo::Error on a write error (disk full, closed pipe).
  void flush();

 private:
  std::string name_;
  OutputFormat format_;
  std::unique_ptr<std::ofstream> file_;
  std::ostream* out_;
};

}  // namespace ordo::cli
