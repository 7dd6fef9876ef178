// openai-whisper's transcribe() loop (transcribe.py) over audio of any length, on a model seen
// only through WindowModel: decode 30 s from `seek`, retry at the next temperature while the
// output fails the thresholds, cut the tokens into segments at consecutive timestamp pairs,
// then seek to the last timestamp (or past the window when it ends on a single timestamp), the
// text so far as the next window's <|startofprev|> prompt. Kept apart from the model so that
// the bookkeeping is tested on scripted windows.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ordo/speech.h"

namespace ordo::speech {

// One window to decode.
struct WindowRequest {
  int64_t seek = 0;             // its first frame (hop-length frames from the start of the audio)
  int64_t frames = 0;           // frames of audio in it (up to a window; the rest is silence)
  std::vector<int64_t> prompt;  // tokens for after <|startofprev|> (already cut to the last ones allowed)
  float temperature = 0.0f;     // 0: greedy or beam search; > 0: sampling
  int64_t attempt = 0;          // 0, 1, ...: the temperature fallback's retries of this window
};

// What decoding one window gave, as openai-whisper's DecodingResult.
struct WindowResult {
  std::vector<int64_t> tokens;  // generated after the forced ones, without the final EOS
  double avg_logprob = 0.0;     // sum of the generated tokens' log-probs (EOS included) / (tokens + 1)
  double no_speech_prob = 0.0;  // softmax of <|nospeech|> at the position after <|startoftranscript|>
  double compression_ratio = 0.0;
  float temperature = 0.0f;
  // With word timestamps: the time (seconds from the window's start) of each of `tokens` and
  // one more (the EOS, or the end of the window when decoding ran out of length), and each
  // token's probability.
  std::vector<double> token_times;
  std::vector<float> token_probabilities;
};

struct WindowModel {
  std::function<WindowResult(const WindowRequest&)> decode;
  std::function<std::string(const std::vector<int64_t>&)> text;  // text tokens -> text (tokenizer.decode)
};

struct LongFormSettings {
  int64_t content_frames = 0;           // frames of audio (samples / hop length)
  int64_t window_frames = 3000;         // frames in a window (30 s)
  int64_t frames_per_position = 2;      // frames per encoder position (window_frames / 1500)
  double frame_seconds = 0.01;          // hop length / sampling rate
  int64_t timestamp_begin = 0;          // <|0.00|>
  int64_t eot = 0;                      // <|endoftext|>: ids from here on are not text
  int64_t max_prompt_tokens = 223;      // max_target_positions / 2 - 1
  std::vector<int64_t> initial_prompt;  // TranscribeOptions::initial_prompt as tokens
  bool condition_on_previous_text = true;
  std::vector<float> temperatures = {0.0f};
  std::optional<float> compression_ratio_threshold, log_prob_threshold, no_speech_threshold;
  bool word_timestamps = false;
  bool split_words_on_unicode = false;  // the language has no spaces between words
  // Audio of one window: decoded once, as generate() does; text after the last timestamp
  // pair is a last segment up to the end of the audio instead of the next window's start.
  bool one_window = false;
  std::function<bool(double done_seconds, double total_seconds)> on_progress;
};

// openai-whisper's judgement of a window's output: decode it again at the next temperature
// (too repetitive, or too improbable unless it is silence), and leave it out as silence
// (<|nospeech|> likely and the text not confident).
bool needs_fallback(const WindowResult& result, const LongFormSettings& settings);
bool is_silence(const WindowResult& result, const LongFormSettings& settings);

// The segments of the whole audio, in order, numbered from 0. Segments without text (or
// of no length) are left out (openai-whisper keeps them with their text emptied).
std::vector<Segment> transcribe_windows(const WindowModel& model, const LongFormSettings& settings);

// One window's tokens as segments (times from the start of the audio, `time_offset` being the
// window's start) and the frames to seek forward by: openai-whisper's consecutive-timestamp
// rule. Segments carry tokens and text only; the caller fills in the window's statistics.
struct WindowSegments {
  std::vector<Segment> segments;
  std::vector<std::pair<size_t, size_t>> token_ranges;  // each segment's [begin, end) in the window's tokens
  int64_t advance = 0;                                  // frames to seek forward
  bool single_timestamp_ending = false;
};
WindowSegments split_window(const std::vector<int64_t>& tokens, double time_offset, int64_t frames,
                            const WindowModel& model, const LongFormSettings& settings);

}  // namespace ordo::speech
