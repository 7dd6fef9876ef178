// ordo::SpeechRecognizer: a Whisper folder loaded once (pipeline::LoadedModel), then audio in,
// text out. One window is generate() exactly (the search with Whisper's logits processors,
// search/whisper_rules.h); longer audio is openai-whisper's loop (long_form.h) or, without
// timestamps, transformers' chunked pipeline (chunked.h); word times come from the alignment
// heads' cross-attention (token_timing.h).
#include "ordo/speech.h"

#include <algorithm>
#include <cmath>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "audio/log_mel.h"
#include "kernels/parallel.h"
#include "models/family.h"
#include "pipeline/call_settings.h"
#include "pipeline/guarded.h"
#include "pipeline/heap.h"
#include "pipeline/loaded_model.h"
#include "pipeline/model_step.h"
#include "search/search.h"
#include "search/whisper_rules.h"
#include "speech/chunked.h"
#include "speech/compression_ratio.h"
#include "speech/long_form.h"
#include "speech/token_timing.h"
#include "text/whisper_tokenizer.h"

namespace ordo {

using pipeline::guarded;

namespace {

// openai-whisper: a vocabulary of 51865 or more ids is a multilingual model's.
constexpr int64_t kMultilingualVocab = 51865;
// transformers' ASR pipeline: chunk_length_s / 6 of stride on each side of a window.
constexpr int64_t kStrideParts = 6;
// Teacher-forced positions per decoder pass when timing words: bounds the cross-attention
// weights held at once (layers x heads x positions x 1500 floats).
constexpr int64_t kTimingPositions = 32;

// The model's step keeping the probability of <|nospeech|> at the step that reads
// <|startoftranscript|> (every logit of that step, so the bounded path is not taken).
class WindowStep : public search::ForwardingStep {
 public:
  WindowStep(search::StepModel& step, int64_t no_speech_step, std::optional<int64_t> no_speech)
      : ForwardingStep(step), no_speech_step_(no_speech_step), no_speech_(no_speech) {}
  at::Tensor next_logits(const at::Tensor& tokens) override {
    at::Tensor logits = inner_.next_logits(tokens);
    if (calls_++ == no_speech_step_ && no_speech_)
      no_speech_probs = at::softmax(logits.to(at::kFloat), -1).select(1, *no_speech_).contiguous();
    return logits;
  }
  search::BoundedLogits next_logits_bounded(const at::Tensor& tokens) override { return {next_logits(tokens), {}, {}}; }

  at::Tensor no_speech_probs;  // [rows] of that step, when the folder has <|nospeech|>

 private:
  int64_t calls_ = 0;
  int64_t no_speech_step_;
  std::optional<int64_t> no_speech_;
};

bool blank(const std::string& text) { return text.find_first_not_of(" \t\n\r\f\v") == std::string::npos; }

std::string trimmed(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t\n\r\f\v");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\n\r\f\v") - first + 1);
}

}  // namespace

struct SpeechRecognizer::Impl : pipeline::LoadedModel {
  const pipeline::CallSettings call{*this};
  const text::WhisperTokenizer* whisper = nullptr;
  audio::MelSettings mel;
  int64_t window_frames = 0;  // mel frames of a window (3000)

  // What one window is decoded with.
  struct WindowSpec {
    std::optional<int64_t> language;  // its token; none: the model's free first step
    std::optional<int64_t> task;      // its token; none for an English-only model
    bool timestamps = false;
    bool monotonic_timestamps = false;  // openai-whisper's rule, in its long-form loop
    std::vector<int64_t> prompt;        // text tokens after <|startofprev|>
  };
  // One window's hypotheses and what openai-whisper's loop reads of the best.
  struct WindowOutput {
    std::vector<search::SearchHypothesis> hypotheses;  // ids after the decoder start, best first
    int64_t start = 0;                                 // the decoder start (<|startofprev|> before a prompt)
    int64_t forced = 0;                                // of which the leading ones forced (prompt, task...)
    int64_t beams = 1;                                 // the search's, for the scores' meaning
    double length_penalty = 1.0;
    double no_speech_prob = 0.0;
    std::vector<double> token_times;  // with words: of each id of the best (ids.size() + 1)
    std::vector<float> token_probabilities;
  };

  void load_speech(const std::string& dir, const ModelOptions& options) {
    const io::ModelConfig config = io::load_model_config(dir + "/config.json");
    if (!models::family_for(config).speech_encoder)
      throw Error(dir + ": not a speech model (" + config.path + ": model_type '" + config.model_type +
                  "'); ordo::SpeechRecognizer reads Whisper folders, ordo::Translator text models");
    load(dir, options);
    whisper = dynamic_cast<const text::WhisperTokenizer*>(tokenizer.get());
    if (!whisper) throw Error(dir + ": a speech model without Whisper's tokenizer");
    mel = audio::read_mel_settings(dir + "/preprocessor_config.json", model->config().num_mel_bins);
    window_frames = audio::mel_frames(mel);
    if (window_frames != 2 * model->config().max_position_embeddings)
      throw Error(dir + "/preprocessor_config.json: chunk_length x sampling_rate / hop_length makes windows of " +
                  std::to_string(window_frames) + " frames; the encoder (" + config.path + ": max_source_positions " +
                  std::to_string(model->config().max_position_embeddings) + ") reads twice its positions");
  }

  int64_t positions() const { return model->config().max_position_embeddings; }
  double seconds_per_position() const {
    return 2.0 * static_cast<double>(mel.hop_length) / static_cast<double>(mel.sampling_rate);
  }
  bool multilingual() const { return model->config().vocab_size >= kMultilingualVocab; }
  size_t feature_size() const { return static_cast<size_t>(mel.n_mels * window_frames); }

  std::vector<float> features(const float* samples, size_t count) const {
    return audio::log_mel(samples, std::min(count, static_cast<size_t>(mel.chunk_samples)), mel);
  }

  // [windows, positions, d_model]: each window encoded on its own (a batch of 30 s windows holds
  // their attention matrices at once), then stacked for the decoder.
  at::Tensor encode(const std::vector<const std::vector<float>*>& windows) const {
    std::vector<at::Tensor> encoded;
    for (const std::vector<float>* f : windows) {
      const at::Tensor input = at::from_blob(const_cast<float*>(f->data()), {1, mel.n_mels, window_frames}, at::kFloat);
      encoded.push_back(model->encode_features(input));
    }
    return at::cat(encoded, 0);
  }

  // ---------------------------------------------------------------- settings
  // A language as its token: "" / "auto" give none (detected, or the model's free first step).
  std::optional<int64_t> language_token(const std::string& language, const std::string& field) const {
    if (language.empty() || language == "auto") return std::nullopt;
    if (!multilingual()) {
      if (language == "en") return std::nullopt;  // English-only: no language token
      throw Error("invalid transcription option: " + field + " '" + language + "': the model in " + model_dir +
                  " is English-only");
    }
    const std::optional<int64_t> id = whisper->language_id(language);
    if (!id)
      throw Error("invalid transcription option: " + field + " '" + language + "' is not a language of " + model_dir +
                  " (known: " + whisper->language_list() + ")");
    return id;
  }
  std::optional<int64_t> task_token(const std::string& task) const {
    if (task != "transcribe" && task != "translate")
      throw Error("invalid transcription option: task '" + task + "' (transcribe or translate)");
    const std::optional<int64_t> id = whisper->task_id(task);
    if (!id && task == "translate")
      throw Error("invalid transcription option: task 'translate': the model in " + model_dir +
                  " is English-only and only transcribes");
    return multilingual() ? id : std::nullopt;
  }

  // The options of a text model's call that do not apply to speech are refused, not ignored.
  static void check_decode_options(const DecodeOptions& o) {
    const auto refuse = [](const char* name, const char* instead) {
      throw Error(std::string("invalid transcription option: ") + name + " does not apply to speech" + instead);
    };
    if (o.task) refuse("task", " (TranscribeOptions::task: transcribe or translate)");
    if (o.source_lang || o.target_lang || o.forced_bos_token_id)
      refuse("source_lang/target_lang", " (TranscribeOptions::language)");
    if (o.target_prefix) refuse("target_prefix", "");
    if (o.force_words) refuse("force_words", "");
    if (o.glossary) refuse("glossary", "");
    if (o.return_alternatives.value_or(false)) refuse("return_alternatives", "");
    if (o.use_vmap.value_or(false)) refuse("use_vmap", "");
    if (o.global_attention) refuse("global_attention", "");
    if (o.on_token) refuse("on_token", " (TranscribeOptions::on_progress reports each window)");
    if (o.return_attention) refuse("return_attention", " (TranscribeOptions::word_timestamps times the words)");
  }

  search::GenerationSettings settings_for(const WindowSpec& spec, const DecodeOptions& options) const {
    check_decode_options(options);
    search::GenerationSettings s = call.checked_settings(options);
    search::WhisperWindow window;
    window.language_id = spec.language;
    window.task_id = spec.task;
    window.timestamps = spec.timestamps;
    window.monotonic_timestamps = spec.monotonic_timestamps;
    if (!spec.prompt.empty()) {
      const std::optional<int64_t> start_of_prev = whisper->specials().start_of_prev;
      if (!start_of_prev) throw Error(model_dir + ": the tokenizer has no <|startofprev|>, so no prompt");
      window.prompt.push_back(*start_of_prev);
      window.prompt.insert(window.prompt.end(), spec.prompt.begin(), spec.prompt.end());
    }
    search::apply_whisper_rules(s, generation_defaults, window);
    // A prompt widens a max_new_tokens budget; the decoder's positions still bound the whole.
    s.max_length = std::min(s.max_length, io::decoder_positions(model->config()) + 1);
    return s;
  }

  // ---------------------------------------------------------------- decoding
  // Windows decoded together: generate() on each, with what the long-form loop needs.
  std::vector<WindowOutput> decode_windows(const std::vector<const std::vector<float>*>& windows,
                                           const WindowSpec& spec, const DecodeOptions& options,
                                           bool time_words) const {
    const search::GenerationSettings settings = settings_for(spec, options);
    if (options.cancelled && options.cancelled()) throw Error("cancelled");
    const at::Tensor encoded = encode(windows);
    pipeline::ModelStep step(*model, model->start_decoding(encoded));
    const int64_t batch = static_cast<int64_t>(windows.size());
    // The step that reads <|startoftranscript|>: the first, or the one after the prompt (the
    // rules may have cut a long prompt: where they force it is where it is read).
    int64_t sot_step = 0;
    for (const auto& entry : settings.forced_decoder_ids)
      if (entry.second == whisper->specials().start_of_transcript) sot_step = entry.first;
    pipeline::CancellableStep cancellable(step, options.cancelled);
    WindowStep stepper(cancellable, sot_step, whisper->specials().no_speech);
    const auto hyps = search::search(stepper, batch, settings);
    int64_t forced = 0;  // the forced steps are the first ones: the prompt, <|startoftranscript|>, ...
    for (const auto& entry : settings.forced_decoder_ids) forced = std::max(forced, entry.first);
    std::vector<WindowOutput> out(windows.size());
    const int64_t group = stepper.no_speech_probs.defined() ? stepper.no_speech_probs.size(0) / batch : 0;
    for (size_t i = 0; i < windows.size(); ++i) {
      out[i].hypotheses = hyps[i];
      out[i].start = settings.decoder_start_token_id;
      out[i].forced = forced;
      out[i].beams = search::search_kind(settings) == search::SearchKind::kBeam ? settings.num_beams : 1;
      out[i].length_penalty = settings.length_penalty;
      if (group > 0) out[i].no_speech_prob = stepper.no_speech_probs[static_cast<int64_t>(i) * group].item<float>();
      if (time_words && !hyps[i].empty())
        time_tokens(encoded.narrow(0, static_cast<int64_t>(i), 1), settings.decoder_start_token_id, out[i]);
    }
    pipeline::release_free_heap();
    return out;
  }

  // Word timing of the best hypothesis: the decoder run again on its tokens (teacher forcing)
  // for the alignment heads' cross-attention, as generate() saw it, and each token's
  // probability among the text tokens (openai-whisper's word probabilities).
  void time_tokens(const at::Tensor& encoded, int64_t start, WindowOutput& out) const {
    const std::vector<int64_t>& ids = out.hypotheses[0].ids;
    if (!generation_defaults.alignment_heads || generation_defaults.alignment_heads->empty())
      throw Error(model_dir + "/generation_config.json: no alignment_heads, so no word timestamps");
    std::vector<int64_t> sequence{start};
    sequence.insert(sequence.end(), ids.begin(), ids.end());
    const int64_t queries = static_cast<int64_t>(sequence.size()) - 1;
    nn::DecoderState state = model->start_decoding(encoded);
    state.record_cross_attention = true;
    const int64_t eot = whisper->specials().end_of_text;
    std::vector<at::Tensor> rows;
    out.token_probabilities.assign(ids.size(), 0.0f);
    for (int64_t from = 0; from < queries; from += kTimingPositions) {
      const int64_t n = std::min(kTimingPositions, queries - from);
      const at::Tensor feed =
          at::tensor(std::vector<int64_t>(sequence.begin() + from, sequence.begin() + from + n), at::kLong)
              .view({1, n});
      const at::Tensor logits = model->all_logits(feed, state).select(0, 0).narrow(1, 0, eot).to(at::kFloat);
      const at::Tensor probs = at::softmax(logits, -1);
      for (int64_t q = 0; q < n; ++q) {
        const int64_t next = ids[static_cast<size_t>(from + q)];
        if (next < eot) out.token_probabilities[static_cast<size_t>(from + q)] = probs[q][next].item<float>();
      }
      std::vector<at::Tensor> heads;
      for (const auto& [layer, head] : *generation_defaults.alignment_heads)
        heads.push_back(state.cross_attention.at(static_cast<size_t>(layer)).select(0, 0).select(0, head));  // [n, P]
      rows.push_back(at::stack(heads, 1).unsqueeze(2));  // [n, heads, 1, P]
    }
    std::vector<std::pair<int64_t, int64_t>> picked;
    for (size_t k = 0; k < generation_defaults.alignment_heads->size(); ++k)
      picked.emplace_back(static_cast<int64_t>(k), 0);
    const std::vector<double> times =
        speech::token_timestamps(at::cat(rows, 0), picked, model->config().median_filter_width, seconds_per_position());
    // times[j] is sequence[j]'s; ids[i] is sequence[i + 1].
    out.token_times.assign(times.begin() + 1, times.end());
  }

  // ---------------------------------------------------------------- public calls
  SpeechGeneration generate(const std::vector<std::vector<float>>& features, const std::string& language,
                            const std::string& task, bool timestamps, const DecodeOptions& options) const {
    for (size_t i = 0; i < features.size(); ++i)
      if (features[i].size() != feature_size())
        throw Error("features " + std::to_string(i + 1) + ": " + std::to_string(features[i].size()) +
                    " values; the model reads " + std::to_string(mel.n_mels) + " x " + std::to_string(window_frames) +
                    " (n_mels x frames, as features() gives)");
    WindowSpec spec;
    spec.language = language_token(language, "language");
    spec.task = task_token(task);
    spec.timestamps = timestamps;
    SpeechGeneration out;
    const size_t batch = static_cast<size_t>(std::max(1, BatchOptions{}.batch_size));
    for (size_t from = 0; from < features.size(); from += batch) {
      std::vector<const std::vector<float>*> windows;
      for (size_t i = from; i < std::min(features.size(), from + batch); ++i) windows.push_back(&features[i]);
      for (const WindowOutput& w : decode_windows(windows, spec, options, false)) {
        std::vector<float> scores;
        for (const search::SearchHypothesis& h : w.hypotheses) {
          std::vector<int64_t> ids{w.start};
          ids.insert(ids.end(), h.ids.begin(), h.ids.end());
          out.ids.push_back(std::move(ids));
          scores.push_back(static_cast<float>(h.score));
        }
        out.scores.push_back(std::move(scores));
      }
    }
    return out;
  }

  std::vector<std::pair<std::string, float>> language_probabilities(const std::vector<float>& features) const {
    if (!multilingual()) return {{"en", 1.0f}};
    const at::Tensor encoded = encode({&features});
    nn::DecoderState state = model->start_decoding(encoded);
    const at::Tensor sot = at::full({1, 1}, whisper->specials().start_of_transcript, at::kLong);
    const at::Tensor logits = model->next_logits(sot, state).select(0, 0).to(at::kFloat);
    const std::vector<std::string> codes = whisper->languages();
    std::vector<int64_t> ids;
    for (const std::string& code : codes) ids.push_back(*whisper->language_id(code));
    const at::Tensor probs = at::softmax(logits.index_select(0, at::tensor(ids, at::kLong)), -1).contiguous();
    std::vector<std::pair<std::string, float>> out;
    for (size_t i = 0; i < codes.size(); ++i) out.emplace_back(codes[i], probs.data_ptr<float>()[i]);
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    return out;
  }

  // The decoding options of a window at `temperature` (openai-whisper: sampling above 0, with
  // no top-k or top-p unless asked; beam search and n-best only at 0).
  static DecodeOptions at_temperature(const DecodeOptions& options, float temperature) {
    DecodeOptions o = options;
    o.n_best.reset();
    if (temperature > 0.0f) {
      o.sample = true;
      o.temperature = temperature;
      o.beam_size = 1;
      if (!o.top_k) o.top_k = 0;
      if (!o.top_p) o.top_p = 1.0f;
    } else {
      o.sample.reset();
      o.temperature.reset();
    }
    return o;
  }

  // openai-whisper's DecodingResult of a window's best hypothesis.
  speech::WindowResult window_result(const WindowOutput& w) const {
    speech::WindowResult r;
    const search::SearchHypothesis& best = w.hypotheses.at(0);
    const int64_t eot = whisper->specials().end_of_text;
    const size_t forced = static_cast<size_t>(std::min<int64_t>(w.forced, static_cast<int64_t>(best.ids.size())));
    r.tokens.assign(best.ids.begin() + static_cast<std::ptrdiff_t>(forced), best.ids.end());
    const bool ended = !r.tokens.empty() && r.tokens.back() == eot;
    if (ended) r.tokens.pop_back();
    // Greedy and sampling score the sum of the log-probs; beam search divides it by
    // length^length_penalty (the decoder start counted, the EOS not).
    double sum = best.score;
    if (w.beams > 1) {
      const double length = static_cast<double>(best.ids.size() + (ended ? 0 : 1));
      sum = best.score * std::pow(length, w.length_penalty);
    }
    r.avg_logprob = sum / static_cast<double>(r.tokens.size() + 1);
    r.no_speech_prob = w.no_speech_prob;
    std::vector<int64_t> text_tokens;
    for (int64_t t : r.tokens)
      if (t < eot) text_tokens.push_back(t);
    r.compression_ratio = speech::compression_ratio(trimmed(whisper->decode(text_tokens)));
    if (!w.token_times.empty()) {
      r.token_times.assign(w.token_times.begin() + static_cast<std::ptrdiff_t>(forced), w.token_times.end());
      r.token_probabilities.assign(w.token_probabilities.begin() + static_cast<std::ptrdiff_t>(forced),
                                   w.token_probabilities.end());
      r.token_times.resize(r.tokens.size() + 1, r.token_times.empty() ? 0.0 : r.token_times.back());
      r.token_probabilities.resize(r.tokens.size());
    }
    return r;
  }
  // TranscribeOptions::language as the transcription names it and its token ("" / "auto":
  // detected on the first window, by openai-whisper's detect_language).
  std::optional<int64_t> resolve_language(const std::vector<float>& samples, const std::string& language,
                                          Transcription& t) const {
    if (!language.empty() && language != "auto") {
      const std::optional<int64_t> id = language_token(language, "language");
      t.language = id ? whisper->piece(*id).substr(2, whisper->piece(*id).size() - 4) : "en";
      return id;
    }
    const auto detected = language_probabilities(features(samples.data(), samples.size()));
    t.language = detected.at(0).first;
    t.language_probability = detected.at(0).second;
    return multilingual() ? whisper->language_id(t.language) : std::nullopt;
  }

  speech::LongFormSettings long_form_settings(const std::vector<float>& samples, const TranscribeOptions& o,
                                              const std::string& language) const {
    if (o.temperatures.empty())
      throw Error("invalid transcription option: temperatures is empty (give at least one, 0 for no sampling)");
    for (float t : o.temperatures)
      if (!(t >= 0.0f) || !std::isfinite(t))
        throw Error("invalid transcription option: temperature " + std::to_string(t) + " (0 or more)");
    speech::LongFormSettings s;
    s.content_frames = static_cast<int64_t>(samples.size()) / mel.hop_length;
    s.window_frames = window_frames;
    s.frames_per_position = window_frames / positions();
    s.frame_seconds = static_cast<double>(mel.hop_length) / static_cast<double>(mel.sampling_rate);
    s.timestamp_begin = whisper->specials().timestamp_begin;
    s.eot = whisper->specials().end_of_text;
    s.max_prompt_tokens = io::decoder_positions(model->config()) / 2 - 1;
    if (!o.initial_prompt.empty()) {
      const std::vector<int64_t> prompt = whisper->prompt_ids(o.initial_prompt, "initial_prompt");
      s.initial_prompt.assign(prompt.begin() + 1, prompt.end());  // without <|startofprev|>
    }
    s.condition_on_previous_text = o.condition_on_previous_text;
    s.temperatures = o.temperatures;
    s.compression_ratio_threshold = o.compression_ratio_threshold;
    s.log_prob_threshold = o.log_prob_threshold;
    s.no_speech_threshold = o.no_speech_threshold;
    s.word_timestamps = o.word_timestamps;
    s.split_words_on_unicode = speech::splits_words_on_unicode(language);
    s.one_window = samples.size() <= static_cast<size_t>(mel.chunk_samples);
    s.on_progress = o.on_progress;
    return s;
  }

  // With timestamps (or word times): openai-whisper's loop, window after window.
  std::vector<Segment> transcribe_sequentially(const std::vector<float>& samples, const TranscribeOptions& o,
                                               const WindowSpec& spec, const speech::LongFormSettings& s) const {
    speech::WindowModel m;
    m.decode = [&](const speech::WindowRequest& r) {
      const size_t start = std::min(samples.size(), static_cast<size_t>(r.seek * mel.hop_length));
      const size_t count = s.one_window
                               ? samples.size() - start
                               : std::min(samples.size() - start, static_cast<size_t>(r.frames * mel.hop_length));
      const std::vector<float> f = features(samples.data() + start, count);
      WindowSpec window = spec;
      window.prompt = r.prompt;
      // Audio past one window follows openai-whisper's loop, which needs timestamps that never
      // go back to move forward; one window decodes exactly as generate().
      window.monotonic_timestamps = !s.one_window;
      const std::vector<WindowOutput> out =
          decode_windows({&f}, window, at_temperature(o.decode, r.temperature), o.word_timestamps);
      return window_result(out.at(0));
    };
    m.text = [this](const std::vector<int64_t>& ids) { return whisper->decode(ids); };
    return speech::transcribe_windows(m, s);
  }

  // Without timestamps: transformers' chunked pipeline, windows decoded together in batches,
  // each decoded again at the next temperature while it fails a threshold. The initial prompt
  // is every window's (the pipeline passes generate()'s prompt_ids to each chunk).
  std::vector<Segment> transcribe_in_chunks(const std::vector<float>& samples, const TranscribeOptions& o,
                                            WindowSpec spec, const speech::LongFormSettings& s,
                                            std::string& text) const {
    spec.prompt = s.initial_prompt;
    if (spec.prompt.size() > static_cast<size_t>(s.max_prompt_tokens))
      spec.prompt.erase(spec.prompt.begin(), spec.prompt.end() - s.max_prompt_tokens);
    if (o.batching.batch_size < 1) throw Error("invalid decoding option: batch size must be at least 1");
    const int64_t stride = mel.chunk_samples / kStrideParts;
    const std::vector<speech::Chunk> chunks =
        speech::plan_chunks(static_cast<int64_t>(samples.size()), mel.chunk_samples, stride, stride);
    const size_t batch = static_cast<size_t>(o.batching.batch_size);
    const double rate = static_cast<double>(mel.sampling_rate);
    std::vector<speech::WindowResult> results;
    std::vector<std::vector<int64_t>> sequences;  // generate()'s output per chunk (empty: silence)
    for (size_t from = 0; from < chunks.size(); from += batch) {
      const size_t end = std::min(chunks.size(), from + batch);
      std::vector<std::vector<float>> features_of(end - from);
      for (size_t c = from; c < end; ++c)
        features_of[c - from] = features(samples.data() + chunks[c].start, static_cast<size_t>(chunks[c].samples));
      std::vector<speech::WindowResult> done(end - from);
      std::vector<std::vector<int64_t>> ids(end - from);
      std::vector<size_t> pending(end - from);
      for (size_t k = 0; k < pending.size(); ++k) pending[k] = k;
      for (size_t attempt = 0; attempt < s.temperatures.size() && !pending.empty(); ++attempt) {
        const float temperature = s.temperatures[attempt];
        std::vector<const std::vector<float>*> windows;
        for (size_t k : pending) windows.push_back(&features_of[k]);
        const std::vector<WindowOutput> out =
            decode_windows(windows, spec, at_temperature(o.decode, temperature), false);
        std::vector<size_t> again;
        for (size_t j = 0; j < pending.size(); ++j) {
          speech::WindowResult r = window_result(out[j]);
          r.temperature = temperature;
          const size_t k = pending[j];
          done[k] = r;
          // generate()'s output from <|startoftranscript|> on: a prompt is context, not text.
          const std::vector<int64_t>& best = out[j].hypotheses.at(0).ids;
          const size_t prompt = std::min(spec.prompt.size(), best.size());  // best[prompt] is <|startoftranscript|>
          ids[k] = prompt == 0 ? std::vector<int64_t>{out[j].start} : std::vector<int64_t>{};
          ids[k].insert(ids[k].end(), best.begin() + static_cast<std::ptrdiff_t>(prompt), best.end());
          if (speech::needs_fallback(r, s) && attempt + 1 < s.temperatures.size()) again.push_back(k);
        }
        pending = std::move(again);
      }
      for (size_t k = 0; k < done.size(); ++k) {
        if (speech::is_silence(done[k], s)) ids[k].clear();
        results.push_back(std::move(done[k]));
        sequences.push_back(std::move(ids[k]));
      }
      const speech::Chunk& last = chunks[end - 1];
      if (o.on_progress && !o.on_progress(static_cast<double>(last.start + last.samples) / rate,
                                          static_cast<double>(samples.size()) / rate))
        break;
    }
    const std::vector<speech::Chunk> decoded(chunks.begin(),
                                             chunks.begin() + static_cast<std::ptrdiff_t>(sequences.size()));
    speech::MergeSettings merge;
    merge.sampling_rate = mel.sampling_rate;
    merge.time_precision = seconds_per_position();
    merge.timestamp_begin = whisper->specials().timestamp_begin;
    merge.first_special = whisper->specials().end_of_text;
    merge.is_language = [this](int64_t id) {
      const std::string& piece = whisper->piece(id);
      return piece.size() > 4 && whisper->language_id(piece).has_value();
    };
    std::vector<std::vector<int64_t>> tokens_of(sequences.size());
    for (const std::vector<speech::MergedToken>& piece : speech::merge_chunks(sequences, decoded, merge)) {
      std::vector<int64_t> ids;
      for (const speech::MergedToken& t : piece) {
        ids.push_back(t.id);
        tokens_of[t.chunk].push_back(t.id);
      }
      text += whisper->decode(ids);
    }
    std::vector<Segment> segments;
    for (size_t c = 0; c < sequences.size(); ++c) {
      Segment segment;
      segment.text = whisper->decode(tokens_of[c]);
      if (blank(segment.text)) continue;
      segment.id = static_cast<int64_t>(segments.size());
      segment.seek = decoded[c].start / mel.hop_length;
      segment.start = static_cast<double>(decoded[c].start + decoded[c].stride_left) / rate;
      segment.end = static_cast<double>(decoded[c].start + decoded[c].samples - decoded[c].stride_right) / rate;
      segment.tokens = std::move(tokens_of[c]);
      segment.avg_logprob = results[c].avg_logprob;
      segment.compression_ratio = results[c].compression_ratio;
      segment.no_speech_prob = results[c].no_speech_prob;
      segment.temperature = results[c].temperature;
      segments.push_back(std::move(segment));
    }
    return segments;
  }

  // Each public call runs on the model's intra-op threads (ModelOptions::threads, restored on
  // return), without autograd, its errors as ordo::Error.
  template <class F>
  auto run(const std::string& doing, F&& f) const -> decltype(f()) {
    return guarded(doing, [&] {
      at::internal::lazy_init_num_threads();
      const kernels::ThreadCountScope call_threads(threads);
      at::InferenceMode inference;
      return f();
    });
  }

  Transcription transcribe(const std::vector<float>& samples, const TranscribeOptions& o) const {
    if (samples.empty()) throw Error("transcribe: no samples (empty audio)");
    check_decode_options(o.decode);
    if (o.decode.sample || o.decode.temperature)
      throw Error(
          "invalid transcription option: sample/temperature: a transcription samples at the temperatures of "
          "TranscribeOptions::temperatures (0 = no sampling)");
    Transcription t;
    t.duration = static_cast<double>(samples.size()) / static_cast<double>(mel.sampling_rate);
    WindowSpec spec;
    spec.task = task_token(o.task);
    spec.timestamps = o.timestamps;
    spec.language = resolve_language(samples, o.language, t);
    const speech::LongFormSettings s = long_form_settings(samples, o, t.language);
    if (o.timestamps || o.word_timestamps) {
      t.segments = transcribe_sequentially(samples, o, spec, s);
      for (const Segment& segment : t.segments) t.text += segment.text;
    } else {
      t.segments = transcribe_in_chunks(samples, o, spec, s, t.text);
    }
    return t;
  }
};

// ---------------------------------------------------------------- SpeechRecognizer
SpeechRecognizer::SpeechRecognizer(const std::string& model_dir, const ModelOptions& model_options)
    : impl_(std::make_unique<Impl>()) {
  guarded("loading " + model_dir, [&] { impl_->load_speech(model_dir, model_options); });
}

SpeechRecognizer::~SpeechRecognizer() = default;
SpeechRecognizer::SpeechRecognizer(SpeechRecognizer&&) noexcept = default;
SpeechRecognizer& SpeechRecognizer::operator=(SpeechRecognizer&&) noexcept = default;

const SpeechRecognizer::Impl& SpeechRecognizer::checked_impl() const {
  if (!impl_)
    throw Error("this ordo::SpeechRecognizer was moved from and holds no model (use the one it was moved to)");
  return *impl_;
}

Transcription SpeechRecognizer::transcribe(const std::vector<float>& samples, const TranscribeOptions& options) const {
  const Impl& impl = checked_impl();
  return impl.run("transcribing", [&] { return impl.transcribe(samples, options); });
}

std::vector<std::pair<std::string, float>> SpeechRecognizer::detect_language(const std::vector<float>& samples) const {
  const Impl& impl = checked_impl();
  return impl.run("detecting the language", [&] {
    if (samples.empty()) throw Error("detect_language: no samples (empty audio)");
    return impl.language_probabilities(impl.features(samples.data(), samples.size()));
  });
}

std::vector<float> SpeechRecognizer::features(const std::vector<float>& samples) const {
  const Impl& impl = checked_impl();
  return guarded("computing features", [&] { return impl.features(samples.data(), samples.size()); });
}

int64_t SpeechRecognizer::n_mels() const { return checked_impl().mel.n_mels; }

SpeechGeneration SpeechRecognizer::generate(const std::vector<std::vector<float>>& features,
                                            const std::string& language, const std::string& task, bool timestamps,
                                            const DecodeOptions& decode) const {
  const Impl& impl = checked_impl();
  return impl.run("generating", [&] { return impl.generate(features, language, task, timestamps, decode); });
}

std::string SpeechRecognizer::decode(const std::vector<int64_t>& ids) const {
  const Impl& impl = checked_impl();
  return guarded("decoding", [&] {
    std::vector<int64_t> text;
    for (int64_t id : ids)
      if (!impl.whisper->is_timestamp(id)) text.push_back(id);
    return impl.whisper->decode(text);
  });
}

std::string SpeechRecognizer::decode_with_timestamps(const std::vector<int64_t>& ids) const {
  const Impl& impl = checked_impl();
  return guarded("decoding", [&] { return impl.whisper->decode_with_timestamps(ids, true); });
}

std::vector<std::string> SpeechRecognizer::languages() const {
  const Impl& impl = checked_impl();
  return impl.multilingual() ? impl.whisper->languages() : std::vector<std::string>{"en"};
}

bool SpeechRecognizer::multilingual() const { return checked_impl().multilingual(); }

const std::string& SpeechRecognizer::model_dir() const { return checked_impl().model_dir; }

TranscribeOptions openai_whisper_options() {
  TranscribeOptions options;
  options.temperatures = {0.0f, 0.2f, 0.4f, 0.6f, 0.8f, 1.0f};
  options.compression_ratio_threshold = 2.4f;
  options.log_prob_threshold = -1.0f;
  options.no_speech_threshold = 0.6f;
  return options;
}

}  // namespace ordo
