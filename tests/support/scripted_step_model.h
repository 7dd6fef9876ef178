// A fake decoder behind search::StepModel whose next-token probabilities the test writes down,
// as a function of each hypothesis' tokens so far. Searches tested through real models only say
// *that* tokens differ; with a script the expected ids and scores can be worked out by hand, and
// the record of what the search asked (rows per step, every select(), each row's history)
// says which part of the bookkeeping broke.
//
// Probabilities, not logits: a row's logits are log(p), so log_softmax gives log(p) back and
// the test's expected scores are sums of log(p). Tokens a distribution does not list share
// what is left of the mass, the lower id the larger share (n, n-1, ..., 1 parts over the n
// unlisted ids), so no two of them tie; a distribution that lists the whole mass leaves them
// at -inf.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <ATen/ATen.h>

#include "search/search.h"

namespace ordo::testing {

class ScriptedStepModel : public search::StepModel {
 public:
  using Distribution = std::map<int64_t, double>;  // token -> probability
  using Tokens = std::vector<int64_t>;

  // What the model was asked at one next_logits() call, per row.
  struct Call {
    std::vector<int64_t> inputs;    // the input (sentence) each row belongs to
    std::vector<Tokens> histories;  // each row's tokens after the decoder start, before this step
  };
  struct Streamed {
    int64_t hypothesis;
    int64_t id;
    float log_prob;
  };

  // batch_size rows, one per input, as the searches start; `otherwise` is the distribution after
  // any history the script does not name.
  ScriptedStepModel(int64_t batch_size, int64_t vocab, Distribution otherwise)
      : vocab_(vocab), otherwise_(std::move(otherwise)) {
    for (int64_t b = 0; b < batch_size; ++b) rows_.push_back({b, {}});
  }

  // The distribution after `history` (tokens after the decoder start), for every input or for one.
  ScriptedStepModel& after(Tokens history, Distribution next) { return after(-1, std::move(history), std::move(next)); }
  ScriptedStepModel& after(int64_t input, Tokens history, Distribution next) {
    table_[{input, std::move(history)}] = std::move(next);
    return *this;
  }
  // Asked for histories the table does not name, before `otherwise`.
  std::function<Distribution(int64_t input, const Tokens& history)> rule;
  // on_token(): return false (end the hypothesis) for this (hypothesis, id).
  std::function<bool(int64_t hypothesis, int64_t id)> stop_at;

  // The distribution the model gives after `history`, and the probability of one token in it.
  Distribution distribution(int64_t input, const Tokens& history) const {
    if (auto it = table_.find({input, history}); it != table_.end()) return it->second;
    if (auto it = table_.find({-1, history}); it != table_.end()) return it->second;
    if (rule) return rule(input, history);
    return otherwise_;
  }
  double probability(int64_t input, const Tokens& history, int64_t token) const {
    return probabilities(distribution(input, history))[static_cast<size_t>(token)];
  }

  at::Tensor next_logits(const at::Tensor& tokens) override {
    if (tokens.dim() != 2 || tokens.size(1) != 1 || tokens.size(0) != static_cast<int64_t>(rows_.size()))
      throw std::logic_error("ScriptedStepModel: asked for " + std::to_string(tokens.size(0)) + " rows, holds " +
                             std::to_string(rows_.size()));
    const at::Tensor ids = tokens.contiguous();
    const int64_t n = static_cast<int64_t>(rows_.size());
    Call call;
    std::vector<float> logits, attention;
    for (int64_t r = 0; r < n; ++r) {
      Row& row = rows_[static_cast<size_t>(r)];
      row.fed.push_back(ids.data_ptr<int64_t>()[r]);
      const Tokens history(row.fed.begin() + 1, row.fed.end());
      call.inputs.push_back(row.input);
      call.histories.push_back(history);
      for (double p : probabilities(distribution(row.input, history)))
        logits.push_back(p > 0 ? static_cast<float>(std::log(p)) : -std::numeric_limits<float>::infinity());
      attention.push_back(static_cast<float>(row.input));
      attention.push_back(static_cast<float>(code(history)));
    }
    attention_ = at::tensor(attention, at::kFloat).view({n, 1, 1, 2});
    calls.push_back(std::move(call));
    return at::tensor(logits, at::kFloat).view({n, vocab_});
  }

  void select(const at::Tensor& rows) override {
    const at::Tensor r = rows.to(at::kLong).contiguous();
    std::vector<int64_t> picked(r.data_ptr<int64_t>(), r.data_ptr<int64_t>() + r.numel());
    std::vector<Row> next;
    for (int64_t i : picked) {
      if (i < 0 || i >= static_cast<int64_t>(rows_.size()))
        throw std::logic_error("ScriptedStepModel: select() of row " + std::to_string(i) + " of " +
                               std::to_string(rows_.size()));
      next.push_back(rows_[static_cast<size_t>(i)]);
    }
    rows_ = std::move(next);
    selects.push_back(std::move(picked));
  }

  // [rows, 1 layer, 1 head, 2]: (the row's input, code(its history)) for the step just run, so a
  // hypothesis' attention says which histories predicted its tokens.
  at::Tensor step_attention() override { return attention_; }

  bool on_token(int64_t hypothesis, int64_t id, float log_prob) override {
    streamed.push_back({hypothesis, id, log_prob});
    return !(stop_at && stop_at(hypothesis, id));
  }

  // A history as one number (exact in float32 for up to 6 tokens of a vocabulary under 16):
  // digits (token + 1) in base vocab + 1, first token lowest.
  double code(const Tokens& history) const {
    double c = 0, base = 1;
    for (int64_t t : history) {
      c += static_cast<double>(t + 1) * base;
      base *= static_cast<double>(vocab_ + 1);
    }
    return c;
  }

  std::vector<int64_t> rows_per_call() const {
    std::vector<int64_t> out;
    for (const Call& c : calls) out.push_back(static_cast<int64_t>(c.inputs.size()));
    return out;
  }
  int64_t rows() const { return static_cast<int64_t>(rows_.size()); }

  std::vector<Call> calls;                    // one per next_logits()
  std::vector<std::vector<int64_t>> selects;  // each select()'s rows, in order
  std::vector<Streamed> streamed;             // each on_token()

 private:
  struct Row {
    int64_t input;
    Tokens fed;  // every token fed, decoder start first
  };

  std::vector<double> probabilities(const Distribution& d) const {
    std::vector<double> p(static_cast<size_t>(vocab_), -1.0);
    double listed = 0;
    for (const auto& [token, prob] : d) {
      if (token < 0 || token >= vocab_) throw std::logic_error("ScriptedStepModel: token out of the vocabulary");
      p[static_cast<size_t>(token)] = prob;
      listed += prob;
    }
    const int64_t unlisted = vocab_ - static_cast<int64_t>(d.size());
    const double rest = listed < 1.0 - 1e-12 ? 1.0 - listed : 0.0;
    const double parts = static_cast<double>(unlisted * (unlisted + 1) / 2);
    int64_t share = unlisted;
    for (double& q : p)
      if (q < 0) q = rest * static_cast<double>(share--) / parts;
    return p;
  }

  int64_t vocab_;
  Distribution otherwise_;
  std::map<std::pair<int64_t, Tokens>, Distribution> table_;
  std::vector<Row> rows_;
  at::Tensor attention_;
};

// What the search tests share: the scripts' vocabulary of 8 (0 the decoder start and padding,
// 1 EOS, 2..7 words), the tolerance of a score worked out by hand, and settings over that
// vocabulary (greedy, max_length 10) that each test changes where it tests something.
namespace script {
using Ids = std::vector<int64_t>;
constexpr int64_t kVocab = 8, kEos = 1;
constexpr double kTolerance = 1e-5;
inline search::GenerationSettings settings() {
  search::GenerationSettings s;
  s.num_beams = 1;
  s.max_length = 10;
  s.eos_token_id = kEos;
  s.pad_token_id = 0;
  s.decoder_start_token_id = 0;
  return s;
}
}  // namespace script

}  // namespace ordo::testing
