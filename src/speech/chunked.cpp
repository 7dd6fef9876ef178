// transformers 4.31's chunking and merging (chunked.h), state machine and all: a timestamp
// token that greedy decoding wrote without the timestamp rules still starts and ends a text
// chunk there, as in the pipeline.
#include "speech/chunked.h"

#include <cmath>
#include <optional>

#include "ordo/error.h"

namespace ordo::speech {

std::vector<Chunk> plan_chunks(int64_t total, int64_t chunk_samples, int64_t stride_left, int64_t stride_right) {
  const int64_t step = chunk_samples - stride_left - stride_right;
  if (step <= 0)
    throw Error("chunking: the strides (" + std::to_string(stride_left) + " + " + std::to_string(stride_right) +
                " samples) leave nothing of a " + std::to_string(chunk_samples) + "-sample chunk");
  std::vector<Chunk> out;
  for (int64_t start = 0; start < total; start += step) {
    const int64_t end = start + chunk_samples;
    Chunk c;
    c.start = start;
    c.samples = std::min(end, total) - start;
    c.stride_left = start == 0 ? 0 : stride_left;
    c.is_last = stride_right > 0 ? end > total : end >= total;
    c.stride_right = c.is_last ? 0 : stride_right;
    if (c.samples > c.stride_left) out.push_back(c);
    if (c.is_last) break;
  }
  return out;
}

std::vector<MergedToken> longest_common_sequence(const std::vector<std::vector<MergedToken>>& sequences) {
  if (sequences.empty()) return {};
  std::vector<MergedToken> left = sequences[0], total;
  for (size_t k = 1; k < sequences.size(); ++k) {
    const std::vector<MergedToken>& right = sequences[k];
    const int64_t left_length = static_cast<int64_t>(left.size()), right_length = static_cast<int64_t>(right.size());
    double best = 0.0;
    int64_t best_left_start = left_length, best_left_stop = left_length, best_right_start = 0, best_right_stop = 0;
    for (int64_t i = 1; i < left_length + right_length; ++i) {
      const double eps = static_cast<double>(i) / 10000.0;  // favours long perfect matches
      const int64_t left_start = std::max<int64_t>(0, left_length - i);
      const int64_t left_stop = std::min(left_length, left_length + right_length - i);
      const int64_t right_start = std::max<int64_t>(0, i - left_length);
      const int64_t right_stop = std::min(right_length, i);
      int64_t matches = 0;
      for (int64_t a = left_start, b = right_start; a < left_stop; ++a, ++b)
        if (left[static_cast<size_t>(a)].id == right[static_cast<size_t>(b)].id) ++matches;
      const double matching = static_cast<double>(matches) / static_cast<double>(i) + eps;
      if (matches > 1 && matching > best) {
        best = matching;
        best_left_start = left_start, best_left_stop = left_stop;
        best_right_start = right_start, best_right_stop = right_stop;
      }
    }
    // The overlap's left half from the left sequence, its right half from the right one.
    const int64_t left_mid = (best_left_stop + best_left_start) / 2;
    const int64_t right_mid = (best_right_stop + best_right_start) / 2;
    total.insert(total.end(), left.begin(), left.begin() + left_mid);
    left.assign(right.begin() + right_mid, right.end());
  }
  total.insert(total.end(), left.begin(), left.end());
  return total;
}

std::vector<std::vector<MergedToken>> merge_chunks(const std::vector<std::vector<int64_t>>& chunk_ids,
                                                   const std::vector<Chunk>& chunks, const MergeSettings& s) {
  if (chunk_ids.size() != chunks.size())
    throw Error("merging windows: " + std::to_string(chunk_ids.size()) + " outputs for " +
                std::to_string(chunks.size()) + " windows");
  std::vector<std::vector<MergedToken>> out;
  std::vector<std::vector<MergedToken>> previous;
  std::optional<double> chunk_start;  // the open text chunk's first timestamp
  std::optional<int64_t> last_language;
  bool skip = false;
  double time_offset = 0.0;
  const auto resolve = [&] {
    out.push_back(longest_common_sequence(previous));
    previous.clear();
    chunk_start.reset();
  };
  for (size_t c = 0; c < chunks.size(); ++c) {
    const std::vector<int64_t>& ids = chunk_ids[c];
    const double rate = static_cast<double>(s.sampling_rate);
    const double length = static_cast<double>(chunks[c].samples) / rate;
    const double stride_left = static_cast<double>(chunks[c].stride_left) / rate;
    const double stride_right = static_cast<double>(chunks[c].stride_right) / rate;
    time_offset -= stride_left;
    const double right_stride_start = length - stride_right;
    // Timestamps inside the strides neither start nor end a text chunk.
    std::optional<int64_t> last_timestamp;
    double first_timestamp = static_cast<double>(s.timestamp_begin);
    if (stride_left > 0) first_timestamp = stride_left / s.time_precision + static_cast<double>(s.timestamp_begin);
    if (stride_right > 0)
      for (size_t i = ids.size(); i-- > 0;)
        if (ids[i] >= s.timestamp_begin) {
          if (last_timestamp && static_cast<double>(ids[i] - s.timestamp_begin) * s.time_precision < right_stride_start)
            break;
          last_timestamp = ids[i];
        }
    std::vector<MergedToken> current;
    for (int64_t token : ids) {
      if (token >= s.first_special && token < s.timestamp_begin) {
        if (!s.is_language || !s.is_language(token)) continue;
        if (last_language && token != *last_language) {  // another language: a new text chunk
          previous.push_back(current);
          resolve();
          current.clear();
        }
        last_language = token;
      } else if (token >= s.timestamp_begin) {
        const double time =
            std::round((static_cast<double>(token - s.timestamp_begin) * s.time_precision + time_offset) * 100.0) /
            100.0;
        if (last_timestamp && token >= *last_timestamp) {
          skip = true;  // in the right stride: its pair's other half is skipped too
        } else if (skip || (!previous.empty() && static_cast<double>(token) < first_timestamp)) {
          skip = false;
        } else if (!chunk_start) {
          chunk_start = time;
        } else if (time != *chunk_start) {  // the end of a text chunk
          previous.push_back(current);
          resolve();
          current.clear();
        }
      } else {
        current.push_back({token, c});
      }
    }
    time_offset += length - stride_right;
    if (!current.empty()) {
      previous.push_back(current);
    } else {
      bool any = false;
      for (const auto& p : previous) any = any || !p.empty();
      if (!any) {
        previous.clear();
        chunk_start.reset();
      }
    }
  }
  if (!previous.empty()) resolve();
  return out;
}

}  // namespace ordo::speech
