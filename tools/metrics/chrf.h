// chrF as sacreBLEU 2.x computes it by default: character n-gram order 6, word order 0,
// beta 2, case-sensitive, whitespace removed before extracting n-grams, no epsilon
// smoothing (precision/recall averaged over the orders that have both hypothesis and
// reference n-grams). Corpus chrF is computed from the statistics summed over segments;
// with several references each segment uses the reference with the best segment-level
// chrF (first one wins ties). Score x 100.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ordo::metrics {

struct ChrfScore {
  double score = 0.0;  // 0..100
  int char_order = 6;
  int word_order = 0;
  int beta = 2;
  std::string signature;       // "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:..."
  std::string format() const;  // "chrF2 = 59.73"
};

// Per order n (1-based, index n-1): hypothesis n-grams, reference n-grams, matches.
struct ChrfStats {
  std::vector<std::int64_t> values;  // 3 * char_order entries: [hyp, ref, match] per order
  ChrfStats& operator+=(const ChrfStats& o);
};

// sacreBLEU's CHRF._compute_f_score (eps_smoothing=False), x 100.
double chrf_from_stats(const ChrfStats& stats, int char_order = 6, int beta = 2);

ChrfStats chrf_segment_stats(std::string_view hypothesis, const std::vector<std::string>& references,
                             int char_order = 6, int beta = 2);

// Stream-major references like corpus_bleu: references[k][i].
ChrfScore corpus_chrf(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& references, int char_order = 6, int beta = 2);

}  // namespace ordo::metrics
