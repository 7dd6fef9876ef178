#include "search/generation_settings.h"

#include <string>

#include "ordo/error.h"

namespace ordo::search {

namespace {

template <class T, class U>
T pick(const std::optional<U>& option, const std::optional<T>& model_default, T fallback) {
  if (option) return static_cast<T>(*option);
  if (model_default) return *model_default;
  return fallback;
}

void require(bool ok, const std::string& message) {
  if (!ok) throw Error("invalid decoding option: " + message);
}

}  // namespace

GenerationSettings resolve_settings(const io::ModelConfig& model, const io::GenerationConfig& g,
                                    const DecodeOptions& o) {
  GenerationSettings s;
  s.pad_token_id = g.pad_token_id.value_or(model.pad_token_id);
  s.eos_token_id = g.eos_token_id.value_or(model.eos_token_id);
  s.decoder_start_token_id = g.decoder_start_token_id.value_or(model.decoder_start_token_id);

  s.num_beams = pick<int64_t>(o.beam_size, g.num_beams, 1);
  s.num_return_sequences = pick<int64_t>(o.n_best, g.num_return_sequences, 1);
  // An explicit beam size below the model's default n-best: keep n-best within the beam.
  if (o.beam_size && !o.n_best && s.num_return_sequences > s.num_beams) s.num_return_sequences = 1;

  // Lengths count the decoder start token, as Hugging Face's do. max_new_tokens wins over
  // max_length wherever it comes from, as in generate().
  const int64_t prompt = 1;
  if (o.max_new_tokens)
    s.max_length = *o.max_new_tokens + prompt;
  else if (o.max_length)
    s.max_length = *o.max_length;
  else if (g.max_new_tokens)
    s.max_length = *g.max_new_tokens + prompt;
  else
    s.max_length = g.max_length.value_or(20);
  s.min_length = pick<int64_t>(o.min_length, g.min_length, 0);
  s.min_new_tokens = pick<int64_t>(o.min_new_tokens, g.min_new_tokens, 0);

  s.length_penalty = pick<double>(o.length_penalty, g.length_penalty, 1.0);
  s.early_stopping = pick<bool>(o.early_stopping, g.early_stopping, false);
  s.no_repeat_ngram_size = pick<int64_t>(o.no_repeat_ngram_size, g.no_repeat_ngram_size, 0);
  s.repetition_penalty = pick<double>(o.repetition_penalty, g.repetition_penalty, 1.0);
  if (o.bad_words_ids)
    s.bad_words_ids = *o.bad_words_ids;
  else if (g.bad_words_ids)
    s.bad_words_ids = *g.bad_words_ids;
  else
    s.bad_words_ids = model.bad_words_ids;
  s.forced_bos_token_id = g.forced_bos_token_id ? g.forced_bos_token_id : model.forced_bos_token_id;
  s.forced_eos_token_id = g.forced_eos_token_id ? g.forced_eos_token_id : model.forced_eos_token_id;
  s.renormalize_logits = g.renormalize_logits.value_or(false);

  require(s.num_beams >= 1, "beam size must be at least 1, got " + std::to_string(s.num_beams));
  require(s.num_return_sequences >= 1, "n-best must be at least 1");
  require(s.num_return_sequences <= s.num_beams,
          "n-best (" + std::to_string(s.num_return_sequences) + ") cannot exceed the beam size (" +
              std::to_string(s.num_beams) + ")");
  require(s.max_length >= 2, "the maximum length must allow at least one generated token");
  require(s.no_repeat_ngram_size >= 0, "no-repeat n-gram size must be >= 0");
  require(s.repetition_penalty > 0, "repetition penalty must be > 0");
  const int64_t vocab = model.decoder_vocab_size;
  for (const auto& words : s.bad_words_ids)
    for (int64_t id : words)
      require(id >= 0 && id < vocab, "bad word id " + std::to_string(id) + " is outside the vocabulary");
  return s;
}

}  // namespace ordo::search
