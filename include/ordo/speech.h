// ordo — speech to text with Whisper checkpoints as downloaded (openai/whisper-*, distil-whisper).
//
//   ordo::SpeechRecognizer whisper("models/whisper-small");
//   ordo::Transcription t = whisper.transcribe(ordo::read_audio("talk.mp3"));
//   for (const ordo::Segment& s : t.segments) std::cout << s.start << " " << s.text << "\n";
//
// Audio is decoded and resampled to 16 kHz mono (any file Debian's FFmpeg reads: WAV, FLAC,
// OGG, MP3, the audio track of a video). A clip of up to 30 s is one window and decodes exactly
// as transformers' WhisperForConditionalGeneration.generate() does; longer audio is decoded
// window after window as openai-whisper's transcribe() does (seek to the last timestamp, the
// previous text as the prompt, temperature fallback), or, without timestamps, as independent
// 30 s windows decoded together in batches. A SpeechRecognizer loads the model once; its calls
// are const and may run from several threads at once.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ordo/error.h"
#include "ordo/export.h"
#include "ordo/options.h"

namespace ordo {

// ---------------------------------------------------------------- audio
// Bounds on what one input may cost. Audio is untrusted (a server's clients send it): past a
// bound, or not audio at all, read/decode throw ordo::Error naming the input and the bound.
struct AudioLimits {
  int64_t max_bytes = int64_t{1} << 30;  // the encoded file
  double max_seconds = 4 * 3600.0;       // its duration once decoded
};

constexpr int kSpeechSampleRate = 16000;

// 16 kHz mono float samples in [-1, 1] from an encoded file's bytes / from a file. `name`
// labels errors ("talk.mp3: no audio stream"). Empty audio (no samples) is an error too.
ORDO_API std::vector<float> decode_audio(const std::string& bytes, const std::string& name,
                                         const AudioLimits& limits = {});
ORDO_API std::vector<float> read_audio(const std::string& path, const AudioLimits& limits = {});

// ---------------------------------------------------------------- transcription
struct TranscribeOptions {
  std::string task = "transcribe";  // or "translate": speech in any language -> English text
  // An ISO 639-1 code the model knows ("de"), or "" / "auto": detected on the first window.
  std::string language;
  // Segment timestamps (<|t|> tokens). Off, the audio is decoded as transformers' ASR pipeline
  // with chunk_length_s=30 does: windows of 30 s every 20 s, decoded together in batches, their
  // overlaps merged; each window gives one segment, the part of the audio it owns (0-25 s, 25-45 s...).
  bool timestamps = true;
  bool word_timestamps = false;  // per-word start/end from the alignment heads' cross-attention
  // Text given to the first window as <|startofprev|> context (openai-whisper's initial_prompt).
  std::string initial_prompt;
  // Long-form: each window is prompted with the text decoded so far (openai-whisper's default).
  bool condition_on_previous_text = true;
  // Temperature fallback: a window is decoded at temperatures[0] and decoded again at the next
  // one while its output fails a threshold below (0 = greedy or beam search; > 0 = sampling).
  std::vector<float> temperatures = {0.0f};
  std::optional<float> compression_ratio_threshold;  // openai-whisper: 2.4 (zlib ratio of the text)
  std::optional<float> log_prob_threshold;           // openai-whisper: -1.0 (average token log-prob)
  std::optional<float> no_speech_threshold;          // openai-whisper: 0.6 (with log_prob_threshold)
  // Beam size, n-gram blocking, max_new_tokens, seed...: as for text (the task, source_lang,
  // target_lang, prefixes and glossary do not apply; the language is `language` above).
  DecodeOptions decode;
  BatchOptions batching;  // batch_size: windows decoded together when timestamps are off
  // Called after each window with the seconds of audio done and the total; false stops early
  // (the segments so far are returned).
  std::function<bool(double done_seconds, double total_seconds)> on_progress;
};

// openai-whisper's transcribe() defaults, which its command, OpenAI's API and faster-whisper
// share (ordo transcribe, ordo serve and ordo.Whisper start from them): temperatures 0, 0.2, ...
// 1.0, compression ratio threshold 2.4, log-prob threshold -1.0, no-speech threshold 0.6. A
// default TranscribeOptions decodes as generate() does: one temperature, no threshold.
ORDO_API TranscribeOptions openai_whisper_options();

struct Word {
  std::string word;  // as the tokens spell it, leading space included (" Hello")
  double start = 0.0, end = 0.0;
  float probability = 0.0f;
};

struct Segment {
  int64_t id = 0;
  int64_t seek = 0;               // where its window starts, in mel frames (10 ms), as openai-whisper reports it
  double start = 0.0, end = 0.0;  // seconds from the start of the audio
  std::string text;               // leading space as the model wrote it
  std::vector<int64_t> tokens;    // text and timestamp tokens of the segment
  double avg_logprob = 0.0;       // of the window it came from, as openai-whisper reports it
  double compression_ratio = 0.0;
  double no_speech_prob = 0.0;
  float temperature = 0.0f;  // the temperature its window was decoded at
  std::vector<Word> words;   // with word_timestamps
};

struct Transcription {
  std::string language;              // given or detected ("en")
  float language_probability = 1.0f;  // detection's probability among the languages (1 if given)
  double duration = 0.0;             // seconds of audio
  std::vector<Segment> segments;
  std::string text;  // the segments' texts joined
};

// One window's ids as generate() returns them: the parity interface (the start token, forced
// language/task/<|notimestamps|>, and the generated tokens, EOS included).
struct SpeechGeneration {
  // n_best sequences per input, input after input: ids[i * n_best + k] is input i's k-th best.
  std::vector<std::vector<int64_t>> ids;
  std::vector<std::vector<float>> scores;  // scores[i][k]: input i's k-th best's score
};

class ORDO_API SpeechRecognizer {
 public:
  // Loads config.json, generation_config.json, preprocessor_config.json, the weights and
  // the tokenizer from a Whisper folder. Throws ordo::Error naming the file and field at fault
  // (a folder of a text model: "not a speech model").
  explicit SpeechRecognizer(const std::string& model_dir, const ModelOptions& model_options = {});
  ~SpeechRecognizer();
  SpeechRecognizer(SpeechRecognizer&&) noexcept;
  SpeechRecognizer& operator=(SpeechRecognizer&&) noexcept;
  SpeechRecognizer(const SpeechRecognizer&) = delete;
  SpeechRecognizer& operator=(const SpeechRecognizer&) = delete;

  // 16 kHz mono samples (read_audio, decode_audio) -> segments and text.
  Transcription transcribe(const std::vector<float>& samples, const TranscribeOptions& options = {}) const;

  // Language probabilities for the first 30 s (openai-whisper's detect_language: the first
  // decoder step's softmax over the language tokens only), most likely first.
  std::vector<std::pair<std::string, float>> detect_language(const std::vector<float>& samples) const;

  // The log-mel features of up to 30 s of samples, [n_mels][3000] row-major, exactly as
  // transformers' WhisperFeatureExtractor (padded with zeros or cut to 30 s).
  std::vector<float> features(const std::vector<float>& samples) const;
  int64_t n_mels() const;

  // generate() on features (each [n_mels][3000], as features() gives) with `language`
  // ("" = detected by the model's first free step, as generate() without a language), `task`,
  // and timestamps on or off: the ids transformers 4.31 returns. For parity tests and callers
  // that run their own long-form loop.
  SpeechGeneration generate(const std::vector<std::vector<float>>& features, const std::string& language,
                            const std::string& task, bool timestamps, const DecodeOptions& decode = {}) const;

  // Text of ids, special and timestamp tokens removed (tokenizer.decode(skip_special_tokens=True)),
  // and the same with timestamps written as "<|1.08|>" (decode_with_timestamps=True).
  std::string decode(const std::vector<int64_t>& ids) const;
  std::string decode_with_timestamps(const std::vector<int64_t>& ids) const;

  std::vector<std::string> languages() const;  // codes the model knows ("en", "de", ...); English-only: {"en"}
  bool multilingual() const;
  const std::string& model_dir() const;

 private:
  struct Impl;
  const Impl& checked_impl() const;
  std::unique_ptr<Impl> impl_;
};

// Output formats of a transcription, as openai-whisper's writers and OpenAI's API give them.
enum class TranscriptFormat { kText, kJson, kVerboseJson, kSrt, kVtt, kTsv };
// "text", "json", "verbose_json", "srt", "vtt", "tsv"; throws ordo::Error naming `field`.
ORDO_API TranscriptFormat parse_transcript_format(const std::string& name, const std::string& field);
ORDO_API std::vector<std::string> transcript_format_names();
// The transcription written in `format` (json: {"text"}; verbose_json: OpenAI's, with the
// task, language, duration, segments and words).
ORDO_API std::string write_transcript(const Transcription& transcription, TranscriptFormat format,
                                      const std::string& task = "transcribe");

}  // namespace ordo
