// Beam search as Hugging Face's BeamSearchScorer does it (transformers 4.31): each step keeps
// the 2 x beams best continuations over all beams of a sentence, moves EOS-ending ones among
// the top `beams` into the finished list (scored sum_logprobs / length^length_penalty, length
// counting the decoder start token), and fills the live beams with the rest.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/log_softmax.h"
#include "kernels/top_k.h"
#include "ordo/error.h"
#include "search/attention_history.h"
#include "search/beam_step.h"
#include "search/finished_list.h"
#include "search/logits_processors.h"
#include "search/search.h"

namespace ordo::search {

std::vector<std::vector<SearchHypothesis>> beam_search(StepModel& model, int64_t batch_size,
                                                       const GenerationSettings& s, const Prefixes& prefixes) {
  const int64_t beams = s.num_beams;
  const LogitsProcessorList processors(s);
  std::vector<FinishedList> finished(batch_size, FinishedList(beams, s.length_penalty, s.early_stopping));

  // Live sentences; sentence items[i] owns rows i*beams .. i*beams+beams-1.
  std::vector<int64_t> items(batch_size);
  for (int64_t b = 0; b < batch_size; ++b) items[b] = b;
  model.select(at::arange(batch_size, at::kLong).repeat_interleave(beams));
  at::Tensor sequences = at::full({batch_size * beams, 1}, s.decoder_start_token_id, at::kLong);
  // Only the first beam is live at the start, so the first step does not pick one token
  // `beams` times.
  at::Tensor beam_scores = at::zeros({batch_size, beams}, at::kFloat);
  beam_scores.narrow(1, 1, beams - 1).fill_(-1e9f);
  beam_scores = beam_scores.view({-1});
  AttentionHistory attention;  // return_attention

  while (true) {
    const int64_t cur_len = sequences.size(1);
    const int64_t live = static_cast<int64_t>(items.size());
    // The beams' running scores are added while ranking (top_k_rows), not in a pass of their own.
    at::Tensor scores = beam_step_log_probs(model, sequences, s, processors, attention);
    const auto history = [&](int64_t row) { return s.return_attention ? attention.trace(row) : at::Tensor(); };
    // Rows still in their target prefix: its token at log-probability 0, every other at -inf
    // (the live beam keeps its score 0, the others their -1e9, as at generate()'s start).
    if (!prefixes.empty())
      for (int64_t i = 0; i < live; ++i)
        if (const int64_t token = prefix_token(prefixes, items[i], cur_len - 1); token >= 0) {
          at::Tensor rows = scores.narrow(0, i * beams, beams);
          rows.fill_(-std::numeric_limits<float>::infinity());
          rows.select(1, token).fill_(0.0f);
        }
    const int64_t vocab = scores.size(1);
    const kernels::TopK top = kernels::top_k_rows(scores.contiguous().view({live, beams * vocab}), 2 * beams,
                                                  beam_scores.data_ptr<float>(), vocab);
    const float* top_score = top.values.data();
    const int64_t* top_id = top.indices.data();

    std::vector<int64_t> next_rows, next_tokens, next_items;
    std::vector<float> next_scores;
    for (int64_t i = 0; i < live; ++i) {
      const int64_t item = items[i];
      int64_t filled = 0;
      std::vector<int64_t> rows, tokens;
      std::vector<float> kept_scores;
      for (int64_t rank = 0; rank < 2 * beams && filled < beams; ++rank) {
        const int64_t flat = top_id[i * 2 * beams + rank];
        const float score = top_score[i * 2 * beams + rank];
        const int64_t row = i * beams + flat / vocab, token = flat % vocab;
        if (token == s.eos_token_id) {
          // An EOS outside the top `beams` candidates is not a finished hypothesis.
          if (rank >= beams) continue;
          finished[item].add(row_tokens(sequences, row), score, true, history(row));
        } else {
          rows.push_back(row);
          tokens.push_back(token);
          kept_scores.push_back(score);
          ++filled;
        }
      }
      if (filled < beams) throw Error("beam search: fewer live candidates than beams (vocabulary too small?)");
      // HF (BeamSearchScorer.process) judges the best attainable score at the length the new
      // scores belong to: cur_len + 1.
      if (finished[item].is_done(top_score[i * 2 * beams], cur_len + 1)) continue;  // sentence complete
      next_items.push_back(item);
      next_rows.insert(next_rows.end(), rows.begin(), rows.end());
      next_tokens.insert(next_tokens.end(), tokens.begin(), tokens.end());
      next_scores.insert(next_scores.end(), kept_scores.begin(), kept_scores.end());
    }

    items = std::move(next_items);
    if (items.empty()) break;
    const at::Tensor rows = at::tensor(next_rows, at::kLong);
    sequences = at::cat({sequences.index_select(0, rows), at::tensor(next_tokens, at::kLong).unsqueeze(1)}, 1);
    beam_scores = at::tensor(next_scores, at::kFloat);
    if (s.return_attention) attention.next_rows(next_rows);
    if (sequences.size(1) >= s.max_length) {
      // Out of length: the live beams join the finished lists with their current scores.
      for (size_t i = 0; i < items.size(); ++i)
        for (int64_t k = 0; k < beams; ++k) {
          const int64_t row = static_cast<int64_t>(i) * beams + k;
          finished[items[i]].add(row_tokens(sequences, row), beam_scores[row].item<float>(), false,
                                 s.return_attention ? attention.trace(row) : at::Tensor());
        }
      break;
    }
    model.select(rows);
  }

  return best_hypotheses(finished, s.num_return_sequences, s.eos_token_id);
}

}  // namespace ordo::search
