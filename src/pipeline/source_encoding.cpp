#include "pipeline/source_encoding.h"

#include <algorithm>

namespace ordo::pipeline {
namespace {

size_t cut_at_space(const std::string& text, size_t at) {
  if (at >= text.size()) return text.size();
  const size_t space = text.find(' ', at);
  if (space != std::string::npos && space - at < 4096) return space;
  while (at > 0 && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) --at;  // a UTF-8 boundary
  return at;
}

}  // namespace

std::vector<int64_t> encode_source(const text::Tokenizer& tokenizer, const std::string& text,
                                   const std::optional<std::string>& lang, int64_t max_positions, int64_t& dropped) {
  const auto ids_of = [&](const std::string& part) {
    return lang ? tokenizer.encode(part, *lang) : tokenizer.encode(part);
  };
  dropped = 0;
  const int64_t limit = max_positions;
  size_t prefix = static_cast<size_t>(64 * (limit + 2));
  if (text.size() <= prefix) return ids_of(text);
  std::vector<int64_t> ids;
  size_t cut = 0;
  while (true) {
    cut = cut_at_space(text, prefix);
    ids = ids_of(text.substr(0, cut));
    if (static_cast<int64_t>(ids.size()) > limit + 1 || cut == text.size()) break;
    prefix *= 2;
  }
  const size_t chunk = static_cast<size_t>(64 * (limit + 2));
  for (size_t start = cut; start < text.size();) {
    const size_t end = cut_at_space(text, std::min(text.size(), start + chunk));
    const size_t stop = end > start ? end : std::min(text.size(), start + chunk);
    dropped += static_cast<int64_t>(tokenizer.tokenize(text.substr(start, stop - start)).size());
    start = stop;
  }
  return ids;
}

std::vector<int64_t> truncate_sources(std::vector<std::vector<int64_t>>& sources,
                                      const std::vector<int64_t>& dropped_before, int64_t max_positions,
                                      size_t keep_last) {
  const size_t limit = static_cast<size_t>(max_positions);
  keep_last = std::min(keep_last, limit);
  std::vector<int64_t> truncated(sources.size(), 0);
  for (size_t i = 0; i < sources.size(); ++i) {
    if (i < dropped_before.size()) truncated[i] = dropped_before[i];
    std::vector<int64_t>& ids = sources[i];
    if (ids.size() <= limit) continue;
    truncated[i] += static_cast<int64_t>(ids.size() - limit);
    std::copy(ids.end() - static_cast<std::ptrdiff_t>(keep_last), ids.end(),
              ids.begin() + static_cast<std::ptrdiff_t>(limit - keep_last));
    ids.resize(limit);
  }
  return truncated;
}

}  // namespace ordo::pipeline
