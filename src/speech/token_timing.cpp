// Token times and words, step for step as transformers 4.31 computes them (token_timing.h):
// the same float32 normalization and median filter, and the dynamic time warping with its
// float32 cost table, tie-breaking and backtrace.
#include "speech/token_timing.h"

#include <algorithm>
#include <limits>

#include "ordo/error.h"

namespace ordo::speech {
namespace {

// A UTF-8 string's characters, each as its bytes (the text is valid UTF-8: decode() replaced
// what was not).
std::vector<std::string> characters(const std::string& text) {
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 1;
    n = std::min(n, text.size() - i);
    out.push_back(text.substr(i, n));
    i += n;
  }
  return out;
}

const std::string kReplacement = "\xEF\xBF\xBD";  // U+FFFD

std::string strip(const std::string& s) {
  const char* space = " \t\n\r\f\v";
  const size_t first = s.find_first_not_of(space);
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(space) - first + 1);
}

bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }
bool ends_with(const std::string& s, const std::string& p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}
// Python's `a in b` for strings: a substring test (an empty `a` is in every string).
bool in(const std::string& a, const std::string& b) { return b.find(a) != std::string::npos; }

// transformers' _split_tokens_on_unicode: a word ends where the tokens so far decode to whole
// characters (a U+FFFD that the whole text also has at that place counts as whole).
std::vector<WordTokens> split_on_unicode(const std::vector<int64_t>& tokens,
                                         const std::function<std::string(const std::vector<int64_t>&)>& decode) {
  const std::vector<std::string> full = characters(decode(tokens));
  std::vector<WordTokens> words;
  std::vector<int64_t> current;
  std::vector<size_t> indices;
  size_t offset = 0;  // characters of `full` taken by the words so far
  for (size_t i = 0; i < tokens.size(); ++i) {
    current.push_back(tokens[i]);
    indices.push_back(i);
    const std::string decoded = decode(current);
    const std::vector<std::string> chars = characters(decoded);
    const auto bad = std::find(chars.begin(), chars.end(), kReplacement);
    const size_t at = offset + static_cast<size_t>(bad - chars.begin());
    if (bad == chars.end() || (at < full.size() && full[at] == kReplacement)) {
      words.push_back({decoded, indices});
      current.clear();
      indices.clear();
      offset += chars.size();
    }
  }
  return words;
}

// transformers' _split_tokens_on_spaces: sub-words joined unless one starts with a space, is
// punctuation or a special token.
std::vector<WordTokens> split_on_spaces(const std::vector<int64_t>& tokens,
                                        const std::function<std::string(const std::vector<int64_t>&)>& decode,
                                        int64_t first_special) {
  static const std::string kPunctuation = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
  std::vector<WordTokens> words;
  for (WordTokens& sub : split_on_unicode(tokens, decode)) {
    const bool special = tokens[sub.indices.front()] >= first_special;
    if (special || starts_with(sub.word, " ") || in(strip(sub.word), kPunctuation) || words.empty()) {
      words.push_back(std::move(sub));
    } else {
      words.back().word += sub.word;
      words.back().indices.insert(words.back().indices.end(), sub.indices.begin(), sub.indices.end());
    }
  }
  return words;
}

// transformers' _merge_punctuations (openai-whisper's merge_punctuations).
void merge_punctuations(std::vector<WordTokens>& words) {
  static const std::string kPrepended = "\"'\u201c\u00a1\u00bf([{-";
  static const std::string kAppended = "\"'.\u3002,\uff0c!\uff01?\uff1f:\uff1a\u201d)]}\u3001";
  const auto move_into = [](WordTokens& from, WordTokens& to, bool before) {
    if (before) {
      to.word = from.word + to.word;
      to.indices.insert(to.indices.begin(), from.indices.begin(), from.indices.end());
    } else {
      to.word += from.word;
      to.indices.insert(to.indices.end(), from.indices.begin(), from.indices.end());
    }
    from.word.clear();
    from.indices.clear();
  };
  if (words.size() >= 2) {
    size_t j = words.size() - 1;
    for (size_t i = words.size() - 1; i-- > 0;) {
      if (starts_with(words[i].word, " ") && in(strip(words[i].word), kPrepended))
        move_into(words[i], words[j], true);
      else
        j = i;
    }
  }
  for (size_t i = 0, j = 1; j < words.size(); ++j) {
    if (!ends_with(words[i].word, " ") && in(words[j].word, kAppended))
      move_into(words[j], words[i], false);
    else
      i = j;
  }
  words.erase(std::remove_if(words.begin(), words.end(), [](const WordTokens& w) { return w.word.empty(); }),
              words.end());
}

}  // namespace

at::Tensor median_filter(const at::Tensor& x, int64_t width) {
  if (width <= 0 || width % 2 != 1)
    throw Error("median_filter_width must be a positive odd number (config.json), not " + std::to_string(width));
  const int64_t pad = width / 2;
  if (x.size(-1) <= pad) return x;
  const std::vector<int64_t> shape = x.sizes().vec();
  const at::Tensor rows = x.reshape({-1, x.size(-1)});
  const at::Tensor padded = at::reflection_pad1d(rows.unsqueeze(0), {pad, pad}).squeeze(0);
  const at::Tensor windows = padded.unfold(-1, width, 1);
  return std::get<0>(windows.sort(-1)).select(-1, pad).reshape(shape);
}

WarpPath dynamic_time_warping(const at::Tensor& cost_matrix) {
  const at::Tensor m = cost_matrix.to(at::kDouble).contiguous();
  const int64_t n = m.size(0), t = m.size(1);
  const double* matrix = m.data_ptr<double>();
  const float inf = std::numeric_limits<float>::infinity();
  const int64_t cols = t + 1;
  std::vector<float> cost(static_cast<size_t>((n + 1) * cols), inf);
  std::vector<int8_t> trace(static_cast<size_t>((n + 1) * cols), -1);
  const auto at_cell = [cols](int64_t i, int64_t j) { return static_cast<size_t>(i * cols + j); };
  cost[0] = 0.0f;
  for (int64_t j = 1; j <= t; ++j)
    for (int64_t i = 1; i <= n; ++i) {
      const float c0 = cost[at_cell(i - 1, j - 1)], c1 = cost[at_cell(i - 1, j)], c2 = cost[at_cell(i, j - 1)];
      float c;
      int8_t step;
      if (c0 < c1 && c0 < c2) {
        c = c0, step = 0;
      } else if (c1 < c0 && c1 < c2) {
        c = c1, step = 1;
      } else {
        c = c2, step = 2;
      }
      cost[at_cell(i, j)] = static_cast<float>(matrix[(i - 1) * t + (j - 1)] + static_cast<double>(c));
      trace[at_cell(i, j)] = step;
    }
  for (int64_t j = 0; j <= t; ++j) trace[at_cell(0, j)] = 2;
  for (int64_t i = 0; i <= n; ++i) trace[at_cell(i, 0)] = 1;
  WarpPath path;
  for (int64_t i = n, j = t; i > 0 || j > 0;) {
    path.token.push_back(i - 1);
    path.position.push_back(j - 1);
    switch (trace[at_cell(i, j)]) {
      case 0: --i, --j; break;
      case 1: --i; break;
      default: --j; break;
    }
  }
  std::reverse(path.token.begin(), path.token.end());
  std::reverse(path.position.begin(), path.position.end());
  return path;
}

std::vector<double> token_timestamps(const at::Tensor& attention, const std::vector<std::pair<int64_t, int64_t>>& heads,
                                     int64_t median_width, double seconds_per_position) {
  if (attention.dim() != 4)
    throw Error("token timestamps: cross-attention weights must be [queries, layers, heads, positions]");
  if (heads.empty()) throw Error("token timestamps: generation_config.json names no alignment_heads");
  std::vector<at::Tensor> picked;
  for (const auto& [layer, head] : heads) {
    if (layer < 0 || layer >= attention.size(1) || head < 0 || head >= attention.size(2))
      throw Error("generation_config.json alignment_heads: [" + std::to_string(layer) + ", " + std::to_string(head) +
                  "] is outside the decoder's " + std::to_string(attention.size(1)) + " layers of " +
                  std::to_string(attention.size(2)) + " heads");
    picked.push_back(attention.select(1, layer).select(1, head));  // [queries, positions]
  }
  at::Tensor weights = at::stack(picked).to(at::kFloat);  // [heads, queries, positions]
  const auto [std, mean] = at::std_mean(weights, {-2}, /*unbiased=*/false, /*keepdim=*/true);
  weights = (weights - mean) / std;
  weights = median_filter(weights, median_width);
  const at::Tensor matrix = weights.mean(0);
  const WarpPath path = dynamic_time_warping(-matrix.to(at::kDouble));
  std::vector<double> times{0.0};
  for (size_t k = 0; k < path.token.size(); ++k)
    if (k == 0 || path.token[k] != path.token[k - 1])
      times.push_back(static_cast<double>(path.position[k]) * seconds_per_position);
  return times;
}

std::vector<WordTokens> group_words(const std::vector<int64_t>& tokens,
                                    const std::function<std::string(const std::vector<int64_t>&)>& decode,
                                    int64_t first_special, bool split_on_unicode_only) {
  std::vector<WordTokens> words =
      split_on_unicode_only ? split_on_unicode(tokens, decode) : split_on_spaces(tokens, decode, first_special);
  merge_punctuations(words);
  return words;
}

bool splits_words_on_unicode(const std::string& language) {
  for (const char* code : {"zh", "ja", "th", "lo", "my", "yue"})
    if (language == code) return true;
  return false;
}

}  // namespace ordo::speech
