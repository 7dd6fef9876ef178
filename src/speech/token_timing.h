// When each token was spoken, from the decoder's cross-attention: transformers 4.31's
// WhisperForConditionalGeneration._extract_token_timestamps (the alignment heads' weights,
// normalized per audio position, median-filtered, averaged, then dynamic time warping from
// tokens to audio positions), and the tokens grouped into words as openai-whisper and
// transformers' _combine_tokens_into_words do.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <ATen/ATen.h>

namespace ordo::speech {

// transformers' _median_filter: a median of `width` (odd) values along the last dimension,
// the edges reflected; returned unchanged when that dimension is not longer than width / 2.
at::Tensor median_filter(const at::Tensor& x, int64_t width);

// transformers' _dynamic_time_warping over a cost matrix [tokens, positions] (float64): the
// path from (0, 0) to the last cell as the token index and the position of each of its steps.
struct WarpPath {
  std::vector<int64_t> token, position;
};
WarpPath dynamic_time_warping(const at::Tensor& cost);

// The time (seconds) of each token of a decoded sequence: element 0 (the decoder start) is 0,
// element i the time the query that predicted token i first aligns to. `attention` holds the
// cross-attention weights of each query, [queries, layers, heads, positions] (queries = the
// sequence's length - 1); `heads` are generation_config.json's alignment_heads (layer, head).
std::vector<double> token_timestamps(const at::Tensor& attention, const std::vector<std::pair<int64_t, int64_t>>& heads,
                                     int64_t median_width, double seconds_per_position = 0.02);

// Tokens grouped into words: each word's text (leading space kept, as the tokens spell it)
// and the indices of its tokens. Words split at a token that starts with a space, a
// punctuation token or a special one (ids >= `first_special`), or, for languages written
// without spaces (`split_on_unicode`: zh, ja, th, lo, my, yue), at every complete character;
// then punctuation is merged with its neighbours (openai-whisper's prepend "'“¡¿([{- and
// append "'.。,，!！?？:：”)]}、). `decode` is the tokenizer's decode of some tokens, invalid
// UTF-8 replaced by U+FFFD.
struct WordTokens {
  std::string word;
  std::vector<size_t> indices;
};
std::vector<WordTokens> group_words(const std::vector<int64_t>& tokens,
                                    const std::function<std::string(const std::vector<int64_t>&)>& decode,
                                    int64_t first_special, bool split_on_unicode);

// Languages whose words are not separated by spaces (split_on_unicode above).
bool splits_words_on_unicode(const std::string& language);

}  // namespace ordo::speech
