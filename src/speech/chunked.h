// Audio longer than a window without timestamps, as transformers 4.31's ASR pipeline decodes it
// with chunk_length_s=30: windows of 30 s that overlap by a stride (5 s) on each side, decoded
// independently (so together, in batches), their tokens merged where they overlap by the
// longest common sequence (tokenization_whisper._decode_asr and _find_longest_common_sequence).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace ordo::speech {

// One window of the audio: samples [start, start + samples), of which the first stride_left
// and the last stride_right are shared with its neighbours.
struct Chunk {
  int64_t start = 0;
  int64_t samples = 0;
  int64_t stride_left = 0;
  int64_t stride_right = 0;
  bool is_last = false;
};

// The pipeline's chunk_iter over `total` samples.
std::vector<Chunk> plan_chunks(int64_t total, int64_t chunk_samples, int64_t stride_left, int64_t stride_right);

// A token of the merged text and the chunk whose decoding it was taken from.
struct MergedToken {
  int64_t id = 0;
  size_t chunk = 0;
};

struct MergeSettings {
  int64_t sampling_rate = 16000;
  double time_precision = 0.02;              // seconds per timestamp step
  int64_t timestamp_begin = 0;               // <|0.00|>
  int64_t first_special = 0;                 // <|endoftext|>: ids from here to timestamp_begin are special
  std::function<bool(int64_t)> is_language;  // a language token (<|en|>)
};

// _decode_asr with return_timestamps=False over each chunk's generate() output (start token
// and forced tokens included): the pipeline's text chunks, each its merged text tokens in
// order. The text is the concatenation of each chunk's tokens decoded.
std::vector<std::vector<MergedToken>> merge_chunks(const std::vector<std::vector<int64_t>>& chunk_ids,
                                                   const std::vector<Chunk>& chunks, const MergeSettings& settings);

// _find_longest_common_sequence: token sequences of overlapping audio joined into one, each
// overlap cut in its middle.
std::vector<MergedToken> longest_common_sequence(const std::vector<std::vector<MergedToken>>& sequences);

}  // namespace ordo::speech
