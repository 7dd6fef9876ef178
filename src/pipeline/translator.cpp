// ordo::Translator: a model folder loaded once, then text in, text out. The only code that
// touches tokenizer, model and search together.
#include "ordo/translator.h"

#include <malloc.h>

#include <algorithm>
#include <fstream>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <numeric>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "io/model_config.h"
#include "models/seq2seq_model.h"
#include "pipeline/model_step.h"
#include "search/generation_settings.h"
#include "search/search.h"
#include "text/tokenizer.h"

namespace ordo {

namespace {

// Decoding allocates the same large buffers at every step (logits of rows x vocabulary: 30 MB
// for 128 beams of a 58k vocabulary). Above glibc's mmap threshold (at most 32 MB, adapted
// upwards only as blocks are freed) each one is a fresh mmap whose pages the kernel zeroes
// on first touch: 12 % of the beam-search time in page faults. Serving them from the heap
// and keeping freed memory for reuse removes that, at the cost of keeping the peak
// allocation resident. Process-wide, once, on the first Translator.
void keep_large_buffers_on_the_heap() {
  static std::once_flag once;
  std::call_once(once, [] {
    ::mallopt(M_MMAP_THRESHOLD, 1 << 30);
    ::mallopt(M_TRIM_THRESHOLD, 1 << 30);
  });
}

nn::GemmType gemm_type(ComputeType type) {
  switch (type) {
    case ComputeType::kFloat32: return nn::GemmType::kFloat32;
    case ComputeType::kBFloat16: return nn::GemmType::kBFloat16;
    case ComputeType::kInt8: return nn::GemmType::kInt8;
  }
  return nn::GemmType::kFloat32;
}

bool file_exists(const std::string& path) { return std::ifstream(path).good(); }

io::GenerationConfig load_generation_defaults(const std::string& dir) {
  const std::string path = dir + "/generation_config.json";
  if (file_exists(path)) return io::load_generation_config(path);
  return io::generation_config_from_model_config(dir + "/config.json");
}

std::unique_ptr<text::Tokenizer> load_tokenizer(const std::string& dir, const models::Seq2SeqModel& model) {
  switch (model.family().tokenizer) {
    case models::TokenizerKind::kMarian:
      return text::load_marian_tokenizer(dir, !model.config().share_encoder_decoder_embeddings);
    case models::TokenizerKind::kPegasus:
      return text::load_pegasus_tokenizer(dir);
    case models::TokenizerKind::kM2M100:
      return text::load_m2m100_tokenizer(dir);
    case models::TokenizerKind::kNllb:
      return text::load_nllb_tokenizer(dir);
  }
  throw Error(dir + ": no tokenizer for model family " + model.family().name);
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

}  // namespace

struct Translator::Impl {
  std::string model_dir;
  std::shared_ptr<models::Seq2SeqModel> model;
  io::GenerationConfig generation_defaults;
  std::unique_ptr<text::Tokenizer> tokenizer;
  int threads = 0;  // intra-op threads of each call (ModelOptions::threads), 0 = as the caller's thread has
  int inter_threads = 1;

  TranslationResult to_result(const std::vector<search::SearchHypothesis>& hyps) const {
    TranslationResult result;
    for (const auto& hyp : hyps) {
      Hypothesis out;
      out.ids = hyp.ids;
      out.score = static_cast<float>(hyp.score);
      out.tokens = tokenizer->id_to_pieces(hyp.ids);
      out.text = tokenizer->decode(hyp.ids);
      result.hypotheses.push_back(std::move(out));
    }
    return result;
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

  std::vector<TranslationResult> run(std::vector<std::vector<int64_t>> sources,
                                     const DecodeOptions& requested) const {
    // ModelOptions::threads holds for every calling thread, not only the constructing one
    // (a server calls from its own workers; OpenMP's thread count is per thread).
    if (threads > 0 && at::get_num_threads() != threads) at::set_num_threads(threads);
    // Inputs longer than the model's positions are cut (keeping the final </s>), as HF's
    // tokenizer does with truncation=True; the caller learns how much was dropped.
    const size_t limit = static_cast<size_t>(model->config().max_position_embeddings);
    std::vector<int64_t> truncated(sources.size(), 0);
    for (size_t i = 0; i < sources.size(); ++i) {
      if (sources[i].size() <= limit) continue;
      truncated[i] = static_cast<int64_t>(sources[i].size() - limit);
      const int64_t last = sources[i].back();
      sources[i].resize(limit);
      sources[i].back() = last;
    }
    const DecodeOptions options = with_target_language(requested);
    const search::GenerationSettings settings = [&] {
      search::GenerationSettings s = search::resolve_settings(model->config(), generation_defaults, options);
      s.beam_never_pad = model->family().beam_search_never_pad;
      return s;
    }();
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
      const at::Tensor encoded = model->encode(ids, mask);
      pipeline::ModelStep step(*model, model->start_decoding(encoded, mask));
      const auto hyps = search::search(step, static_cast<int64_t>(batch.size()), settings);
      for (size_t i = start; i < end; ++i) results[order[i]] = to_result(hyps[i - start]);
    };
    const size_t workers = std::min(static_cast<size_t>(inter_threads), batches.size());
    if (workers <= 1) {
      for (const auto& [start, end] : batches) translate_batch(start, end);
    } else {
      // Each worker takes the next batch until none is left; the first error wins.
      std::atomic<size_t> next{0};
      std::mutex error_mutex;
      std::exception_ptr error;
      const int intra = std::max(1, at::get_num_threads() / static_cast<int>(workers));
      std::vector<std::thread> pool;
      for (size_t w = 0; w < workers; ++w)
        pool.emplace_back([&] {
          at::set_num_threads(intra);
          for (size_t b; (b = next++) < batches.size();) {
            try {
              translate_batch(batches[b].first, batches[b].second);
            } catch (...) {
              std::lock_guard<std::mutex> lock(error_mutex);
              if (!error) error = std::current_exception();
              next = batches.size();
            }
          }
        });
      for (std::thread& t : pool) t.join();
      if (error) std::rethrow_exception(error);
    }
    for (size_t i = 0; i < results.size(); ++i) results[i].truncated_tokens = truncated[i];
    return results;
  }
};

Translator::Translator(const std::string& model_dir, const ModelOptions& model_options)
    : impl_(std::make_unique<Impl>()) {
  if (model_options.threads > 0) at::set_num_threads(model_options.threads);
  keep_large_buffers_on_the_heap();
  if (model_options.inter_threads < 1) throw Error("invalid model option: inter_threads must be at least 1");
  impl_->threads = model_options.threads;
  impl_->inter_threads = model_options.inter_threads;
  impl_->model_dir = model_dir;
  impl_->model = models::Seq2SeqModel::load(model_dir);
  impl_->model->pack(gemm_type(model_options.compute_type));
  impl_->generation_defaults = load_generation_defaults(model_dir);
  impl_->tokenizer = load_tokenizer(model_dir, *impl_->model);
}

Translator::~Translator() = default;
Translator::Translator(Translator&&) noexcept = default;
Translator& Translator::operator=(Translator&&) noexcept = default;

std::vector<int64_t> Translator::encode(const std::string& sentence) const {
  return impl_->tokenizer->encode(sentence);
}

std::vector<int64_t> Translator::encode(const std::string& sentence, const std::string& source_lang) const {
  return impl_->tokenizer->encode(sentence, source_lang);
}

std::vector<std::string> Translator::languages() const {
  // M2M100 names its language tokens "__de__"; callers pass "de".
  std::vector<std::string> codes = impl_->tokenizer->languages();
  for (std::string& code : codes)
    if (code.size() > 4 && code.compare(0, 2, "__") == 0 && code.compare(code.size() - 2, 2, "__") == 0)
      code = code.substr(2, code.size() - 4);
  return codes;
}

std::vector<TranslationResult> Translator::translate(const std::vector<std::string>& sentences,
                                                     const DecodeOptions& options) const {
  std::vector<std::vector<int64_t>> sources;
  sources.reserve(sentences.size());
  for (size_t i = 0; i < sentences.size(); ++i) {
    text::check_utf8(sentences[i], "input " + std::to_string(i + 1));
    sources.push_back(options.source_lang ? impl_->tokenizer->encode(sentences[i], *options.source_lang)
                                          : impl_->tokenizer->encode(sentences[i]));
  }
  return impl_->run(sources, options);
}

std::vector<TranslationResult> Translator::translate_ids(const std::vector<std::vector<int64_t>>& source_ids,
                                                         const DecodeOptions& options) const {
  return impl_->run(source_ids, options);
}

std::vector<ResolvedSetting> Translator::resolved_settings(const DecodeOptions& options) const {
  std::vector<ResolvedSetting> trace;
  search::resolve_settings(impl_->model->config(), impl_->generation_defaults, impl_->with_target_language(options),
                           &trace);
  return trace;
}

const std::string& Translator::model_dir() const { return impl_->model_dir; }

}  // namespace ordo
