// ROUGE-1, ROUGE-2 and ROUGE-L (sentence-level LCS, not the summary-level "Lsum") as Google's
// `rouge_score` package computes them with RougeScorer(..., use_stemmer=False or True):
//   tokenize: text.lower(); every run of characters outside [a-z0-9] becomes a separator;
//             tokens are the remaining [a-z0-9]+ runs (so non-ASCII letters are dropped);
//             with the stemmer, tokens longer than 3 characters go through NLTK's Porter
//             stemmer in its default mode (porter_stemmer.h), as rouge_score does.
//   ROUGE-N:  overlap = sum over target n-grams of min(target count, prediction count);
//             P = overlap / max(#prediction n-grams, 1), R = overlap / max(#target n-grams, 1).
//   ROUGE-L:  LCS of the token sequences; P = lcs / |prediction|, R = lcs / |target|
//             (all zero when either side has no tokens).
//   F = 2PR / (P + R), 0 when P + R == 0.
// Multiple references: per rouge type the reference with the highest F is used
// (rouge_score's score_multi). Corpus score: plain mean over pairs (not rouge_score's
// BootstrapAggregator), x 100.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ordo::metrics {

struct RougePRF {
  double precision = 0.0;  // 0..1 for a pair; 0..100 in a corpus score
  double recall = 0.0;
  double fmeasure = 0.0;
};

struct RougeScore {
  RougePRF rouge1, rouge2, rougeL;
  std::size_t num_pairs = 0;
  // "ROUGE-1 = 70.59, ROUGE-2 = 26.67, ROUGE-L = 58.82" (F-measures)
  std::string format() const;
};

// rouge_score.tokenize.tokenize(text, stemmer): stemmer None, or PorterStemmer() when `stem`.
std::vector<std::string> rouge_tokenize(std::string_view text, bool stem = false);

// One (target, prediction) pair; values in 0..1 like rouge_score.
RougeScore rouge_pair(std::string_view target, std::string_view prediction, bool stem = false);

// Stream-major references like corpus_bleu: references[k][i]. Per-pair values are the
// best F over references (rouge_score's score_multi); the result is the mean x 100.
RougeScore corpus_rouge(const std::vector<std::string>& predictions,
                        const std::vector<std::vector<std::string>>& references, bool stem = false);

}  // namespace ordo::metrics
