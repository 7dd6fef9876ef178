#include "pipeline/call_settings.h"

#include <algorithm>
#include <cctype>

#include "ordo/error.h"
#include "ordo/option_table.h"
#include "pipeline/force_words.h"
#include "pipeline/global_attention.h"
#include "text/tokenizer.h"

namespace ordo::pipeline {

// The target language, by name, becomes the forced first token (M2M100, NLLB).
DecodeOptions CallSettings::with_target_language(DecodeOptions options) const {
  if (!options.target_lang || options.forced_bos_token_id) return options;
  const std::optional<int64_t> id = m_.tokenizer->language_id(*options.target_lang);
  if (!id) {
    if (m_.tokenizer->languages().empty())
      throw Error("invalid decoding option: --target-lang '" + *options.target_lang + "': the model in " +
                  m_.model_dir + " is not multilingual (Marian models take a >>lang<< token in the text)");
    throw Error("invalid decoding option: unknown target language '" + *options.target_lang + "' for " + m_.model_dir +
                " (known: " + m_.tokenizer->language_list() + ")");
  }
  options.forced_bos_token_id = *id;
  return options;
}

// A one-pair model ignores source_lang in encoding; one that contradicts the pair its folder
// names is a mistake worth saying (the text would be translated as the pair's language).
void CallSettings::check_source_language(const DecodeOptions& options) const {
  if (!options.source_lang || m_.pair_source.empty() || !m_.tokenizer->languages().empty()) return;
  const auto lower = [](std::string v) {
    for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return v;
  };
  if (lower(*options.source_lang) != lower(m_.pair_source))
    throw Error("invalid decoding option: --source-lang '" + *options.source_lang + "': the model in " + m_.model_dir +
                " translates from '" + m_.pair_source +
                "' only (tokenizer_config.json source_lang; it is not multilingual)");
}

// The folder's task that `options.task` names (config.json task_specific_params); nullptr
// without one; an unknown name is an error listing the folder's tasks.
const io::TaskParams* CallSettings::task_for(const DecodeOptions& options) const {
  if (!options.task) return nullptr;
  std::string known;
  for (const io::TaskParams& task : m_.tasks) {
    if (task.name == *options.task) return &task;
    known += (known.empty() ? "" : ", ") + task.name;
  }
  throw Error(
      "invalid decoding option: unknown task '" + *options.task + "' for " + m_.model_dir + " (" +
      (known.empty() ? "its config.json has no task_specific_params" : "config.json task_specific_params: " + known) +
      ")");
}
std::string CallSettings::prefix_for(const DecodeOptions& options) const {
  const io::TaskParams* task = task_for(options);
  return task ? task->prefix : std::string();
}

search::GenerationSettings CallSettings::settings_for(const DecodeOptions& requested,
                                                      std::vector<ResolvedSetting>* trace) const {
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
      search::resolve_settings(m_.model->config(), m_.generation_defaults, options, trace, task);
  s.beam_never_pad = m_.model->family().beam_search_never_pad;
  // Marian and Pegasus have a fixed table of max_position_embeddings decoder positions, and
  // Hugging Face's generate() fails past it; the target length is capped there (the last
  // token is never fed back: length L uses positions 0 .. L-2). fairseq's table grows.
  // LED's decoder table is max_decoder_position_embeddings long.
  const int64_t cap = io::decoder_positions(m_.model->config()) + 1;
  if (!m_.model->family().fairseq_positions && s.max_length > cap) {
    s.max_length = cap;
    if (trace)
      for (ResolvedSetting& setting : *trace)
        if (setting.name == decode_option_spec(&DecodeOptions::max_length).name) {
          setting.value = std::to_string(cap);
          setting.source += ", capped at " + io::decoder_positions_key(m_.model->config()) + " + 1";
        }
  }
  return s;
}

// The decoder ids a target prefix text stands for: the forced first token of `settings`
// (a target language), then the text's target-side pieces; none for an empty text.
std::vector<int64_t> CallSettings::prefix_ids(const std::string& text, const search::GenerationSettings& settings,
                                              const std::string& where) const {
  if (text.empty()) return {};
  text::check_utf8(text, where);
  std::vector<int64_t> ids;
  if (settings.forced_bos_token_id) ids.push_back(*settings.forced_bos_token_id);
  const std::vector<int64_t> pieces = m_.tokenizer->encode_target(text);
  ids.insert(ids.end(), pieces.begin(), pieces.end());
  return ids;
}

void CallSettings::fit_prefix(search::GenerationSettings& settings, int64_t length) const {
  if (settings.max_from_new_tokens) settings.max_length += length;
  if (settings.min_new_tokens > 0) settings.min_new_tokens += length;
  const int64_t cap = io::decoder_positions(m_.model->config()) + 1;
  if (!m_.model->family().fairseq_positions) settings.max_length = std::min(settings.max_length, cap);
  if (settings.max_length <= length + 1)
    throw Error("target prefix of " + std::to_string(length) + " tokens leaves no room to generate (max_length " +
                std::to_string(settings.max_length) + ", the decoder start token included)");
}

search::GenerationSettings CallSettings::checked_settings(const DecodeOptions& options,
                                                          std::vector<ResolvedSetting>* trace) const {
  if (options.return_alternatives.value_or(false)) {
    if (options.use_vmap.value_or(false))
      throw Error("invalid decoding option: use_vmap with return_alternatives is not supported");
    if (options.force_words)
      throw Error("invalid decoding option: return_alternatives with force_words is not supported");
  }
  search::GenerationSettings settings = settings_for(options, trace);
  check_global_attention(*m_.model, options);
  if (options.force_words) {
    settings.force_words_ids =
        pipeline::force_words_ids(*m_.tokenizer, *options.force_words, m_.model->config().decoder_vocab_size);
    if (settings.num_beams <= 1 || settings.do_sample)
      throw Error(
          "invalid decoding option: force_words needs beam search (beam_size of 2 or more, no sampling), "
          "as transformers' constrained beam search does");
    if (options.target_prefix && !options.target_prefix->empty())
      throw Error("invalid decoding option: force_words with a target prefix is not supported");
  }
  if (options.use_vmap.value_or(false)) m_.vocab_map();
  if (options.target_prefix) {
    search::GenerationSettings room = settings;
    const auto length =
        prefix_ids(*options.target_prefix, settings, decode_option_spec(&DecodeOptions::target_prefix).name).size();
    if (length > 0) fit_prefix(room, static_cast<int64_t>(length));
  }
  return settings;
}

search::Prefixes CallSettings::prefixes_for(size_t inputs, const DecodeOptions& options,
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
    out.assign(inputs,
               prefix_ids(*options.target_prefix, settings, decode_option_spec(&DecodeOptions::target_prefix).name));
  } else {
    for (size_t i = 0; i < inputs; ++i)
      out.push_back(prefix_ids(texts[i], settings, "target prefix " + std::to_string(i + 1)));
  }
  return out;
}

}  // namespace ordo::pipeline
