// The HTML layout's pieces (ordo::HtmlDocument, include/ordo/document.h), shared by its two
// halves: html_layout.cpp reads a page into blocks (Gumbo's tree walked into atoms, tags
// paired, text cut into sentences); html_rebuild.cpp writes one block back with its
// translations, inline markup placed around the aligned target words. The header comment of
// html_layout.cpp says how; this file only holds what both halves see.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ordo/document.h"

namespace ordo::document {

inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// The code point of the UTF-8 character at text[i]; its byte length in *length.
inline uint32_t code_point_at(const std::string& text, size_t i, size_t* length) {
  const unsigned char c = static_cast<unsigned char>(text[i]);
  const size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
  uint32_t cp = n == 1 ? c : c & (0xFF >> (n + 1));
  for (size_t k = 1; k < n && i + k < text.size(); ++k)
    cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
  if (length) *length = n;
  return cp;
}

// What a block is made of, in tree order.
struct Atom {
  enum Kind { kText, kOpen, kClose, kPoint } kind = kText;
  size_t begin = 0, end = 0;  // source bytes (empty for tags the parser made up)
  std::string text;           // kText: decoded
  int element = -1;           // kOpen/kClose: which element
  bool hard_break = false;    // <br>
  size_t at = 0;              // offset in the block's text
};

struct Element {
  int parent = -1;             // element index, -1 = the block
  size_t open = 0, close = 0;  // atom indices
  size_t a = 0, b = 0;         // interval of the block's text
};

struct Block {
  size_t begin = 0, end = 0;  // source bytes replaced
  std::vector<Atom> atoms;
  std::string text;
  std::vector<SentenceSpan> sentences;
  size_t first_run = 0;
  std::vector<Element> elements;  // paired inline elements, parents before children
  std::vector<int> point_parent;  // per atom: the element a point or text is in (-1 = block)
};

// Appends block `block` of `source` to `out` with its sentences replaced by `translations`
// (indexed from block.first_run; a missing one is empty) and its inline markup placed back.
void rebuild_block(const std::string& source, const Block& block, const std::vector<AlignedTranslation>& translations,
                   std::string& out);

}  // namespace ordo::document
