// ordo serve's service: reading a request's fields, its key, readiness, its limits, and the
// batched translate() every route calls (service.h).
#include "server/service.h"

#include "faces/resolved_settings.h"
#include "ordo/glossary.h"

namespace ordo::server {

namespace {

const char* const kRoutes[] = {"/translate", "/detect", "/languages", "/v1/translate", "/v1/summarize", "/v1/score",
                               "/v1/models", "/health", "/ready", "/metrics", "/admin/reload",
                               // the page (src/web) and the settings it reads
                               "/", "/static/app.js", "/static/style.css", "/frontend/settings",
                               // files: LibreTranslate's and DeepL's routes
                               "/translate_file", "/v2/translate", "/v2/languages", "/v2/usage", "/v2/glossaries",
                               "/v2/glossary-language-pairs", "/v2/document",
                               // speech: OpenAI's audio routes
                               "/v1/audio/transcriptions", "/v1/audio/translations"};
// Routes with an id in the path: one label each.
const char* const kRoutePrefixes[] = {"/download_file/", "/v2/glossaries/", "/v2/document/"};

}  // namespace

// The metrics label of a path: one of the routes, or "other" (no unbounded label values).
std::string route_of(const std::string& path) {
  for (const char* route : kRoutes)
    if (path == route) return route;
  for (const char* prefix : kRoutePrefixes)
    if (path.rfind(prefix, 0) == 0) return std::string(prefix) + "{id}";
  return "other";
}

std::string dump(const Json& json) { return json.dump(-1, ' ', false, Json::error_handler_t::replace); }

void send_json(httplib::Response& res, int status, const Json& body) { send_json_text(res, status, dump(body) + "\n"); }

void send_json_text(httplib::Response& res, int status, std::string&& body) {
  res.status = status;
  res.body = std::move(body);  // httplib's set_content() would copy it
  res.headers.erase("Content-Type");
  res.set_header("Content-Type", "application/json");
}

void send_error(httplib::Response& res, const ApiError& e) {
  if (e.retry_after > 0) res.set_header("Retry-After", std::to_string(e.retry_after));
  send_json(res, e.status, Json{{"error", e.what()}});
}

// The canonical text of decoding options: requests with equal texts may share a batch. Every
// option of the table that splits batches is in it (DecodeOptionSpec::splits_batches).
std::string settings_key(const DecodeOptions& o) {
  nlohmann::json j = nlohmann::json::object();
  for (const DecodeOptionSpec& spec : decode_option_specs())
    if (spec.splits_batches)
      if (const auto value = spec.text(o)) j[spec.name] = *value;
  if (o.return_attention) j["return_attention"] = true;  // format=html: alignments for inline tags
  j["preset"] = reinterpret_cast<uintptr_t>(o.preset.get());
  return j.dump();
}

// 60 -> "60", 0.25 -> "0.25".
std::string seconds_text(double seconds) {
  std::ostringstream out;
  out << seconds;
  return out.str();
}

Clock::time_point request_deadline(const RequestContext& context, double timeout_seconds) {
  return context.received + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_seconds));
}

RequestFields Service::read_fields(const httplib::Request& req, httplib::Response& res, const Reader& reader,
                                   bool json_only) const {
  const size_t max = config_.limits.max_body_bytes;
  bool too_large = false;
  const auto failed = [&] {
    if (too_large || res.status == 413)
      return ApiError(413, "Request body larger than " + std::to_string(max) + " bytes");
    return ApiError(400, "Invalid request: the body could not be read");
  };
  if (!json_only && req.is_multipart_form_data()) {
    std::multimap<std::string, std::string> fields;
    auto current = fields.end();
    size_t total = 0;
    const bool ok = reader(
        [&](const httplib::MultipartFormData& part) {
          current = fields.emplace(part.name, std::string());
          return true;
        },
        [&](const char* data, size_t n) {
          total += n;
          if (total > max) return !(too_large = true);
          if (current != fields.end()) current->second.append(data, n);
          return true;
        });
    if (!ok) throw failed();
    return RequestFields::from_form(std::move(fields));
  }
  std::string body;
  const bool ok = reader([&](const char* data, size_t n) {
    if (body.size() + n > max) return !(too_large = true);
    body.append(data, n);
    return true;
  });
  if (!ok) throw failed();
  const std::string type = req.get_header_value("Content-Type");
  if (json_only || type.find("json") != std::string::npos) return RequestFields::from_json(body);
  if (type.find("application/x-www-form-urlencoded") != std::string::npos) return RequestFields::from_urlencoded(body);
  const size_t first = body.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && body[first] == '{') return RequestFields::from_json(body);
  return RequestFields::from_urlencoded(body);
}

Service::Service(const ServerConfig& config)
    : config_(config),
      keys_(config.api_keys),
      admin_keys_(config.admin_keys),
      limiter_(config.key_minute_seconds, config.key_day_seconds),
      access_log_(std::make_unique<AccessLog>(config.access_log, config.log_text)),
      batcher_(config.batching, &metrics_) {
  for (const ApiKey& key : keys_.keys()) metrics_.key_limits(key.id, key.limits);
}

void Service::load_models() {
  auto epoch = std::make_shared<ModelEpoch>();
  epoch->set =
      std::make_shared<const ModelSet>(config_.models, config_.translation_preset, config_.summarization_preset);
  metrics_.models_served(epoch->set->models().size());
  std::atomic_store(&epoch_, epoch);
}

const ApiKey* Service::given_key(const KeyTable& table, const RequestFields* fields, const httplib::Request& req) {
  std::string key;
  // "Authorization: Bearer KEY", the scheme in any case (RFC 9110: case-insensitive).
  const std::string authorization = req.get_header_value("Authorization");
  if (authorization.size() > 7 && strncasecmp(authorization.c_str(), "bearer ", 7) == 0) {
    const size_t start = authorization.find_first_not_of(' ', 7), end = authorization.find_last_not_of(' ');
    if (start != std::string::npos) key = authorization.substr(start, end + 1 - start);
  }
  if (key.empty()) key = fields ? fields->string("api_key").value_or("") : req.get_param_value("api_key");
  if (key.empty())
    throw ApiError(403,
                   "Invalid API key: this server needs one (the api_key field or an Authorization: Bearer header)");
  return table.find(key);
}

const ApiKey* Service::check_key(const RequestFields* fields, const httplib::Request& req) const {
  if (keys_.empty()) return nullptr;
  const ApiKey* key = given_key(keys_, fields, req);
  if (!key) throw ApiError(403, "Invalid API key");
  const RequestContext context = contexts_.of(req);
  context.record->key = key;
  context.record->key_id = key->id;
  return key;
}

void Service::admit(const httplib::Request& req, const std::vector<std::string>& texts, const std::string& model) {
  const RequestContext context = contexts_.of(req);
  AccessRecord& record = *context.record;
  int64_t chars = 0;
  for (const std::string& text : texts) chars += static_cast<int64_t>(utf8_length(text));
  record.chars = chars;
  record.model = model;
  if (access_log_->log_text()) record.texts = texts;
  if (!record.key) return;
  const KeyLimiter::Verdict verdict = limiter_.admit(*record.key, chars);
  if (verdict.status != 0) {
    metrics_.key_limited(record.key->id, verdict.limit);
    throw ApiError(verdict.status, verdict.message, verdict.retry_after);
  }
  metrics_.key_used(record.key->id, chars);
}

void Service::require_ready() const {
  if (draining_) throw ApiError(503, "the server is shutting down", 1);
  if (!ready_) throw ApiError(503, "the models are still loading", 1);
}

std::vector<std::string> Service::checked_texts(const RequestFields& fields, const std::string& name, bool& is_list,
                                                const std::string& missing, bool empty_is_missing) const {
  std::optional<std::vector<std::string>> texts = fields.texts(name, is_list);
  if (!texts || (empty_is_missing && (texts->empty() || (!is_list && texts->front().empty()))))
    throw ApiError(400, missing);
  const Limits& limits = config_.limits;
  if (texts->size() > limits.max_texts)
    throw ApiError(400, "Invalid request: request (" + std::to_string(texts->size()) + ") exceeds text limit (" +
                            std::to_string(limits.max_texts) + ")");
  for (size_t i = 0; i < texts->size(); ++i) {
    const std::string where = is_list ? name + "[" + std::to_string(i) + "]" : name;
    try {
      check_utf8((*texts)[i], where);
    } catch (const Error& e) {
      throw ApiError(400, std::string("Invalid request: ") + e.what());
    }
    const size_t chars = utf8_length((*texts)[i]);
    if (chars > limits.max_chars)
      throw ApiError(400, "Invalid request: request (" + std::to_string(chars) + ") exceeds text limit (" +
                              std::to_string(limits.max_chars) + ")");
  }
  return *texts;
}

void Service::check_work(const Translator& translator, const DecodeOptions& options,
                         const std::vector<size_t>& source_lengths) const {
  int64_t beams = 1, n_best = 1, max_length = 0, min_length = 0, min_new_tokens = 0;
  const std::vector<ResolvedSetting> settings = translator.resolved_settings(options);
  beams = faces::resolved_int(settings, &DecodeOptions::beam_size).value_or(beams);
  n_best = faces::resolved_int(settings, &DecodeOptions::n_best).value_or(options.n_best.value_or(n_best));
  max_length = faces::resolved_int(settings, &DecodeOptions::max_length).value_or(max_length);
  min_length = faces::resolved_int(settings, &DecodeOptions::min_length).value_or(min_length);
  min_new_tokens = faces::resolved_int(settings, &DecodeOptions::min_new_tokens).value_or(min_new_tokens);
  // max_length and min_length count the decoder's start token.
  const int64_t forced = std::max(min_length - 1, min_new_tokens);
  const int64_t tokens = std::max<int64_t>({1, forced, std::min<int64_t>(max_length - 1, kCostTokensPerSentence)});
  const size_t sentences = source_lengths.size();
  const double cost =
      static_cast<double>(sentences) * static_cast<double>(std::max<int64_t>(1, beams)) * static_cast<double>(tokens);
  if (cost > static_cast<double>(config_.limits.max_request_cost))
    throw ApiError(400, "Invalid request: too much decoding work: " + std::to_string(sentences) + " sentences x " +
                            std::to_string(beams) + " beams x " + std::to_string(tokens) +
                            " new tokens = " + std::to_string(static_cast<uint64_t>(cost)) +
                            ", more than this server's limit of " + std::to_string(config_.limits.max_request_cost) +
                            " (--max-request-cost); send fewer texts, a smaller beam_size or fewer new tokens");
  if (!options.return_attention) return;
  // Every hypothesis decoded (beams) or returned (n_best) holds its weights until the answer.
  const int64_t hypotheses = std::max<int64_t>({1, beams, n_best});
  const int64_t per_pair = translator.attention_weights_per_pair();
  double values = 0;
  for (const size_t length : source_lengths)
    values += static_cast<double>(hypotheses) * static_cast<double>(per_pair) * static_cast<double>(tokens) *
              static_cast<double>(length);
  if (values > static_cast<double>(config_.limits.max_attention_values))
    throw ApiError(
        400, "Invalid request: too many attention weights: " + std::to_string(sentences) + " sentences x " +
                 std::to_string(hypotheses) + " hypotheses x " + std::to_string(per_pair) + " layers and heads x " +
                 std::to_string(tokens) +
                 " new tokens x their source tokens = " + std::to_string(static_cast<uint64_t>(values)) +
                 ", more than this server's limit of " + std::to_string(config_.limits.max_attention_values) +
                 " (--max-attention-values); \"attention\", \"alignment\", format=html and a glossary need them: " +
                 "send fewer or shorter texts, a smaller beam_size or n_best, or fewer new tokens");
}

std::vector<TranslationResult> Service::translate(const ServedModel& model, const DecodeOptions& options,
                                                  const std::vector<std::string>& sentences,
                                                  const RequestContext& context, Clock::time_point deadline,
                                                  const StreamFn& on_token, const std::function<bool()>& keep_going) {
  if (options.glossary) {  // the sentences with a term get it put in place (ordo/glossary.h)
    std::vector<TranslationResult> results(sentences.size());
    for (const Glossary::Group& g : options.glossary->groups(sentences)) {
      DecodeOptions o = options;
      o.glossary.reset();
      std::vector<std::string> part;
      for (size_t i : g.inputs) part.push_back(sentences[i]);
      // By value: a batch still running after this request gave up may call it once more. A
      // sentence with a term streams nothing: the terms change its tokens after decoding, and
      // the whole answer follows the stream.
      StreamFn part_stream;
      if (on_token && !g.terms)
        part_stream = [on_token, inputs = g.inputs](size_t k, const TokenEvent& e) { return on_token(inputs[k], e); };
      o.return_attention = options.return_attention || g.terms;
      std::vector<TranslationResult> done = translate(model, o, part, context, deadline, part_stream, keep_going);
      if (g.terms) {
        o.return_attention = options.return_attention;
        done = model.translator->place_terms(part, std::move(done), *options.glossary, o);
      }
      for (size_t k = 0; k < g.inputs.size(); ++k) results[g.inputs[k]] = std::move(done[k]);
    }
    return results;
  }
  // The library's one blank-input policy (ordo/text.h): a sentence with no text (has_text) is
  // given no ids, and translate_ids() answers a source with no ids with one empty hypothesis
  // without running the model, as translate() answers the sentence. Only the sentences with
  // text are encoded (source_lang, a task's prefix) and wait for a batch.
  std::vector<std::vector<int64_t>> blanks(sentences.size()), sources;
  std::vector<size_t> queued;  // index in `sentences` of each of `sources`
  for (size_t i = 0; i < sentences.size(); ++i) {
    if (!has_text(sentences[i])) continue;
    try {
      sources.push_back(model.translator->encode(sentences[i], options));
    } catch (const Error& e) {
      throw ApiError(400, std::string("Invalid request: ") + e.what());
    }
    queued.push_back(i);
  }
  std::vector<TranslationResult> results = model.translator->translate_ids(blanks, options);  // none is run
  if (sources.empty()) return results;
  std::vector<size_t> source_lengths;
  for (const std::vector<int64_t>& source : sources) source_lengths.push_back(source.size());
  check_work(*model.translator, options, source_lengths);  // before any decoding
  // Results do not depend on a batch's other sentences (batch-invariant kernels, and one
  // random generator per sampled hypothesis), so any requests with equal settings may share.
  // Two loads of one name (a reload) never share a batch: the instance is part of the key, and
  // the batch holds its Translator, freed after its last batch when a reload removed it.
  const std::string settings = std::to_string(model.instance) + "\n" + settings_key(options);
  const std::shared_ptr<const Translator> translator = model.translator;
  const auto ticket = batcher_.submit(
      model.name, settings,
      [translator](const std::vector<std::vector<int64_t>>& ids, const DecodeOptions& o) {
        BatchOptions whole;  // the batcher made the batch: it runs as one
        whole.batch_size = std::max<int>(1, static_cast<int>(ids.size()));
        return translator->translate_ids(ids, o, whole);
      },
      options, std::move(sources),
      on_token ? StreamFn([on_token, queued](size_t i, const TokenEvent& e) { return on_token(queued[i], e); })
               : StreamFn());
  if (!batcher_.wait(*ticket, deadline, [&] { return context.client_gone() || (keep_going && !keep_going()); })) {
    if (Clock::now() < deadline) throw ApiError(499, "the client closed the connection");  // nobody reads it
    throw ApiError(504, "Timed out: not translated within " + seconds_text(config_.limits.timeout_seconds) +
                            " s (the server is overloaded or the request too large)");
  }
  for (size_t i = 0; i < ticket->size(); ++i) {
    if (!ticket->error(i).empty())
      throw ApiError(ticket->input_error(i) ? 400 : 500, "Cannot translate text: " + ticket->error(i));
    results[queued[i]] = ticket->result(i);
  }
  return results;
}

}  // namespace ordo::server
