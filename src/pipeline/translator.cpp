// ordo::Translator: a model folder loaded once, then text in, text out. The only code that
// touches tokenizer, model and search together.
#include "ordo/translator.h"

#include <sched.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <atomic>
#include <exception>
#include <new>
#include <mutex>
#include <thread>
#include <numeric>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "io/file.h"
#include "io/model_config.h"
#include "document/model_language.h"
#include "models/packed_cache.h"
#include "models/seq2seq_model.h"
#include "kernels/parallel.h"
#include "pipeline/model_step.h"
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

std::unique_ptr<text::Tokenizer> load_tokenizer(const std::string& dir, const models::FamilySpec& family,
                                               const io::ModelConfig& config) {
  switch (family.tokenizer) {
    case models::TokenizerKind::kMarian:
      return text::load_marian_tokenizer(dir, !config.share_encoder_decoder_embeddings);
    case models::TokenizerKind::kPegasus:
      return text::load_pegasus_tokenizer(dir);
    case models::TokenizerKind::kM2M100:
      return text::load_m2m100_tokenizer(dir);
    case models::TokenizerKind::kNllb:
      return text::load_nllb_tokenizer(dir);
    case models::TokenizerKind::kFsmt:
      return text::load_fsmt_tokenizer(dir);
  }
  throw Error(dir + ": no tokenizer for model family " + family.name);
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

// Tokenizing a 32 MB line whole takes ~80 bytes of memory per input byte, and all but the
// first max_position_embeddings tokens are cut anyway. So a long text is tokenized from a
// prefix that surely holds more tokens than the model takes (64 bytes per position, as no
// SentencePiece piece is longer; doubled while it yields too few, e.g. for runs of spaces),
// cut at a space so the pieces before the cut are those of the whole text, and the rest is
// only counted, in chunks of the same size, for the truncation report.
size_t cut_at_space(const std::string& text, size_t at) {
  if (at >= text.size()) return text.size();
  const size_t space = text.find(' ', at);
  if (space != std::string::npos && space - at < 4096) return space;
  while (at > 0 && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) --at;  // a UTF-8 boundary
  return at;
}

// Right-pads `batch` with `pad` into ids and attention-mask tensors [rows, longest].
std::pair<at::Tensor, at::Tensor> pad_batch(const std::vector<const std::vector<int64_t>*>& batch, int64_t pad) {
  size_t longest = 1;
  for (const auto* ids : batch) longest = std::max(longest, ids->size());
  at::Tensor ids = at::full({static_cast<int64_t>(batch.size()), static_cast<int64_t>(longest)}, pad, at::kLong);
  at::Tensor mask = at::zeros_like(ids);
  for (size_t row = 0; row < batch.size(); ++row) {
    const auto& source = *batch[row];
    if (source.empty()) continue;
    const int64_t n = static_cast<int64_t>(source.size());
    ids[row].narrow(0, 0, n).copy_(at::tensor(source, at::kLong));
    mask[row].narrow(0, 0, n).fill_(1);
  }
  return {ids, mask};
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
  std::unique_ptr<text::Tokenizer> tokenizer;
  std::string pair_source;  // a one-pair model's source language (tokenizer_config.json), "" if not named
  int threads = 0;  // intra-op threads of each call (ModelOptions::threads), 0 = as the caller's thread has
  std::unique_ptr<pipeline::WorkerPool> workers;  // ModelOptions::inter_threads > 1

  // `source`: the encoder input of this result (for attention: its length and pieces).
  TranslationResult to_result(const std::vector<search::SearchHypothesis>& hyps, const std::vector<int64_t>& source) const {
    TranslationResult result;
    for (const auto& hyp : hyps) {
      Hypothesis out;
      out.ids = hyp.ids;
      out.score = static_cast<float>(hyp.score);
      out.tokens = tokenizer->id_to_pieces(hyp.ids);
      out.text = tokenizer->decode(hyp.ids);
      if (hyp.attention.defined()) {
        out.attention = to_attention(hyp.attention, static_cast<int64_t>(source.size()));
        for (size_t t = 0; t < hyp.ids.size(); ++t) {
          out.id_pieces.push_back(tokenizer->target_piece(hyp.ids[t]));
          if (!tokenizer->id_to_pieces({hyp.ids[t]}).empty()) out.token_positions.push_back(static_cast<int64_t>(t));
        }
      }
      result.hypotheses.push_back(std::move(out));
    }
    if (!result.hypotheses.empty() && !result.hypotheses[0].attention.empty()) {
      result.source_ids = source;
      for (size_t p = 0; p < source.size(); ++p) {
        result.source_tokens.push_back(tokenizer->source_piece(source[p]));
        // Special: the final </s>, and a leading source-language code (M2M100, NLLB).
        const bool special = p + 1 == source.size() ||
                             (p == 0 && tokenizer->language_id(result.source_tokens.back()).has_value());
        if (!special) result.source_text_positions.push_back(static_cast<int64_t>(p));
      }
    }
    return result;
  }

  // [target, layers, heads, padded source] -> the public layout, the batch's padding cut off
  // (its weights are exactly 0), and the alignment layer's head average.
  static Attention to_attention(const at::Tensor& steps, int64_t source_length) {
    const at::Tensor w = steps.narrow(3, 0, source_length).permute({1, 2, 0, 3}).contiguous().to(at::kFloat);
    Attention a;
    a.layers = w.size(0);
    a.heads = w.size(1);
    a.target_length = w.size(2);
    a.source_length = source_length;
    a.weights.assign(w.data_ptr<float>(), w.data_ptr<float>() + w.numel());
    a.alignment_layer = std::max<int64_t>(0, a.layers - 2);
    const at::Tensor mean = w[a.alignment_layer].mean(0).contiguous();
    a.averaged.assign(mean.data_ptr<float>(), mean.data_ptr<float>() + mean.numel());
    return a;
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

  // Source ids for `text` (see cut_at_space above): the ids of a prefix that holds more tokens
  // than the model takes, and in `dropped` the number of tokens after that prefix.
  std::vector<int64_t> encode(const std::string& text, const std::optional<std::string>& lang,
                              int64_t& dropped) const {
    const auto ids_of = [&](const std::string& part) {
      return lang ? tokenizer->encode(part, *lang) : tokenizer->encode(part);
    };
    dropped = 0;
    const int64_t limit = model->config().max_position_embeddings;
    size_t prefix = static_cast<size_t>(64 * (limit + 2));
    if (text.size() <= prefix) return ids_of(text);
    std::vector<int64_t> ids;
    size_t cut = 0;
    while (true) {
      cut = cut_at_space(text, prefix);
      ids = ids_of(text.substr(0, cut));
      if (static_cast<int64_t>(ids.size()) > limit + 1 || cut == text.size()) break;
      prefix *= 2;
    }
    const size_t chunk = static_cast<size_t>(64 * (limit + 2));
    for (size_t start = cut; start < text.size();) {
      const size_t end = cut_at_space(text, std::min(text.size(), start + chunk));
      const size_t stop = end > start ? end : std::min(text.size(), start + chunk);
      dropped += static_cast<int64_t>(tokenizer->tokenize(text.substr(start, stop - start)).size());
      start = stop;
    }
    return ids;
  }

  // Every decoding setting for `options`, resolved and checked (see generation_settings.h).
  search::GenerationSettings settings_for(const DecodeOptions& requested,
                                          std::vector<ResolvedSetting>* trace = nullptr) const {
    const DecodeOptions options = with_target_language(requested);
    check_source_language(options);
    search::GenerationSettings s = search::resolve_settings(model->config(), generation_defaults, options, trace);
    s.beam_never_pad = model->family().beam_search_never_pad;
    // Marian and Pegasus have a fixed table of max_position_embeddings decoder positions, and
    // Hugging Face's generate() fails past it; the target length is capped there (the last
    // token is never fed back: length L uses positions 0 .. L-2). fairseq's table grows.
    const int64_t cap = model->config().max_position_embeddings + 1;
    if (!model->family().fairseq_positions && s.max_length > cap) {
      s.max_length = cap;
      if (trace)
        for (ResolvedSetting& setting : *trace)
          if (setting.name == "max_length") {
            setting.value = std::to_string(cap);
            setting.source += ", capped at max_position_embeddings + 1";
          }
    }
    return s;
  }

  std::vector<TranslationResult> run(std::vector<std::vector<int64_t>> sources, const DecodeOptions& options,
                                     const std::vector<int64_t>& dropped = {}) const {
    // ModelOptions::threads holds for every calling thread, not only the constructing one
    // (a server calls from its own workers), for this call only: the caller's own OpenMP
    // thread count is restored on return. ATen's first-use setting of this thread's count
    // comes first, so that it cannot override ours inside the call.
    at::internal::lazy_init_num_threads();
    const nn::ThreadCountScope call_threads(threads);
    // Inputs longer than the model's positions are cut (keeping the final </s>), as HF's
    // tokenizer does with truncation=True; the caller learns how much was dropped.
    const size_t limit = static_cast<size_t>(model->config().max_position_embeddings);
    std::vector<int64_t> truncated(sources.size(), 0);
    for (size_t i = 0; i < sources.size(); ++i) {
      if (i < dropped.size()) truncated[i] = dropped[i];
      if (sources[i].size() <= limit) continue;
      truncated[i] += static_cast<int64_t>(sources[i].size() - limit);
      const int64_t last = sources[i].back();
      sources[i].resize(limit);
      sources[i].back() = last;
    }
    search::GenerationSettings settings = settings_for(options);
    settings.return_attention = options.return_attention;
    if (options.batch_size < 1) throw Error("invalid decoding option: batch size must be at least 1");
    for (size_t i = 0; i < sources.size(); ++i)
      for (int64_t id : sources[i])
        if (id < 0 || id >= model->config().vocab_size)
          throw Error("input " + std::to_string(i + 1) + ": token id " + std::to_string(id) +
                      " is outside the source vocabulary");

    // Sentences of similar length share a batch (less padding); results go back in input order.
    std::vector<size_t> order(sources.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return sources[a].size() < sources[b].size(); });

    // Batches: runs of the sorted order with at most batch_size sentences and, when set,
    // batch_tokens padded source tokens (a sentence longer than that goes alone).
    if (options.batch_tokens < 0) throw Error("invalid decoding option: batch tokens must not be negative");
    std::vector<std::pair<size_t, size_t>> batches;
    for (size_t start = 0; start < order.size();) {
      size_t end = start + 1;
      while (end < order.size() && end - start < static_cast<size_t>(options.batch_size) &&
             (options.batch_tokens == 0 ||
              (end - start + 1) * sources[order[end]].size() <= static_cast<size_t>(options.batch_tokens)))
        ++end;
      batches.emplace_back(start, end);
      start = end;
    }

    std::vector<TranslationResult> results(sources.size());
    const auto translate_batch = [&](size_t start, size_t end) {
      at::InferenceMode inference;
      std::vector<const std::vector<int64_t>*> batch;
      for (size_t i = start; i < end; ++i) batch.push_back(&sources[order[i]]);
      const auto [ids, mask] = pad_batch(batch, model->config().pad_token_id);
      if (options.cancelled && options.cancelled()) throw Error("cancelled");
      const at::Tensor encoded = model->encode(ids, mask);
      pipeline::ModelStep step(*model, model->start_decoding(encoded, mask));
      if (settings.return_attention) step.record_attention();
      CancellableStep cancellable(step, options.cancelled);
      search::StepModel& stepper = options.cancelled ? static_cast<search::StepModel&>(cancellable) : step;
      const auto hyps = search::search(stepper, static_cast<int64_t>(batch.size()), settings);
      for (size_t i = start; i < end; ++i) results[order[i]] = to_result(hyps[i - start], sources[order[i]]);
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
  impl_->threads = model_options.threads > 0 ? usable_threads(model_options.threads) : 0;
  // Loading (packing the weights) runs on the model's threads too, and leaves the caller's as they were.
  at::internal::lazy_init_num_threads();
  const nn::ThreadCountScope load_threads(impl_->threads);
  if (model_options.inter_threads > 1)
    impl_->workers = std::make_unique<pipeline::WorkerPool>(static_cast<size_t>(model_options.inter_threads));
  impl_->model_dir = model_dir;
  // Everything small is read and checked before the weights: a bad id or size in a JSON file
  // fails in milliseconds, naming the file and field, and nothing is allocated from it.
  io::ModelConfig config = io::load_model_config(model_dir + "/config.json");
  models::FamilySpec family = models::family_for(config);
  impl_->generation_defaults = load_generation_defaults(model_dir);
  io::check_generation_ids(impl_->generation_defaults, config);
  impl_->tokenizer = load_tokenizer(model_dir, family, config);
  if (impl_->tokenizer->languages().empty()) impl_->pair_source = document::model_source_language(model_dir);
  const text::Tokenizer::IdRange ids = impl_->tokenizer->source_id_range();
  if (ids.limit > config.vocab_size)
    throw Error(ids.source + ": token ids reach " + std::to_string(ids.limit - 1) + ", outside the model's vocabulary (" +
                config.path + ": vocab_size " + std::to_string(config.vocab_size) + ")");
  // Packed layer by layer while loading: peak memory is the packed model plus one layer.
  models::PackedCacheOptions cache;
  cache.enabled = model_options.weight_cache;
  cache.dir = model_options.weight_cache_dir;
  cache.warn = model_options.on_warning;
  impl_->model = models::Seq2SeqModel::load(model_dir, std::move(config), std::move(family),
                                            gemm_type(model_options.compute_type), &cache);
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

std::vector<std::string> Translator::languages() const {
  // M2M100 names its language tokens "__de__"; callers pass "de".
  std::vector<std::string> codes = checked_impl().tokenizer->languages();
  for (std::string& code : codes)
    if (code.size() > 4 && code.compare(0, 2, "__") == 0 && code.compare(code.size() - 2, 2, "__") == 0)
      code = code.substr(2, code.size() - 4);
  return codes;
}

std::vector<TranslationResult> Translator::translate(const std::vector<std::string>& sentences,
                                                     const DecodeOptions& options) const {
  return guarded("translating", [&] {
    const Impl& impl = checked_impl();
    // An input with no text (ordo::has_text) is not run: the model would make text up for it.
    // It gets one empty hypothesis, score 0.
    std::vector<std::vector<int64_t>> sources;
    std::vector<int64_t> dropped;
    std::vector<size_t> ran;  // index in `sentences` of each source
    for (size_t i = 0; i < sentences.size(); ++i) {
      text::check_utf8(sentences[i], "input " + std::to_string(i + 1));
      if (!text::has_text(sentences[i])) continue;
      ran.push_back(i);
      dropped.push_back(0);
      sources.push_back(impl.encode(sentences[i], options.source_lang, dropped.back()));
    }
    std::vector<TranslationResult> results = impl.run(std::move(sources), options, dropped);
    if (ran.size() == sentences.size()) return results;
    TranslationResult blank;
    blank.hypotheses.emplace_back();
    std::vector<TranslationResult> all(sentences.size(), blank);
    for (size_t k = 0; k < ran.size(); ++k) all[ran[k]] = std::move(results[k]);
    return all;
  });
}

std::vector<TranslationResult> Translator::translate_ids(const std::vector<std::vector<int64_t>>& source_ids,
                                                         const DecodeOptions& options) const {
  return guarded("translating", [&] { return checked_impl().run(source_ids, options); });
}

std::vector<ResolvedSetting> Translator::resolved_settings(const DecodeOptions& options) const {
  std::vector<ResolvedSetting> trace;
  guarded("resolving the decoding settings", [&] { checked_impl().settings_for(options, &trace); });
  return trace;
}

const std::string& Translator::model_dir() const { return checked_impl().model_dir; }

}  // namespace ordo
