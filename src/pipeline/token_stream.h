// Streaming (DecodeOptions::on_token): the tokens a greedy or sampling search appends, turned
// into text that is final as it comes. A search sees only StepModel; TokenStreamStep wraps the
// one it decodes with and hears each token through StepModel::on_token.
//
// Final text: the ids so far are detokenized whole (the tokenizer's own decode, as the result's
// text is made), and only the text before the last white space is given out: the word after
// it may still grow or merge ("▁Hel" + "lo"), a byte-level BPE character may be half there (a
// trailing U+FFFD), and the space itself may yet go (Hugging Face's clean-up joins " ." and
// " n't"). A text ending in a CJK character is given out whole (those scripts have no spaces).
// What was given out is a prefix of every later text; the final event gives the rest.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ordo/options.h"
#include "search/search.h"
#include "text/tokenizer.h"

namespace ordo::pipeline {

// One hypothesis' text as its ids come.
class TextStream {
 public:
  // The event for one more generated id (its piece, the final text so far, what it added).
  TokenEvent push(const text::Tokenizer& tokenizer, int64_t id);
  // The final event: `text` is the finished hypothesis' text; delta is what was not given yet.
  TokenEvent finish(const std::string& text) const;

 private:
  std::vector<int64_t> ids_;
  std::string given_;  // the text given out so far
};

// The part of `decoded` that later tokens cannot change (see above).
std::string final_part(const std::string& decoded);

// A step model that streams: each token of input i of the batch goes to `on_token` as an event
// of input inputs[i] (the caller's numbering). With `per_token` false (beam search, several
// samples per input: nothing is final before the end) only finish() calls it.
class TokenStreamStep : public search::ForwardingStep {
 public:
  TokenStreamStep(search::StepModel& step, const text::Tokenizer& tokenizer,
                  const std::function<bool(const TokenEvent&)>& on_token, std::vector<size_t> inputs, bool per_token);
  bool on_token(int64_t hypothesis, int64_t id, float log_prob) override;
  // The final event of batch input i, its best hypothesis' text being `result`'s first.
  void finish(size_t i, const TranslationResult& result);

 private:
  const text::Tokenizer& tokenizer_;
  const std::function<bool(const TokenEvent&)>& on_token_;
  std::vector<size_t> inputs_;
  bool per_token_;
  std::vector<TextStream> streams_;
};

// `options` with on_token's input numbers mapped through `index` (event input k becomes
// index[k]): for a call that runs a subset of its inputs.
DecodeOptions with_stream_inputs(const DecodeOptions& options, const std::vector<size_t>& index);

}  // namespace ordo::pipeline
