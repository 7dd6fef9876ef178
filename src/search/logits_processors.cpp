#include "search/logits_processors.h"

#include <algorithm>
#include <limits>
#include <map>

#include "ordo/error.h"

namespace ordo::search {

namespace {

constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

std::vector<int64_t> row_tokens(const at::Tensor& sequences, int64_t row) {
  const at::Tensor r = sequences[row].contiguous();
  return std::vector<int64_t>(r.data_ptr<int64_t>(), r.data_ptr<int64_t>() + r.numel());
}

// Leaves only `token` possible: every other score -inf, the token's 0.
void force_token(at::Tensor& scores, int64_t token) {
  scores.fill_(kMinusInf);
  scores.select(1, token).fill_(0.0f);
}

class RepetitionPenalty : public LogitsProcessor {
 public:
  explicit RepetitionPenalty(double penalty) : penalty_(penalty) {}
  void apply(const at::Tensor& sequences, at::Tensor& scores) const override {
    at::Tensor seen = scores.gather(1, sequences);
    seen = at::where(seen < 0, seen * penalty_, seen / penalty_);
    scores.scatter_(1, sequences, seen);
  }

  bool order_preserving() const override { return penalty_ > 0; }

 private:
  double penalty_;
};

class NoRepeatNGram : public LogitsProcessor {
 public:
  explicit NoRepeatNGram(int64_t n) : n_(n) {}
  void apply(const at::Tensor& sequences, at::Tensor& scores) const override {
    if (sequences.size(1) + 1 < n_) return;
    for (int64_t row = 0; row < sequences.size(0); ++row)
      for (int64_t token : banned_ngram_tokens(row_tokens(sequences, row), n_)) scores[row][token] = kMinusInf;
  }

  bool order_preserving() const override { return true; }

 private:
  int64_t n_;
};

class NoBadWords : public LogitsProcessor {
 public:
  NoBadWords(const std::vector<std::vector<int64_t>>& bad_words, int64_t eos) {
    // Hugging Face drops a bad word that is exactly [eos] (it would stop generation).
    for (const auto& word : bad_words) {
      if (word.size() == 1 && word[0] == eos) continue;
      if (word.size() == 1)
        single_.push_back(word[0]);
      else if (!word.empty())
        multi_.push_back(word);
    }
  }
  void apply(const at::Tensor& sequences, at::Tensor& scores) const override {
    for (int64_t token : single_) scores.select(1, token).fill_(kMinusInf);
    if (multi_.empty()) return;
    for (int64_t row = 0; row < sequences.size(0); ++row) {
      const std::vector<int64_t> tokens = row_tokens(sequences, row);
      for (const auto& word : multi_) {
        const size_t prefix = word.size() - 1;
        if (prefix > tokens.size()) continue;
        if (std::equal(word.begin(), word.end() - 1, tokens.end() - prefix)) scores[row][word.back()] = kMinusInf;
      }
    }
  }

  bool order_preserving() const override { return true; }

 private:
  std::vector<int64_t> single_;
  std::vector<std::vector<int64_t>> multi_;
};

// EOS is impossible while the sequence is shorter than `min_total` (start token included).
class MinLength : public LogitsProcessor {
 public:
  MinLength(int64_t min_total, int64_t eos) : min_total_(min_total), eos_(eos) {}
  void apply(const at::Tensor& sequences, at::Tensor& scores) const override {
    if (sequences.size(1) < min_total_) scores.select(1, eos_).fill_(kMinusInf);
  }

  bool order_preserving() const override { return true; }

 private:
  int64_t min_total_, eos_;
};

class ForcedTokenAt : public LogitsProcessor {
 public:
  ForcedTokenAt(int64_t length, int64_t token) : length_(length), token_(token) {}
  void apply(const at::Tensor& sequences, at::Tensor& scores) const override {
    if (sequences.size(1) == length_) force_token(scores, token_);
  }

  bool order_preserving() const override { return true; }

 private:
  int64_t length_, token_;
};

class SuppressTokens : public LogitsProcessor {
 public:
  explicit SuppressTokens(const std::vector<int64_t>& tokens) : tokens_(at::tensor(tokens, at::kLong)) {}
  void apply(const at::Tensor&, at::Tensor& scores) const override { scores.index_fill_(1, tokens_, kMinusInf); }

  bool order_preserving() const override { return true; }

 private:
  at::Tensor tokens_;
};

// The tokens are impossible at one length: the first step after the forced ones.
class SuppressTokensAtBegin : public LogitsProcessor {
 public:
  SuppressTokensAtBegin(const std::vector<int64_t>& tokens, int64_t length)
      : tokens_(at::tensor(tokens, at::kLong)), length_(length) {}
  void apply(const at::Tensor& sequences, at::Tensor& scores) const override {
    if (sequences.size(1) == length_) scores.index_fill_(1, tokens_, kMinusInf);
  }

  bool order_preserving() const override { return true; }

 private:
  at::Tensor tokens_;
  int64_t length_;
};

class ForceTokens : public LogitsProcessor {
 public:
  explicit ForceTokens(const io::ForcedDecoderIds& forced) {
    for (const auto& [length, token] : forced) at_length_[length] = token;  // dict(): the last wins
  }
  void apply(const at::Tensor& sequences, at::Tensor& scores) const override {
    const auto it = at_length_.find(sequences.size(1));
    if (it != at_length_.end() && it->second) force_token(scores, *it->second);
  }

  bool order_preserving() const override { return true; }

 private:
  std::map<int64_t, std::optional<int64_t>> at_length_;
};

// WhisperTimeStampLogitsProcessor (transformers 4.31), step for step: <|notimestamps|> never;
// <|0.00|> forced at length begin_index - 1; from begin_index on, timestamps come in pairs
// (after one timestamp another or EOS-or-later, after a pair text) and the first may not pass
// max_initial_timestamp_index; when the timestamps' total probability beats every other
// token's, a timestamp it is.
class WhisperTimestamps : public LogitsProcessor {
 public:
  explicit WhisperTimestamps(const WhisperTimestampRules& rules) : r_(rules) {}
  void apply(const at::Tensor& sequences, at::Tensor& scores) const override {
    const int64_t vocab = scores.size(1), length = sequences.size(1);
    if (r_.timestamp_begin >= vocab || r_.no_timestamps_token_id >= vocab || r_.eos_token_id > vocab)
      throw Error("Whisper timestamp rules: <|notimestamps|> " + std::to_string(r_.no_timestamps_token_id) +
                  " leaves no timestamp id in a vocabulary of " + std::to_string(vocab));
    const int64_t begin = r_.timestamp_begin, stamps = vocab - begin;
    scores.select(1, r_.no_timestamps_token_id).fill_(kMinusInf);
    if (length == r_.begin_index - 1) {
      force_token(scores, begin);
      return;
    }
    for (int64_t k = 0; k < sequences.size(0); ++k) {
      const std::vector<int64_t> row = row_tokens(sequences, k);
      const std::vector<int64_t> seq(row.begin() + std::min<int64_t>(r_.begin_index, length), row.end());
      const size_t n = seq.size();
      const bool last_was_timestamp = n >= 1 && seq[n - 1] >= begin;
      const bool penultimate_was_timestamp = n < 2 || seq[n - 2] >= begin;
      if (last_was_timestamp) {
        if (penultimate_was_timestamp)  // has to be text
          scores[k].narrow(0, begin, stamps).fill_(kMinusInf);
        else  // cannot be text
          scores[k].narrow(0, 0, r_.eos_token_id).fill_(kMinusInf);
      }
      if (r_.monotonic) {  // the forced <|0.00|> counts as the first timestamp
        int64_t last_time = -1;
        for (int64_t i = std::max<int64_t>(r_.begin_index - 1, 0); i < length; ++i)
          if (row[static_cast<size_t>(i)] >= begin) last_time = row[static_cast<size_t>(i)];
        if (last_time >= 0) {
          const int64_t first_allowed = last_was_timestamp && !penultimate_was_timestamp ? last_time : last_time + 1;
          scores[k].narrow(0, begin, std::min(first_allowed, vocab) - begin).fill_(kMinusInf);
        }
      }
      if (length == r_.begin_index && r_.max_initial_timestamp_index) {
        const int64_t first_banned = begin + *r_.max_initial_timestamp_index + 1;
        if (first_banned < vocab) scores.narrow(1, first_banned, vocab - first_banned).fill_(kMinusInf);
      }
    }
    const at::Tensor log_probs = at::log_softmax(scores.to(at::kFloat), -1);
    for (int64_t k = 0; k < sequences.size(0); ++k) {
      const at::Tensor timestamp_log_prob = log_probs[k].narrow(0, begin, stamps).logsumexp(-1);
      const at::Tensor max_text_log_prob = log_probs[k].narrow(0, 0, begin).max();
      if (timestamp_log_prob.item<float>() > max_text_log_prob.item<float>())
        scores[k].narrow(0, 0, begin).fill_(kMinusInf);
    }
  }

 private:
  WhisperTimestampRules r_;
};

class Renormalize : public LogitsProcessor {
 public:
  void apply(const at::Tensor&, at::Tensor& scores) const override { scores = at::log_softmax(scores, -1); }
  bool order_preserving() const override { return true; }
  bool shifts_rows() const override { return true; }
};

}  // namespace

std::vector<int64_t> banned_ngram_tokens(const std::vector<int64_t>& tokens, int64_t n) {
  const int64_t len = static_cast<int64_t>(tokens.size());
  if (n <= 0 || len + 1 < n) return {};
  std::vector<int64_t> banned;
  // The last n-1 tokens are the prefix the next token would complete.
  const auto prefix_begin = tokens.end() - (n - 1);
  for (int64_t start = 0; start + n <= len; ++start) {
    if (std::equal(prefix_begin, tokens.end(), tokens.begin() + start)) banned.push_back(tokens[start + n - 1]);
  }
  return banned;
}

LogitsProcessorList::LogitsProcessorList(const GenerationSettings& s) {
  if (s.repetition_penalty != 1.0) processors_.push_back(std::make_unique<RepetitionPenalty>(s.repetition_penalty));
  if (s.no_repeat_ngram_size > 0) processors_.push_back(std::make_unique<NoRepeatNGram>(s.no_repeat_ngram_size));
  if (!s.bad_words_ids.empty()) processors_.push_back(std::make_unique<NoBadWords>(s.bad_words_ids, s.eos_token_id));
  if (s.min_length > 0) processors_.push_back(std::make_unique<MinLength>(s.min_length, s.eos_token_id));
  // min_new_tokens counts after the one-token decoder prompt.
  if (s.min_new_tokens > 0) processors_.push_back(std::make_unique<MinLength>(s.min_new_tokens + 1, s.eos_token_id));
  if (s.forced_bos_token_id) processors_.push_back(std::make_unique<ForcedTokenAt>(1, *s.forced_bos_token_id));
  if (s.forced_eos_token_id)
    processors_.push_back(std::make_unique<ForcedTokenAt>(s.max_length - 1, *s.forced_eos_token_id));
  // Whisper's, in generate()'s order: suppression, forcing, then the timestamp rules (a
  // processor WhisperForConditionalGeneration.generate() passes in, merged after the others).
  if (!s.suppress_tokens.empty()) processors_.push_back(std::make_unique<SuppressTokens>(s.suppress_tokens));
  if (!s.begin_suppress_tokens.empty())
    processors_.push_back(std::make_unique<SuppressTokensAtBegin>(s.begin_suppress_tokens, begin_suppress_index(s)));
  if (!s.forced_decoder_ids.empty()) processors_.push_back(std::make_unique<ForceTokens>(s.forced_decoder_ids));
  if (s.timestamp_rules) processors_.push_back(std::make_unique<WhisperTimestamps>(*s.timestamp_rules));
  if (s.renormalize_logits) processors_.push_back(std::make_unique<Renormalize>());
}

}  // namespace ordo::search
