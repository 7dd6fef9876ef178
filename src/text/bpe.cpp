#include "text/bpe.h"

#include "io/file.h"
#include "ordo/error.h"
#include "text/icu_text.h"
#include "text/tokenizer.h"

namespace ordo::text {
namespace {

// Symbols never contain U+001F: GPT-2's are byte-mapped characters (no controls), FSMT's come
// from Moses tokens (U+001F is Python whitespace, never inside one).
std::string key(const std::string& a, const std::string& b) { return a + '\x1f' + b; }

// The code points of valid UTF-8 text, each as its bytes.
std::vector<std::string> code_points(const std::string& text) {
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const size_t length = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : 4;
    out.push_back(text.substr(i, length));
    i += length;
  }
  return out;
}

constexpr size_t kCacheLimit = 1 << 16;  // entries; the cache starts over when full

}  // namespace

BpeMerges::BpeMerges(const std::string& path, const Format& format) : path_(path), format_(format) {
  const std::string text = io::read_regular_file(path);
  check_utf8(text, path);
  // HF: read().split("\n")[:-1] (GPT-2: [1:-1]); each line's fields by str.split().
  size_t start = 0;
  int64_t line = 0;
  for (size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1, ++line) {
    if (format.header_line && line == 0) continue;
    const std::vector<icu::UnicodeString> fields =
        icu_text::python_split(icu_text::from_utf8(text.substr(start, nl - start)));
    if (fields.empty() || (!format.strict && fields.size() < 2)) continue;
    if (format.strict && fields.size() != 2)
      throw Error(path + ": line " + std::to_string(line + 1) + ": expected two symbols separated by a space, found " +
                  std::to_string(fields.size()) + " field" + (fields.size() == 1 ? "" : "s"));
    ranks_[key(icu_text::to_utf8(fields[0]), icu_text::to_utf8(fields[1]))] = line;  // a later duplicate wins
  }
}

std::vector<std::string> BpeMerges::apply(const std::string& token) const {
  {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    const auto it = cache_.find(token);
    if (it != cache_.end()) return it->second;
  }
  std::vector<std::string> word = merge(token);
  std::lock_guard<std::mutex> lock(cache_mutex_);
  if (cache_.size() >= kCacheLimit) cache_.clear();
  cache_.emplace(token, word);
  return word;
}

std::vector<std::string> BpeMerges::merge(const std::string& token) const {
  std::vector<std::string> word = code_points(token);
  if (word.empty()) return {};
  word.back() += format_.end_of_word;
  while (word.size() > 1) {
    int64_t best = -1;
    size_t at = 0;
    for (size_t i = 0; i + 1 < word.size(); ++i) {
      const auto it = ranks_.find(key(word[i], word[i + 1]));
      if (it != ranks_.end() && (best < 0 || it->second < best)) best = it->second, at = i;
    }
    if (best < 0) break;
    const std::string first = word[at], second = word[at + 1];
    std::vector<std::string> merged;
    merged.reserve(word.size());
    for (size_t i = 0; i < word.size();) {
      if (i + 1 < word.size() && word[i] == first && word[i + 1] == second) {
        merged.push_back(first + second);
        i += 2;
      } else {
        merged.push_back(word[i++]);
      }
    }
    word = std::move(merged);
  }
  return word;
}

}  // namespace ordo::text
