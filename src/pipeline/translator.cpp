// ordo::Translator: a model folder loaded once, then text in, text out. The only code that
// touches tokenizer, model and search together.
#include "ordo/translator.h"

#include <sched.h>

#include <algorithm>
#include <cctype>
#include <atomic>
#include <exception>
#include <future>
#include <limits>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "io/file.h"
#include "io/model_config.h"
#include "io/model_language.h"
#include "models/packed_cache.h"
#include "ordo/decode_option_table.h"
#include "ordo/glossary.h"
#include "models/seq2seq_model.h"
#include "kernels/parallel.h"
#include "pipeline/batch_plan.h"
#include "pipeline/force_words.h"
#include "pipeline/heap.h"
#include "pipeline/model_step.h"
#include "pipeline/result_building.h"
#include "pipeline/source_encoding.h"
#include "pipeline/tokenizer_loading.h"
#include "pipeline/token_stream.h"
#include "pipeline/vocab_map.h"
#include "pipeline/worker_pool.h"
#include "search/generation_settings.h"
#include "search/search.h"
#include "text/tokenizer.h"

namespace ordo {

namespace {

nn::GemmType gemm_type(ComputeType type) {
  switch (type) {
    case ComputeType::kFloat32: return nn::GemmType::kFloat32;
    case ComputeType::kBFloat16: return nn::GemmType::kBFloat16;
    case ComputeType::kInt8: return nn::GemmType::kInt8;
  }
  return nn::GemmType::kFloat32;
}

io::GenerationConfig load_generation_defaults(const std::string& dir) {
  const std::string path = dir + "/generation_config.json";
  if (io::path_exists(path)) return io::load_generation_config(path);
  return io::generation_config_from_model_config(dir + "/config.json");
}

// More intra-op threads than cores never helps and, with OpenMP threads spinning for work,
// makes a run crawl (1024 threads on 2 cores: minutes for 5 lines). Capped at the cores this
// process may run on.
int usable_threads(int requested) {
  cpu_set_t set;
  int cores = static_cast<int>(std::thread::hardware_concurrency());
  if (::sched_getaffinity(0, sizeof set, &set) == 0) cores = CPU_COUNT(&set);
  return std::min(requested, std::max(cores, 1));
}

// The public API promises ordo::Error only. LibTorch reports with c10::Error (and a C++ stack
// trace), the allocator with std::bad_alloc, the standard library with its own exceptions:
// each becomes an ordo::Error saying what was being done, without LibTorch's trace.
template <class F>
auto guarded(const char* doing, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw Error(std::string("out of memory while ") + doing);
  } catch (const c10::Error& e) {
    throw Error(std::string("internal error while ") + doing + ": " + e.what_without_backtrace());
  } catch (const std::exception& e) {
    throw Error(std::string("internal error while ") + doing + ": " + e.what());
  }
}

// A step model that asks DecodeOptions::cancelled before each step.
class CancellableStep : public search::StepModel {
 public:
  CancellableStep(search::StepModel& step, const std::function<bool()>& cancelled) : step_(step), cancelled_(cancelled) {}
  at::Tensor next_logits(const at::Tensor& tokens) override {
    if (cancelled_()) throw Error("cancelled");
    return step_.next_logits(tokens);
  }
  void select(const at::Tensor& rows) override { step_.select(rows); }
  at::Tensor step_attention() override { return step_.step_attention(); }

 private:
  search::StepModel& step_;
  const std::function<bool()>& cancelled_;
};

}  // namespace

struct Translator::Impl {
  std::string model_dir;
  std::shared_ptr<models::Seq2SeqModel> model;
  io::GenerationConfig generation_defaults;
  std::vector<io::TaskParams> tasks;  // config.json task_specific_params
  std::unique_ptr<text::Tokenizer> tokenizer;
  std::string pair_source;  // a one-pair model's source language (tokenizer_config.json), "" if not named
  int threads = 0;  // intra-op threads of each call (ModelOptions::threads), 0 = as the caller's thread has
  std::unique_ptr<pipeline::WorkerPool> workers;  // ModelOptions::inter_threads > 1
  std::function<void(const std::string&)> warn;  // ModelOptions::on_warning
  // DecodeOptions::use_vmap: the folder's vmap.txt, read at its first use (a failed read is
  // tried again by the next call that asks).
  mutable std::mutex vmap_mutex;
  mutable std::shared_ptr<const pipeline::VocabMap> vmap;

  const pipeline::VocabMap& vocab_map() const {
    const std::lock_guard<std::mutex> lock(vmap_mutex);
    if (!vmap)
      vmap = std::make_shared<const pipeline::VocabMap>(pipeline::VocabMap::load(
          model_dir + "/vmap.txt", *tokenizer, model->config().vocab_size, model->config().decoder_vocab_size));
    return *vmap;
  }

  // The target language, by name, becomes the forced first token (M2M100, NLLB).
  DecodeOptions with_target_language(DecodeOptions options) const {
    if (!options.target_lang || options.forced_bos_token_id) return options;
    const std::optional<int64_t> id = tokenizer->language_id(*options.target_lang);
    if (!id) {
      if (tokenizer->languages().empty())
        throw Error("invalid decoding option: --target-lang '" + *options.target_lang + "': the model in " +
                    model_dir + " is not multilingual (Marian models take a >>lang<< token in the text)");
      throw Error("invalid decoding option: unknown target language '" + *options.target_lang + "' for " +
                  model_dir + " (known: " + tokenizer->language_list() + ")");
    }
    options.forced_bos_token_id = *id;
    return options;
  }

  // A one-pair model ignores source_lang in encoding; one that contradicts the pair its folder
  // names is a mistake worth saying (the text would be translated as the pair's language).
  void check_source_language(const DecodeOptions& options) const {
    if (!options.source_lang || pair_source.empty() || !tokenizer->languages().empty()) return;
    const auto lower = [](std::string v) {
      for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return v;
    };
    if (lower(*options.source_lang) != lower(pair_source))
      throw Error("invalid decoding option: --source-lang '" + *options.source_lang + "': the model in " + model_dir +
                  " translates from '" + pair_source + "' only (tokenizer_config.json source_lang; it is not multilingual)");
  }

  // The folder's task that `options.task` names (config.json task_specific_params); nullptr
  // without one; an unknown name is an error listing the folder's tasks.
  const io::TaskParams* task_for(const DecodeOptions& options) const {
    if (!options.task) return nullptr;
    std::string known;
    for (const io::TaskParams& task : tasks) {
      if (task.name == *options.task) return &task;
      known += (known.empty() ? "" : ", ") + task.name;
    }
    throw Error("invalid decoding option: unknown task '" + *options.task + "' for " + model_dir + " (" +
                (known.empty() ? "its config.json has no task_specific_params"
                               : "config.json task_specific_params: " + known) +
                ")");
  }
  // The text the task puts before each input ("summarize: "), "" without a task.
  std::string prefix_for(const DecodeOptions& options) const {
    const io::TaskParams* task = task_for(options);
    return task ? task->prefix : std::string();
  }

  // Every decoding setting for `options`, resolved and checked (see generation_settings.h).
  search::GenerationSettings settings_for(const DecodeOptions& requested,
                                          std::vector<ResolvedSetting>* trace = nullptr) const {
    DecodeOptions options = with_target_language(requested);
    if (options.return_alternatives.value_or(false)) {  // n_best alternatives, each continued greedily
      options.beam_size = 1;
      options.n_best.reset();
      options.sample.reset();
    }
    check_source_language(options);
    const io::TaskParams* task = task_for(options);
    if (trace && task) {
      trace->push_back({decode_option_spec(&DecodeOptions::task).name, task->name, "option"});
      trace->push_back({"prefix", "\"" + task->prefix + "\"", task->settings.source});
    }
    search::GenerationSettings s =
        search::resolve_settings(model->config(), generation_defaults, options, trace, task);
    s.beam_never_pad = model->family().beam_search_never_pad;
    // Marian and Pegasus have a fixed table of max_position_embeddings decoder positions, and
    // Hugging Face's generate() fails past it; the target length is capped there (the last
    // token is never fed back: length L uses positions 0 .. L-2). fairseq's table grows.
    const int64_t cap = model->config().max_position_embeddings + 1;
    if (!model->family().fairseq_positions && s.max_length > cap) {
      s.max_length = cap;
      if (trace)
        for (ResolvedSetting& setting : *trace)
          if (setting.name == decode_option_spec(&DecodeOptions::max_length).name) {
            setting.value = std::to_string(cap);
            setting.source += ", capped at max_position_embeddings + 1";
          }
    }
    return s;
  }

  // The decoder ids a target prefix text stands for: the forced first token of `settings`
  // (a target language), then the text's target-side pieces; none for an empty text.
  std::vector<int64_t> prefix_ids(const std::string& text, const search::GenerationSettings& settings,
                                  const std::string& where) const {
    if (text.empty()) return {};
    text::check_utf8(text, where);
    std::vector<int64_t> ids;
    if (settings.forced_bos_token_id) ids.push_back(*settings.forced_bos_token_id);
    const std::vector<int64_t> pieces = tokenizer->encode_target(text);
    ids.insert(ids.end(), pieces.begin(), pieces.end());
    return ids;
  }

  // A target prefix of `length` ids counts in the target's lengths, as generate()'s
  // decoder_input_ids do; throws when it leaves no room to generate.
  void fit_prefix(search::GenerationSettings& settings, int64_t length) const {
    if (settings.max_from_new_tokens) settings.max_length += length;
    if (settings.min_new_tokens > 0) settings.min_new_tokens += length;
    const int64_t cap = model->config().max_position_embeddings + 1;
    if (!model->family().fairseq_positions) settings.max_length = std::min(settings.max_length, cap);
    if (settings.max_length <= length + 1)
      throw Error("target prefix of " + std::to_string(length) + " tokens leaves no room to generate (max_length " +
                  std::to_string(settings.max_length) + ", the decoder start token included)");
  }

  // settings_for() and the checks of a call's options that need the model: force_words'
  // phrases and search, the vocabulary map (read now), the room a target_prefix leaves, the
  // options return_alternatives excludes. run() and resolved_settings() both pass here, so a
  // face that resolves the settings once before its inputs (the command line, the server)
  // fails once, not once per input.
  search::GenerationSettings checked_settings(const DecodeOptions& options,
                                              std::vector<ResolvedSetting>* trace = nullptr) const {
    if (options.return_alternatives.value_or(false)) {
      if (options.use_vmap.value_or(false))
        throw Error("invalid decoding option: use_vmap with return_alternatives is not supported");
      if (options.force_words)
        throw Error("invalid decoding option: return_alternatives with force_words is not supported");
    }
    search::GenerationSettings settings = settings_for(options, trace);
    if (options.force_words) {
      settings.force_words_ids = pipeline::force_words_ids(*tokenizer, *options.force_words, model->config().decoder_vocab_size);
      if (settings.num_beams <= 1 || settings.do_sample)
        throw Error("invalid decoding option: force_words needs beam search (beam_size of 2 or more, no sampling), "
                    "as transformers' constrained beam search does");
      if (options.target_prefix && !options.target_prefix->empty())
        throw Error("invalid decoding option: force_words with a target prefix is not supported");
    }
    if (options.use_vmap.value_or(false)) vocab_map();
    if (options.target_prefix) {
      search::GenerationSettings room = settings;
      const auto length = prefix_ids(*options.target_prefix, settings, decode_option_spec(&DecodeOptions::target_prefix).name).size();
      if (length > 0) fit_prefix(room, static_cast<int64_t>(length));
    }
    return settings;
  }

  // Per-input prefix ids from DecodeOptions::target_prefix (one text for all) or the per-input
  // texts; empty when neither is given.
  search::Prefixes prefixes_for(size_t inputs, const DecodeOptions& options,
                                const std::vector<std::string>& texts) const {
    if (texts.empty() && !options.target_prefix) return {};
    if (!texts.empty() && options.target_prefix)
      throw Error("invalid decoding option: target_prefix and per-input target prefixes exclude each other");
    if (!texts.empty() && texts.size() != inputs)
      throw Error("target prefixes: " + std::to_string(texts.size()) + " prefixes for " + std::to_string(inputs) +
                  " inputs (one per input, \"\" for none)");
    const search::GenerationSettings settings = settings_for(options);
    search::Prefixes out;
    if (options.target_prefix) {
      out.assign(inputs, prefix_ids(*options.target_prefix, settings, decode_option_spec(&DecodeOptions::target_prefix).name));
    } else {
      for (size_t i = 0; i < inputs; ++i)
        out.push_back(prefix_ids(texts[i], settings, "target prefix " + std::to_string(i + 1)));
    }
    return out;
  }

  // The one blank-input policy (ordo::has_text, ordo/text.h): a source with no ids stands for
  // an input with no text. It is not run (the model would make text up for it) and gets one
  // empty hypothesis, score 0, and no streamed event; the other sources run as one call (bad
  // options are refused even when every source is blank).
  std::vector<TranslationResult> run_with_blanks(std::vector<std::vector<int64_t>> sources, const DecodeOptions& options,
                                                 const BatchOptions& batching, const std::vector<int64_t>& dropped = {},
                                                 const search::Prefixes& prefixes = {}) const {
    std::vector<size_t> ran;  // index in `sources` of each source run
    for (size_t i = 0; i < sources.size(); ++i)
      if (!sources[i].empty()) ran.push_back(i);
    if (ran.size() == sources.size()) return run(std::move(sources), options, batching, dropped, prefixes);
    std::vector<std::vector<int64_t>> texts;
    std::vector<int64_t> texts_dropped;
    search::Prefixes texts_prefixes;
    for (size_t i : ran) {
      texts.push_back(std::move(sources[i]));
      if (i < dropped.size()) texts_dropped.push_back(dropped[i]);
      if (i < prefixes.size()) texts_prefixes.push_back(prefixes[i]);
    }
    std::vector<TranslationResult> results = run(std::move(texts), pipeline::with_stream_inputs(options, ran), batching,
                                                 texts_dropped, texts_prefixes);
    TranslationResult blank;
    blank.hypotheses.emplace_back();
    std::vector<TranslationResult> all(sources.size(), blank);
    for (size_t k = 0; k < ran.size(); ++k) all[ran[k]] = std::move(results[k]);
    return all;
  }

  // DecodeOptions::return_alternatives: per source, the n_best likeliest next tokens after its
  // prefix (one decoder pass over [start] + prefix), then every source x alternative continued
  // greedily in one call with the alternative appended to its prefix.
  std::vector<TranslationResult> alternatives(const std::vector<std::vector<int64_t>>& sources,
                                              const DecodeOptions& options, const BatchOptions& batching,
                                              const std::vector<int64_t>& dropped, const search::Prefixes& prefixes) const {
    DecodeOptions greedy = options;
    greedy.return_alternatives.reset();
    greedy.beam_size = 1;
    greedy.n_best = 1;
    greedy.sample.reset();
    const int64_t n = options.n_best.value_or(1);
    const search::GenerationSettings settings = settings_for(greedy);
    const int64_t vocab = model->config().decoder_vocab_size;
    if (n < 1 || n > vocab - 2) throw Error("invalid decoding option: return_alternatives needs n_best from 1 to the vocabulary size");
    std::vector<std::vector<int64_t>> runs;
    std::vector<int64_t> runs_dropped;
    search::Prefixes runs_prefixes;
    std::vector<std::vector<float>> first_log_probs(sources.size());
    std::vector<std::vector<int64_t>> cut = sources;  // what the encoder takes, as run() cuts it
    pipeline::truncate_sources(cut, dropped.empty() ? std::vector<int64_t>(sources.size(), 0) : dropped,
                               model->config().max_position_embeddings, static_cast<size_t>(tokenizer->framing().after));
    at::internal::lazy_init_num_threads();
    const nn::ThreadCountScope call_threads(threads);
    for (size_t i = 0; i < sources.size(); ++i) {
      const std::vector<int64_t> prefix = prefixes.empty() ? std::vector<int64_t>() : prefixes[i];
      std::vector<int64_t> next;
      {
        at::InferenceMode inference;
        const at::Tensor ids = at::tensor(cut[i], at::kLong).unsqueeze(0);
        const at::Tensor mask = at::ones_like(ids);
        nn::DecoderState state = model->start_decoding(model->encode(ids, mask), mask);
        std::vector<int64_t> feed = {settings.decoder_start_token_id};
        feed.insert(feed.end(), prefix.begin(), prefix.end());
        at::Tensor logits;
        for (int64_t id : feed) logits = model->next_logits(at::tensor(std::vector<int64_t>{id}, at::kLong).unsqueeze(1), state);
        at::Tensor log_probs = at::log_softmax(logits[0].to(at::kFloat), -1);
        log_probs[settings.eos_token_id] = -std::numeric_limits<float>::infinity();
        log_probs[settings.pad_token_id] = -std::numeric_limits<float>::infinity();
        const auto [values, tokens] = at::topk(log_probs, n);
        for (int64_t k = 0; k < n; ++k) {
          next.push_back(tokens[k].item<int64_t>());
          first_log_probs[i].push_back(values[k].item<float>());
        }
      }
      for (int64_t k = 0; k < n; ++k) {
        runs.push_back(sources[i]);
        runs_dropped.push_back(dropped.empty() ? 0 : dropped[i]);
        std::vector<int64_t> longer = prefix;
        longer.push_back(next[static_cast<size_t>(k)]);
        runs_prefixes.push_back(std::move(longer));
      }
    }
    std::vector<TranslationResult> continued = run(std::move(runs), greedy, batching, runs_dropped, runs_prefixes);
    std::vector<TranslationResult> results(sources.size());
    for (size_t i = 0; i < sources.size(); ++i) {
      results[i] = std::move(continued[i * static_cast<size_t>(n)]);
      results[i].hypotheses.resize(1);
      results[i].hypotheses[0].score += first_log_probs[i][0];
      for (int64_t k = 1; k < n; ++k) {
        Hypothesis h = std::move(continued[i * static_cast<size_t>(n) + static_cast<size_t>(k)].hypotheses.at(0));
        h.score += first_log_probs[i][static_cast<size_t>(k)];
        results[i].hypotheses.push_back(std::move(h));
      }
    }
    return results;
  }

  std::vector<TranslationResult> run(std::vector<std::vector<int64_t>> sources, const DecodeOptions& options,
                                     const BatchOptions& batching, const std::vector<int64_t>& dropped = {},
                                     const search::Prefixes& prefixes = {}) const {
    if (options.return_alternatives.value_or(false)) {
      checked_settings(options);
      return alternatives(sources, options, batching, dropped, prefixes);
    }
    // Target prefixes of different lengths run apart: lengths count a prefix, as
    // generate()'s decoder_input_ids, so that each group is exactly generate() on it.
    if (!prefixes.empty()) {
      if (prefixes.size() != sources.size()) throw Error("target prefixes: one per input is needed");
      std::vector<std::vector<size_t>> groups;
      std::vector<size_t> lengths;
      for (size_t i = 0; i < prefixes.size(); ++i) {
        const auto found = std::find(lengths.begin(), lengths.end(), prefixes[i].size());
        if (found == lengths.end()) {
          lengths.push_back(prefixes[i].size());
          groups.push_back({i});
        } else {
          groups[static_cast<size_t>(found - lengths.begin())].push_back(i);
        }
      }
      if (groups.size() > 1) {
        std::vector<TranslationResult> all(sources.size());
        for (const std::vector<size_t>& group : groups) {
          std::vector<std::vector<int64_t>> part;
          std::vector<int64_t> part_dropped;
          search::Prefixes part_prefixes;
          for (size_t i : group) {
            part.push_back(sources[i]);
            part_dropped.push_back(dropped.empty() ? 0 : dropped[i]);
            part_prefixes.push_back(prefixes[i]);
          }
          std::vector<TranslationResult> done = run(std::move(part), pipeline::with_stream_inputs(options, group),
                                                    batching, part_dropped, part_prefixes);
          for (size_t k = 0; k < group.size(); ++k) all[group[k]] = std::move(done[k]);
        }
        return all;
      }
    }
    // ModelOptions::threads holds for every calling thread, not only the constructing one
    // (a server calls from its own workers), for this call only: the caller's own OpenMP
    // thread count is restored on return. ATen's first-use setting of this thread's count
    // comes first, so that it cannot override ours inside the call.
    at::internal::lazy_init_num_threads();
    const nn::ThreadCountScope call_threads(threads);
    const std::vector<int64_t> truncated = pipeline::truncate_sources(
        sources, dropped, model->config().max_position_embeddings, static_cast<size_t>(tokenizer->framing().after));
    search::GenerationSettings settings = checked_settings(options);
    settings.return_attention = options.return_attention;
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
      fit_prefix(settings, prefix_length);
    }
    for (size_t i = 0; i < sources.size(); ++i)
      for (int64_t id : sources[i])
        if (id < 0 || id >= model->config().vocab_size)
          throw Error("input " + std::to_string(i + 1) + ": token id " + std::to_string(id) +
                      " is outside the source vocabulary");

    // The vocabulary shortlist (use_vmap): each batch's candidates, and the tokens every batch
    // may need whatever its sources (end, padding, forced tokens, prefixes, forced words).
    const pipeline::VocabMap* vmap = options.use_vmap.value_or(false) ? &vocab_map() : nullptr;
    std::vector<int64_t> vmap_specials;
    if (vmap) {
      vmap_specials = {settings.eos_token_id, settings.pad_token_id, settings.decoder_start_token_id};
      for (const std::optional<int64_t>& id : {settings.forced_bos_token_id, settings.forced_eos_token_id})
        if (id) vmap_specials.push_back(*id);
      for (const std::vector<int64_t>& prefix : prefixes) vmap_specials.insert(vmap_specials.end(), prefix.begin(), prefix.end());
      for (const std::vector<int64_t>& phrase : settings.force_words_ids)
        vmap_specials.insert(vmap_specials.end(), phrase.begin(), phrase.end());
    }
    const pipeline::BatchPlan plan = pipeline::plan_batches(sources, batching.batch_size, batching.batch_tokens);
    const std::vector<size_t>& order = plan.order;
    const auto& batches = plan.batches;
    std::vector<TranslationResult> results(sources.size());
    const auto translate_batch = [&](size_t start, size_t end) {
      at::InferenceMode inference;
      std::vector<const std::vector<int64_t>*> batch;
      for (size_t i = start; i < end; ++i) batch.push_back(&sources[order[i]]);
      const auto [ids, mask] = pipeline::pad_batch(batch, model->config().pad_token_id);
      if (options.cancelled && options.cancelled()) throw Error("cancelled");
      const at::Tensor encoded = model->encode(ids, mask);
      pipeline::ModelStep step(*model, model->start_decoding(encoded, mask));
      if (vmap) {
        const std::vector<int64_t> candidates = vmap->candidates(batch, vmap_specials);
        const auto special = [&](int64_t id) {
          return std::find(vmap_specials.begin(), vmap_specials.end(), id) != vmap_specials.end();
        };
        if (warn && std::all_of(candidates.begin(), candidates.end(), special))
          warn("use_vmap: " + vmap->path() + " maps none of the pieces of a batch of " + std::to_string(batch.size()) +
               " inputs: their shortlist holds only special tokens, so their output is empty");
        step.restrict_output(model->shortlist(at::tensor(candidates)));
      }
      if (settings.return_attention) step.record_attention();
      CancellableStep cancellable(step, options.cancelled);
      search::StepModel& stepper = options.cancelled ? static_cast<search::StepModel&>(cancellable) : step;
      search::Prefixes batch_prefixes;
      if (prefix_length > 0)
        for (size_t i = start; i < end; ++i) batch_prefixes.push_back(prefixes[order[i]]);
      // Streaming (DecodeOptions::on_token): token by token for one greedy or sampled hypothesis
      // per input, else only the final event.
      std::vector<size_t> batch_inputs(order.begin() + static_cast<std::ptrdiff_t>(start),
                                       order.begin() + static_cast<std::ptrdiff_t>(end));
      pipeline::TokenStreamStep streaming(stepper, *tokenizer, options.on_token, std::move(batch_inputs),
                                          settings.num_beams == 1 && (!settings.do_sample || settings.num_return_sequences == 1));
      search::StepModel& searched = options.on_token ? static_cast<search::StepModel&>(streaming) : stepper;
      const auto hyps = search::search(searched, static_cast<int64_t>(batch.size()), settings, batch_prefixes);
      for (size_t i = start; i < end; ++i) {
        results[order[i]] = pipeline::to_result(*tokenizer, hyps[i - start], sources[order[i]]);
        if (options.on_token) streaming.finish(i - start, results[order[i]]);
      }
      pipeline::release_free_heap();
    };
    const size_t tasks = workers ? std::min(workers->size(), batches.size()) : 1;
    if (tasks <= 1) {
      for (const auto& [start, end] : batches) translate_batch(start, end);
    } else {
      // Each worker takes the next batch until none is left, on its share of this call's
      // intra-op threads; the first error wins and stops the others at their next batch.
      std::atomic<size_t> next{0};
      const int intra = std::max(1, at::get_num_threads() / static_cast<int>(tasks));
      workers->run(tasks, [&] {
        at::internal::lazy_init_num_threads();
        const nn::ThreadCountScope worker_threads(intra);
        try {
          for (size_t b; (b = next++) < batches.size();) translate_batch(batches[b].first, batches[b].second);
        } catch (...) {
          next = batches.size();
          throw;
        }
      });
    }
    for (size_t i = 0; i < results.size(); ++i) results[i].truncated_tokens = truncated[i];
    return results;
  }
};

Translator::Translator(const std::string& model_dir, const ModelOptions& model_options)
    : impl_(std::make_unique<Impl>()) {
  guarded(("loading " + model_dir).c_str(), [&] { load(model_dir, model_options); });
}

void Translator::load(const std::string& model_dir, const ModelOptions& model_options) {
  if (model_options.threads < 0) throw Error("invalid model option: threads must not be negative");
  if (model_options.inter_threads < 1) throw Error("invalid model option: inter_threads must be at least 1");
  if (model_options.inter_threads > ModelOptions::kMaxInterThreads)
    throw Error("invalid model option: inter_threads " + std::to_string(model_options.inter_threads) + " is more than " +
                std::to_string(ModelOptions::kMaxInterThreads) + " (each worker translates one batch at a time; more "
                "workers than cores only add memory)");
  impl_->threads = model_options.threads > 0 ? usable_threads(model_options.threads) : 0;
  // Loading (packing the weights) runs on the model's threads too, and leaves the caller's as they were.
  at::internal::lazy_init_num_threads();
  const nn::ThreadCountScope load_threads(impl_->threads);
  if (model_options.inter_threads > 1)
    impl_->workers = std::make_unique<pipeline::WorkerPool>(static_cast<size_t>(model_options.inter_threads));
  impl_->model_dir = model_dir;
  impl_->warn = model_options.on_warning;
  // Everything small is read and checked before the weights: a bad id or size in a JSON file
  // fails in milliseconds, naming the file and field, and nothing is allocated from it.
  io::ModelConfig config = io::load_model_config(model_dir + "/config.json");
  models::FamilySpec family = models::family_for(config);
  impl_->generation_defaults = load_generation_defaults(model_dir);
  io::check_generation_ids(impl_->generation_defaults, config);
  impl_->tasks = io::load_task_params(config.path);
  for (const io::TaskParams& task : impl_->tasks) io::check_generation_ids(task.settings, config);
  // The tokenizer loads on a thread of its own while the weights load here (SentencePiece builds
  // a trie of its whole vocabulary: 0.1-0.4 s of a start for Pegasus' 96k or NLLB's 256k
  // pieces). It is torch-free (text/), so it shares none of LibTorch's per-thread state with the
  // loading. Its errors (a missing or malformed tokenizer file, ids outside the vocabulary)
  // are reported once the weights are loaded, and before theirs if both fail.
  const auto load_tokenizer = [model_dir, family, config] { return pipeline::load_tokenizer(model_dir, family, config); };
  std::future<std::unique_ptr<text::Tokenizer>> tokenizer;
  try {
    tokenizer = std::async(std::launch::async, load_tokenizer);
  } catch (const std::system_error&) {  // no thread to be had: loaded here, now
    tokenizer = std::async(std::launch::deferred, load_tokenizer);
  }
  const int64_t vocab_size = config.vocab_size;
  const std::string config_path = config.path;
  const auto check_tokenizer = [&] {
    impl_->tokenizer = tokenizer.get();
    if (impl_->tokenizer->languages().empty()) impl_->pair_source = io::model_source_language(model_dir);
    const text::Tokenizer::IdRange ids = impl_->tokenizer->source_id_range();
    if (ids.limit > vocab_size)
      throw Error(ids.source + ": token ids reach " + std::to_string(ids.limit - 1) + ", outside the model's vocabulary (" +
                  config_path + ": vocab_size " + std::to_string(vocab_size) + ")");
  };
  // Packed layer by layer while loading: peak memory is the packed model plus one layer.
  models::PackedCacheOptions cache;
  cache.enabled = model_options.weight_cache;
  cache.dir = model_options.weight_cache_dir;
  cache.warn = model_options.on_warning;
  cache.write_in_background = true;  // the first translation does not wait for the file
  // The libraries' start-up pages go before the weights arrive and again after (what loading
  // touched): neither peak, loading's nor decoding's, holds them (pipeline/heap.h).
  pipeline::release_library_pages();
  std::exception_ptr weights_error;
  try {
    impl_->model = models::Seq2SeqModel::load(model_dir, std::move(config), std::move(family),
                                              gemm_type(model_options.compute_type), &cache);
  } catch (...) {
    weights_error = std::current_exception();
  }
  check_tokenizer();
  if (weights_error) std::rethrow_exception(weights_error);
  pipeline::release_library_pages();
}

Translator::~Translator() = default;
Translator::Translator(Translator&&) noexcept = default;
Translator& Translator::operator=(Translator&&) noexcept = default;

// A moved-from Translator has no model: each call says so instead of dereferencing nothing.
const Translator::Impl& Translator::checked_impl() const {
  if (!impl_) throw Error("this ordo::Translator was moved from and holds no model (use the one it was moved to)");
  return *impl_;
}

std::vector<int64_t> Translator::encode(const std::string& sentence) const {
  return guarded("tokenizing", [&] { return checked_impl().tokenizer->encode(sentence); });
}

std::vector<int64_t> Translator::encode(const std::string& sentence, const std::string& source_lang) const {
  return guarded("tokenizing", [&] { return checked_impl().tokenizer->encode(sentence, source_lang); });
}

std::vector<int64_t> Translator::encode(const std::string& sentence, const DecodeOptions& options) const {
  return guarded("tokenizing", [&] {
    const Impl& impl = checked_impl();
    const std::string text = impl.prefix_for(options) + sentence;
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
  if (options.glossary) {  // per sentence: its terms' targets as force_words (ordo/glossary.h)
    if (!target_prefixes.empty()) throw Error("invalid decoding option: a glossary with target prefixes is not supported");
    return translate_with_glossary(*this, sentences, *options.glossary, options, batching);
  }
  return guarded("translating", [&] {
    const Impl& impl = checked_impl();
    const search::Prefixes prefixes = impl.prefixes_for(sentences.size(), options, target_prefixes);
    // An input with no text (ordo::has_text) gets no ids: run_with_blanks() answers it.
    std::vector<std::vector<int64_t>> sources(sentences.size());
    std::vector<int64_t> dropped(sentences.size(), 0);
    const std::string prefix = impl.prefix_for(options);  // a task's ("summarize: "), as its pipeline adds it
    for (size_t i = 0; i < sentences.size(); ++i) {
      text::check_utf8(sentences[i], "input " + std::to_string(i + 1));
      if (!text::has_text(sentences[i])) continue;
      sources[i] = pipeline::encode_source(*impl.tokenizer, prefix + sentences[i], options.source_lang,
                                           impl.model->config().max_position_embeddings, dropped[i]);
    }
    return impl.run_with_blanks(std::move(sources), options, batching, dropped, prefixes);
  });
}

std::vector<TranslationResult> Translator::translate_ids(const std::vector<std::vector<int64_t>>& source_ids,
                                                         const DecodeOptions& options, const BatchOptions& batching,
                                                         const std::vector<std::vector<int64_t>>& target_prefix_ids) const {
  return guarded("translating", [&] {
    const Impl& impl = checked_impl();
    if (!target_prefix_ids.empty() && options.target_prefix)
      throw Error("invalid decoding option: target_prefix and per-input target prefix ids exclude each other");
    if (!target_prefix_ids.empty() && target_prefix_ids.size() != source_ids.size())
      throw Error("target prefixes: " + std::to_string(target_prefix_ids.size()) + " prefixes for " +
                  std::to_string(source_ids.size()) + " inputs (one per input, empty for none)");
    const search::Prefixes prefixes =
        target_prefix_ids.empty() ? impl.prefixes_for(source_ids.size(), options, {}) : target_prefix_ids;
    return impl.run_with_blanks(source_ids, options, batching, {}, prefixes);
  });
}

std::vector<ScoreResult> Translator::score(const std::vector<std::string>& sources,
                                           const std::vector<std::string>& targets, const DecodeOptions& options,
                                           const BatchOptions& batching) const {
  return guarded("scoring", [&] {
    const Impl& impl = checked_impl();
    if (sources.size() != targets.size())
      throw Error("score: " + std::to_string(sources.size()) + " sources but " + std::to_string(targets.size()) +
                  " targets (one target per source)");
    const search::GenerationSettings settings = impl.settings_for(options);
    const std::string task_prefix = impl.prefix_for(options);
    std::vector<std::vector<int64_t>> encoded, labels;
    std::vector<int64_t> dropped;
    for (size_t i = 0; i < sources.size(); ++i) {
      text::check_utf8(sources[i], "source " + std::to_string(i + 1));
      text::check_utf8(targets[i], "target " + std::to_string(i + 1));
      dropped.push_back(0);
      encoded.push_back(pipeline::encode_source(*impl.tokenizer, task_prefix + sources[i], options.source_lang,
                                                impl.model->config().max_position_embeddings, dropped.back()));
      std::vector<int64_t> ids;
      if (settings.forced_bos_token_id) ids.push_back(*settings.forced_bos_token_id);
      const std::vector<int64_t> pieces = impl.tokenizer->encode_target(targets[i]);
      ids.insert(ids.end(), pieces.begin(), pieces.end());
      ids.push_back(settings.eos_token_id);
      for (int64_t id : ids)
        if (id < 0 || id >= impl.model->config().decoder_vocab_size)
          throw Error("target " + std::to_string(i + 1) + ": token id " + std::to_string(id) +
                      " is outside the target vocabulary");
      // Marian and Pegasus have max_position_embeddings decoder positions (fairseq's table grows).
      const int64_t positions = impl.model->config().max_position_embeddings;
      if (!impl.model->family().fairseq_positions && static_cast<int64_t>(ids.size()) > positions)
        throw Error("target " + std::to_string(i + 1) + ": " + std::to_string(ids.size()) +
                    " tokens, more than the model's " + std::to_string(positions) +
                    " target positions (config.json max_position_embeddings)");
      labels.push_back(std::move(ids));
    }
    at::internal::lazy_init_num_threads();
    const nn::ThreadCountScope call_threads(impl.threads);
    pipeline::truncate_sources(encoded, dropped, impl.model->config().max_position_embeddings,
                               static_cast<size_t>(impl.tokenizer->framing().after));
    const pipeline::BatchPlan plan = pipeline::plan_batches(encoded, batching.batch_size, batching.batch_tokens);
    std::vector<ScoreResult> results(sources.size());
    for (const auto& [start, end] : plan.batches) {
      at::InferenceMode inference;
      std::vector<const std::vector<int64_t>*> batch;
      size_t longest = 0;
      for (size_t i = start; i < end; ++i) {
        batch.push_back(&encoded[plan.order[i]]);
        longest = std::max(longest, labels[plan.order[i]].size());
      }
      const auto [ids, mask] = pipeline::pad_batch(batch, impl.model->config().pad_token_id);
      if (options.cancelled && options.cancelled()) throw Error("cancelled");
      nn::DecoderState state = impl.model->start_decoding(impl.model->encode(ids, mask), mask);
      const int64_t rows = static_cast<int64_t>(end - start);
      // Teacher forcing one position per step (the decoder's cache keeps the earlier ones):
      // position t reads label t-1 (the start token at t = 0) and scores label t.
      std::vector<int64_t> feed(static_cast<size_t>(rows), settings.decoder_start_token_id);
      for (size_t t = 0; t < longest; ++t) {
        if (options.cancelled && options.cancelled()) throw Error("cancelled");
        const at::Tensor logits = impl.model->next_logits(at::tensor(feed, at::kLong).unsqueeze(1), state);
        const at::Tensor log_probs = at::log_softmax(logits.to(at::kFloat), -1).contiguous();
        for (int64_t r = 0; r < rows; ++r) {
          const size_t input = plan.order[start + static_cast<size_t>(r)];
          const std::vector<int64_t>& target = labels[input];
          if (t < target.size()) {
            results[input].log_probs.push_back(log_probs[r][target[t]].item<float>());
            feed[static_cast<size_t>(r)] = target[t];
          } else {
            feed[static_cast<size_t>(r)] = settings.pad_token_id;  // past its end: read, not scored
          }
        }
      }
    }
    for (size_t i = 0; i < results.size(); ++i) {
      ScoreResult& r = results[i];
      r.ids = labels[i];
      double sum = 0;
      for (float v : r.log_probs) sum += v;
      r.score = static_cast<float>(sum);
      for (int64_t id : r.ids) r.tokens.push_back(impl.tokenizer->target_piece(id));
    }
    return results;
  });
}

std::vector<ResolvedSetting> Translator::resolved_settings(const DecodeOptions& options) const {
  std::vector<ResolvedSetting> trace;
  guarded("resolving the decoding settings", [&] { checked_impl().checked_settings(options, &trace); });
  return trace;
}

int64_t Translator::attention_weights_per_pair() const {
  const io::ModelConfig& config = checked_impl().model->config();
  return config.decoder_layers * config.decoder_attention_heads;
}

const std::string& Translator::model_dir() const { return checked_impl().model_dir; }

}  // namespace ordo
