/* ordo — the C ABI: translate and transcribe from C, or from any language that can call C
 * (Go's cgo, Rust's extern "C", C#'s DllImport, Node's ffi), without C++. A thin layer over the
 * C++ library (ordo/ordo.h) with whisper.h's habits:
 *
 *   - opaque handles made by ordo_*_new / returned by a call, each freed by its ordo_free_*;
 *   - UTF-8 strings in and out; strings read from a handle live as long as the handle;
 *   - every call that can fail takes `char** error`: on failure it returns NULL (or -1) and, when
 *     `error` is not NULL, sets *error to a message (the C++ library's, naming the file, field or
 *     option at fault) that the caller frees with ordo_free_string; on success *error = NULL;
 *   - nothing throws or aborts across the boundary: every function catches everything and turns
 *     it into that message (allocation failures included); a NULL handle is an error, not a crash.
 *
 *   struct ordo_translator_params params = ordo_translator_default_params();
 *   char* error = NULL;
 *   ordo_translator* t = ordo_translator_new("en-de", &params, &error);  // a folder or a bundled name
 *   if (!t) { fprintf(stderr, "%s\n", error); ordo_free_string(error); return 1; }
 *   ordo_options* o = ordo_options_new();
 *   ordo_options_set(o, "beam_size", "4", &error);                       // the names of `ordo --help`
 *   const char* lines[] = {"Hello world."};
 *   ordo_result* r = ordo_translate(t, lines, 1, o, NULL, &error);
 *   puts(ordo_result_text(r, 0, 0));
 *   ordo_free_result(r); ordo_free_options(o); ordo_free_translator(t);
 *
 * The C ABI is compiled into libordo.so itself (src/capi/), not into a libordo_c.so beside it:
 * one library to install, to find (-lordo, DllImport("ordo")) and to version, and nothing to keep
 * in step between two; its symbols are plain C (no C++ type crosses), so a binding never sees the
 * C++ ABI. Link with -lordo; the header is C11 and C++ alike.
 *
 * Thread safety: as the C++ Translator: ordo_translate may be called on one translator from
 * several threads at once; an ordo_options must not be changed while a call uses it. */
#ifndef ORDO_ORDO_C_H
#define ORDO_ORDO_C_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ordo/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ordo_translator ordo_translator; /* a loaded model */
typedef struct ordo_options ordo_options;       /* decoding options (unset: the model's defaults) */
typedef struct ordo_result ordo_result;         /* the results of one ordo_translate call */
typedef struct ordo_glossary ordo_glossary;     /* source terms and their fixed translations */

/* The library's version, "MAJOR.MINOR.PATCH" (static storage: do not free). */
ORDO_API const char* ordo_version(void);

/* Frees a string the library handed over (an error message). NULL is fine. */
ORDO_API void ordo_free_string(char* string);

/* ------------------------------------------------------------------ loading a model */

/* How a model is loaded and run (ordo::ModelOptions). Take ordo_translator_default_params() and
 * change what you need, so that fields added later get their defaults. */
struct ordo_translator_params {
  int threads;                  /* intra-op threads of a call; 0 = all cores */
  int inter_threads;            /* batches translated at once (1) */
  const char* compute_type;     /* "float32" (NULL = this), "bfloat16", "int8" */
  bool weight_cache;            /* packed weights cache for big models (true) */
  const char* weight_cache_dir; /* NULL or "" = $ORDO_CACHE_DIR, else ~/.cache/ordo */
};

ORDO_API struct ordo_translator_params ordo_translator_default_params(void);

/* Loads the model of `model`: a Hugging Face folder, or a bundled model's name ("en-de",
 * "de-en", "dialogsum") as `ordo --model` takes it. `params` NULL = the defaults. */
ORDO_API ordo_translator* ordo_translator_new(const char* model, const struct ordo_translator_params* params,
                                              char** error);
ORDO_API void ordo_free_translator(ordo_translator* translator);

/* The folder the model was loaded from; NULL for a NULL handle. */
ORDO_API const char* ordo_translator_model_dir(const ordo_translator* translator);
/* The language codes of a multilingual model (source_lang / target_lang values: "de" for M2M100,
 * "deu_Latn" for NLLB); 0 for a model of one language pair. Index out of range: NULL. */
ORDO_API size_t ordo_translator_language_count(const ordo_translator* translator);
ORDO_API const char* ordo_translator_language(const ordo_translator* translator, size_t index);

/* ------------------------------------------------------------------ decoding options */

ORDO_API ordo_options* ordo_options_new(void);
ORDO_API void ordo_free_options(ordo_options* options);

/* Sets the decoding option `name` from text, read through ordo's one table of decoding options
 * (ordo/option_table.h; the command line, presets and `ordo serve` read the same):
 * "beam_size" "4", "n_best" "2", "length_penalty" "0.6", "sample" "true", "target_lang" "de",
 * "max_new_tokens", "no_repeat_ngram_size", "seed", "task", "target_prefix", ...
 * Returns 0, or -1 with an error naming the option (an unknown name lists the known ones; a bad
 * value says what the option accepts). */
ORDO_API int ordo_options_set(ordo_options* options, const char* name, const char* value, char** error);
/* Clears option `name` back to the model's default. 0 or -1 as above. */
ORDO_API int ordo_options_unset(ordo_options* options, const char* name, char** error);
/* Takes a task preset's decoding defaults (below the model's generation_config.json): a file,
 * or a bundled preset's name ("translation", "summarization") as `ordo --preset` takes it. */
ORDO_API int ordo_options_set_preset(ordo_options* options, const char* name_or_path, char** error);

/* The option table itself, for bindings that list or check options: count, then by index the
 * name and the help text (static storage; NULL out of range). */
ORDO_API size_t ordo_option_count(void);
ORDO_API const char* ordo_option_name(size_t index);
ORDO_API const char* ordo_option_help(size_t index);

/* Called with each token greedy search or sampling generates (ordo::TokenEvent; beam search:
 * once per input, done = true), from the decoding threads. Return false to stop that input
 * there. The strings live until the callback returns. */
struct ordo_token_event {
  size_t input;      /* index of the input in the call */
  int64_t id;        /* the token; -1 when done */
  const char* piece; /* its piece ("▁Haus"); "" when done */
  const char* text;  /* the output text so far that later tokens cannot change */
  const char* delta; /* what `text` gained with this event */
  bool done;         /* the input's last event: `text` is its result's best text */
  float log_prob;    /* the token's log-probability as the search scored it (greedy: the
                        score is their sum); 0 for a target prefix token and when done */
};
typedef bool (*ordo_token_callback)(const struct ordo_token_event* event, void* user_data);
/* Asked before each batch and each decoding step: return true to stop the call, which then
 * fails with the error "cancelled". */
typedef bool (*ordo_cancel_callback)(void* user_data);

ORDO_API int ordo_options_set_token_callback(ordo_options* options, ordo_token_callback callback, void* user_data,
                                             char** error);
ORDO_API int ordo_options_set_cancel_callback(ordo_options* options, ordo_cancel_callback callback, void* user_data,
                                              char** error);

/* ------------------------------------------------------------------ glossaries */

/* A glossary (ordo::Glossary, `ordo translate --glossary`): "always render bicycle as Velo". In
 * each sentence holding a source term (case-insensitive, on word boundaries) the target term
 * takes the place of the model's own translation of it; the rest of that translation, and
 * sentences without a term, stay as without the glossary. */
ORDO_API ordo_glossary* ordo_glossary_new(void); /* empty; NULL only when out of memory */
/* Reads a TSV file, one "source term<TAB>target term" per line (blank lines skipped). A bad
 * line gives NULL and an error naming the file and the line ("terms.tsv:3: ..."). */
ORDO_API ordo_glossary* ordo_glossary_read_tsv(const char* path, char** error);
/* Adds a term (trimmed of spaces). An empty term or invalid UTF-8: -1 and an error, and the
 * glossary is unchanged. */
ORDO_API int ordo_glossary_add(ordo_glossary* glossary, const char* source_term, const char* target_term, char** error);
ORDO_API size_t ordo_glossary_size(const ordo_glossary* glossary); /* the terms; 0 for NULL */
ORDO_API void ordo_free_glossary(ordo_glossary* glossary);
/* The glossary of the calls made with `options`: the options keep a copy of it, so the
 * glossary may be changed or freed right after; NULL clears it. With a token callback, a
 * sentence holding a term streams only its done event (with the final text). */
ORDO_API int ordo_options_set_glossary(ordo_options* options, const ordo_glossary* glossary, char** error);

/* ------------------------------------------------------------------ translating */

/* How inputs are cut into batches (ordo::BatchOptions; never changes the results). */
struct ordo_batch_params {
  int batch_size;   /* sentences per batch (32) */
  int batch_tokens; /* > 0: at most this many source tokens per batch (0) */
};
ORDO_API struct ordo_batch_params ordo_batch_default_params(void);

/* Translates `count` UTF-8 sentences (one result each, in order). `options` NULL = the model's
 * defaults; `batch` NULL = the defaults. A sentence with no text gets one empty hypothesis.
 * Returns the results (free with ordo_free_result), or NULL and an error. */
ORDO_API ordo_result* ordo_translate(const ordo_translator* translator, const char* const* sentences, size_t count,
                                     const ordo_options* options, const struct ordo_batch_params* batch, char** error);

/* Files (ordo/files.h): a .docx, .pptx, .xlsx, .odt, .odp, .ods, .epub, .html, .txt, .srt, .vtt,
 * .po/.pot, .xliff or .json translated whole and written back with its layout kept. `format`:
 * a format name ("docx") or NULL for the extension of `input_path`. The output is written beside
 * `output_path` and renamed over it once whole (it may name the input). Returns 0, or -1 and an
 * error naming the file and the fault (a file past a limit, not of its format, ...). */
ORDO_API int ordo_translate_file(const ordo_translator* translator, const char* input_path, const char* output_path,
                                 const char* format, const ordo_options* options, const struct ordo_batch_params* batch,
                                 char** error);
/* The same in memory: `size` bytes of a `format` file in, a malloc'ed copy of the translated
 * file in *output (free with ordo_free_string) and its size in *output_size. */
ORDO_API int ordo_translate_file_data(const ordo_translator* translator, const char* data, size_t size,
                                      const char* format, const ordo_options* options,
                                      const struct ordo_batch_params* batch, char** output, size_t* output_size,
                                      char** error);

/* Reading a result. Inputs and hypotheses (n_best of them, best first) by index; an index out
 * of range or a NULL handle gives 0 (counts), NULL (strings), 0.0 (scores) or -1 (ids). */
ORDO_API size_t ordo_result_count(const ordo_result* result);
ORDO_API size_t ordo_result_hypothesis_count(const ordo_result* result, size_t input);
ORDO_API const char* ordo_result_text(const ordo_result* result, size_t input, size_t hypothesis);
/* greedy: the sum of log-probabilities; beam search: Hugging Face's length-normalized score */
ORDO_API float ordo_result_score(const ordo_result* result, size_t input, size_t hypothesis);
/* The target pieces (special tokens left out) and the generated ids (with the final </s>). */
ORDO_API size_t ordo_result_token_count(const ordo_result* result, size_t input, size_t hypothesis);
ORDO_API const char* ordo_result_token(const ordo_result* result, size_t input, size_t hypothesis, size_t index);
ORDO_API size_t ordo_result_id_count(const ordo_result* result, size_t input, size_t hypothesis);
ORDO_API int64_t ordo_result_id(const ordo_result* result, size_t input, size_t hypothesis, size_t index);
ORDO_API void ordo_free_result(ordo_result* result);

/* ------------------------------------------------------------------ speech to text */

/* A Whisper model (ordo::SpeechRecognizer): speech in any language to its text, or to English
 * text (task "translate"). Loaded once; calls may run from several threads at once.
 *
 *   ordo_speech_recognizer* w = ordo_speech_recognizer_new("models/whisper-small", NULL, &error);
 *   struct ordo_transcribe_params p = ordo_transcribe_default_params();
 *   p.language = "de";
 *   char* srt = NULL;
 *   if (ordo_transcribe_file(w, "talk.mp3", &p, NULL, "srt", &srt, &error) == 0) fputs(srt, stdout);
 *   ordo_free_string(srt); ordo_free_speech_recognizer(w); */
typedef struct ordo_speech_recognizer ordo_speech_recognizer;

/* Loads a Whisper folder as downloaded (openai/whisper-small, distil-whisper/distil-large-v3,
 * ...); `params` as for a translator (NULL = the defaults). A folder of a text model: NULL and
 * "not a speech model". */
ORDO_API ordo_speech_recognizer* ordo_speech_recognizer_new(const char* model_dir,
                                                            const struct ordo_translator_params* params, char** error);
ORDO_API void ordo_free_speech_recognizer(ordo_speech_recognizer* recognizer);

/* How speech is transcribed (ordo::TranscribeOptions). Take ordo_transcribe_default_params()
 * and change what you need: its defaults decode as transformers' generate() does (one
 * temperature, no thresholds); openai-whisper's are temperatures 0, 0.2, ... 1.0 with the
 * thresholds 2.4, -1.0 and 0.6. A threshold that is NaN (the default) is off. */
struct ordo_transcribe_params {
  const char* task;                  /* "transcribe" (NULL = this) or "translate" (into English) */
  const char* language;              /* a code the model knows ("de"); NULL, "" or "auto" = detected */
  bool timestamps;                   /* segment timestamps (true); false: one segment per 30 s window */
  bool word_timestamps;              /* per-word times (false) */
  const char* initial_prompt;        /* context for the first window; NULL = none */
  bool condition_on_previous_text;   /* each window prompted with the text so far (true) */
  const float* temperatures;         /* decoded at temperatures[0], then the next while a threshold */
  size_t temperature_count;          /* fails; NULL or 0 = {0} (0: beam search or greedy) */
  float compression_ratio_threshold; /* NaN = off; openai-whisper: 2.4 */
  float log_prob_threshold;          /* NaN = off; openai-whisper: -1.0 */
  float no_speech_threshold;         /* NaN = off; openai-whisper: 0.6 */
  int batch_size;                    /* windows decoded together without timestamps; 0 = the default */
};
ORDO_API struct ordo_transcribe_params ordo_transcribe_default_params(void);

/* Transcribes an audio file (any file FFmpeg reads: WAV, FLAC, OGG, MP3, the audio of a video)
 * and writes the transcript in `format`: "text" (NULL = this), "json", "verbose_json", "srt",
 * "vtt" or "tsv" (ordo::write_transcript). `params` NULL = the defaults; `options` the decoding
 * options (beam_size, max_new_tokens, seed, ...; NULL = the model's). On success returns 0 and
 * sets *output to a malloc'ed string (free with ordo_free_string); on failure -1 and an error
 * naming the file ("talk.mp3: no audio stream"). */
ORDO_API int ordo_transcribe_file(const ordo_speech_recognizer* recognizer, const char* path,
                                  const struct ordo_transcribe_params* params, const ordo_options* options,
                                  const char* format, char** output, char** error);
/* The same for `count` 16 kHz mono samples in [-1, 1]. */
ORDO_API int ordo_transcribe_samples(const ordo_speech_recognizer* recognizer, const float* samples, size_t count,
                                     const struct ordo_transcribe_params* params, const ordo_options* options,
                                     const char* format, char** output, char** error);

#ifdef __cplusplus
}
#endif

#endif /* ORDO_ORDO_C_H */
