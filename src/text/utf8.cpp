// UTF-8 validation (RFC 3629): SentencePiece silently replaces invalid bytes, which would
// turn bad input into plausible-looking garbage, so ordo rejects it up front.
#include <cstdint>

#include "ordo/error.h"
#include "ordo/text.h"
#include "text/hf_rules.h"
#include "text/tokenizer.h"

namespace ordo::text {

void check_utf8(const std::string& text, const std::string& where) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  auto fail = [&](const char* why) {
    throw Error(where + ": invalid UTF-8 at byte " + std::to_string(i + 1) + " (" + why + ")");
  };
  while (i < n) {
    const unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    int length;
    uint32_t min, code;
    if ((c & 0xe0) == 0xc0) {
      length = 2, min = 0x80, code = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      length = 3, min = 0x800, code = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      length = 4, min = 0x10000, code = c & 0x07;
    } else {
      fail((c & 0xc0) == 0x80 ? "unexpected continuation byte" : "invalid lead byte");
    }
    if (i + length > n) fail("truncated sequence");
    for (int k = 1; k < length; ++k) {
      if ((s[i + k] & 0xc0) != 0x80) fail("missing continuation byte");
      code = (code << 6) | (s[i + k] & 0x3f);
    }
    if (code < min) fail("overlong encoding");
    if (code >= 0xd800 && code <= 0xdfff) fail("UTF-16 surrogate");
    if (code > 0x10ffff) fail("code point beyond U+10FFFF");
    i += length;
  }
}

std::string decode_utf8_replacing(const std::string& bytes) {
  static const char kReplacement[] = "\xef\xbf\xbd";  // U+FFFD
  const auto* s = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t n = bytes.size();
  std::string out;
  out.reserve(n);
  for (size_t i = 0; i < n;) {
    const unsigned char c = s[i];
    if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    // The continuation bytes a lead byte takes, and the range of the first one (Unicode's
    // table of well-formed sequences: no overlongs, surrogates or code points past U+10FFFF).
    size_t need = 0;
    unsigned char low = 0x80, high = 0xbf;
    if (c >= 0xc2 && c <= 0xdf)
      need = 1;
    else if (c == 0xe0)
      need = 2, low = 0xa0;
    else if (c == 0xed)
      need = 2, high = 0x9f;
    else if (c >= 0xe1 && c <= 0xef)
      need = 2;
    else if (c == 0xf0)
      need = 3, low = 0x90;
    else if (c == 0xf4)
      need = 3, high = 0x8f;
    else if (c >= 0xf1 && c <= 0xf3)
      need = 3;
    size_t j = i + 1;
    for (size_t k = 0; need && k < need && j < n && s[j] >= low && s[j] <= high; ++k, ++j) low = 0x80, high = 0xbf;
    if (need && j - i == need + 1) {
      out.append(bytes, i, j - i);
    } else {
      out += kReplacement;  // the maximal invalid subpart, as Python's "replace" handler
    }
    i = j;
  }
  return out;
}

namespace {

// White space (Unicode's White_Space), control characters (Cc) and the invisible format
// characters (Cf) text is padded with: zero-width spaces and joiners, direction marks and
// isolates, the byte order mark, soft hyphens, tags.
bool is_blank(uint32_t cp) {
  return cp <= 0x20 || (cp >= 0x7f && cp <= 0xa0) || cp == 0xad || cp == 0x61c || cp == 0x1680 || cp == 0x180e ||
         (cp >= 0x2000 && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202f) || (cp >= 0x205f && cp <= 0x206f) ||
         cp == 0x3000 || cp == 0xfeff || (cp >= 0xfff9 && cp <= 0xfffb) || (cp >= 0xe0000 && cp <= 0xe007f);
}

}  // namespace

bool has_text(const std::string& text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  for (size_t i = 0; i < n;) {
    const unsigned char c = s[i];
    const size_t length = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
    if (length == 0 || i + length > n) return true;  // not UTF-8: not blank (check_utf8 reports it)
    uint32_t cp = length == 1 ? c : c & (0xff >> (length + 1));
    for (size_t k = 1; k < length; ++k) cp = (cp << 6) | (s[i + k] & 0x3f);
    if (!is_blank(cp)) return true;
    i += length;
  }
  return false;
}

}  // namespace ordo::text

namespace ordo {

bool drop_byte_order_mark(std::string& text) {
  if (text.compare(0, 3, "\xef\xbb\xbf") != 0) return false;
  text.erase(0, 3);
  return true;
}

}  // namespace ordo
