// OpenAI's audio API as its clients (the openai npm and Python packages, apps written for
// api.openai.com) call it, so that they work against `ordo serve` with only the base URL
// changed (service.h):
//   POST /v1/audio/transcriptions  multipart: file, model, language, prompt, response_format,
//                                  temperature, timestamp_granularities[] -> the transcript
//   POST /v1/audio/translations    the same without language: speech in any language -> English
// The file is any audio FFmpeg reads (a browser's webm/opus recording too), at most
// --max-audio-bytes, and --max-audio-seconds once decoded. "model" names a served speech model;
// "whisper-1" (OpenAI's one name), or none, is the first one. A speech worker (speech_jobs_)
// decodes and transcribes the upload while the request waits for it within --file-timeout; a
// client that hangs up, or the timeout, stops the transcription after the window being decoded.
// The key and its limits are the other routes' (check_key, admit_characters), a missing or
// wrong key being OpenAI's 401. Errors are OpenAI's {"error": {"message", "type", "param",
// "code"}}, "param" naming the field at fault.
#include <algorithm>
#include <atomic>
#include <cctype>
#include <condition_variable>

#include "ordo/text.h"
#include "server/service.h"

namespace ordo::server {

namespace {

// An error of these routes with the request field at fault (OpenAI's "param") and its code.
struct FieldError : ApiError {
  FieldError(int status, const std::string& message, std::string param, std::string code = "")
      : ApiError(status, message), param(std::move(param)), code(std::move(code)) {}
  std::string param, code;
};

void send_openai_error(httplib::Response& res, const ApiError& e, const std::string& param = "",
                       const std::string& code = "") {
  if (e.retry_after > 0) res.set_header("Retry-After", std::to_string(e.retry_after));
  const bool limited = e.status == 429;
  const char* type = limited ? "requests" : e.status >= 500 ? "server_error" : "invalid_request_error";
  const std::string given = !code.empty() ? code : limited ? "rate_limit_exceeded" : "";
  send_json(res, e.status,
            Json{{"error",
                  {{"message", e.what()},
                   {"type", type},
                   {"param", param.empty() ? Json() : Json(param)},
                   {"code", given.empty() ? Json() : Json(given)}}}});
}

// What `read` throws as a FieldError naming `param`.
template <typename Read>
auto field(const std::string& param, Read read) -> decltype(read()) {
  try {
    return read();
  } catch (const FieldError&) {
    throw;
  } catch (const ApiError& e) {
    throw FieldError(e.status, e.what(), param);
  } catch (const Error& e) {
    throw FieldError(400, e.what(), param);
  }
}

// The response formats of OpenAI's API (write_transcript also writes tsv, which it has not).
const std::vector<std::string> kResponseFormats = {"json", "text", "srt", "verbose_json", "vtt"};


// One transcription between the request that waits for it and the speech worker that runs it.
struct SpeechCall {
  std::mutex mutex;
  std::condition_variable finished;
  bool done = false;
  Transcription result;
  int status = 200;  // else the error's status, message and param
  std::string message, param;
  std::atomic<bool> abandoned{false};  // the request has given up: stop at the next window

  void finish(Transcription t) {
    std::lock_guard<std::mutex> lock(mutex);
    result = std::move(t);
    done = true;
    finished.notify_all();
  }
  void fail(int error_status, const std::string& error_message, const std::string& error_param = "") {
    std::lock_guard<std::mutex> lock(mutex);
    status = error_status;
    message = error_message;
    param = error_param;
    done = true;
    finished.notify_all();
  }
};

// verbose_json as OpenAI answers timestamp_granularities[] without "segment": the words only.
std::string without_segments(const std::string& verbose_json) {
  Json json = Json::parse(verbose_json);
  json.erase("segments");
  return dump(json);
}

}  // namespace

void Service::install_audio(httplib::Server& http) {
  for (const bool translate : {false, true}) {
    http.Post(translate ? "/v1/audio/translations" : "/v1/audio/transcriptions",
              [this, translate](const httplib::Request& req, httplib::Response& res, const Reader& reader) {
                metrics_.in_flight(1);
                try {
                  openai_audio(translate, req, res, reader);
                } catch (const FieldError& e) {
                  send_openai_error(res, e, e.param, e.code);
                } catch (const ApiError& e) {
                  send_openai_error(res, e);
                } catch (const Error& e) {
                  send_openai_error(res, ApiError(400, e.what()));
                } catch (const std::exception& e) {
                  send_openai_error(res, ApiError(500, std::string("internal error: ") + e.what()));
                }
                metrics_.in_flight(-1);
              });
  }
}

void Service::openai_audio(bool translate, const httplib::Request& req, httplib::Response& res, const Reader& reader) {
  const RequestContext context = contexts_.of(req);
  const Clock::time_point deadline = request_deadline(context, config_.files.timeout_seconds);
  Upload upload = field(
      "file", [&] { return read_upload(req, res, reader, "file", audio_upload_bytes(config_), "--max-audio-bytes"); });
  const RequestFields& fields = upload.fields;
  try {
    check_key(&fields, req);
  } catch (const ApiError& e) {  // OpenAI answers a missing or wrong key with 401
    throw FieldError(e.status == 403 ? 401 : e.status, e.what(), "", "invalid_api_key");
  }
  require_ready();

  const std::string route = translate ? "/v1/audio/translations" : "/v1/audio/transcriptions";
  std::vector<std::string> known = {"model", "prompt", "response_format", "temperature", "timestamp_granularities[]"};
  if (!translate) known.insert(known.begin() + 1, "language");
  for (const std::string& name : fields.names())
    if (std::find(known.begin(), known.end(), name) == known.end() && name != "timestamp_granularities" &&
        name != "stream" && name != "api_key")
      throw FieldError(
          400,
          "Unrecognized request argument supplied: " + shown(name) + " (" + route + " takes file, " + join(known) + ")",
          shown(name), "unknown_parameter");
  if (field("stream", [&] { return fields.boolean("stream").value_or(false); }))
    throw FieldError(400, "stream: this server answers a transcription whole; streaming is not supported", "stream");

  // The model.
  const std::shared_ptr<const void> pin = pin_models();  // the set read below lives until the job ends
  const ModelSet& set = models();
  const std::string name = field("model", [&] { return fields.string("model").value_or(""); });
  const ServedModel* model = set.speech_model(name);
  if (!model) {
    const std::string served = set.model_list(Task::kTranscribe);
    if (set.of_task(Task::kTranscribe).empty())
      throw FieldError(400, "This server serves no speech model (start it with --model <a Whisper folder>)", "model",
                       "model_not_found");
    if (const ServedModel* other = set.by_name(name))
      throw FieldError(400,
                       "The model '" + other->name + "' is a " + task_name(other->task) +
                           " model, not a speech model (served speech models: " + served + ")",
                       "model", "model_not_found");
    throw FieldError(
        400,
        "The model '" + shown(name) + "' does not exist (served speech models: " + served + "; whisper-1 is the first)",
        "model", "model_not_found");
  }
  const std::shared_ptr<const SpeechRecognizer> recognizer = model->recognizer;
  if (translate && !recognizer->multilingual())
    throw FieldError(400, "The model '" + model->name + "' is English-only: it does not translate speech", "model");

  // The transcription's options.
  // openai-whisper's defaults: OpenAI's API at temperature 0 decodes each window greedily, again
  // hotter while its text repeats itself or its tokens are unlikely; a likely silent window gives
  // no text. A temperature above 0 samples every window at it.
  TranscribeOptions options = openai_whisper_options();
  options.task = translate ? "translate" : "transcribe";
  if (!translate) {
    std::string language = field("language", [&] { return fields.string("language").value_or(""); });
    std::transform(language.begin(), language.end(), language.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    const std::vector<std::string> known_languages = recognizer->languages();
    if (!language.empty() && language != "auto" &&
        std::find(known_languages.begin(), known_languages.end(), language) == known_languages.end())
      throw FieldError(400,
                       "language '" + shown(language) + "' is not one the model '" + model->name +
                           "' knows (ISO 639-1 codes: " + join(known_languages, 40) + ")",
                       "language");
    options.language = language == "auto" ? "" : language;
  }
  options.initial_prompt = field("prompt", [&] { return fields.string("prompt").value_or(""); });
  field("prompt", [&] { check_utf8(options.initial_prompt, "prompt"); });
  if (utf8_length(options.initial_prompt) > config_.limits.max_chars)
    throw FieldError(400,
                     "prompt: " + std::to_string(utf8_length(options.initial_prompt)) +
                         " characters, more than this server's limit of " + std::to_string(config_.limits.max_chars),
                     "prompt");
  const std::string format_name =
      field("response_format", [&] { return fields.string("response_format").value_or("json"); });
  if (std::find(kResponseFormats.begin(), kResponseFormats.end(), format_name) == kResponseFormats.end())
    throw FieldError(400, "response_format '" + shown(format_name) + "' is not one of " + join(kResponseFormats),
                     "response_format");
  const TranscriptFormat format = parse_transcript_format(format_name, "response_format");
  const double temperature = field("temperature", [&] { return fields.number("temperature", 0, 1).value_or(0); });
  if (temperature > 0) options.temperatures = {static_cast<float>(temperature)};
  options.decode.seed = 0;  // sampling (a fallback, or a temperature given) is reproducible
  bool granularity_list = false;
  std::vector<std::string> granularities;
  for (const char* name : {"timestamp_granularities[]", "timestamp_granularities"})
    if (const auto given = field(name, [&] { return fields.texts(name, granularity_list); }))
      granularities.insert(granularities.end(), given->begin(), given->end());
  for (const std::string& g : granularities)
    if (g != "segment" && g != "word")
      throw FieldError(400, "timestamp_granularities[]: '" + shown(g) + "' is neither segment nor word",
                       "timestamp_granularities");
  if (!granularities.empty() && format != TranscriptFormat::kVerboseJson)
    throw FieldError(400, "timestamp_granularities[] needs response_format verbose_json", "timestamp_granularities");
  options.word_timestamps = std::count(granularities.begin(), granularities.end(), "word") > 0;
  const bool words_only = options.word_timestamps && !std::count(granularities.begin(), granularities.end(), "segment");

  // The file.
  if (upload.bytes.size() > config_.speech.max_audio_bytes)
    throw FieldError(413,
                     "The file is " + std::to_string(upload.bytes.size()) +
                         " bytes, more than this server's limit of " + std::to_string(config_.speech.max_audio_bytes) +
                         " (--max-audio-bytes)",
                     "file");
  if (upload.bytes.empty()) throw FieldError(400, "The file is empty", "file", "invalid_file");
  admit_characters(req, 0, model->name, false);  // the key's request limits; the access log's model

  // The transcription, on a speech worker.
  auto call = std::make_shared<SpeechCall>();
  auto bytes = std::make_shared<const std::string>(std::move(upload.bytes));
  const std::string label = upload.file_name.empty() ? std::string("the file") : shown(upload.file_name, 100);
  AudioLimits limits;
  limits.max_bytes = static_cast<int64_t>(config_.speech.max_audio_bytes);
  limits.max_seconds = config_.speech.max_audio_seconds;
  JobRunner::Job job;
  job.run = [call, bytes, label, limits, recognizer, options, pin](const JobRunner::Stopping& stopping) {
    const auto stop = [&] { return call->abandoned.load() || stopping(); };
    if (stop()) return call->fail(503, "the transcription was stopped");
    std::vector<float> samples;
    try {
      samples = decode_audio(*bytes, label, limits);
    } catch (const Error& e) {
      return call->fail(400, std::string("Invalid file: ") + e.what(), "file");
    } catch (const std::exception& e) {
      return call->fail(500, std::string("internal error while decoding the audio: ") + e.what());
    }
    TranscribeOptions o = options;
    o.on_progress = [&](double, double) { return !stop(); };
    o.decode.cancelled = stop;
    try {
      Transcription t = recognizer->transcribe(samples, o);
      if (stop()) return call->fail(503, "the transcription was stopped");
      call->finish(std::move(t));
    } catch (const Error& e) {
      call->fail(stop() ? 503 : 400, std::string("Cannot transcribe the audio: ") + e.what());
    } catch (const std::exception& e) {
      call->fail(500, std::string("internal error while transcribing: ") + e.what());
    }
  };
  job.dropped = [call] { call->fail(503, "the server is shutting down"); };
  if (!speech_jobs_.submit(std::move(job)))
    throw ApiError(
        429, "too many transcriptions are waiting (" + std::to_string(speech_jobs_.pending()) + "); try again later",
        5);
  // Waits for it, looking every 100 ms whether the client is still there.
  while (true) {
    {
      std::unique_lock<std::mutex> lock(call->mutex);
      const auto until = std::min(deadline, Clock::now() + std::chrono::milliseconds(100));
      if (call->finished.wait_until(lock, until, [&] { return call->done; })) break;
    }
    if (context.client_gone()) {
      call->abandoned = true;
      throw ApiError(499, "the client closed the connection");
    }
    if (Clock::now() >= deadline) {
      call->abandoned = true;
      throw ApiError(504, "Timed out: not transcribed within " + seconds_text(config_.files.timeout_seconds) +
                              " s (--file-timeout; the server is busy or the audio too long)");
    }
  }
  if (call->status != 200)
    throw FieldError(call->status, call->message, call->param, call->param == "file" ? "invalid_file" : "");

  context.record->chars = static_cast<int64_t>(utf8_length(call->result.text));
  std::string body = write_transcript(call->result, format, options.task);
  if (words_only) body = without_segments(body);
  const bool plain =
      format == TranscriptFormat::kText || format == TranscriptFormat::kSrt || format == TranscriptFormat::kVtt;
  if (plain) {
    res.status = 200;
    res.set_content(body, "text/plain; charset=utf-8");
  } else {
    send_json_text(res, 200, body + "\n");
  }
}

}  // namespace ordo::server
