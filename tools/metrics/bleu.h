// Corpus BLEU, computed the way sacreBLEU 2.x computes it with its default settings:
//   tokenizer '13a' (mteval-v13a.pl), mixed case, n-gram order 4, smoothing 'exp',
//   effective order off, counts clipped by the maximum count over all references,
//   closest reference length (ties -> shorter) for the brevity penalty, score x 100.
//
// No LibTorch; the only dependency is the C++17 standard library.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ordo::metrics {

// ---------------------------------------------------------------------------- text helpers
// Shared by the metrics. They operate on UTF-8 and follow Python 3 str semantics.
namespace text {
// Decodes UTF-8 to code points. A byte that does not start a valid sequence becomes one
// code point with its byte value (Python would refuse such input instead).
std::u32string utf8_decode(std::string_view s);
std::string utf8_encode(std::u32string_view s);
// Python's str.isspace() (ASCII whitespace, U+001C..U+001F, U+0085, U+00A0, U+1680,
// U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000).
bool is_py_space(char32_t c);
// Python's str.split() with no arguments.
std::vector<std::string> py_split(std::string_view s);
// Python's str.rstrip() with no arguments.
std::string py_rstrip(std::string_view s);
}  // namespace text

// sacreBLEU's Tokenizer13a: '<skipped>' removal, '-\n' join, '\n' -> ' ', unescape of
// &quot; &amp; &lt; &gt; (in that order, only when the line contains '&'), then the
// TokenizerRegexp rules, then whitespace collapsed to single spaces (no leading/trailing).
std::string tokenize_13a(std::string_view line);

struct BleuScore {
  double score = 0.0;                    // 0..100
  std::array<double, 4> precisions{};    // 0..100, smoothed as sacreBLEU reports them
  std::array<std::int64_t, 4> counts{};  // clipped n-gram matches
  std::array<std::int64_t, 4> totals{};  // hypothesis n-grams
  double bp = 0.0;                       // brevity penalty
  double ratio = 0.0;                    // sys_len / ref_len (0 when ref_len == 0)
  std::int64_t sys_len = 0;
  std::int64_t ref_len = 0;
  std::string signature;  // e.g. "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:..."

  // "BLEU = 48.53 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)"
  std::string format() const;
};

// Sufficient statistics of one segment or of a whole corpus (sums over segments).
struct BleuStats {
  std::int64_t sys_len = 0;
  std::int64_t ref_len = 0;
  std::array<std::int64_t, 4> correct{};
  std::array<std::int64_t, 4> total{};
  BleuStats& operator+=(const BleuStats& o);
};

// Statistics of one hypothesis against one or more references (raw, untokenized text;
// tokenization with 13a happens inside, after Python-style rstrip()).
BleuStats bleu_segment_stats(std::string_view hypothesis, const std::vector<std::string>& references);

// sacreBLEU's BLEU.compute_bleu with smooth_method='exp', effective_order=False.
BleuScore bleu_from_stats(const BleuStats& stats, std::size_t num_refs = 1);

// Corpus BLEU. `references` is stream-major like sacreBLEU's corpus_score:
// references[k][i] is the k-th reference of hypothesis i. Every stream must have
// hypotheses.size() lines (throws std::invalid_argument otherwise) and there must be at
// least one stream.
BleuScore corpus_bleu(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& references);

}  // namespace ordo::metrics
