#include "metrics/rouge.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <unordered_map>

#include "metrics/bleu.h"  // text:: helpers
#include "metrics/porter_stemmer.h"

namespace ordo::metrics {
namespace {

bool is_lower_alnum(char32_t c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

double fmeasure(double p, double r) { return (p + r > 0) ? 2 * p * r / (p + r) : 0.0; }

RougePRF score_ngrams(const std::vector<std::string>& target, const std::vector<std::string>& prediction, int n) {
  auto count = [n](const std::vector<std::string>& toks) {
    std::unordered_map<std::string, long long> m;
    for (std::size_t i = 0; i + n <= toks.size(); ++i) {
      std::string key = toks[i];
      for (int k = 1; k < n; ++k) key += ' ' + toks[i + k];  // tokens are [a-z0-9]+
      ++m[key];
    }
    return m;
  };
  const auto t = count(target);
  const auto p = count(prediction);
  long long overlap = 0, t_total = 0, p_total = 0;
  for (const auto& [k, c] : t) {
    t_total += c;
    const auto it = p.find(k);
    if (it != p.end()) overlap += std::min(c, it->second);
  }
  for (const auto& [k, c] : p) p_total += c;
  RougePRF r;
  r.precision = static_cast<double>(overlap) / static_cast<double>(std::max(p_total, 1LL));
  r.recall = static_cast<double>(overlap) / static_cast<double>(std::max(t_total, 1LL));
  r.fmeasure = fmeasure(r.precision, r.recall);
  return r;
}

RougePRF score_lcs(const std::vector<std::string>& target, const std::vector<std::string>& prediction) {
  RougePRF r;
  if (target.empty() || prediction.empty()) return r;
  // Rolling-row LCS table (rouge_score builds the full table; the length is the same).
  std::vector<std::size_t> prev(prediction.size() + 1, 0), cur(prediction.size() + 1, 0);
  for (std::size_t i = 1; i <= target.size(); ++i) {
    for (std::size_t j = 1; j <= prediction.size(); ++j) {
      cur[j] = (target[i - 1] == prediction[j - 1]) ? prev[j - 1] + 1 : std::max(prev[j], cur[j - 1]);
    }
    std::swap(prev, cur);
  }
  const double lcs = static_cast<double>(prev[prediction.size()]);
  r.precision = lcs / static_cast<double>(prediction.size());
  r.recall = lcs / static_cast<double>(target.size());
  r.fmeasure = fmeasure(r.precision, r.recall);
  return r;
}

RougeScore score_tokens(const std::vector<std::string>& target, const std::vector<std::string>& prediction) {
  RougeScore s;
  s.rouge1 = score_ngrams(target, prediction, 1);
  s.rouge2 = score_ngrams(target, prediction, 2);
  s.rougeL = score_lcs(target, prediction);
  s.num_pairs = 1;
  return s;
}

}  // namespace

std::vector<std::string> rouge_tokenize(std::string_view text_in, bool stem) {
  // Python's str.lower() can only produce ASCII [a-z0-9] from ASCII letters, from
  // U+0130 (capital I with dot -> "i" + U+0307) and from U+212A (Kelvin sign -> "k");
  // every other character ends up as a separator after NON_ALPHANUM_RE.
  std::vector<std::string> tokens;
  std::string cur;
  for (char32_t c : text::utf8_decode(text_in)) {
    char32_t lc = c;
    if (c >= 'A' && c <= 'Z')
      lc = c - 'A' + 'a';
    else if (c == 0x0130)
      lc = 'i';  // followed by U+0307 in Python, a separator anyway
    else if (c == 0x212A)
      lc = 'k';
    if (is_lower_alnum(lc)) {
      cur.push_back(static_cast<char>(lc));
    } else if (!cur.empty()) {
      tokens.push_back(std::move(cur));
      cur.clear();
    }
    if (c == 0x0130 && !cur.empty()) {  // the combining dot after the 'i'
      tokens.push_back(std::move(cur));
      cur.clear();
    }
  }
  if (!cur.empty()) tokens.push_back(std::move(cur));
  if (stem) {
    for (std::string& t : tokens)
      if (t.size() > 3) t = porter_stem(t);  // rouge_score stems only words longer than 3
  }
  return tokens;
}

RougeScore rouge_pair(std::string_view target, std::string_view prediction, bool stem) {
  return score_tokens(rouge_tokenize(target, stem), rouge_tokenize(prediction, stem));
}

RougeScore corpus_rouge(const std::vector<std::string>& predictions,
                        const std::vector<std::vector<std::string>>& references, bool stem) {
  if (references.empty()) throw std::invalid_argument("rouge: no reference streams");
  for (std::size_t k = 0; k < references.size(); ++k) {
    if (references[k].size() != predictions.size())
      throw std::invalid_argument("rouge: reference stream " + std::to_string(k) + " has " +
                                  std::to_string(references[k].size()) + " lines, predictions have " +
                                  std::to_string(predictions.size()));
  }
  RougeScore sum;
  auto add = [](RougePRF& acc, const RougePRF& v) {
    acc.precision += v.precision;
    acc.recall += v.recall;
    acc.fmeasure += v.fmeasure;
  };
  for (std::size_t i = 0; i < predictions.size(); ++i) {
    RougePRF best1, best2, bestL;
    const std::vector<std::string> prediction = rouge_tokenize(predictions[i], stem);  // once, not per reference
    for (std::size_t k = 0; k < references.size(); ++k) {
      const RougeScore s = score_tokens(rouge_tokenize(references[k][i], stem), prediction);
      // score_multi: keep the first reference with the maximal F per type.
      if (k == 0 || s.rouge1.fmeasure > best1.fmeasure) best1 = s.rouge1;
      if (k == 0 || s.rouge2.fmeasure > best2.fmeasure) best2 = s.rouge2;
      if (k == 0 || s.rougeL.fmeasure > bestL.fmeasure) bestL = s.rougeL;
    }
    add(sum.rouge1, best1);
    add(sum.rouge2, best2);
    add(sum.rougeL, bestL);
  }
  sum.num_pairs = predictions.size();
  if (!predictions.empty()) {
    const double n = static_cast<double>(predictions.size());
    for (RougePRF* v : {&sum.rouge1, &sum.rouge2, &sum.rougeL}) {
      v->precision = v->precision / n * 100.0;
      v->recall = v->recall / n * 100.0;
      v->fmeasure = v->fmeasure / n * 100.0;
    }
  }
  return sum;
}

std::string RougeScore::format() const {
  char buf[128];
  std::snprintf(buf, sizeof buf, "ROUGE-1 = %.2f, ROUGE-2 = %.2f, ROUGE-L = %.2f", rouge1.fmeasure, rouge2.fmeasure,
                rougeL.fmeasure);
  return buf;
}

}  // namespace ordo::metrics
