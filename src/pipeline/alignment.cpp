// Alignments from the averaged cross-attention (ordo/alignment.h).
#include "ordo/alignment.h"

#include <algorithm>
#include <set>

namespace ordo {

std::vector<std::vector<float>> soft_alignment(const TranslationResult& result, const Hypothesis& hyp) {
  std::vector<std::vector<float>> rows;
  if (hyp.attention.empty()) return rows;
  for (int64_t t : hyp.token_positions) {
    std::vector<float> row;
    for (int64_t s : result.source_text_positions) row.push_back(hyp.attention.aligned(t, s));
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<AlignmentLink> hard_alignment(const TranslationResult& result, const Hypothesis& hyp) {
  std::vector<AlignmentLink> links;
  const std::vector<std::vector<float>> soft = soft_alignment(result, hyp);
  for (size_t t = 0; t < soft.size(); ++t) {
    if (soft[t].empty()) continue;
    const auto best = std::max_element(soft[t].begin(), soft[t].end());
    links.push_back({static_cast<int64_t>(best - soft[t].begin()), static_cast<int64_t>(t)});
  }
  return links;
}

std::vector<int64_t> word_indices(const std::vector<std::string>& pieces) {
  std::vector<int64_t> words;
  int64_t word = -1;
  bool ended = true;  // the previous piece ended a word
  static const std::string kSpace = "\xe2\x96\x81", kEnd = "</w>";
  for (const std::string& piece : pieces) {
    if (ended || piece.compare(0, kSpace.size(), kSpace) == 0) ++word;
    words.push_back(std::max<int64_t>(word, 0));
    ended = piece.size() >= kEnd.size() && piece.compare(piece.size() - kEnd.size(), kEnd.size(), kEnd) == 0;
  }
  return words;
}

std::vector<AlignmentLink> word_alignment(const TranslationResult& result, const Hypothesis& hyp) {
  std::vector<std::string> source_pieces;
  for (int64_t p : result.source_text_positions) source_pieces.push_back(result.source_tokens[static_cast<size_t>(p)]);
  const std::vector<int64_t> source_words = word_indices(source_pieces), target_words = word_indices(hyp.tokens);
  std::set<std::pair<int64_t, int64_t>> linked;  // (target word, source word): sorted by target
  for (const AlignmentLink& link : hard_alignment(result, hyp))
    linked.emplace(target_words[static_cast<size_t>(link.target)], source_words[static_cast<size_t>(link.source)]);
  std::vector<AlignmentLink> links;
  for (const auto& [target, source] : linked) links.push_back({source, target});
  return links;
}

}  // namespace ordo
