#include "pipeline/scoring.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "kernels/parallel.h"
#include "ordo/error.h"
#include "pipeline/batch_plan.h"
#include "pipeline/global_attention.h"
#include "pipeline/source_encoding.h"

namespace ordo::pipeline {

std::vector<ScoreResult> score_targets(const LoadedModel& m, const CallSettings& call,
                                       const std::vector<std::string>& sources, const std::vector<std::string>& targets,
                                       const DecodeOptions& options, const BatchOptions& batching) {
  if (sources.size() != targets.size())
    throw Error("score: " + std::to_string(sources.size()) + " sources but " + std::to_string(targets.size()) +
                " targets (one target per source)");
  const search::GenerationSettings settings = call.settings_for(options);
  const std::string task_prefix = call.prefix_for(options);
  std::vector<std::vector<int64_t>> encoded, labels;
  std::vector<int64_t> dropped;
  for (size_t i = 0; i < sources.size(); ++i) {
    text::check_utf8(sources[i], "source " + std::to_string(i + 1));
    text::check_utf8(targets[i], "target " + std::to_string(i + 1));
    dropped.push_back(0);
    encoded.push_back(encode_source(*m.tokenizer, task_prefix + sources[i], options.source_lang,
                                    m.model->config().max_position_embeddings, dropped.back()));
    std::vector<int64_t> ids;
    if (settings.forced_bos_token_id) ids.push_back(*settings.forced_bos_token_id);
    const std::vector<int64_t> pieces = m.tokenizer->encode_target(targets[i]);
    ids.insert(ids.end(), pieces.begin(), pieces.end());
    ids.push_back(settings.eos_token_id);
    for (int64_t id : ids)
      if (id < 0 || id >= m.model->config().decoder_vocab_size)
        throw Error("target " + std::to_string(i + 1) + ": token id " + std::to_string(id) +
                    " is outside the target vocabulary");
    // Marian and Pegasus have max_position_embeddings decoder positions (fairseq's table grows).
    const int64_t positions = io::decoder_positions(m.model->config());
    if (!m.model->family().fairseq_positions && static_cast<int64_t>(ids.size()) > positions)
      throw Error("target " + std::to_string(i + 1) + ": " + std::to_string(ids.size()) +
                  " tokens, more than the model's " + std::to_string(positions) + " target positions (config.json " +
                  io::decoder_positions_key(m.model->config()) + ")");
    labels.push_back(std::move(ids));
  }
  at::internal::lazy_init_num_threads();
  const kernels::ThreadCountScope call_threads(m.threads);
  truncate_sources(encoded, dropped, m.model->config().max_position_embeddings,
                   static_cast<size_t>(m.tokenizer->framing().after));
  const BatchPlan plan = plan_batches(encoded, batching.batch_size, batching.batch_tokens);
  std::vector<ScoreResult> results(sources.size());
  for (const auto& [start, end] : plan.batches) {
    at::InferenceMode inference;
    std::vector<const std::vector<int64_t>*> batch;
    size_t longest = 0;
    for (size_t i = start; i < end; ++i) {
      batch.push_back(&encoded[plan.order[i]]);
      longest = std::max(longest, labels[plan.order[i]].size());
    }
    const auto [ids, mask] = pad_batch(batch, m.model->config().pad_token_id);
    if (options.cancelled && options.cancelled()) throw Error("cancelled");
    nn::DecoderState state =
        m.model->start_decoding(m.model->encode(ids, mask, global_attention_mask(*m.model, options, mask)), mask);
    const int64_t rows = static_cast<int64_t>(end - start);
    // Teacher forcing one position per step (the decoder's cache keeps the earlier ones):
    // position t reads label t-1 (the start token at t = 0) and scores label t.
    std::vector<int64_t> feed(static_cast<size_t>(rows), settings.decoder_start_token_id);
    for (size_t t = 0; t < longest; ++t) {
      if (options.cancelled && options.cancelled()) throw Error("cancelled");
      const at::Tensor logits = m.model->next_logits(at::tensor(feed, at::kLong).unsqueeze(1), state);
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
    for (int64_t id : r.ids) r.tokens.push_back(m.tokenizer->target_piece(id));
  }
  return results;
}

}  // namespace ordo::pipeline
