#include "search/whisper_rules.h"

#include "ordo/error.h"

namespace ordo::search {
namespace {

std::string where(const io::GenerationConfig& g) { return g.path.empty() ? "generation_config.json" : g.path; }

// generate()'s forced tokens after the decoder start for a window without a prompt.
io::ForcedDecoderIds window_forced_ids(const io::GenerationConfig& g, const WhisperWindow& w) {
  const bool rebuild = w.language_id || w.task_id || (!g.forced_decoder_ids && !w.prompt.empty());
  if (!rebuild) return g.forced_decoder_ids.value_or(io::ForcedDecoderIds{});
  io::ForcedDecoderIds forced{{1, w.language_id}};
  if (w.task_id) {
    forced.emplace_back(2, *w.task_id);
  } else if (g.task_to_id) {
    const auto it = g.task_to_id->find("transcribe");
    if (it == g.task_to_id->end())
      throw Error(where(g) + ": field 'task_to_id' has no \"transcribe\", the default task");
    forced.emplace_back(2, it->second);
  }
  if (g.no_timestamps_token_id && !w.timestamps)
    forced.emplace_back(forced.back().first + 1, *g.no_timestamps_token_id);
  return forced;
}

}  // namespace

void apply_whisper_rules(GenerationSettings& s, const io::GenerationConfig& g, const WhisperWindow& w) {
  io::ForcedDecoderIds forced = window_forced_ids(g, w);
  if (!w.prompt.empty()) {
    // The prompt's text, cut as 4.31 cuts it: text[-max_length // 2 - 1:] in Python.
    const int64_t max_length = g.max_length.value_or(448);
    const size_t keep = static_cast<size_t>((max_length + 1) / 2 + 1);
    std::vector<int64_t> text(w.prompt.begin() + 1, w.prompt.end());
    if (text.size() > keep) text.erase(text.begin(), text.end() - static_cast<std::ptrdiff_t>(keep));
    io::ForcedDecoderIds with_prompt;
    const auto next = [&] { return static_cast<int64_t>(with_prompt.size()) + 1; };
    for (const int64_t id : text) with_prompt.emplace_back(next(), id);
    with_prompt.emplace_back(next(), s.decoder_start_token_id);
    for (const auto& [length, token] : forced) with_prompt.emplace_back(next(), token);
    forced = std::move(with_prompt);
    s.decoder_start_token_id = w.prompt.front();
    if (s.max_from_new_tokens) s.max_length += static_cast<int64_t>(text.size());
  }
  s.forced_decoder_ids = forced;
  s.timestamp_rules.reset();
  if (!w.timestamps) return;
  if (!g.no_timestamps_token_id)
    throw Error(where(g) + ": field 'no_timestamps_token_id' is missing; timestamps need it");
  WhisperTimestampRules rules;
  rules.no_timestamps_token_id = *g.no_timestamps_token_id;
  rules.timestamp_begin = rules.no_timestamps_token_id + 1;
  rules.begin_index = static_cast<int64_t>(forced.size()) + 2;
  if (!forced.empty() && forced.back().second == rules.no_timestamps_token_id) --rules.begin_index;
  rules.max_initial_timestamp_index = g.max_initial_timestamp_index;
  rules.eos_token_id = s.eos_token_id;
  rules.monotonic = w.monotonic_timestamps;
  s.timestamp_rules = rules;
}

std::optional<int64_t> whisper_language_id(const io::GenerationConfig& g, const std::string& language) {
  if (!g.lang_to_id) return std::nullopt;
  const bool token = language.size() > 4 && language.compare(0, 2, "<|") == 0;
  const auto it = g.lang_to_id->find(token ? language : "<|" + language + "|>");
  if (it == g.lang_to_id->end()) return std::nullopt;
  return it->second;
}

std::optional<int64_t> whisper_task_id(const io::GenerationConfig& g, const std::string& task) {
  if (!g.task_to_id) return std::nullopt;
  const auto it = g.task_to_id->find(task);
  if (it == g.task_to_id->end()) return std::nullopt;
  return it->second;
}

}  // namespace ordo::search
