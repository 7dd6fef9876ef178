#include "text/byte_level_bpe.h"

#include <array>
#include <cstdint>
#include <map>

namespace ordo::text {
namespace {

// GPT-2's pre-tokenization: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// with the `regex` module's \s, which is Unicode's White_Space (ICU's \s lacks \v and U+0085).
constexpr const char* kPattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\p{White_Space}\p{L}\p{N}]+)"
                                 R"(|[\p{White_Space}]+(?![^\p{White_Space}])|[\p{White_Space}]+)";

// bytes_to_unicode(): the printable Latin-1 bytes stand for themselves, the other 68 bytes for
// U+0100 upwards, in byte order.
struct ByteTable {
  std::array<std::string, 256> to_char;  // byte -> UTF-8 of its character
  std::map<uint32_t, unsigned char> to_byte;
  ByteTable() {
    int extra = 0;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
      const uint32_t cp = printable ? static_cast<uint32_t>(b) : 256u + static_cast<uint32_t>(extra++);
      to_char[static_cast<size_t>(b)] = icu_text::to_utf8(icu::UnicodeString(static_cast<UChar32>(cp)));
      to_byte[cp] = static_cast<unsigned char>(b);
    }
  }
};
const ByteTable& byte_table() {
  static const ByteTable table;
  return table;
}

}  // namespace

ByteLevelBpe::ByteLevelBpe(const std::string& merges_path)
    : merges_(merges_path, {true, true, ""}), pattern_(kPattern, "") {}

std::vector<std::string> ByteLevelBpe::pieces(const std::string& text) const {
  const ByteTable& table = byte_table();
  std::vector<std::string> out;
  for (const icu::UnicodeString& part : pattern_.find_all(icu_text::from_utf8(text))) {
    std::string mapped;
    for (const unsigned char byte : icu_text::to_utf8(part)) mapped += table.to_char[byte];
    for (std::string& piece : merges_.apply(mapped)) out.push_back(std::move(piece));
  }
  return out;
}

void ByteLevelBpe::append_bytes(const std::string& piece, std::string& bytes) const {
  const ByteTable& table = byte_table();
  const icu::UnicodeString u = icu_text::from_utf8(piece);
  for (int32_t i = 0; i < u.length(); i = u.moveIndex32(i, 1)) {
    const UChar32 c = u.char32At(i);
    const auto it = table.to_byte.find(static_cast<uint32_t>(c));
    if (it != table.to_byte.end()) {
      bytes += static_cast<char>(it->second);
    } else {
      bytes += icu_text::to_utf8(icu::UnicodeString(c));
    }
  }
}

}  // namespace ordo::text
