#include <numeric>

#include "search/logits_processors.h"
#include "search/search.h"

namespace ordo::search {

std::vector<std::vector<SearchHypothesis>> greedy_search(StepModel& model, int64_t batch_size,
                                                         const GenerationSettings& s) {
  const LogitsProcessorList processors(s);
  std::vector<std::vector<SearchHypothesis>> results(batch_size, std::vector<SearchHypothesis>(1));

  // Rows still decoding and the input each belongs to. A finished row is dropped from the
  // model's batch at once (Hugging Face keeps padding it; the survivors' results are the same).
  std::vector<int64_t> owner(batch_size);
  std::iota(owner.begin(), owner.end(), 0);
  at::Tensor sequences = at::full({batch_size, 1}, s.decoder_start_token_id, at::kLong);

  while (!owner.empty() && sequences.size(1) < s.max_length) {
    at::Tensor scores = model.next_logits(sequences.narrow(1, sequences.size(1) - 1, 1));
    processors.apply(sequences, scores);
    const at::Tensor next = scores.argmax(-1);
    const at::Tensor log_probs = at::log_softmax(scores, -1).gather(1, next.unsqueeze(1)).squeeze(1);
    sequences = at::cat({sequences, next.unsqueeze(1)}, 1);

    const int64_t* next_ids = next.data_ptr<int64_t>();
    const float* next_log_probs = log_probs.data_ptr<float>();
    std::vector<int64_t> keep;
    std::vector<int64_t> still_owner;
    for (size_t row = 0; row < owner.size(); ++row) {
      SearchHypothesis& hyp = results[owner[row]][0];
      hyp.ids.push_back(next_ids[row]);
      hyp.score += next_log_probs[row];
      if (next_ids[row] != s.eos_token_id) {
        keep.push_back(static_cast<int64_t>(row));
        still_owner.push_back(owner[row]);
      }
    }
    if (keep.size() != owner.size() && !keep.empty()) {
      const at::Tensor rows = at::tensor(keep, at::kLong);
      model.select(rows);
      sequences = sequences.index_select(0, rows);
    }
    owner = std::move(still_owner);
  }
  return results;
}

}  // namespace ordo::search
