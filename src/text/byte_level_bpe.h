// GPT-2's byte-level BPE, shared by the tokenizers that use it (BART / RoBERTa / LED and
// Whisper): one implementation of the split, the byte mapping and the merges, so the
// families cannot drift apart. The special-token handling around it is each family's own.
//   pieces: text (no special tokens) split by GPT-2's pattern, each part's UTF-8 bytes become
//           characters by bytes_to_unicode, then BPE by merges.txt rank.
//   bytes:  the inverse: each character of a piece back to its byte.
#pragma once

#include <string>
#include <vector>

#include "text/bpe.h"
#include "text/icu_text.h"

namespace ordo::text {

class ByteLevelBpe {
 public:
  // Reads GPT-2's merges.txt ("#version" header line, two symbols a line; ordo::Error naming
  // the file otherwise).
  explicit ByteLevelBpe(const std::string& merges_path);

  // The pieces of `text` (valid UTF-8 without special tokens), as GPT-2's _tokenize.
  std::vector<std::string> pieces(const std::string& text) const;

  // Appends the bytes `piece` stands for. A character outside the byte table (a hand-made
  // vocabulary entry) is appended as its own UTF-8.
  void append_bytes(const std::string& piece, std::string& bytes) const;

 private:
  BpeMerges merges_;
  icu_text::RegexRule pattern_;
};

}  // namespace ordo::text
