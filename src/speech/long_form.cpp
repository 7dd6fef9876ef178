// openai-whisper's transcribe() (long_form.h), without its later additions (clip_timestamps,
// carry_initial_prompt, hallucination_silence_threshold) and without its word-timing
// heuristics that move segment bounds: segments keep the times of their timestamp tokens.
#include "speech/long_form.h"

#include <algorithm>
#include <cmath>

#include "ordo/error.h"
#include "speech/token_timing.h"

namespace ordo::speech {
namespace {

bool blank(const std::string& text) { return text.find_first_not_of(" \t\n\r\f\v") == std::string::npos; }

double round2(double seconds) { return std::round(seconds * 100.0) / 100.0; }

// decode_with_fallback: the window at each temperature in turn until its output passes.
WindowResult decode_with_fallback(const WindowModel& model, const LongFormSettings& s, WindowRequest request) {
  if (s.temperatures.empty()) throw Error("invalid transcription option: temperatures is empty (give at least 0)");
  WindowResult result;
  for (size_t i = 0; i < s.temperatures.size(); ++i) {
    request.temperature = s.temperatures[i];
    request.attempt = static_cast<int64_t>(i);
    result = model.decode(request);
    result.temperature = request.temperature;
    const bool fails = needs_fallback(result, s);
    if (!fails) break;
  }
  return result;
}

// Each segment's words: its text tokens grouped (token_timing.h), timed by the window's token
// times, their probability the mean of their tokens'.
void add_words(Segment& segment, const std::vector<int64_t>& tokens, std::pair<size_t, size_t> range,
               const WindowResult& result, double time_offset, const WindowModel& model, const LongFormSettings& s) {
  std::vector<size_t> positions;
  std::vector<int64_t> text_tokens;
  for (size_t p = range.first; p < range.second; ++p)
    if (tokens[p] < s.eot) {
      positions.push_back(p);
      text_tokens.push_back(tokens[p]);
    }
  if (text_tokens.empty() || result.token_times.size() < tokens.size() + 1) return;
  for (const WordTokens& w : group_words(text_tokens, model.text, s.eot, s.split_words_on_unicode)) {
    Word word;
    word.word = w.word;
    const size_t first = positions[w.indices.front()], last = positions[w.indices.back()];
    word.start = round2(time_offset + result.token_times[first]);
    word.end = round2(time_offset + result.token_times[last + 1]);
    double probability = 0;
    for (size_t i : w.indices)
      probability += positions[i] < result.token_probabilities.size() ? result.token_probabilities[positions[i]] : 0.0f;
    word.probability = static_cast<float>(probability / static_cast<double>(w.indices.size()));
    segment.words.push_back(std::move(word));
  }
}

}  // namespace

bool needs_fallback(const WindowResult& result, const LongFormSettings& s) {
  bool fails = false;
  if (s.compression_ratio_threshold && result.compression_ratio > *s.compression_ratio_threshold)
    fails = true;                                                                        // too repetitive
  if (s.log_prob_threshold && result.avg_logprob < *s.log_prob_threshold) fails = true;  // too improbable
  if (s.no_speech_threshold && result.no_speech_prob > *s.no_speech_threshold && s.log_prob_threshold &&
      result.avg_logprob < *s.log_prob_threshold)
    fails = false;  // silence: no temperature will make it speech
  return fails;
}

bool is_silence(const WindowResult& result, const LongFormSettings& s) {
  if (!s.no_speech_threshold || result.no_speech_prob <= *s.no_speech_threshold) return false;
  return !(s.log_prob_threshold && result.avg_logprob > *s.log_prob_threshold);
}

WindowSegments split_window(const std::vector<int64_t>& tokens, double time_offset, int64_t frames,
                            const WindowModel& model, const LongFormSettings& s) {
  const double precision = static_cast<double>(s.frames_per_position) * s.frame_seconds;  // 0.02 s
  const double duration = static_cast<double>(frames) * s.frame_seconds;
  const size_t n = tokens.size();
  const auto is_time = [&](size_t i) { return tokens[i] >= s.timestamp_begin; };
  const auto time_of = [&](size_t i) { return static_cast<double>(tokens[i] - s.timestamp_begin) * precision; };
  WindowSegments out;
  const auto add = [&](double start, double end, size_t begin, size_t stop) {
    Segment segment;
    segment.start = start;
    segment.end = end;
    segment.tokens.assign(tokens.begin() + static_cast<std::ptrdiff_t>(begin),
                          tokens.begin() + static_cast<std::ptrdiff_t>(stop));
    std::vector<int64_t> text_tokens;
    for (int64_t t : segment.tokens)
      if (t < s.eot) text_tokens.push_back(t);
    segment.text = model.text(text_tokens);
    out.segments.push_back(std::move(segment));
    out.token_ranges.emplace_back(begin, stop);
  };
  out.single_timestamp_ending = n >= 2 && !is_time(n - 2) && is_time(n - 1);
  std::vector<size_t> slices;  // after each consecutive timestamp pair
  for (size_t i = 0; i + 1 < n; ++i)
    if (is_time(i) && is_time(i + 1)) slices.push_back(i + 1);
  if (!slices.empty()) {
    if (out.single_timestamp_ending) slices.push_back(n);
    size_t last = 0;
    double previous_end = 0.0;
    for (size_t slice : slices) {
      // A slice starts with a timestamp when the timestamp rules held (its first is forced).
      const double start = is_time(last) ? time_of(last) : previous_end;
      const double end = is_time(slice - 1) ? time_of(slice - 1) : start;
      add(time_offset + start, time_offset + end, last, slice);
      previous_end = end;
      last = slice;
    }
    if (out.single_timestamp_ending) {
      out.advance = frames;  // no speech after the last timestamp
    } else {
      out.advance = (tokens[last - 1] - s.timestamp_begin) * s.frames_per_position;
      // One window only: the text after the last pair is kept, up to the end of the audio.
      if (s.one_window && last < n)
        add(time_offset + (is_time(last) ? time_of(last) : previous_end), time_offset + duration, last, n);
    }
    // A window whose last pair is at <|0.00|> would be decoded again from the same place
    // (transformers' timestamp rules, unlike openai-whisper's, allow a pair of equal times).
    if (out.advance <= 0) out.advance = frames;
  } else {
    double end = duration;
    for (size_t i = n; i-- > 0;)
      if (is_time(i)) {
        if (tokens[i] != s.timestamp_begin) end = time_of(i);  // a timestamp but no pair: the last one
        break;
      }
    add(time_offset, time_offset + end, 0, n);
    out.advance = frames;
  }
  return out;
}

std::vector<Segment> transcribe_windows(const WindowModel& model, const LongFormSettings& s) {
  if (s.window_frames <= 0 || s.frames_per_position <= 0)
    throw Error("transcription: a window must hold frames (window_frames, frames_per_position)");
  std::vector<Segment> segments;
  std::vector<int64_t> all_tokens = s.initial_prompt;
  size_t prompt_reset_since = 0;
  const double total = static_cast<double>(s.content_frames) * s.frame_seconds;
  int64_t seek = 0;
  while (seek < s.content_frames || (s.one_window && seek == 0)) {
    const double time_offset = static_cast<double>(seek) * s.frame_seconds;
    const int64_t frames = std::min(s.window_frames, s.content_frames - seek);
    WindowRequest request;
    request.seek = seek;
    request.frames = frames;
    const size_t from =
        std::max(prompt_reset_since,
                 all_tokens.size() - std::min<size_t>(all_tokens.size(), static_cast<size_t>(s.max_prompt_tokens)));
    request.prompt.assign(all_tokens.begin() + static_cast<std::ptrdiff_t>(from), all_tokens.end());
    const WindowResult result = decode_with_fallback(model, s, request);

    const bool skip = is_silence(result, s);  // no voice activity
    if (skip) {
      seek += std::max<int64_t>(frames, 1);
    } else {
      WindowSegments window = split_window(result.tokens, time_offset, frames, model, s);
      for (size_t i = 0; i < window.segments.size(); ++i) {
        Segment& segment = window.segments[i];
        segment.avg_logprob = result.avg_logprob;
        segment.compression_ratio = result.compression_ratio;
        segment.no_speech_prob = result.no_speech_prob;
        segment.temperature = result.temperature;
        segment.seek = seek;
        if (segment.start == segment.end || blank(segment.text)) continue;  // openai-whisper empties these
        if (s.word_timestamps) add_words(segment, result.tokens, window.token_ranges[i], result, time_offset, model, s);
        all_tokens.insert(all_tokens.end(), segment.tokens.begin(), segment.tokens.end());
        segment.id = static_cast<int64_t>(segments.size());
        segments.push_back(std::move(segment));
      }
      seek += std::max<int64_t>(window.advance, 1);
      // No prompt after a high temperature: its text is likely off.
      if (!s.condition_on_previous_text || result.temperature > 0.5f) prompt_reset_since = all_tokens.size();
    }
    if (s.one_window) break;
    if (s.on_progress && !s.on_progress(static_cast<double>(std::min(seek, s.content_frames)) * s.frame_seconds, total))
      break;
  }
  if (s.one_window && s.on_progress) s.on_progress(total, total);
  return segments;
}

}  // namespace ordo::speech
