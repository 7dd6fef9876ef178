// Which search the settings ask for, and return_alternatives' first step (search.h).
#include "search/search.h"

#include <limits>

#include "search/constrained_beam_search.h"

namespace ordo::search {

SearchKind search_kind(const GenerationSettings& s) {
  if (s.alternatives > 0) return SearchKind::kAlternatives;
  if (!s.force_words_ids.empty()) return SearchKind::kConstrainedBeam;
  if (s.num_beams > 1) return SearchKind::kBeam;
  return s.do_sample ? SearchKind::kSample : SearchKind::kGreedy;
}

std::vector<std::vector<SearchHypothesis>> search(StepModel& model, int64_t batch_size, const GenerationSettings& s,
                                                  const Prefixes& prefixes) {
  switch (search_kind(s)) {
    case SearchKind::kAlternatives: return alternatives_search(model, batch_size, s, prefixes);
    case SearchKind::kConstrainedBeam: return constrained_beam_search(model, batch_size, s);
    case SearchKind::kBeam: return beam_search(model, batch_size, s, prefixes);
    case SearchKind::kGreedy:
    case SearchKind::kSample: return greedy_search(model, batch_size, s, prefixes);
  }
  return {};
}

std::vector<std::vector<SearchHypothesis>> alternatives_search(StepModel& model, int64_t batch_size,
                                                               const GenerationSettings& s, const Prefixes& prefixes) {
  const int64_t length = prefixes.empty() ? 0 : static_cast<int64_t>(prefixes[0].size());
  std::vector<int64_t> feed(static_cast<size_t>(batch_size), s.decoder_start_token_id);
  at::Tensor logits;
  for (int64_t step = 0; step <= length; ++step) {
    logits = model.next_logits(at::tensor(feed, at::kLong).unsqueeze(1));
    for (int64_t input = 0; input < batch_size && step < length; ++input)
      feed[static_cast<size_t>(input)] = prefix_token(prefixes, input, step);
  }
  at::Tensor log_probs = at::log_softmax(logits.to(at::kFloat), -1);
  log_probs.select(1, s.eos_token_id).fill_(-std::numeric_limits<float>::infinity());
  log_probs.select(1, s.pad_token_id).fill_(-std::numeric_limits<float>::infinity());
  const auto [values, tokens] = at::topk(log_probs, s.alternatives, -1);
  std::vector<std::vector<SearchHypothesis>> out(static_cast<size_t>(batch_size));
  for (int64_t input = 0; input < batch_size; ++input)
    for (int64_t k = 0; k < s.alternatives; ++k) {
      SearchHypothesis h;
      if (!prefixes.empty()) h.ids = prefixes[static_cast<size_t>(input)];
      h.ids.push_back(tokens[input][k].item<int64_t>());
      h.score = values[input][k].item<float>();
      out[static_cast<size_t>(input)].push_back(std::move(h));
    }
  return out;
}

}  // namespace ordo::search
