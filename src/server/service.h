#pragma once
// The service behind `ordo serve`'s routes, shared by the files that implement it:
//   service.cpp               request reading, keys, readiness, limits, the batched translate()
//   libretranslate_routes.cpp POST /translate and /detect as LibreTranslate answers them
//   ordo_routes.cpp           POST /v1/translate, /v1/summarize, /v1/score
//   file_routes.cpp           POST /translate_file and GET /download_file as LibreTranslate
//                             answers them; a file's sentences through the batcher in slices
//   deepl_routes.cpp          DeepL's API v2: /v2/translate, /v2/languages, /v2/usage,
//                             /v2/glossaries, /v2/document (translated in the background)
//   audio_routes.cpp          OpenAI's POST /v1/audio/transcriptions and /translations: an upload
//                             decoded and transcribed by a speech worker (a speech model)
//   file_store.cpp            what is kept between requests: files, document jobs, glossaries
//   http_app.cpp              the routes' table, the middleware (errors, CORS, metrics)
//   server.cpp                the HTTP server's lifecycle: binding, connections, signals, drain
//   reload.cpp                SIGHUP and POST /admin/reload: the models re-read without downtime
// A request's deadline and latency count from when Connections had it whole, and its wait
// ends when its client has gone: its RequestContext (request_context.h), which the handlers
// find by their Request in contexts().
#include <httplib.h>

#include <strings.h>
#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>

#include "faces/result_json.h"
#include "ordo/document.h"
#include "ordo/files.h"
#include "ordo/option_table.h"
#include "server/access_log.h"
#include "server/api_keys.h"
#include "server/connections.h"
#include "server/file_store.h"
#include "server/language_codes.h"
#include "server/language_detect.h"
#include "server/metrics.h"
#include "server/request_fields.h"
#include "server/server_config.h"

namespace ordo::server {

using Json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

// The metrics label of a path: one of the routes, or "other" (no unbounded label values).
std::string route_of(const std::string& path);
std::string dump(const Json& json);
void send_json(httplib::Response& res, int status, const Json& body);
// The same for a body already written as JSON text (moved in: a large answer is not copied).
void send_json_text(httplib::Response& res, int status, std::string&& body);
void send_error(httplib::Response& res, const ApiError& e);
// The canonical text of decoding options: requests with equal texts may share a batch. Every
// option of the table that splits batches is in it (DecodeOptionSpec::splits_batches).
std::string settings_key(const DecodeOptions& o);
// 60 -> "60", 0.25 -> "0.25".
std::string seconds_text(double seconds);
// The deadline of a request (--timeout from when it was whole).
Clock::time_point request_deadline(const RequestContext& context, double timeout_seconds);

// The source language of `texts` for a request that names none (LibreTranslate's source
// "auto", DeepL without source_lang): CLD2's reliable answer when it translates into `target`,
// else the first hint that does, else the one served source of `target`; ApiError 400 naming
// `field` and `what` the texts are ("q", "the file") otherwise (libretranslate_routes.cpp).
DetectedLanguage detect_source(const ModelSet& set, const std::vector<std::string>& texts, const std::string& target,
                               bool html, const std::string& field, const std::string& what);
// The translation model of source -> target (clients' codes), ApiError 400 naming the fields
// when none translates the pair; `options` get the model's preset and its language codes.
const ServedModel& pair_model(const ModelSet& set, const std::string& source, const std::string& target,
                              const std::string& source_field, const std::string& target_field, DecodeOptions& options);

// A request's cost counts each sentence's new tokens as its max new tokens but at most this
// many, unless min_new_tokens / min_length force more (Limits::max_request_cost).
constexpr int64_t kCostTokensPerSentence = 256;

class Service {
 public:
  explicit Service(const ServerConfig& config);

  void load_models();
  // The models served now. A request may hold the reference until it ends: every request pins
  // the models of its start and of every reload during it (pin_models(), taken by server.cpp
  // for each request's whole life), so a reload never frees a set a request may still read.
  const ModelSet& models() const { return *std::atomic_load(&epoch_)->set; }
  std::shared_ptr<const void> pin_models() const { return std::atomic_load(&epoch_); }
  // Re-reads the models (ServerConfig::reread_models): unchanged ones are kept, new and changed
  // ones load beside the served ones, then requests switch to the new set at once; a model
  // that fails to load leaves its old one serving. One at a time. Returns the report that
  // POST /admin/reload answers (result, loaded, kept, unloading, errors) and logs it.
  Json reload(const std::string& trigger);
  // Returns the memory of models a reload removed once their last request and batch are done
  // (malloc_trim), and logs them; called by the reload thread (server.cpp).
  void reap_unloaded();
  void set_ready(bool ready) { ready_ = ready; }
  void set_draining() { draining_ = true; }
  // The document jobs stop first (a running one fails, the queued ones are dropped), then the
  // batcher.
  void shutdown() {
    jobs_.stop();
    speech_jobs_.stop();
    batcher_.shutdown();
  }
  Metrics& metrics() { return metrics_; }
  // The context of each request being answered, by its httplib::Request.
  RequestContexts& contexts() { return contexts_; }
  void install(httplib::Server& http);

 private:
  using Reader = httplib::ContentReader;

  RequestFields read_fields(const httplib::Request& req, httplib::Response& res, const Reader& reader,
                            bool json_only) const;
  // With --api-keys: the request's key (Authorization: Bearer, else the api_key field, or for
  // a GET the api_key query parameter) must be one of them; ApiError 403 otherwise. The key
  // (nullptr without --api-keys) is noted for the access log and admit().
  const ApiKey* check_key(const RequestFields* fields, const httplib::Request& req) const;
  // The key of `table` the request gives, nullptr if none (KeyTable::find).
  static const ApiKey* given_key(const KeyTable& table, const RequestFields* fields, const httplib::Request& req);
  // A request's texts and model, counted against its key's limits (api_keys.h: 429 with
  // Retry-After, or 400 past char_limit) and noted for the access log.
  void admit(const httplib::Request& req, const std::vector<std::string>& texts, const std::string& model);
  void require_ready() const;
  // The texts of field `name`; `missing` when absent (or, LibreTranslate's rule, when
  // `empty_is_missing` and q is "" or []).
  std::vector<std::string> checked_texts(const RequestFields& fields, const std::string& name, bool& is_list,
                                         const std::string& missing, bool empty_is_missing) const;
  // ApiError 400 when the request asks for more decoding work than Limits::max_request_cost,
  // or with return_attention for more weights than Limits::max_attention_values: one entry of
  // `source_lengths` (source tokens) per sentence run.
  void check_work(const Translator& translator, const DecodeOptions& options,
                  const std::vector<size_t>& source_lengths) const;
  // The sentences of one request (`context`) through the batcher, by `deadline`; 499 when its
  // client has gone, 504 past the deadline. A streaming request passes `on_token` (its events,
  // numbered by `sentences`) and `keep_going`, asked while it waits (every 100 ms): false ends
  // the wait as a gone client does.
  std::vector<TranslationResult> translate(const ServedModel& model, const DecodeOptions& options,
                                           const std::vector<std::string>& sentences, const RequestContext& context,
                                           Clock::time_point deadline, const StreamFn& on_token = {},
                                           const std::function<bool()>& keep_going = {});
  // "stream": true (stream_routes.cpp): the answer of ordo_generate as server-sent events.
  void stream_generate(const ServedModel& model, const DecodeOptions& options, const std::vector<std::string>& texts,
                       const RequestContext& context, Clock::time_point deadline, httplib::Response& res);

  // An upload (multipart/form-data): its fields, and its file part `file_field` with the file
  // name the client gave; the parts' bytes together at most `max_bytes` (0: Limits::
  // max_file_bytes), ApiError 413 naming `flag` past it. ApiError 400 when the part is missing
  // or given twice.
  struct Upload {
    RequestFields fields;
    std::string file_name, bytes;
  };
  Upload read_upload(const httplib::Request& req, httplib::Response& res, const Reader& reader,
                     const std::string& file_field, size_t max_bytes = 0,
                     const std::string& flag = "--max-file-bytes") const;
  // admit() for a count of characters (a file's): the key's limits, the access log. `deepl`:
  // past daily_char_limit the answer is DeepL's 456 (quota exceeded) rather than a 429.
  void admit_characters(const httplib::Request& req, int64_t chars, const std::string& model, bool deepl);
  // A file read for translation within FileLimits (the file's bytes at most max_body_bytes);
  // a file that is past a limit or not of its format: ApiError 400 with the reader's message.
  FileDocument read_file(const std::string& bytes, FileFormat format, const std::string& source,
                         const std::string& target) const;
  // translate() in slices that each pass check_work() (a file has more sentences than one
  // request may ask for at once), `on_slice` told after each (done, total).
  std::vector<TranslationResult> translate_slices(const ServedModel& model, const DecodeOptions& options,
                                                  const std::vector<std::string>& sentences,
                                                  const RequestContext& context, Clock::time_point deadline,
                                                  const std::function<bool()>& keep_going = {},
                                                  const std::function<void(size_t, size_t)>& on_slice = {});
  // A file's translation: its sentences through translate_slices(), then rebuilt.
  std::string translate_document(const ServedModel& model, DecodeOptions options, const FileDocument& document,
                                 const RequestContext& context, Clock::time_point deadline,
                                 const std::function<bool()>& keep_going = {},
                                 const std::function<void(size_t, size_t)>& on_slice = {});
  // How translate_texts() takes the texts of LibreTranslate's /translate or DeepL's /v2/translate.
  struct TextsForm {
    bool html = false;                         // HtmlDocument; else plain text, SentenceLayout
    LineBreaks breaks = LineBreaks::kEndLine;  // plain text's line breaks
    int alternatives = 0;                      // plain text: the texts of hypotheses 1..this too
    bool sliced = false;                       // through translate_slices(), else one translate()
    std::function<std::string(size_t)> name;   // text i in an error: "Invalid request: q", "text[2]"
  };
  // best[i]: text i rebuilt from its sentences' best hypotheses; alternatives[i][k - 1]: from
  // their hypothesis k (a sentence's last when it has fewer), none for HTML.
  struct TranslatedTexts {
    std::vector<std::string> best;
    std::vector<std::vector<std::string>> alternatives;
  };
  // Each text (in `source`) cut into sentences, all of them through the batcher as one request,
  // each text rebuilt; ApiError 400 for a text past kMaxHtmlTags (HTML gets return_attention
  // when its inline tags need aligning).
  TranslatedTexts translate_texts(const ServedModel& model, DecodeOptions options,
                                  const std::vector<std::string>& texts, const std::string& source,
                                  const TextsForm& form, const RequestContext& context, Clock::time_point deadline);
  void libre_translate_file(const httplib::Request& req, httplib::Response& res, const Reader& reader);
  void libre_download_file(const httplib::Request& req, httplib::Response& res);
  // DeepL's API v2 (deepl_routes.cpp): its routes, errors as {"message": ...}.
  void install_deepl(httplib::Server& http);
  // OpenAI's audio API (audio_routes.cpp): its routes, errors as {"error": {"message", "type",
  // "param", "code"}}.
  void install_audio(httplib::Server& http);
  // POST /v1/audio/transcriptions (`translate` false) or /v1/audio/translations.
  void openai_audio(bool translate, const httplib::Request& req, httplib::Response& res, const Reader& reader);

  void libre_translate(const httplib::Request& req, httplib::Response& res, const Reader& reader);
  void libre_detect(const httplib::Request& req, httplib::Response& res, const Reader& reader);
  void ordo_generate(Task task, const httplib::Request& req, httplib::Response& res, const Reader& reader);
  void ordo_score(const httplib::Request& req, httplib::Response& res, const Reader& reader);
  // The served model a /v1 request asks for (its "model", or its languages, or the only one of
  // `task`), with `options`' languages as that model names them; ApiError 400 otherwise.
  const ServedModel& model_for(Task task, const RequestFields& fields, DecodeOptions& options) const;

  // The models served, and those a request that began earlier may still read: each epoch
  // holds the next one, so a pinned epoch keeps every later set alive (models()).
  struct ModelEpoch {
    std::shared_ptr<const ModelSet> set;
    std::shared_ptr<ModelEpoch> next;
  };

  const ServerConfig& config_;
  const KeyTable keys_, admin_keys_;
  KeyLimiter limiter_;
  std::unique_ptr<AccessLog> access_log_;
  std::atomic<bool> ready_{false}, draining_{false};
  std::shared_ptr<ModelEpoch> epoch_;  // std::atomic_load / atomic_store
  std::mutex reload_mutex_;
  std::vector<std::pair<std::string, std::weak_ptr<const ServedModel>>> unloading_;  // under reload_mutex_
  Metrics metrics_;
  RequestContexts contexts_;
  Batcher batcher_;
  // Declared after the batcher: destroyed (their workers joined) before it.
  FileStore files_{
      FileStoreLimits{config_.files.ttl_seconds, config_.files.max_stored_bytes, config_.files.max_stored_files}};
  GlossaryStore glossaries_{config_.files.max_glossaries, config_.files.max_glossary_bytes};
  JobRunner jobs_{config_.files.workers, config_.files.max_stored_files};
  // Transcriptions (audio_routes.cpp): as many at once as batches run (each model was loaded
  // with its share of the threads); their requests wait for them.
  JobRunner speech_jobs_{static_cast<size_t>(std::max(1, config_.batching.workers)), config_.speech.max_waiting};
};

}  // namespace ordo::server
