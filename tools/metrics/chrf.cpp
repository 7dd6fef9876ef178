#include "metrics/chrf.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <unordered_map>

#include "metrics/bleu.h"  // text:: helpers

namespace ordo::metrics {
namespace {

using CharNgrams = std::unordered_map<std::u32string, std::int64_t>;

// helpers.extract_all_char_ngrams(line, max_order, include_whitespace=False):
// ''.join(line.split()), then Counter of every substring of length n (code points).
std::vector<CharNgrams> extract_char_ngrams(std::string_view line, int max_order) {
  std::u32string chars;
  for (char32_t c : text::utf8_decode(line))
    if (!text::is_py_space(c)) chars.push_back(c);
  std::vector<CharNgrams> out(static_cast<std::size_t>(max_order));
  for (int n = 1; n <= max_order; ++n) {
    auto& counter = out[n - 1];
    for (std::size_t i = 0; i + n <= chars.size(); ++i) ++counter[chars.substr(i, n)];
  }
  return out;
}

constexpr const char* kVersion = "ordo-port-of-2.x";

}  // namespace

ChrfStats& ChrfStats::operator+=(const ChrfStats& o) {
  if (values.size() < o.values.size()) values.resize(o.values.size(), 0);
  for (std::size_t i = 0; i < o.values.size(); ++i) values[i] += o.values[i];
  return *this;
}

double chrf_from_stats(const ChrfStats& stats, int char_order, int beta) {
  const double factor = static_cast<double>(beta) * beta;
  double avg_prec = 0.0, avg_rec = 0.0;
  int effective_order = 0;
  for (int i = 0; i < char_order; ++i) {
    const std::size_t base = 3 * static_cast<std::size_t>(i);
    if (base + 3 > stats.values.size()) break;
    const auto n_hyp = stats.values[base], n_ref = stats.values[base + 1], n_match = stats.values[base + 2];
    if (n_hyp > 0 && n_ref > 0) {
      avg_prec += static_cast<double>(n_match) / static_cast<double>(n_hyp);
      avg_rec += static_cast<double>(n_match) / static_cast<double>(n_ref);
      ++effective_order;
    }
  }
  if (effective_order == 0) {
    avg_prec = avg_rec = 0.0;
  } else {
    avg_prec /= effective_order;
    avg_rec /= effective_order;
  }
  if (avg_prec + avg_rec != 0.0) {
    double score = (1 + factor) * avg_prec * avg_rec;
    score /= (factor * avg_prec) + avg_rec;
    return 100 * score;
  }
  return 0.0;
}

ChrfStats chrf_segment_stats(std::string_view hypothesis, const std::vector<std::string>& references, int char_order,
                             int beta) {
  if (references.empty()) throw std::invalid_argument("chrf: a segment needs at least one reference");
  const auto hyp = extract_char_ngrams(hypothesis, char_order);
  double best_f = -1.0;
  ChrfStats best;
  for (const auto& ref_text : references) {
    const auto ref = extract_char_ngrams(ref_text, char_order);
    ChrfStats st;
    st.values.assign(3 * static_cast<std::size_t>(char_order), 0);
    for (int i = 0; i < char_order; ++i) {
      std::int64_t hyp_len = 0, ref_len = 0, match = 0;
      for (const auto& [ng, c] : hyp[i]) {
        hyp_len += c;
        const auto it = ref[i].find(ng);
        if (it != ref[i].end()) match += std::min(c, it->second);
      }
      for (const auto& [ng, c] : ref[i]) ref_len += c;
      st.values[3 * i] = hyp_len;
      st.values[3 * i + 1] = ref_len;
      st.values[3 * i + 2] = match;
    }
    const double f = chrf_from_stats(st, char_order, beta);
    if (f > best_f) {
      best_f = f;
      best = std::move(st);
    }
  }
  return best;
}

ChrfScore corpus_chrf(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& references, int char_order, int beta) {
  if (references.empty()) throw std::invalid_argument("chrf: no reference streams");
  for (std::size_t k = 0; k < references.size(); ++k) {
    if (references[k].size() != hypotheses.size())
      throw std::invalid_argument("chrf: reference stream " + std::to_string(k) + " has " +
                                  std::to_string(references[k].size()) + " lines, hypotheses have " +
                                  std::to_string(hypotheses.size()));
  }
  ChrfStats total;
  total.values.assign(3 * static_cast<std::size_t>(char_order), 0);
  std::vector<std::string> refs(references.size());
  for (std::size_t i = 0; i < hypotheses.size(); ++i) {
    for (std::size_t k = 0; k < references.size(); ++k) refs[k] = references[k][i];
    total += chrf_segment_stats(hypotheses[i], refs, char_order, beta);
  }
  ChrfScore r;
  r.score = chrf_from_stats(total, char_order, beta);
  r.char_order = char_order;
  r.beta = beta;
  r.signature = "nrefs:" + std::to_string(references.size()) + "|case:mixed|eff:yes|nc:" + std::to_string(char_order) +
                "|nw:0|space:no|version:" + kVersion;
  return r;
}

std::string ChrfScore::format() const {
  char buf[64];
  std::snprintf(buf, sizeof buf, "chrF%d = %.2f", beta, score);
  return buf;
}

}  // namespace ordo::metrics
