// Whisper's tokenizer, as transformers 4.31's WhisperTokenizer (slow) reads a model folder:
// GPT-2's byte-level BPE (vocab.json + merges.txt) plus the tokens of added_tokens.json, of
// which special_tokens_map.json / tokenizer_config.json name the special ones (<|endoftext|>,
// <|startoftranscript|>, the language tokens <|en|> ..., <|translate|>, <|transcribe|>, ...).
// The speech pipeline needs the special ids themselves (the decoder start, the forced
// language and task, the timestamps), so the concrete class is exposed here, not only the
// text::Tokenizer interface.
//   ids:        read from the files, never assumed: multilingual checkpoints have
//               <|endoftext|> 50257, English-only ones 50256, large-v3 adds <|yue|> and
//               names <|nocaptions|> <|nospeech|>. Timestamps are the ids from
//               <|notimestamps|> + 1 up, 0.02 s apart.
//   decode:     WhisperTokenizer.decode(skip_special_tokens=True): a leading <|startofprev|>
//               prompt is cut up to <|startoftranscript|>, the special ids are dropped; added
//               tokens (timestamps) are written as they are ("<|0.00|>"), the runs of BPE pieces
//               between them turned back into bytes and decoded as UTF-8 with "replace".
//               No clean_up_tokenization (Whisper's _decode does not apply it).
//   timestamps: decode_with_timestamps writes each id >= <|0.00|> as "<|t.tt|>" and decodes the
//               runs between them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "text/byte_level_bpe.h"
#include "text/hf_rules.h"
#include "text/tokenizer.h"
#include "text/vocab.h"

namespace ordo::text {

// Seconds between two timestamp ids.
constexpr double kWhisperTimePrecision = 0.02;

// The special ids of one folder. The optional ones are absent from folders without them.
struct WhisperSpecials {
  int64_t end_of_text = -1;          // <|endoftext|>: EOS, padding and unknown token
  int64_t start_of_transcript = -1;  // <|startoftranscript|>: the decoder start
  std::optional<int64_t> translate;
  std::optional<int64_t> transcribe;
  std::optional<int64_t> start_of_lm;
  std::optional<int64_t> start_of_prev;  // starts a prompt (the previous text)
  std::optional<int64_t> no_speech;      // <|nocaptions|>; <|nospeech|> in large-v3
  int64_t no_timestamps = -1;            // <|notimestamps|>
  int64_t timestamp_begin = -1;          // <|0.00|> = no_timestamps + 1
  int64_t vocab_size = 0;                // one past the largest id of vocab.json and added_tokens.json
};

class WhisperTokenizer : public Tokenizer {
 public:
  // Throws ordo::Error naming the missing or malformed file, or the special token it lacks.
  explicit WhisperTokenizer(const std::string& model_dir);

  const WhisperSpecials& specials() const { return specials_; }

  // HF tokenize() / encode(add_special_tokens=False): special and added tokens written in the
  // text are kept whole (the whitespace around them stripped, except around <|endoftext|>);
  // no start or end token is added.
  std::vector<std::string> tokenize(const std::string& text) const override;
  using Tokenizer::encode;
  std::vector<int64_t> encode(const std::string& text) const override;
  std::vector<int64_t> encode_target(const std::string& text) const override { return encode(text); }

  // get_prompt_ids(text): <|startofprev|> then the ids of " " + text.strip() (what
  // openai-whisper's initial_prompt encodes too). Throws ordo::Error naming `field` when the
  // text spells a special or timestamp token, or the folder has no <|startofprev|>.
  std::vector<int64_t> prompt_ids(const std::string& text, const std::string& field = "initial prompt") const;

  // decode(skip_special_tokens=True), and with the choice.
  std::string decode(const std::vector<int64_t>& ids) const override { return decode(ids, true); }
  std::string decode(const std::vector<int64_t>& ids, bool skip_special_tokens) const;
  // decode(decode_with_timestamps=True): timestamp ids as "<|1.08|>" (2 decimals), the runs
  // between them decoded as decode() does. skip_special_tokens=false keeps <|startoftranscript|>
  // and the like in the text, as speech.json's greedy_decoded_with_timestamps has them.
  std::string decode_with_timestamps(const std::vector<int64_t>& ids, bool skip_special_tokens = false) const;

  bool is_timestamp(int64_t id) const { return id >= specials_.timestamp_begin; }
  // Seconds of a timestamp id: (id - <|0.00|>) x 0.02.
  double timestamp_seconds(int64_t id) const {
    return static_cast<double>(id - specials_.timestamp_begin) * kWhisperTimePrecision;
  }
  bool is_special(int64_t id) const { return special_ids_.count(id) != 0; }

  // The id of a piece (vocab.json or added_tokens.json), e.g. "<|de|>", "Ġhello".
  std::optional<int64_t> token_id(const std::string& piece) const;
  // The piece of an id, special and added tokens included; "" for an id no file defines.
  const std::string& piece(int64_t id) const;

  // Language codes ("en", "de", ..., "yue"): the special tokens <|xx|> of two or three
  // letters, in id order. An English-only folder holds them too (the model ignores them).
  std::vector<std::string> languages() const override;
  // The id of a language: "de" or "<|de|>"; std::nullopt when the folder has no such token.
  std::optional<int64_t> language_id(const std::string& lang) const override;
  // "transcribe" or "translate" -> its id; std::nullopt for another name or a folder without it.
  std::optional<int64_t> task_id(const std::string& task) const;

  // convert_ids_to_tokens(skip_special_tokens=True); ids no file defines are dropped.
  std::vector<std::string> id_to_pieces(const std::vector<int64_t>& ids) const override;
  std::string source_piece(int64_t id) const override { return piece(id); }
  std::string target_piece(int64_t id) const override { return piece(id); }
  IdRange source_id_range() const override { return {specials_.vocab_size, vocab_.path()}; }
  Framing framing() const override { return {0, 0}; }

 private:
  std::string decode_run(const std::vector<std::string>& pieces) const;

  Vocab vocab_;
  ByteLevelBpe bpe_;
  std::unordered_map<std::string, int64_t> added_ids_;  // added_tokens.json
  std::unordered_map<int64_t, std::string> added_pieces_;
  SpecialTokens split_;            // tokens tokenize() keeps whole: the special and the added ones
  std::set<int64_t> special_ids_;  // what decode(skip_special_tokens=True) drops
  std::vector<std::pair<std::string, int64_t>> languages_;  // code, id; in id order
  WhisperSpecials specials_;
  int64_t unk_id_ = 0;  // what encode() gives a piece no file holds
  bool add_prefix_space_ = false;
};

// Loads `model_dir`'s tokenizer files (see WhisperTokenizer).
std::unique_ptr<WhisperTokenizer> load_whisper_tokenizer(const std::string& model_dir);

}  // namespace ordo::text
