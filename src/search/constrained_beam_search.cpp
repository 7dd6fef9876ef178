// Constrained beam search as transformers 4.31 does it (generation/beam_constraints.py,
// beam_search.py's ConstrainedBeamSearchScorer, utils.py's constrained_beam_search), quirks
// included, so that the same phrases give the same tokens: a phrase broken off midway goes to
// the back of the pending list and the breaking token does not start another; candidates are
// ranked by bank * 100 + score; ties are ordered as torch's CPU topk and sort order them
// (std::partial_sort / std::sort over (value, index) pairs, which those kernels run).
#include "search/constrained_beam_search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "kernels/log_softmax.h"
#include "ordo/error.h"
#include "search/attention_history.h"
#include "search/beam_step.h"
#include "search/finished_list.h"
#include "search/logits_processors.h"

namespace ordo::search {

namespace {

// Progress of one hypothesis through the phrases (HF's ConstraintListState of PhrasalConstraints).
// Pending phrases are always untouched ones; at most one is in progress.
class ConstraintState {
 public:
  explicit ConstraintState(const std::vector<std::vector<int64_t>>& phrases) : phrases_(&phrases) {
    for (const auto& p : phrases) max_length_ = std::max<int64_t>(max_length_, static_cast<int64_t>(p.size()));
    init();
  }

  void init() {
    pending_.clear();
    for (size_t i = 0; i < phrases_->size(); ++i) pending_.push_back(i);
    complete_ = 0;
    in_progress_ = -1;
    fulfilled_ = -1;
    completed_ = false;
  }

  // ConstraintListState.reset(token_ids): the state after `tokens` from the start.
  void reset(const std::vector<int64_t>& tokens) {
    init();
    for (int64_t t : tokens) {
      add(t);
      if (completed_) break;
    }
  }

  void add(int64_t token) {
    if (completed_) return;
    if (in_progress_ >= 0) {
      const std::vector<int64_t>& p = (*phrases_)[static_cast<size_t>(in_progress_)];
      if (token == p[static_cast<size_t>(fulfilled_ + 1)]) {
        if (++fulfilled_ == static_cast<int64_t>(p.size()) - 1) {
          ++complete_;
          in_progress_ = -1;
          if (pending_.empty()) completed_ = true;
        }
      } else {
        pending_.push_back(static_cast<size_t>(in_progress_));  // starts afresh, last in line
        in_progress_ = -1;
      }
      return;
    }
    for (size_t c = 0; c < pending_.size(); ++c) {
      const std::vector<int64_t>& p = (*phrases_)[pending_[c]];
      if (token != p[0]) continue;
      if (p.size() == 1) {
        ++complete_;
      } else {
        in_progress_ = static_cast<int64_t>(pending_[c]);
        fulfilled_ = 0;
      }
      pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(c));
      if (pending_.empty() && in_progress_ < 0) completed_ = true;
      break;
    }
  }

  // The tokens that advance a phrase: the next of the one in progress, else each pending
  // phrase's first, in pending order.
  std::vector<int64_t> advance() const {
    if (in_progress_ >= 0) return {(*phrases_)[static_cast<size_t>(in_progress_)][static_cast<size_t>(fulfilled_ + 1)]};
    std::vector<int64_t> out;
    for (size_t i : pending_) out.push_back((*phrases_)[i][0]);
    return out;
  }

  // HF's get_bank(): the longest phrase's length per completed phrase, plus, for the one in
  // progress, that length less the tokens it still lacks.
  int64_t bank() const {
    if (in_progress_ < 0) return complete_ * max_length_;
    const int64_t length = static_cast<int64_t>((*phrases_)[static_cast<size_t>(in_progress_)].size());
    return complete_ * max_length_ + max_length_ - (length - (fulfilled_ + 1));
  }
  bool completed() const { return completed_; }

 private:
  const std::vector<std::vector<int64_t>>* phrases_;
  int64_t max_length_ = 0;
  std::vector<size_t> pending_;
  int64_t complete_ = 0;
  int64_t in_progress_ = -1;
  int64_t fulfilled_ = -1;
  bool completed_ = false;
};

using Entry = std::pair<float, int64_t>;

// torch's CPU comparator for largest-first (NaN on top).
bool larger(const Entry& x, const Entry& y) {
  return (std::isnan(x.first) && !std::isnan(y.first)) || (x.first > y.first);
}

// torch.topk(row, k, largest=True, sorted=True) on CPU (torch 1.13's topk kernel), ties included.
std::vector<Entry> torch_top_k(std::vector<Entry> queue, int64_t k) {
  const int64_t n = static_cast<int64_t>(queue.size());
  if (k * 64 <= n) {
    std::partial_sort(queue.begin(), queue.begin() + k, queue.end(), larger);
  } else {
    std::nth_element(queue.begin(), queue.begin() + k - 1, queue.end(), larger);
    std::sort(queue.begin(), queue.begin() + k - 1, larger);
  }
  queue.resize(static_cast<size_t>(k));
  return queue;
}

struct Candidate {
  int64_t row;  // the beam row it continues
  int64_t token;
  float score;  // the beam's score plus the token's log-probability
  int64_t bank;
};

bool contains(const std::vector<std::vector<int64_t>>& seqs, const std::vector<int64_t>& seq) {
  return std::find(seqs.begin(), seqs.end(), seq) != seqs.end();
}

}  // namespace

std::vector<std::vector<SearchHypothesis>> constrained_beam_search(StepModel& model, int64_t batch_size,
                                                                   const GenerationSettings& s) {
  if (s.num_beams <= 1)
    throw Error(
        "invalid decoding option: force_words needs beam search (beam_size of 2 or more), as transformers' "
        "constrained beam search does");
  if (s.do_sample) throw Error("invalid decoding option: force_words cannot be combined with sampling");
  const std::vector<std::vector<int64_t>>& phrases = s.force_words_ids;
  if (phrases.empty()) throw Error("constrained beam search: no phrase to force");
  for (const auto& p : phrases)
    if (p.empty()) throw Error("invalid decoding option: force_words: a phrase has no target tokens");

  const int64_t beams = s.num_beams;
  const LogitsProcessorList processors(s);
  std::vector<FinishedList> finished(batch_size, FinishedList(beams, s.length_penalty, s.early_stopping));
  ConstraintState state(phrases);
  const auto completes = [&](const std::vector<int64_t>& tokens) {
    state.reset(tokens);
    return state.completed();
  };

  std::vector<int64_t> items(batch_size);
  for (int64_t b = 0; b < batch_size; ++b) items[b] = b;
  model.select(at::arange(batch_size, at::kLong).repeat_interleave(beams));
  at::Tensor sequences = at::full({batch_size * beams, 1}, s.decoder_start_token_id, at::kLong);
  std::vector<float> beam_scores(static_cast<size_t>(batch_size * beams), -1e9f);
  for (int64_t b = 0; b < batch_size; ++b) beam_scores[static_cast<size_t>(b * beams)] = 0.0f;
  AttentionHistory attention;

  while (true) {
    const int64_t cur_len = sequences.size(1);
    const int64_t live = static_cast<int64_t>(items.size());
    at::Tensor scores = beam_step_log_probs(model, sequences, s, processors, attention);
    const auto history = [&](int64_t row) { return s.return_attention ? attention.trace(row) : at::Tensor(); };
    scores = scores.contiguous();
    const int64_t vocab = scores.size(1);
    const float* all = scores.data_ptr<float>();
    // HF's scores_for_all_vocab: a token's log-probability plus its beam's score.
    const auto full_score = [&](int64_t row, int64_t token) {
      return all[row * vocab + token] + beam_scores[static_cast<size_t>(row)];
    };
    std::vector<std::vector<int64_t>> rows_tokens(static_cast<size_t>(live * beams));
    for (int64_t r = 0; r < live * beams; ++r) rows_tokens[static_cast<size_t>(r)] = row_tokens(sequences, r);

    std::vector<int64_t> next_rows, next_tokens, next_items;
    std::vector<float> next_scores;
    for (int64_t i = 0; i < live; ++i) {
      const int64_t item = items[i];
      std::vector<Entry> queue(static_cast<size_t>(beams * vocab));
      for (int64_t k = 0; k < beams; ++k)
        for (int64_t t = 0; t < vocab; ++t)
          queue[static_cast<size_t>(k * vocab + t)] = {full_score(i * beams + k, t), k * vocab + t};
      const std::vector<Entry> top = torch_top_k(std::move(queue), 2 * beams);

      // ConstrainedBeamSearchScorer.process: EOS among the top `beams` finishes a hypothesis
      // when it holds every phrase; the other candidates fill the beams.
      std::vector<Candidate> chosen;
      for (int64_t rank = 0; rank < 2 * beams; ++rank) {
        const int64_t row = i * beams + top[static_cast<size_t>(rank)].second / vocab;
        const int64_t token = top[static_cast<size_t>(rank)].second % vocab;
        const float score = top[static_cast<size_t>(rank)].first;
        if (token == s.eos_token_id) {
          if (rank >= beams) continue;
          if (completes(rows_tokens[static_cast<size_t>(row)]))
            finished[item].add(rows_tokens[static_cast<size_t>(row)], score, true, history(row));
        } else {
          chosen.push_back({row, token, score, 0});
        }
        if (static_cast<int64_t>(chosen.size()) == beams) break;
      }
      if (static_cast<int64_t>(chosen.size()) < beams)
        throw Error("beam search: fewer live candidates than beams (vocabulary too small?)");

      // step_sentence_constraint: each beam also proposes the tokens that advance its phrases
      // (a sequence already among the candidates is not proposed twice); then banks.
      std::vector<std::vector<int64_t>> seqs;
      for (Candidate& c : chosen) {
        std::vector<int64_t> seq = rows_tokens[static_cast<size_t>(c.row)];
        seq.push_back(c.token);
        state.reset(seq);
        c.bank = state.bank();
        seqs.push_back(std::move(seq));
      }
      const size_t first_new = chosen.size();
      for (int64_t k = 0; k < beams; ++k) {
        const int64_t row = i * beams + k;
        const std::vector<int64_t>& pre = rows_tokens[static_cast<size_t>(row)];
        ConstraintState advance_state(phrases);
        advance_state.reset(pre);
        if (advance_state.completed()) continue;
        for (int64_t token : advance_state.advance()) {
          ConstraintState next = advance_state;
          next.add(token);
          std::vector<int64_t> seq = pre;
          seq.push_back(token);
          if (contains(seqs, seq)) continue;
          seqs.push_back(std::move(seq));
          chosen.push_back({row, token, full_score(row, token), next.bank()});
        }
      }
      if (chosen.size() > first_new) {
        // Sorted by bank * 100 + score (float32, as torch computes it), largest first, then
        // taken round-robin over the runs of equal banks: each bank's best, then each one's second...
        std::vector<Entry> zipped;
        for (size_t c = 0; c < chosen.size(); ++c)
          zipped.push_back({static_cast<float>(chosen[c].bank * 100) + chosen[c].score, static_cast<int64_t>(c)});
        std::sort(zipped.begin(), zipped.end(), larger);
        std::vector<int64_t> increments;
        int64_t counter = -1, bank = chosen[static_cast<size_t>(zipped[0].second)].bank;
        for (const Entry& z : zipped) {
          const int64_t b = chosen[static_cast<size_t>(z.second)].bank;
          if (b == bank) {
            ++counter;
          } else {
            counter = 0;
            bank = b;
          }
          increments.push_back(counter);
        }
        std::vector<size_t> order(zipped.size());
        for (size_t k = 0; k < order.size(); ++k) order[k] = k;
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return increments[a] < increments[b]; });
        std::vector<Candidate> picked;
        for (int64_t k = 0; k < beams; ++k)
          picked.push_back(chosen[static_cast<size_t>(zipped[order[static_cast<size_t>(k)]].second)]);
        chosen = std::move(picked);
      }
      chosen.resize(static_cast<size_t>(beams));

      // HF judges doneness by the best of the 2 x beams scores, at the length they belong to.
      if (finished[item].is_done(top[0].first, cur_len + 1)) continue;
      next_items.push_back(item);
      for (const Candidate& c : chosen) {
        next_rows.push_back(c.row);
        next_tokens.push_back(c.token);
        next_scores.push_back(c.score);
      }
    }

    items = std::move(next_items);
    if (items.empty()) break;
    const at::Tensor rows = at::tensor(next_rows, at::kLong);
    sequences = at::cat({sequences.index_select(0, rows), at::tensor(next_tokens, at::kLong).unsqueeze(1)}, 1);
    beam_scores = std::move(next_scores);
    if (s.return_attention) attention.next_rows(next_rows);
    if (sequences.size(1) >= s.max_length) {
      // finalize(): the live beams that hold every phrase join the finished lists; when fewer
      // than n_best do, all the others join too.
      for (size_t i = 0; i < items.size(); ++i) {
        std::vector<bool> collected(static_cast<size_t>(beams), false);
        int64_t count = 0;
        for (int64_t k = 0; k < beams; ++k) {
          const int64_t row = static_cast<int64_t>(i) * beams + k;
          std::vector<int64_t> tokens = row_tokens(sequences, row);
          if (!completes(tokens)) continue;
          finished[items[i]].add(std::move(tokens), beam_scores[static_cast<size_t>(row)], false, history(row));
          collected[static_cast<size_t>(k)] = true;
          ++count;
        }
        if (count >= s.num_return_sequences) continue;
        for (int64_t k = 0; k < beams; ++k) {
          if (collected[static_cast<size_t>(k)]) continue;
          const int64_t row = static_cast<int64_t>(i) * beams + k;
          finished[items[i]].add(row_tokens(sequences, row), beam_scores[static_cast<size_t>(row)], false,
                                 history(row));
        }
      }
      break;
    }
    model.select(rows);
  }

  return best_hypotheses(finished, s.num_return_sequences, s.eos_token_id);
}

}  // namespace ordo::search
