// The C ABI (include/ordo/ordo_c.h) over the public C++ library, nothing else: each function
// catches every exception at the boundary and hands its message over as a malloc'ed string.
// Decoding options are set by name through the one table of decoding options
// (ordo/option_table.h); this file holds no list of option names of its own.
#include "ordo/ordo_c.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "ordo/option_table.h"
#include "ordo/ordo.h"

struct ordo_translator {
  ordo::Translator translator;
  std::vector<std::string> languages;
};

struct ordo_options {
  ordo::DecodeOptions decode;
};

struct ordo_result {
  std::vector<ordo::TranslationResult> results;
};

struct ordo_glossary {
  ordo::Glossary glossary;
};

struct ordo_speech_recognizer {
  ordo::SpeechRecognizer recognizer;
};

namespace {

char* copy_string(const std::string& text) noexcept {
  char* out = static_cast<char*>(std::malloc(text.size() + 1));
  if (out) std::memcpy(out, text.c_str(), text.size() + 1);
  return out;
}

void set_error(char** error, const std::string& message) noexcept {
  if (error) *error = copy_string(message);
}

// Runs `body`; an exception becomes *error and `failed` is returned.
template <class T, class Body>
T guarded(char** error, T failed, Body&& body) noexcept {
  if (error) *error = nullptr;
  try {
    return body();
  } catch (const std::bad_alloc&) {
    set_error(error, "out of memory");
  } catch (const std::exception& e) {
    set_error(error, e.what());
  } catch (...) {
    set_error(error, "unknown error");
  }
  return failed;
}

void require(const void* handle, const char* what) {
  if (!handle) throw ordo::Error(std::string(what) + " is NULL");
}

std::string text_or_empty(const char* text) { return text ? text : ""; }

// Sets option `name` of `options` from `value` through `table`'s entry; an error names the
// option and what it accepts.
template <class Options, class Spec>
void set_option(const std::vector<Spec>& table, Options& options, const std::string& name,
                const ordo::OptionValue& value) {
  for (const Spec& spec : table)
    if (name == spec.name) return spec.set(options, value);
  throw ordo::Error("internal error: no option named '" + name + "'");
}

const ordo::Hypothesis* hypothesis(const ordo_result* r, size_t input, size_t k) noexcept {
  if (!r || input >= r->results.size()) return nullptr;
  const auto& hyps = r->results[input].hypotheses;
  return k < hyps.size() ? &hyps[k] : nullptr;
}

}  // namespace

extern "C" {

const char* ordo_version(void) { return ordo::version(); }

void ordo_free_string(char* string) { std::free(string); }

ordo_translator_params ordo_translator_default_params(void) {
  const ordo::ModelOptions defaults;
  return {defaults.threads, defaults.inter_threads, nullptr, defaults.weight_cache, nullptr};
}

namespace {

// How a model is loaded (translators and speech recognizers alike); NULL = the defaults.
ordo::ModelOptions model_options(const ordo_translator_params* params) {
  const ordo_translator_params p = params ? *params : ordo_translator_default_params();
  ordo::ModelOptions options;
  const auto& table = ordo::model_option_specs();
  set_option(table, options, "threads", p.threads);
  set_option(table, options, "inter_threads", p.inter_threads);
  if (p.compute_type && *p.compute_type) set_option(table, options, "compute_type", p.compute_type);
  set_option(table, options, "weight_cache", static_cast<bool>(p.weight_cache));
  options.weight_cache_dir = text_or_empty(p.weight_cache_dir);
  return options;
}

}  // namespace

ordo_translator* ordo_translator_new(const char* model, const ordo_translator_params* params, char** error) {
  return guarded<ordo_translator*>(error, nullptr, [&] {
    if (!model || !*model)
      throw ordo::Error("no model given (a Hugging Face model folder or a bundled name such as en-de)");
    const ordo::ModelOptions options = model_options(params);
    auto* t = new ordo_translator{ordo::Translator(ordo::resolve_model_dir(model), options), {}};
    try {
      t->languages = t->translator.languages();
    } catch (...) {
      delete t;
      throw;
    }
    return t;
  });
}

void ordo_free_translator(ordo_translator* translator) { delete translator; }

const char* ordo_translator_model_dir(const ordo_translator* t) {
  return t ? t->translator.model_dir().c_str() : nullptr;
}

size_t ordo_translator_language_count(const ordo_translator* t) { return t ? t->languages.size() : 0; }

const char* ordo_translator_language(const ordo_translator* t, size_t index) {
  return t && index < t->languages.size() ? t->languages[index].c_str() : nullptr;
}

ordo_options* ordo_options_new(void) {
  return guarded<ordo_options*>(nullptr, nullptr, [] { return new ordo_options(); });
}

void ordo_free_options(ordo_options* options) { delete options; }

int ordo_options_set(ordo_options* options, const char* name, const char* value, char** error) {
  return guarded<int>(error, -1, [&] {
    require(options, "options");
    require(name, "option name");
    const ordo::DecodeOptionSpec& spec = ordo::decode_option_spec(name);
    if (!value) throw ordo::Error("decoding option '" + std::string(name) + "': the value is NULL");
    try {
      spec.set_text(options->decode, value);
    } catch (const ordo::OptionError& e) {
      throw ordo::Error("decoding option '" + e.option + "': '" + value + "' " + e.must);
    }
    return 0;
  });
}

int ordo_options_unset(ordo_options* options, const char* name, char** error) {
  return guarded<int>(error, -1, [&] {
    require(options, "options");
    require(name, "option name");
    ordo::decode_option_spec(name).clear(options->decode);
    return 0;
  });
}

int ordo_options_set_preset(ordo_options* options, const char* name_or_path, char** error) {
  return guarded<int>(error, -1, [&] {
    require(options, "options");
    require(name_or_path, "preset");
    options->decode.preset =
        std::make_shared<const ordo::DecodeOptions>(ordo::load_preset(ordo::preset_file(name_or_path)));
    return 0;
  });
}

size_t ordo_option_count(void) {
  return guarded<size_t>(nullptr, 0, [] { return ordo::decode_option_specs().size(); });
}

const char* ordo_option_name(size_t index) {
  return guarded<const char*>(nullptr, nullptr, [&]() -> const char* {
    const auto& specs = ordo::decode_option_specs();
    return index < specs.size() ? specs[index].name : nullptr;
  });
}

const char* ordo_option_help(size_t index) {
  return guarded<const char*>(nullptr, nullptr, [&]() -> const char* {
    const auto& specs = ordo::decode_option_specs();
    return index < specs.size() ? specs[index].help : nullptr;
  });
}

int ordo_options_set_token_callback(ordo_options* options, ordo_token_callback callback, void* user_data,
                                    char** error) {
  return guarded<int>(error, -1, [&] {
    require(options, "options");
    if (!callback) {
      options->decode.on_token = nullptr;
      return 0;
    }
    options->decode.on_token = [callback, user_data](const ordo::TokenEvent& e) {
      const ordo_token_event event{e.input, e.id, e.piece.c_str(), e.text.c_str(), e.delta.c_str(), e.done, e.log_prob};
      return callback(&event, user_data);
    };
    return 0;
  });
}

int ordo_options_set_cancel_callback(ordo_options* options, ordo_cancel_callback callback, void* user_data,
                                     char** error) {
  return guarded<int>(error, -1, [&] {
    require(options, "options");
    if (!callback)
      options->decode.cancelled = nullptr;
    else
      options->decode.cancelled = [callback, user_data] { return callback(user_data); };
    return 0;
  });
}

ordo_glossary* ordo_glossary_new(void) {
  return guarded<ordo_glossary*>(nullptr, nullptr, [] { return new ordo_glossary(); });
}

ordo_glossary* ordo_glossary_read_tsv(const char* path, char** error) {
  return guarded<ordo_glossary*>(error, nullptr, [&] {
    require(path, "glossary path");
    return new ordo_glossary{ordo::Glossary::read_tsv(path)};
  });
}

int ordo_glossary_add(ordo_glossary* glossary, const char* source_term, const char* target_term, char** error) {
  return guarded<int>(error, -1, [&] {
    require(glossary, "glossary");
    require(source_term, "source term");
    require(target_term, "target term");
    glossary->glossary.add(source_term, target_term);
    return 0;
  });
}

size_t ordo_glossary_size(const ordo_glossary* glossary) { return glossary ? glossary->glossary.size() : 0; }

void ordo_free_glossary(ordo_glossary* glossary) { delete glossary; }

int ordo_options_set_glossary(ordo_options* options, const ordo_glossary* glossary, char** error) {
  return guarded<int>(error, -1, [&] {
    require(options, "options");
    // A copy: the caller's glossary may be changed or freed while the options are in use.
    options->decode.glossary = glossary ? std::make_shared<const ordo::Glossary>(glossary->glossary) : nullptr;
    return 0;
  });
}

ordo_batch_params ordo_batch_default_params(void) {
  const ordo::BatchOptions defaults;
  return {defaults.batch_size, defaults.batch_tokens};
}

namespace {

ordo::BatchOptions batch_options(const ordo_batch_params* batch) {
  ordo::BatchOptions batching;
  if (batch) {
    set_option(ordo::batch_option_specs(), batching, "batch_size", batch->batch_size);
    set_option(ordo::batch_option_specs(), batching, "batch_tokens", batch->batch_tokens);
  }
  return batching;
}

std::string translated_file(const ordo_translator* translator, const std::string& bytes, ordo::FileFormat format,
                            const ordo_options* options, const ordo_batch_params* batch) {
  static const ordo::DecodeOptions defaults;
  return ordo::translate_file(translator->translator, bytes, format, options ? options->decode : defaults, {},
                              batch_options(batch));
}

}  // namespace

ordo_result* ordo_translate(const ordo_translator* translator, const char* const* sentences, size_t count,
                            const ordo_options* options, const ordo_batch_params* batch, char** error) {
  return guarded<ordo_result*>(error, nullptr, [&] {
    require(translator, "translator");
    if (count > 0) require(sentences, "sentences");
    std::vector<std::string> inputs;
    inputs.reserve(count);
    for (size_t i = 0; i < count; ++i) {
      if (!sentences[i]) throw ordo::Error("sentence " + std::to_string(i) + " is NULL");
      inputs.emplace_back(sentences[i]);
    }
    const ordo::BatchOptions batching = batch_options(batch);
    static const ordo::DecodeOptions defaults;
    auto* result = new ordo_result();
    try {
      result->results = translator->translator.translate(inputs, options ? options->decode : defaults, batching);
    } catch (...) {
      delete result;
      throw;
    }
    return result;
  });
}

int ordo_translate_file(const ordo_translator* translator, const char* input_path, const char* output_path,
                        const char* format, const ordo_options* options, const ordo_batch_params* batch, char** error) {
  return guarded<int>(error, -1, [&] {
    require(translator, "translator");
    require(input_path, "input path");
    require(output_path, "output path");
    std::optional<ordo::FileFormat> file_format =
        format ? std::optional(ordo::parse_file_format(format, "format")) : ordo::file_format_of(input_path);
    if (!file_format)
      throw ordo::Error(std::string(input_path) + ": no file format has its extension; name the format");
    const std::string bytes = ordo::read_file_bytes(input_path);
    std::string translated;
    try {
      translated = translated_file(translator, bytes, *file_format, options, batch);
    } catch (const ordo::Error& e) {
      throw ordo::Error(std::string(input_path) + ": " + e.what());
    }
    ordo::write_file_whole(output_path, translated);
    return 0;
  });
}

int ordo_translate_file_data(const ordo_translator* translator, const char* data, size_t size, const char* format,
                             const ordo_options* options, const ordo_batch_params* batch, char** output,
                             size_t* output_size, char** error) {
  if (output) *output = nullptr;
  if (output_size) *output_size = 0;
  return guarded<int>(error, -1, [&] {
    require(translator, "translator");
    if (size > 0) require(data, "data");
    require(format, "format");
    require(output, "output");
    require(output_size, "output size");
    const std::string translated = translated_file(translator, std::string(data ? data : "", size),
                                                   ordo::parse_file_format(format, "format"), options, batch);
    char* copy = static_cast<char*>(std::malloc(translated.size() + 1));
    if (!copy) throw std::bad_alloc();
    std::memcpy(copy, translated.data(), translated.size());
    copy[translated.size()] = '\0';
    *output = copy;
    *output_size = translated.size();
    return 0;
  });
}

size_t ordo_result_count(const ordo_result* r) { return r ? r->results.size() : 0; }

size_t ordo_result_hypothesis_count(const ordo_result* r, size_t input) {
  return r && input < r->results.size() ? r->results[input].hypotheses.size() : 0;
}

const char* ordo_result_text(const ordo_result* r, size_t input, size_t k) {
  const ordo::Hypothesis* h = hypothesis(r, input, k);
  return h ? h->text.c_str() : nullptr;
}

float ordo_result_score(const ordo_result* r, size_t input, size_t k) {
  const ordo::Hypothesis* h = hypothesis(r, input, k);
  return h ? h->score : 0.0f;
}

size_t ordo_result_token_count(const ordo_result* r, size_t input, size_t k) {
  const ordo::Hypothesis* h = hypothesis(r, input, k);
  return h ? h->tokens.size() : 0;
}

const char* ordo_result_token(const ordo_result* r, size_t input, size_t k, size_t index) {
  const ordo::Hypothesis* h = hypothesis(r, input, k);
  return h && index < h->tokens.size() ? h->tokens[index].c_str() : nullptr;
}

size_t ordo_result_id_count(const ordo_result* r, size_t input, size_t k) {
  const ordo::Hypothesis* h = hypothesis(r, input, k);
  return h ? h->ids.size() : 0;
}

int64_t ordo_result_id(const ordo_result* r, size_t input, size_t k, size_t index) {
  const ordo::Hypothesis* h = hypothesis(r, input, k);
  return h && index < h->ids.size() ? h->ids[index] : -1;
}

void ordo_free_result(ordo_result* result) { delete result; }

ordo_speech_recognizer* ordo_speech_recognizer_new(const char* model_dir, const ordo_translator_params* params,
                                                   char** error) {
  return guarded<ordo_speech_recognizer*>(error, nullptr, [&] {
    if (!model_dir || !*model_dir) throw ordo::Error("no model given (a Whisper model folder)");
    const ordo::ModelOptions options = model_options(params);
    return new ordo_speech_recognizer{ordo::SpeechRecognizer(ordo::resolve_model_dir(model_dir), options)};
  });
}

void ordo_free_speech_recognizer(ordo_speech_recognizer* recognizer) { delete recognizer; }

ordo_transcribe_params ordo_transcribe_default_params(void) {
  const ordo::TranscribeOptions defaults;
  const float off = std::numeric_limits<float>::quiet_NaN();
  return {nullptr,
          nullptr,
          defaults.timestamps,
          defaults.word_timestamps,
          nullptr,
          defaults.condition_on_previous_text,
          nullptr,
          0,
          off,
          off,
          off,
          0};
}

namespace {

std::optional<float> threshold(float value) { return std::isnan(value) ? std::nullopt : std::optional(value); }

ordo::TranscribeOptions transcribe_options(const ordo_transcribe_params* params, const ordo_options* options) {
  const ordo_transcribe_params p = params ? *params : ordo_transcribe_default_params();
  ordo::TranscribeOptions o;
  if (p.task) o.task = p.task;
  o.language = text_or_empty(p.language);
  if (o.language == "auto") o.language.clear();
  o.timestamps = p.timestamps;
  o.word_timestamps = p.word_timestamps;
  o.initial_prompt = text_or_empty(p.initial_prompt);
  o.condition_on_previous_text = p.condition_on_previous_text;
  if (p.temperature_count > 0) {
    require(p.temperatures, "temperatures");
    o.temperatures.assign(p.temperatures, p.temperatures + p.temperature_count);
  }
  o.compression_ratio_threshold = threshold(p.compression_ratio_threshold);
  o.log_prob_threshold = threshold(p.log_prob_threshold);
  o.no_speech_threshold = threshold(p.no_speech_threshold);
  if (p.batch_size != 0) set_option(ordo::batch_option_specs(), o.batching, "batch_size", p.batch_size);
  if (options) o.decode = options->decode;
  return o;
}

// The transcript of `samples` in `format`, handed over as a malloc'ed string; `where` (a file)
// prefixes the errors of the transcription itself.
int transcribe_to(const ordo_speech_recognizer* recognizer, const std::vector<float>& samples,
                  const ordo::TranscribeOptions& o, ordo::TranscriptFormat format, const std::string& where,
                  char** output) {
  std::string text;
  try {
    text = ordo::write_transcript(recognizer->recognizer.transcribe(samples, o), format, o.task);
  } catch (const ordo::Error& e) {
    throw ordo::Error(where.empty() ? e.what() : where + ": " + e.what());
  }
  *output = copy_string(text);
  if (!*output) throw std::bad_alloc();
  return 0;
}

ordo::TranscriptFormat transcript_format(const char* format) {
  return ordo::parse_transcript_format(format ? format : "text", "format");
}

}  // namespace

int ordo_transcribe_file(const ordo_speech_recognizer* recognizer, const char* path,
                         const ordo_transcribe_params* params, const ordo_options* options, const char* format,
                         char** output, char** error) {
  if (output) *output = nullptr;
  return guarded<int>(error, -1, [&] {
    require(recognizer, "speech recognizer");
    require(path, "audio path");
    require(output, "output");
    const ordo::TranscriptFormat f = transcript_format(format);
    const ordo::TranscribeOptions o = transcribe_options(params, options);
    return transcribe_to(recognizer, ordo::read_audio(path), o, f, path, output);
  });
}

int ordo_transcribe_samples(const ordo_speech_recognizer* recognizer, const float* samples, size_t count,
                            const ordo_transcribe_params* params, const ordo_options* options, const char* format,
                            char** output, char** error) {
  if (output) *output = nullptr;
  return guarded<int>(error, -1, [&] {
    require(recognizer, "speech recognizer");
    if (count > 0) require(samples, "samples");
    require(output, "output");
    const ordo::TranscriptFormat f = transcript_format(format);
    const ordo::TranscribeOptions o = transcribe_options(params, options);
    return transcribe_to(recognizer, std::vector<float>(samples, samples + count), o, f, "", output);
  });
}

}  // extern "C"
