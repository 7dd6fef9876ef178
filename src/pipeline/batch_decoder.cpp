#include "pipeline/batch_decoder.h"

#include <algorithm>
#include <atomic>
#include <functional>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "kernels/parallel.h"
#include "ordo/error.h"
#include "pipeline/batch_plan.h"
#include "pipeline/global_attention.h"
#include "pipeline/heap.h"
#include "pipeline/model_step.h"
#include "pipeline/result_building.h"
#include "pipeline/token_stream.h"

namespace ordo::pipeline {

std::vector<TranslationResult> decode_batches(const LoadedModel& m, const std::vector<std::vector<int64_t>>& sources,
                                              const search::GenerationSettings& settings,
                                              const search::Prefixes& prefixes, const DecodeOptions& options,
                                              const BatchOptions& batching) {
  const int64_t prefix_length = prefixes.empty() ? 0 : static_cast<int64_t>(prefixes[0].size());
  // The vocabulary shortlist (use_vmap): each batch's candidates, and the tokens every batch
  // may need whatever its sources (end, padding, forced tokens, prefixes, forced words).
  const VocabMap* vmap = options.use_vmap.value_or(false) ? &m.vocab_map() : nullptr;
  std::vector<int64_t> vmap_specials;
  if (vmap) {
    vmap_specials = {settings.eos_token_id, settings.pad_token_id, settings.decoder_start_token_id};
    for (const std::optional<int64_t>& id : {settings.forced_bos_token_id, settings.forced_eos_token_id})
      if (id) vmap_specials.push_back(*id);
    for (const std::vector<int64_t>& prefix : prefixes)
      vmap_specials.insert(vmap_specials.end(), prefix.begin(), prefix.end());
    for (const std::vector<int64_t>& phrase : settings.force_words_ids)
      vmap_specials.insert(vmap_specials.end(), phrase.begin(), phrase.end());
  }
  const BatchPlan plan = plan_batches(sources, batching.batch_size, batching.batch_tokens);
  const std::vector<size_t>& order = plan.order;
  const auto& batches = plan.batches;
  std::vector<TranslationResult> results(sources.size());
  const auto translate_batch = [&](size_t start, size_t end) {
    at::InferenceMode inference;
    std::vector<const std::vector<int64_t>*> batch;
    for (size_t i = start; i < end; ++i) batch.push_back(&sources[order[i]]);
    const auto [ids, mask] = pad_batch(batch, m.model->config().pad_token_id);
    if (options.cancelled && options.cancelled()) throw Error("cancelled");
    const at::Tensor encoded = m.model->encode(ids, mask, global_attention_mask(*m.model, options, mask));
    ModelStep step(*m.model, m.model->start_decoding(encoded, mask));
    if (vmap) {
      const std::vector<int64_t> candidates = vmap->candidates(batch, vmap_specials);
      const auto special = [&](int64_t id) {
        return std::find(vmap_specials.begin(), vmap_specials.end(), id) != vmap_specials.end();
      };
      if (m.warn && std::all_of(candidates.begin(), candidates.end(), special))
        m.warn("use_vmap: " + vmap->path() + " maps none of the pieces of a batch of " + std::to_string(batch.size()) +
               " inputs: their shortlist holds only special tokens, so their output is empty");
      step.restrict_output(m.model->shortlist(at::tensor(candidates)));
    }
    if (settings.return_attention) step.record_attention();
    CancellableStep stepper(step, options.cancelled);
    search::Prefixes batch_prefixes;
    if (prefix_length > 0)
      for (size_t i = start; i < end; ++i) batch_prefixes.push_back(prefixes[order[i]]);
    // Streaming (DecodeOptions::on_token): token by token for one greedy or sampled hypothesis
    // per input, else only the final event.
    std::vector<size_t> batch_inputs(order.begin() + static_cast<std::ptrdiff_t>(start),
                                     order.begin() + static_cast<std::ptrdiff_t>(end));
    TokenStreamStep streaming(stepper, *m.tokenizer, options.on_token, std::move(batch_inputs),
                              settings.num_beams == 1 && (!settings.do_sample || settings.num_return_sequences == 1));
    search::StepModel& searched = options.on_token ? static_cast<search::StepModel&>(streaming) : stepper;
    const auto hyps = search::search(searched, static_cast<int64_t>(batch.size()), settings, batch_prefixes);
    for (size_t i = start; i < end; ++i) {
      results[order[i]] = to_result(*m.tokenizer, hyps[i - start], sources[order[i]]);
      if (options.on_token) streaming.finish(i - start, results[order[i]]);
    }
    release_free_heap();
  };
  const size_t tasks = m.workers ? std::min(m.workers->size(), batches.size()) : 1;
  if (tasks <= 1) {
    for (const auto& [start, end] : batches) translate_batch(start, end);
  } else {
    // Each worker takes the next batch until none is left, on its share of this call's
    // intra-op threads; the first error wins and stops the others at their next batch.
    std::atomic<size_t> next{0};
    const int intra = std::max(1, at::get_num_threads() / static_cast<int>(tasks));
    m.workers->run(tasks, [&] {
      at::internal::lazy_init_num_threads();
      const kernels::ThreadCountScope worker_threads(intra);
      try {
        for (size_t b; (b = next++) < batches.size();) translate_batch(batches[b].first, batches[b].second);
      } catch (...) {
        next = batches.size();
        throw;
      }
    });
  }
  return results;
}

}  // namespace ordo::pipeline
