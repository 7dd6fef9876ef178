// Whisper's decoding rules for one 30 s window, set up as transformers 4.31's
// WhisperForConditionalGeneration.generate() sets them before it calls generate(): which
// tokens are forced after <|startoftranscript|> (language, task, <|notimestamps|>), a prompt
// of previous text before it, and the timestamp rules. The search then applies them through
// the ordinary logits processors (search/logits_processors.h), so greedy, beam search and
// sampling all follow them; the suppressed tokens come from the generation config through
// resolve_settings().
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "io/model_config.h"
#include "search/generation_settings.h"

namespace ordo::search {

struct WhisperWindow {
  // generate(language=...): the language token's id; unset leaves step 1 free (the model
  // picks the language: HF's (1, None)).
  std::optional<int64_t> language_id;
  // generate(task=...): <|transcribe|> or <|translate|>'s id; unset with a language set means
  // the generation config's task_to_id["transcribe"].
  std::optional<int64_t> task_id;
  // generate(return_timestamps=True): the timestamp rules, and no <|notimestamps|> forced.
  bool timestamps = false;
  // generate(prompt_ids=...): <|startofprev|> then the previous text's ids, as
  // WhisperTokenizer::prompt_ids() gives them; empty = no prompt.
  std::vector<int64_t> prompt;
  // openai-whisper's monotonic timestamps (WhisperTimestampRules::monotonic), for its
  // long-form loop; generate() has none.
  bool monotonic_timestamps = false;
};

// Sets `settings` (made by resolve_settings() from `generation`) for `window`, as 4.31 does:
//   - forced_decoder_ids: with a language or a task (or a prompt and no forced ids in the
//     config), [(1, language or free), (2, task), (3, <|notimestamps|> unless timestamps)];
//     otherwise the generation config's own forced_decoder_ids, as they are (4.31 adds no
//     <|notimestamps|> then). 4.31 prefers config.json's forced_decoder_ids to the generation
//     config's when config.json sets them: pass a `generation` whose forced_decoder_ids are
//     config.json's to get that.
//   - a prompt: its first id (<|startofprev|>) becomes the decoder start, its text (the last
//     ceil(max_length / 2) + 1 ids, max_length the generation config's, 448 if unset) then
//     <|startoftranscript|> and the tokens above are forced from length 1 on, and a
//     max_new_tokens budget grows by the text's length. Every begin index follows.
//   - timestamps: the rules of WhisperTimestampRules with begin_index from the forced ids.
// Throws ordo::Error naming the generation config's file and field it needs and lacks
// (no_timestamps_token_id for timestamps, task_to_id["transcribe"]).
void apply_whisper_rules(GenerationSettings& settings, const io::GenerationConfig& generation,
                         const WhisperWindow& window);

// The generation config's ids of a language ("de" or "<|de|>", through lang_to_id) and of a
// task ("transcribe", "translate", through task_to_id), as generate() looks them up;
// std::nullopt when the config has no such entry (an English-only model has neither table).
std::optional<int64_t> whisper_language_id(const io::GenerationConfig& generation, const std::string& language);
std::optional<int64_t> whisper_task_id(const io::GenerationConfig& generation, const std::string& task);

}  // namespace ordo::search
