// ordo::Translator: a model folder loaded once, then text in, text out. The only code that
// touches tokenizer, model and search together: a call is planned here (its inputs split into
// the parts that run apart, its settings checked once: pipeline/partition.h, call_settings.h),
// decoded by pipeline/batch_decoder.h, and its results put back in input order.
#include "ordo/translator.h"

#include <future>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "io/model_config.h"
#include "kernels/parallel.h"
#include "models/family.h"
#include "ordo/glossary.h"
#include "pipeline/batch_decoder.h"
#include "pipeline/call_settings.h"
#include "pipeline/glossary_translate.h"
#include "pipeline/guarded.h"
#include "pipeline/loaded_model.h"
#include "pipeline/partition.h"
#include "pipeline/scoring.h"
#include "pipeline/source_encoding.h"
#include "pipeline/term_placement.h"
#include "search/search.h"
#include "text/tokenizer.h"

namespace ordo {

using pipeline::guarded;

struct Translator::Impl : pipeline::LoadedModel {
  const pipeline::CallSettings call{*this};

  // The one blank-input policy (ordo::has_text, ordo/text.h): a source with no ids stands for
  // an input with no text. It is not run (the model would make text up for it) and gets one
  // empty hypothesis, score 0, and no streamed event; the other sources run as one call (bad
  // options are refused even when every source is blank).
  std::vector<TranslationResult> run_with_blanks(const std::vector<std::vector<int64_t>>& sources,
                                                 const DecodeOptions& options, const BatchOptions& batching,
                                                 const std::vector<int64_t>& dropped = {},
                                                 const search::Prefixes& prefixes = {}) const {
    pipeline::Part ran;
    for (size_t i = 0; i < sources.size(); ++i)
      if (!sources[i].empty()) ran.push_back(i);
    TranslationResult blank;
    blank.hypotheses.emplace_back();
    return pipeline::run_parts(
        sources.size(), {ran}, options,
        [&](size_t, const pipeline::Part& part, const DecodeOptions& o) {
          return run(pipeline::gather(sources, part), o, batching, pipeline::gather(dropped, part),
                     pipeline::gather(prefixes, part));
        },
        blank);
  }

  // DecodeOptions::return_alternatives: each source's n_best likeliest next tokens after its
  // prefix (search::alternatives_search, through run()), then every source x alternative
  // continued greedily in one call with it as its prefix, scored with the alternative's
  // log-probability plus the continuation's.
  std::vector<TranslationResult> alternatives(const std::vector<std::vector<int64_t>>& sources,
                                              const DecodeOptions& options, const BatchOptions& batching,
                                              const std::vector<int64_t>& dropped,
                                              const search::Prefixes& prefixes) const {
    DecodeOptions greedy = options;
    greedy.return_alternatives.reset();
    greedy.beam_size = 1;
    greedy.n_best = 1;
    greedy.sample.reset();
    const int64_t n = options.n_best.value_or(1);
    if (n < 1 || n > model->config().decoder_vocab_size - 2)
      throw Error("invalid decoding option: return_alternatives needs n_best from 1 to the vocabulary size");
    DecodeOptions first = greedy;  // one step: nothing to stream, no attention to keep
    first.on_token = nullptr;
    first.return_attention = false;
    const std::vector<TranslationResult> next = run(sources, first, batching, dropped, prefixes, n);
    std::vector<std::vector<int64_t>> runs;
    std::vector<int64_t> runs_dropped;
    search::Prefixes runs_prefixes;
    for (size_t i = 0; i < sources.size(); ++i)
      for (const Hypothesis& alternative : next[i].hypotheses) {
        runs.push_back(sources[i]);
        runs_dropped.push_back(dropped.empty() ? 0 : dropped[i]);
        runs_prefixes.push_back(alternative.ids);
      }
    std::vector<TranslationResult> continued = run(std::move(runs), greedy, batching, runs_dropped, runs_prefixes);
    std::vector<TranslationResult> results(sources.size());
    for (size_t i = 0; i < sources.size(); ++i) {
      results[i] = std::move(continued[i * static_cast<size_t>(n)]);
      results[i].hypotheses.resize(1);
      results[i].hypotheses[0].score += next[i].hypotheses[0].score;
      for (int64_t k = 1; k < n; ++k) {
        Hypothesis h = std::move(continued[i * static_cast<size_t>(n) + static_cast<size_t>(k)].hypotheses.at(0));
        h.score += next[i].hypotheses[static_cast<size_t>(k)].score;
        results[i].hypotheses.push_back(std::move(h));
      }
    }
    return results;
  }

  // `alternatives` > 0: alternatives_search's first step only (GenerationSettings::alternatives).
  std::vector<TranslationResult> run(std::vector<std::vector<int64_t>> sources, const DecodeOptions& options,
                                     const BatchOptions& batching, const std::vector<int64_t>& dropped = {},
                                     const search::Prefixes& prefixes = {}, int64_t alternatives = 0) const {
    if (options.return_alternatives.value_or(false)) {
      call.checked_settings(options);
      return this->alternatives(sources, options, batching, dropped, prefixes);
    }
    // Target prefixes of different lengths run apart: lengths count a prefix, as
    // generate()'s decoder_input_ids, so that each group is exactly generate() on it.
    if (!prefixes.empty()) {
      if (prefixes.size() != sources.size()) throw Error("target prefixes: one per input is needed");
      const std::vector<pipeline::Part> groups =
          pipeline::group_by(prefixes.size(), [&](size_t i) { return prefixes[i].size(); });
      if (groups.size() > 1)
        return pipeline::run_parts<TranslationResult>(
            sources.size(), groups, options, [&](size_t, const pipeline::Part& part, const DecodeOptions& o) {
              return run(pipeline::gather(sources, part), o, batching, pipeline::gather(dropped, part),
                         pipeline::gather(prefixes, part), alternatives);
            });
    }
    // ModelOptions::threads holds for every calling thread, not only the constructing one
    // (a server calls from its own workers), for this call only: the caller's own OpenMP
    // thread count is restored on return. ATen's first-use setting of this thread's count
    // comes first, so that it cannot override ours inside the call.
    at::internal::lazy_init_num_threads();
    const kernels::ThreadCountScope call_threads(threads);
    const std::vector<int64_t> truncated = pipeline::truncate_sources(
        sources, dropped, model->config().max_position_embeddings, static_cast<size_t>(tokenizer->framing().after));
    search::GenerationSettings settings = call.checked_settings(options);
    settings.return_attention = options.return_attention;
    settings.need_scores = options.return_scores;
    settings.alternatives = alternatives;
    if (options.force_words)
      for (const std::vector<int64_t>& prefix : prefixes)
        if (!prefix.empty()) throw Error("invalid decoding option: force_words with a target prefix is not supported");
    const int64_t prefix_length = prefixes.empty() ? 0 : static_cast<int64_t>(prefixes[0].size());
    if (prefix_length > 0) {
      for (const std::vector<int64_t>& prefix : prefixes)
        for (int64_t id : prefix)
          if (id < 0 || id >= model->config().decoder_vocab_size || id == settings.eos_token_id)
            throw Error("target prefix: token id " + std::to_string(id) +
                        (id == settings.eos_token_id ? " is the end of sequence (a prefix cannot end the output)"
                                                     : " is outside the target vocabulary"));
      call.fit_prefix(settings, prefix_length);
    }
    for (size_t i = 0; i < sources.size(); ++i)
      for (int64_t id : sources[i])
        if (id < 0 || id >= model->config().vocab_size)
          throw Error("input " + std::to_string(i + 1) + ": token id " + std::to_string(id) +
                      " is outside the source vocabulary");

    std::vector<TranslationResult> results =
        pipeline::decode_batches(*this, sources, settings, prefixes, options, batching);
    for (size_t i = 0; i < results.size(); ++i) results[i].truncated_tokens = truncated[i];
    return results;
  }
};

Translator::Translator(const std::string& model_dir, const ModelOptions& model_options)
    : impl_(std::make_unique<Impl>()) {
  guarded("loading " + model_dir, [&] {
    // A Whisper folder reads audio, not text: said before its weights load.
    const io::ModelConfig config = io::load_model_config(model_dir + "/config.json");
    if (models::family_for(config).speech_encoder)
      throw Error(model_dir + ": a speech model (" + config.path + ": model_type '" + config.model_type +
                  "'): it transcribes audio; load it with ordo::SpeechRecognizer (ordo transcribe), not ordo::Translator");
    impl_->load(model_dir, model_options);
  });
}

Translator::~Translator() = default;
Translator::Translator(Translator&&) noexcept = default;
Translator& Translator::operator=(Translator&&) noexcept = default;

// A moved-from Translator has no model: each call says so instead of dereferencing nothing.
const Translator::Impl& Translator::checked_impl() const {
  if (!impl_) throw Error("this ordo::Translator was moved from and holds no model (use the one it was moved to)");
  return *impl_;
}

std::vector<TranslationResult> Translator::place_terms(const std::vector<std::string>& sentences,
                                                       std::vector<TranslationResult> results, const Glossary& glossary,
                                                       const DecodeOptions& options) const {
  return guarded("putting glossary terms in place", [&] {
    if (results.size() != sentences.size())
      throw Error("place_terms: " + std::to_string(results.size()) + " results for " +
                  std::to_string(sentences.size()) + " sentences");
    const Impl& impl = checked_impl();
    const pipeline::SourceEncoding encoding{impl.call.prefix_for(options), options.source_lang.value_or("")};
    for (size_t i = 0; i < sentences.size(); ++i) {
      const std::vector<Glossary::Match> matches = glossary.matches(sentences[i]);
      if (!matches.empty()) pipeline::place_terms(*impl.tokenizer, encoding, sentences[i], matches, results[i]);
      if (options.return_attention) continue;
      TranslationResult& r = results[i];
      r.source_tokens.clear();
      r.source_ids.clear();
      r.source_text_positions.clear();
      for (Hypothesis& h : r.hypotheses) {
        h.attention = Attention();
        h.id_pieces.clear();
        h.token_positions.clear();
      }
    }
    return results;
  });
}

int64_t Translator::max_source_tokens() const { return checked_impl().model->config().max_position_embeddings; }

std::vector<int64_t> Translator::encode(const std::string& sentence) const {
  return guarded("tokenizing", [&] { return checked_impl().tokenizer->encode(sentence); });
}

std::vector<int64_t> Translator::encode(const std::string& sentence, const std::string& source_lang) const {
  return guarded("tokenizing", [&] { return checked_impl().tokenizer->encode(sentence, source_lang); });
}

std::vector<int64_t> Translator::encode(const std::string& sentence, const DecodeOptions& options) const {
  return guarded("tokenizing", [&] {
    const Impl& impl = checked_impl();
    const std::string text = impl.call.prefix_for(options) + sentence;
    return options.source_lang ? impl.tokenizer->encode(text, *options.source_lang) : impl.tokenizer->encode(text);
  });
}

std::vector<std::string> Translator::tasks() const {
  std::vector<std::string> names;
  for (const io::TaskParams& task : checked_impl().tasks) names.push_back(task.name);
  return names;
}

std::vector<std::string> Translator::languages() const {
  // M2M100 names its language tokens "__de__"; callers pass "de".
  std::vector<std::string> codes = checked_impl().tokenizer->languages();
  for (std::string& code : codes)
    if (code.size() > 4 && code.compare(0, 2, "__") == 0 && code.compare(code.size() - 2, 2, "__") == 0)
      code = code.substr(2, code.size() - 4);
  return codes;
}

std::vector<TranslationResult> Translator::translate(const std::vector<std::string>& sentences,
                                                     const DecodeOptions& options, const BatchOptions& batching,
                                                     const std::vector<std::string>& target_prefixes) const {
  if (options.glossary) {  // terms put in place in the sentences that hold one (ordo/glossary.h)
    if (!target_prefixes.empty())
      throw Error("invalid decoding option: a glossary with target prefixes is not supported");
    return translate_with_glossary(*this, sentences, *options.glossary, options, batching);
  }
  return guarded("translating", [&] {
    const Impl& impl = checked_impl();
    const search::Prefixes prefixes = impl.call.prefixes_for(sentences.size(), options, target_prefixes);
    // An input with no text (ordo::has_text) gets no ids: run_with_blanks() answers it.
    std::vector<std::vector<int64_t>> sources(sentences.size());
    std::vector<int64_t> dropped(sentences.size(), 0);
    const std::string prefix = impl.call.prefix_for(options);  // a task's ("summarize: "), as its pipeline adds it
    for (size_t i = 0; i < sentences.size(); ++i) {
      text::check_utf8(sentences[i], "input " + std::to_string(i + 1));
      if (!text::has_text(sentences[i])) continue;
      sources[i] = pipeline::encode_source(*impl.tokenizer, prefix + sentences[i], options.source_lang,
                                           impl.model->config().max_position_embeddings, dropped[i]);
    }
    return impl.run_with_blanks(std::move(sources), options, batching, dropped, prefixes);
  });
}

std::future<std::vector<TranslationResult>> Translator::translate_async(
    std::vector<std::string> sentences, DecodeOptions options, BatchOptions batching,
    std::vector<std::string> target_prefixes) const {
  checked_impl();  // a moved-from Translator fails here, not in the future
  return std::async(std::launch::async, [this, sentences = std::move(sentences), options = std::move(options), batching,
                                         target_prefixes = std::move(target_prefixes)] {
    return translate(sentences, options, batching, target_prefixes);
  });
}

std::vector<TranslationResult> Translator::translate_ids(
    const std::vector<std::vector<int64_t>>& source_ids, const DecodeOptions& options, const BatchOptions& batching,
    const std::vector<std::vector<int64_t>>& target_prefix_ids) const {
  return guarded("translating", [&] {
    const Impl& impl = checked_impl();
    if (!target_prefix_ids.empty() && options.target_prefix)
      throw Error("invalid decoding option: target_prefix and per-input target prefix ids exclude each other");
    if (!target_prefix_ids.empty() && target_prefix_ids.size() != source_ids.size())
      throw Error("target prefixes: " + std::to_string(target_prefix_ids.size()) + " prefixes for " +
                  std::to_string(source_ids.size()) + " inputs (one per input, empty for none)");
    const search::Prefixes prefixes =
        target_prefix_ids.empty() ? impl.call.prefixes_for(source_ids.size(), options, {}) : target_prefix_ids;
    return impl.run_with_blanks(source_ids, options, batching, {}, prefixes);
  });
}

std::vector<ScoreResult> Translator::score(const std::vector<std::string>& sources,
                                           const std::vector<std::string>& targets, const DecodeOptions& options,
                                           const BatchOptions& batching) const {
  return guarded("scoring", [&] {
    const Impl& impl = checked_impl();
    return pipeline::score_targets(impl, impl.call, sources, targets, options, batching);
  });
}

std::vector<ResolvedSetting> Translator::resolved_settings(const DecodeOptions& options) const {
  std::vector<ResolvedSetting> trace;
  guarded("resolving the decoding settings", [&] { checked_impl().call.checked_settings(options, &trace); });
  return trace;
}

int64_t Translator::attention_weights_per_pair() const {
  const io::ModelConfig& config = checked_impl().model->config();
  return config.decoder_layers * config.decoder_attention_heads;
}

const std::string& Translator::model_dir() const { return checked_impl().model_dir; }

}  // namespace ordo
