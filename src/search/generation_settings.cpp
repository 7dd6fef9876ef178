#include "search/generation_settings.h"

#include <cmath>
#include <sstream>
#include <string>

#include "ordo/error.h"
#include "ordo/option_table.h"

namespace ordo::search {

namespace {

void require(bool ok, const std::string& message) {
  if (!ok) throw Error("invalid decoding option: " + message);
}

template <class T>
std::string to_text(const T& value) {
  std::ostringstream out;
  if constexpr (std::is_same_v<T, bool>) {
    out << (value ? "true" : "false");
  } else {
    out << value;
  }
  return out.str();
}

// Picks each value from the first layer that sets it: caller > task (config.json's
// task_specific_params, as the transformers pipelines lay them over the generation config) >
// model > preset > default, and records where it came from.
class Layers {
 public:
  Layers(const DecodeOptions& options, const io::TaskParams* task, const io::GenerationConfig& model,
         std::string model_file, std::vector<ResolvedSetting>* trace)
      : o_(options), task_(task), g_(model), model_file_(std::move(model_file)), trace_(trace) {
    static const DecodeOptions none;
    p_ = options.preset ? options.preset.get() : &none;
  }

  // The option's value from the first layer that sets it; its name is the table's.
  template <class T, class O, class G>
  T pick(std::optional<O> DecodeOptions::*option, const std::optional<G> io::GenerationConfig::*field,
         T fallback) const {
    const std::string name = decode_option_spec(option).name;
    if (o_.*option) return record(name, static_cast<T>(*(o_.*option)), "option");
    if (const std::optional<G>& value = model(field)) return record(name, static_cast<T>(*value), model_source(field));
    if (p_->*option) return record(name, static_cast<T>(*(p_->*option)), "preset");
    return record(name, fallback, "default");
  }

  // The model's value of `field`: the task's when it sets it, else generation_config.json's.
  template <class G>
  const std::optional<G>& model(const std::optional<G> io::GenerationConfig::*field) const {
    return task_ && task_->settings.*field ? task_->settings.*field : g_.*field;
  }
  template <class G>
  const std::string& model_source(const std::optional<G> io::GenerationConfig::*field) const {
    return task_ && task_->settings.*field ? task_->settings.source : model_file_;
  }

  template <class T>
  T record(const std::string& name, T value, const std::string& source) const {
    if (trace_) trace_->push_back({name, to_text(value), source});
    return value;
  }

  const DecodeOptions& option() const { return o_; }
  const DecodeOptions& preset() const { return *p_; }
  const io::TaskParams* task() const { return task_; }
  const std::string& model_file() const { return model_file_; }

 private:
  const DecodeOptions& o_;
  const io::TaskParams* task_;
  const DecodeOptions* p_;
  const io::GenerationConfig& g_;
  std::string model_file_;
  std::vector<ResolvedSetting>* trace_;
};

}  // namespace

GenerationSettings resolve_settings(const io::ModelConfig& model, const io::GenerationConfig& g, const DecodeOptions& o,
                                    std::vector<ResolvedSetting>* trace, const io::TaskParams* task) {
  const Layers l(o, task, g, g.source.empty() ? "generation_config.json" : g.source, trace);
  using G = io::GenerationConfig;
  GenerationSettings s;
  s.pad_token_id = g.pad_token_id.value_or(model.pad_token_id);
  s.eos_token_id = g.eos_token_id.value_or(model.eos_token_id);
  s.decoder_start_token_id = g.decoder_start_token_id.value_or(model.decoder_start_token_id);

  // Names as the table spells them, for the settings recorded below without a pick.
  const std::string beam_size = decode_option_spec(&DecodeOptions::beam_size).name;
  const std::string n_best = decode_option_spec(&DecodeOptions::n_best).name;
  const std::string max_length = decode_option_spec(&DecodeOptions::max_length).name;
  s.do_sample = l.pick<bool>(&DecodeOptions::sample, &G::do_sample, false);
  s.num_beams = l.pick<int64_t>(&DecodeOptions::beam_size, &G::num_beams, 1);
  // Sampling asked for by the caller replaces the model's default beam search.
  if (o.sample && *o.sample && !o.beam_size) s.num_beams = l.record<int64_t>(beam_size, 1, "option");
  s.num_return_sequences = l.pick<int64_t>(&DecodeOptions::n_best, &G::num_return_sequences, 1);
  // An explicit beam size below the model's default n-best: keep n-best within the beam.
  if (o.beam_size && !o.n_best && s.num_return_sequences > s.num_beams)
    s.num_return_sequences = l.record<int64_t>(n_best, 1, "option");

  // Lengths count the decoder start token, as Hugging Face's do. The first layer that sets
  // either length decides; within it max_new_tokens wins over max_length, as in generate().
  const int64_t prompt = 1;
  const DecodeOptions& p = l.preset();
  const io::GenerationConfig* t = task ? &task->settings : nullptr;
  if (o.max_new_tokens)
    s.max_length = l.record<int64_t>(max_length, *o.max_new_tokens + prompt, "option");
  else if (o.max_length)
    s.max_length = l.record<int64_t>(max_length, *o.max_length, "option");
  else if (t && t->max_new_tokens)
    s.max_length = l.record<int64_t>(max_length, *t->max_new_tokens + prompt, t->source);
  else if (t && t->max_length)
    s.max_length = l.record<int64_t>(max_length, *t->max_length, t->source);
  else if (g.max_new_tokens)
    s.max_length = l.record<int64_t>(max_length, *g.max_new_tokens + prompt, l.model_file());
  else if (g.max_length)
    s.max_length = l.record<int64_t>(max_length, *g.max_length, l.model_file());
  else if (p.max_new_tokens)
    s.max_length = l.record<int64_t>(max_length, *p.max_new_tokens + prompt, "preset");
  else if (p.max_length)
    s.max_length = l.record<int64_t>(max_length, *p.max_length, "preset");
  else
    s.max_length = l.record<int64_t>(max_length, 20, "default");
  s.max_from_new_tokens =
      o.max_new_tokens ||
      (!o.max_length && ((t && t->max_new_tokens) ||
                         (!(t && t->max_length) && (g.max_new_tokens || (!g.max_length && p.max_new_tokens)))));
  s.min_length = l.pick<int64_t>(&DecodeOptions::min_length, &G::min_length, 0);
  s.min_new_tokens = l.pick<int64_t>(&DecodeOptions::min_new_tokens, &G::min_new_tokens, 0);

  s.length_penalty = l.pick<double>(&DecodeOptions::length_penalty, &G::length_penalty, 1.0);
  s.early_stopping = l.pick<bool>(&DecodeOptions::early_stopping, &G::early_stopping, false);
  s.no_repeat_ngram_size = l.pick<int64_t>(&DecodeOptions::no_repeat_ngram_size, &G::no_repeat_ngram_size, 0);
  s.repetition_penalty = l.pick<double>(&DecodeOptions::repetition_penalty, &G::repetition_penalty, 1.0);
  if (o.bad_words_ids) {
    s.bad_words_ids = *o.bad_words_ids;
  } else if (l.model(&G::bad_words_ids)) {
    s.bad_words_ids = *l.model(&G::bad_words_ids);
  } else if (p.bad_words_ids) {
    s.bad_words_ids = *p.bad_words_ids;
  } else {
    s.bad_words_ids = model.bad_words_ids;
  }
  if (o.forced_bos_token_id)
    s.forced_bos_token_id = o.forced_bos_token_id;
  else
    s.forced_bos_token_id =
        l.model(&G::forced_bos_token_id) ? l.model(&G::forced_bos_token_id) : model.forced_bos_token_id;
  if (s.forced_bos_token_id)
    l.record("forced_bos_token_id", *s.forced_bos_token_id,
             o.forced_bos_token_id ? "option" : l.model_source(&G::forced_bos_token_id));
  s.forced_eos_token_id =
      l.model(&G::forced_eos_token_id) ? l.model(&G::forced_eos_token_id) : model.forced_eos_token_id;
  s.suppress_tokens = l.model(&G::suppress_tokens).value_or(std::vector<int64_t>{});
  s.begin_suppress_tokens = l.model(&G::begin_suppress_tokens).value_or(std::vector<int64_t>{});
  s.forced_decoder_ids = l.model(&G::forced_decoder_ids).value_or(io::ForcedDecoderIds{});
  s.renormalize_logits = l.model(&G::renormalize_logits).value_or(false);
  s.temperature = l.pick<double>(&DecodeOptions::temperature, &G::temperature, 1.0);
  s.top_k = l.pick<int64_t>(&DecodeOptions::top_k, &G::top_k, 50);
  s.top_p = l.pick<double>(&DecodeOptions::top_p, &G::top_p, 1.0);
  s.seed = o.seed.value_or(p.seed.value_or(0));

  // Sizes beyond these are mistakes that would otherwise surface as a failed allocation or a
  // LibTorch error deep inside the search (5,000 beams x a 58k vocabulary = 1.1 GB per step).
  // The table's ranges, which every face already holds a call's options to; a model's
  // generation_config.json is held to them here.
  const auto max_beams = static_cast<int64_t>(decode_option_spec(&DecodeOptions::beam_size).max);
  const auto max_total_length = static_cast<int64_t>(decode_option_spec(&DecodeOptions::max_length).max);
  require(s.num_beams >= 1 && s.num_beams <= max_beams,
          "beam size must be in [1, " + std::to_string(max_beams) + "], got " + std::to_string(s.num_beams));
  require(s.num_return_sequences >= 1 && s.num_return_sequences <= max_beams,
          "n-best must be in [1, " + std::to_string(max_beams) + "], got " + std::to_string(s.num_return_sequences));
  for (const auto& [name, value] : {std::pair{"length penalty", s.length_penalty},
                                    {"repetition penalty", s.repetition_penalty},
                                    {"temperature", s.temperature},
                                    {"top-p", s.top_p}})
    require(std::isfinite(value), std::string(name) + " must be a finite number, got " + to_text(value));
  require(s.max_length <= max_total_length, "the maximum length must be at most " +
                                                std::to_string(max_total_length - 1) + " generated tokens, got " +
                                                std::to_string(s.max_length - 1));
  require(s.min_length >= 0 && s.min_new_tokens >= 0, "minimum lengths must not be negative");
  require(s.do_sample || s.num_return_sequences <= s.num_beams, "n-best (" + std::to_string(s.num_return_sequences) +
                                                                    ") cannot exceed the beam size (" +
                                                                    std::to_string(s.num_beams) + ")");
  require(!s.do_sample || s.num_beams == 1, "sampling works with beam size 1 (beam sampling is not supported)");
  require(s.temperature > 0, "temperature must be > 0");
  // Sampling divides the scores by it: below the table's minimum they overflow to infinities.
  const DecodeOptionSpec& temperature = decode_option_spec(&DecodeOptions::temperature);
  require(!s.do_sample || (s.temperature >= temperature.min && s.temperature <= temperature.max),
          "temperature must be from " + to_text(temperature.min) + " to " + to_text(temperature.max) +
              " when sampling, got " + to_text(s.temperature));
  require(s.top_k >= 0, "top-k must be >= 0");
  require(s.top_p > 0 && s.top_p <= 1, "top-p must be in (0, 1]");
  require(s.max_length >= 2, "the maximum length must allow at least one generated token");
  require(s.no_repeat_ngram_size >= 0, "no-repeat n-gram size must be >= 0");
  require(s.repetition_penalty > 0, "repetition penalty must be > 0");
  const int64_t vocab = model.decoder_vocab_size;
  for (const auto& [name, id] :
       {std::pair{"forced BOS token id", s.forced_bos_token_id}, {"forced EOS token id", s.forced_eos_token_id}})
    if (id)
      require(*id >= 0 && *id < vocab, std::string(name) + " " + std::to_string(*id) +
                                           " is outside the vocabulary [0, " + std::to_string(vocab) + ")");
  for (const auto& words : s.bad_words_ids)
    for (int64_t id : words)
      require(id >= 0 && id < vocab, "bad word id " + std::to_string(id) + " is outside the vocabulary");
  for (const auto& [name, ids] : {std::pair{"suppressed token id", &s.suppress_tokens},
                                  {"suppressed-at-begin token id", &s.begin_suppress_tokens}})
    for (int64_t id : *ids)
      require(id >= 0 && id < vocab, std::string(name) + " " + std::to_string(id) + " is outside the vocabulary");
  for (const auto& [index, token] : s.forced_decoder_ids)
    require(!token || (*token >= 0 && *token < vocab),
            "forced decoder id " + std::to_string(token.value_or(0)) + " is outside the vocabulary");
  return s;
}

int64_t begin_suppress_index(const GenerationSettings& s) {
  // generate(): input_ids_seq_length (the decoder start), one more for a forced BOS, then the
  // length of the last forced_decoder_ids entry (not the largest).
  int64_t index = 1;
  if (s.forced_bos_token_id) ++index;
  if (!s.forced_decoder_ids.empty()) index += s.forced_decoder_ids.back().first;
  return index;
}

}  // namespace ordo::search
