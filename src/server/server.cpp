#include "server/server.h"

#include <httplib.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <strings.h>
#include <iostream>
#include <set>
#include <sstream>

#include "server/connections.h"
#include "ordo/decode_option_table.h"
#include "server/language_codes.h"
#include "server/metrics.h"
#include "server/request_fields.h"
#include "server/text_layout.h"

namespace ordo::server {
namespace {

using Json = nlohmann::ordered_json;

const char* const kRoutes[] = {"/translate", "/languages", "/v1/translate", "/v1/summarize",
                               "/v1/models", "/health",    "/ready",        "/metrics"};

// The metrics label of a path: one of the routes, or "other" (no unbounded label values).
std::string route_of(const std::string& path) {
  for (const char* route : kRoutes)
    if (path == route) return route;
  return "other";
}

std::string dump(const Json& json) { return json.dump(-1, ' ', false, Json::error_handler_t::replace); }

void send_json(httplib::Response& res, int status, const Json& body) {
  res.status = status;
  res.set_content(dump(body) + "\n", "application/json");
}

void send_error(httplib::Response& res, const ApiError& e) {
  if (e.retry_after > 0) res.set_header("Retry-After", std::to_string(e.retry_after));
  send_json(res, e.status, Json{{"error", e.what()}});
}

// What `ordo translate --json` prints for one input.
Json hypothesis_json(const Hypothesis& h) { return Json{{"text", h.text}, {"tokens", h.tokens}, {"score", h.score}}; }

Json result_json(const TranslationResult& r) {
  Json line = r.hypotheses.empty() ? Json{{"text", ""}, {"tokens", Json::array()}, {"score", 0.0}}
                                   : hypothesis_json(r.hypotheses[0]);
  line["n_best"] = Json::array();
  for (const Hypothesis& h : r.hypotheses) line["n_best"].push_back(hypothesis_json(h));
  if (r.truncated_tokens > 0) line["truncated_tokens"] = r.truncated_tokens;
  return line;
}

// The canonical text of decoding options: requests with equal texts may share a batch. Every
// option of the table that splits batches is in it (DecodeOptionSpec::splits_batches).
std::string settings_key(const DecodeOptions& o) {
  nlohmann::json j = nlohmann::json::object();
  for (const DecodeOptionSpec& spec : decode_option_specs())
    if (spec.splits_batches)
      if (const auto value = spec.value_text(o)) j[spec.name] = *value;
  if (o.return_attention) j["return_attention"] = true;  // format=html: alignments for inline tags
  j["preset"] = reinterpret_cast<uintptr_t>(o.preset.get());
  return j.dump();
}

std::string join(const std::vector<std::string>& items, size_t limit = 0) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (limit && i == limit) return out + ", ...";
    out += (i ? ", " : "") + items[i];
  }
  return out;
}

// 60 -> "60", 0.25 -> "0.25".
std::string seconds_text(double seconds) {
  std::ostringstream out;
  out << seconds;
  return out.str();
}

// A request's cost counts each sentence's new tokens as its max new tokens but at most this
// many, unless min_new_tokens / min_length force more (Limits::max_request_cost).
constexpr int64_t kCostTokensPerSentence = 256;

// Start of the request being answered on this connection's thread, for the latency metric.
thread_local Clock::time_point t_request_start;
thread_local bool t_request_started = false;

class Service {
 public:
  explicit Service(const ServerConfig& config)
      : config_(config), keys_(config.api_keys.begin(), config.api_keys.end()), batcher_(config.batching, &metrics_) {}

  void load_models() {
    models_ = std::make_unique<ModelSet>(config_.models, config_.translation_preset, config_.summarization_preset);
  }
  const ModelSet& models() const { return *models_; }
  void set_ready(bool ready) { ready_ = ready; }
  void set_draining() { draining_ = true; }
  void shutdown() { batcher_.shutdown(); }
  Metrics& metrics() { return metrics_; }
  void install(httplib::Server& http);

 private:
  using Reader = httplib::ContentReader;

  RequestFields read_fields(const httplib::Request& req, httplib::Response& res, const Reader& reader,
                            bool json_only) const;
  // With --api-keys: the request's key (Authorization: Bearer, else the api_key field, or for
  // a GET the api_key query parameter) must be one of them; ApiError 403 otherwise.
  void check_key(const RequestFields* fields, const httplib::Request& req) const;
  void require_ready() const;
  // The texts of field `name`; `missing` when absent (or, LibreTranslate's rule, when
  // `empty_is_missing` and q is "" or []).
  std::vector<std::string> checked_texts(const RequestFields& fields, const std::string& name, bool& is_list,
                                         const std::string& missing, bool empty_is_missing) const;
  // ApiError 400 when the request asks for more decoding work than Limits::max_request_cost.
  void check_cost(const Translator& translator, const DecodeOptions& options, size_t sentences) const;
  std::vector<TranslationResult> translate(const ServedModel& model, const DecodeOptions& options,
                                           const std::vector<std::string>& sentences, Clock::time_point deadline);

  void libre_translate(const httplib::Request& req, httplib::Response& res, const Reader& reader);
  void ordo_generate(Task task, const httplib::Request& req, httplib::Response& res, const Reader& reader);

  const ServerConfig& config_;
  const std::set<std::string> keys_;
  std::atomic<bool> ready_{false}, draining_{false};
  std::unique_ptr<ModelSet> models_;
  Metrics metrics_;
  Batcher batcher_;
};

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

void Service::check_key(const RequestFields* fields, const httplib::Request& req) const {
  if (keys_.empty()) return;
  std::string key;
  // "Authorization: Bearer KEY", the scheme in any case (RFC 9110: case-insensitive).
  const std::string authorization = req.get_header_value("Authorization");
  if (authorization.size() > 7 && strncasecmp(authorization.c_str(), "bearer ", 7) == 0) {
    const size_t start = authorization.find_first_not_of(' ', 7), end = authorization.find_last_not_of(' ');
    if (start != std::string::npos) key = authorization.substr(start, end + 1 - start);
  }
  if (key.empty()) key = fields ? fields->string("api_key").value_or("") : req.get_param_value("api_key");
  if (key.empty())
    throw ApiError(403, "Invalid API key: this server needs one (the api_key field or an Authorization: Bearer header)");
  if (!keys_.count(key)) throw ApiError(403, "Invalid API key");
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

void Service::check_cost(const Translator& translator, const DecodeOptions& options, size_t sentences) const {
  int64_t beams = 1, max_length = 0, min_length = 0, min_new_tokens = 0;
  for (const ResolvedSetting& s : translator.resolved_settings(options)) {
    if (s.name == "beam_size") beams = std::stoll(s.value);
    if (s.name == "max_length") max_length = std::stoll(s.value);
    if (s.name == "min_length") min_length = std::stoll(s.value);
    if (s.name == "min_new_tokens") min_new_tokens = std::stoll(s.value);
  }
  // max_length and min_length count the decoder's start token.
  const int64_t forced = std::max(min_length - 1, min_new_tokens);
  const int64_t tokens = std::max<int64_t>({1, forced, std::min<int64_t>(max_length - 1, kCostTokensPerSentence)});
  const double cost = static_cast<double>(sentences) * static_cast<double>(std::max<int64_t>(1, beams)) * static_cast<double>(tokens);
  if (cost > static_cast<double>(config_.limits.max_request_cost))
    throw ApiError(400, "Invalid request: too much decoding work: " + std::to_string(sentences) + " sentences x " +
                            std::to_string(beams) + " beams x " + std::to_string(tokens) + " new tokens = " +
                            std::to_string(static_cast<uint64_t>(cost)) + ", more than this server's limit of " +
                            std::to_string(config_.limits.max_request_cost) +
                            " (--max-request-cost); send fewer texts, a smaller beam_size or fewer new tokens");
}

std::vector<TranslationResult> Service::translate(const ServedModel& model, const DecodeOptions& options,
                                                  const std::vector<std::string>& sentences,
                                                  Clock::time_point deadline) {
  std::vector<std::vector<int64_t>> sources;
  check_cost(*model.translator, options, sentences.size());  // before any work
  sources.reserve(sentences.size());
  for (const std::string& sentence : sentences) {
    try {
      sources.push_back(options.source_lang ? model.translator->encode(sentence, *options.source_lang)
                                            : model.translator->encode(sentence));
    } catch (const Error& e) {
      throw ApiError(400, std::string("Invalid request: ") + e.what());
    }
  }
  // Results do not depend on a batch's other sentences (batch-invariant kernels, and one
  // random generator per sampled hypothesis), so any requests with equal settings may share.
  const std::string settings = settings_key(options);
  const Translator* translator = model.translator.get();
  const auto ticket = batcher_.submit(
      model.name, settings,
      [translator](const std::vector<std::vector<int64_t>>& ids, const DecodeOptions& o) {
        return translator->translate_ids(ids, o);
      },
      options, std::move(sources));
  if (!batcher_.wait(*ticket, deadline, client_gone)) {
    if (Clock::now() < deadline) throw ApiError(499, "the client closed the connection");  // nobody reads it
    throw ApiError(504, "Timed out: not translated within " + seconds_text(config_.limits.timeout_seconds) +
                            " s (the server is overloaded or the request too large)");
  }
  std::vector<TranslationResult> results(ticket->size());
  for (size_t i = 0; i < ticket->size(); ++i) {
    if (!ticket->error(i).empty())
      throw ApiError(ticket->input_error(i) ? 400 : 500, "Cannot translate text: " + ticket->error(i));
    results[i] = ticket->result(i);
  }
  return results;
}

void Service::libre_translate(const httplib::Request& req, httplib::Response& res, const Reader& reader) {
  const Clock::time_point deadline =
      t_request_start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(config_.limits.timeout_seconds));
  const RequestFields fields = read_fields(req, res, reader, false);
  check_key(&fields, req);
  require_ready();
  bool is_list = false;
  const std::vector<std::string> texts = checked_texts(fields, "q", is_list, "Invalid request: missing q parameter", true);
  std::string source = fields.string("source").value_or("");
  const std::string target = fields.string("target").value_or("");
  if (source.empty()) throw ApiError(400, "Invalid request: missing source parameter");
  if (target.empty()) throw ApiError(400, "Invalid request: missing target parameter");
  std::string format = fields.string("format").value_or("text");
  if (format.empty()) format = "text";
  if (format != "text" && format != "html") throw ApiError(400, shown(format) + " format is not supported (text, html)");
  const int alternatives =
      static_cast<int>(fields.integer("alternatives", 0, config_.limits.max_beam_size - 1).value_or(0));

  const ModelSet& set = models();
  if (!set.serves_language(target))
    throw ApiError(400, shown(target) + " is not supported (served languages: " + set.language_list() + ")");
  const bool detect = source == "auto";
  if (detect) {
    const std::vector<std::string> sources = set.sources_for(target);
    if (sources.size() != 1)
      throw ApiError(400, "source 'auto' is not supported: ordo does not detect languages, and " +
                              std::to_string(sources.size()) + " source languages translate into " + target +
                              (sources.empty() ? std::string() : " (" + join(sources, 12) + ")") +
                              "; name the source language");
    source = sources.front();
  } else if (!set.serves_language(source)) {
    throw ApiError(400, shown(source) + " is not supported (served languages: " + set.language_list() + ")");
  }
  const ServedModel* model = set.for_pair(source, target);
  if (!model)
    throw ApiError(400, language_name(target) + " (" + target + ") is not available as a target language from " +
                            language_name(source) + " (" + source + ") (served pairs: " + set.pair_list() + ")");

  DecodeOptions options;
  options.preset = model->preset;
  if (model->multilingual()) {
    options.source_lang = model->model_code(source);
    options.target_lang = model->model_code(target);
  }
  if (alternatives > 0) {
    options.n_best = alternatives + 1;
    options.beam_size = std::max(model->default_beam, alternatives + 1);
  }

  // Every text cut into sentences (lines, or the text runs of the HTML); all of them go to
  // the batcher as one request.
  std::vector<std::unique_ptr<LineText>> lines;
  std::vector<std::unique_ptr<HtmlDocument>> htmls;
  std::vector<std::string> sentences;
  std::vector<size_t> first(texts.size() + 1, 0);
  for (size_t i = 0; i < texts.size(); ++i) {
    first[i] = sentences.size();
    const std::vector<std::string>* runs;
    if (format == "html") {
      if (ordo::html_tag_count(texts[i]) > kMaxHtmlTags)
        throw ApiError(400, "Invalid request: " + (is_list ? "q[" + std::to_string(i) + "]" : std::string("q")) +
                                " has more than " + std::to_string(kMaxHtmlTags) + " HTML tags");
      htmls.push_back(std::make_unique<HtmlDocument>(texts[i], source));
      runs = &htmls.back()->sentences();
      // Inline tags go back around the words they align to.
      if (htmls.back()->needs_alignment()) options.return_attention = true;
    } else {
      lines.push_back(std::make_unique<LineText>(texts[i], source));
      runs = &lines.back()->runs();
    }
    sentences.insert(sentences.end(), runs->begin(), runs->end());
  }
  first[texts.size()] = sentences.size();
  const std::vector<TranslationResult> results = translate(*model, options, sentences, deadline);

  const auto hypothesis_texts = [&](size_t text, size_t k) {
    std::vector<std::string> out;
    for (size_t s = first[text]; s < first[text + 1]; ++s) {
      const auto& hyps = results[s].hypotheses;
      out.push_back(hyps.empty() ? "" : hyps[std::min(k, hyps.size() - 1)].text);
    }
    return out;
  };
  Json translated = Json::array(), alternative_lists = Json::array();
  for (size_t i = 0; i < texts.size(); ++i) {
    std::string best;
    if (format == "html") {
      std::vector<AlignedTranslation> aligned;
      for (size_t s = first[i]; s < first[i + 1]; ++s) aligned.push_back(aligned_translation(results[s]));
      best = htmls[i]->rebuild(aligned);
    } else {
      best = lines[i]->rebuild(hypothesis_texts(i, 0));
    }
    translated.push_back(best);
    // LibreTranslate gives no alternatives for HTML, and leaves out duplicates of the best.
    Json alts = Json::array();
    if (format == "text") {
      for (int k = 1; k <= alternatives; ++k) {
        const std::string alt = lines[i]->rebuild(hypothesis_texts(i, static_cast<size_t>(k)));
        if (alt != best && std::find(alts.begin(), alts.end(), alt) == alts.end()) alts.push_back(alt);
      }
    }
    alternative_lists.push_back(alts);
  }
  Json answer;
  answer["translatedText"] = is_list ? translated : translated[0];
  if (alternatives > 0) answer["alternatives"] = is_list ? alternative_lists : alternative_lists[0];
  if (detect) {
    const Json detected = {{"confidence", 100.0}, {"language", source}};
    answer["detectedLanguage"] = is_list ? Json(std::vector<Json>(texts.size(), detected)) : detected;
  }
  send_json(res, 200, answer);
}

void Service::ordo_generate(Task task, const httplib::Request& req, httplib::Response& res, const Reader& reader) {
  const Clock::time_point deadline =
      t_request_start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(config_.limits.timeout_seconds));
  const RequestFields fields = read_fields(req, res, reader, true);
  check_key(&fields, req);
  require_ready();
  std::vector<std::string> known = {"model", "text", "api_key"};
  for (const std::string& name : decode_option_names()) known.push_back(name);
  for (const std::string& name : fields.names())
    if (std::find(known.begin(), known.end(), name) == known.end())
      throw ApiError(400, "Invalid request: unknown field '" + shown(name) + "' (known: " + join(known) + ")");
  bool is_list = false;
  const std::vector<std::string> texts =
      checked_texts(fields, "text", is_list, "Invalid request: field 'text' is required (a string or an array of strings)",
                    false);  // [] gives "results": []
  DecodeOptions options = decode_options(fields, config_.limits.max_beam_size, config_.limits.max_new_tokens);

  const ModelSet& set = models();
  const ServedModel* model = nullptr;
  if (const std::optional<std::string> name = fields.string("model")) {
    model = set.by_name(*name);
    if (!model || model->task != task)
      throw ApiError(400, "Invalid request: unknown " + std::string(task_name(task)) + " model '" + shown(*name) +
                              "' (served: " + set.model_list(task) + ")");
  } else if (task == Task::kTranslate && options.source_lang && options.target_lang) {
    model = set.for_pair(*options.source_lang, *options.target_lang);
    if (!model)
      throw ApiError(400, "Invalid request: no model translates " + shown(*options.source_lang) + " into " +
                              shown(*options.target_lang) + " (served pairs: " + set.pair_list() + ")");
  } else {
    const auto candidates = set.of_task(task);
    if (candidates.size() != 1)
      throw ApiError(400, "Invalid request: field 'model' is required (served " + std::string(task_name(task)) +
                              " models: " + set.model_list(task) + ")");
    model = candidates.front();
  }
  // Languages: a multilingual model takes them as the model names them; a one-pair model only
  // checks them.
  for (auto [field, value] : {std::pair<const char*, std::optional<std::string>*>{"source_lang", &options.source_lang},
                              {"target_lang", &options.target_lang}}) {
    if (!*value) continue;
    if (model->multilingual()) {
      const std::string code = model->model_code(**value);
      if (code.empty())
        throw ApiError(400, "Invalid request: field '" + std::string(field) + "': model '" + model->name +
                                "' does not know language '" + shown(**value) + "' (known: " + join(model->languages, 40) + ")");
      *value = code;
    } else {
      const std::string& served = std::string(field) == "source_lang" ? model->source_lang : model->target_lang;
      if (**value != served)
        throw ApiError(400, "Invalid request: field '" + std::string(field) + "': model '" + model->name + "' " +
                                task_name(task) + "s " + model->source_lang + " into " + model->target_lang +
                                ", not '" + shown(**value) + "'");
      value->reset();
    }
  }
  options.preset = model->preset;
  try {
    model->translator->resolved_settings(options);  // the option errors of the command line
  } catch (const Error& e) {
    throw ApiError(400, std::string("Invalid request: ") + e.what());
  }

  std::vector<std::string> sentences;
  std::vector<size_t> positions;  // index in texts of each sentence; empty texts are not run
  for (size_t i = 0; i < texts.size(); ++i) {
    if (texts[i].empty()) continue;
    sentences.push_back(texts[i]);
    positions.push_back(i);
  }
  const std::vector<TranslationResult> results = translate(*model, options, sentences, deadline);
  TranslationResult empty;  // an empty text is not run: one empty hypothesis, score 0 (as the CLI)
  empty.hypotheses.emplace_back();
  std::vector<TranslationResult> by_text(texts.size(), empty);
  for (size_t k = 0; k < positions.size(); ++k) by_text[positions[k]] = results[k];
  Json lines = Json::array();
  for (const TranslationResult& r : by_text) lines.push_back(result_json(r));
  send_json(res, 200, Json{{"model", model->name}, {"results", lines}});
}

void Service::install(httplib::Server& http) {
  const auto guarded = [this](auto handler) {
    return [this, handler](const httplib::Request& req, httplib::Response& res, const Reader& reader) {
      metrics_.in_flight(1);
      try {
        handler(req, res, reader);
      } catch (const ApiError& e) {
        send_error(res, e);
      } catch (const Error& e) {
        send_error(res, ApiError(400, std::string("Invalid request: ") + e.what()));
      } catch (const std::exception& e) {
        send_error(res, ApiError(500, std::string("internal error: ") + e.what()));
      }
      metrics_.in_flight(-1);
    };
  };
  http.Post("/translate", guarded([this](const httplib::Request& req, httplib::Response& res, const Reader& reader) {
    libre_translate(req, res, reader);
  }));
  http.Post("/v1/translate", guarded([this](const httplib::Request& req, httplib::Response& res, const Reader& reader) {
    ordo_generate(Task::kTranslate, req, res, reader);
  }));
  http.Post("/v1/summarize", guarded([this](const httplib::Request& req, httplib::Response& res, const Reader& reader) {
    ordo_generate(Task::kSummarize, req, res, reader);
  }));
  http.Get("/languages", [this](const httplib::Request&, httplib::Response& res) {
    if (!ready_) return send_error(res, ApiError(503, "the models are still loading", 1));
    send_json(res, 200, Json(models().languages_json()));
  });
  http.Get("/v1/models", [this](const httplib::Request& req, httplib::Response& res) {
    try {
      check_key(nullptr, req);  // /v1/* needs a key, as the README says
    } catch (const ApiError& e) {
      return send_error(res, e);
    }
    if (!ready_) return send_error(res, ApiError(503, "the models are still loading", 1));
    send_json(res, 200, Json{{"models", Json(models().models_json())}});
  });
  http.Get("/health", [](const httplib::Request&, httplib::Response& res) { send_json(res, 200, Json{{"status", "ok"}}); });
  http.Get("/ready", [this](const httplib::Request&, httplib::Response& res) {
    if (draining_) return send_json(res, 503, Json{{"status", "draining"}});
    if (!ready_) return send_json(res, 503, Json{{"status", "loading"}});
    send_json(res, 200, Json{{"status", "ready"}});
  });
  http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics_.text(), Metrics::content_type());
  });

  if (!config_.cors_origins.empty()) {
    http.Options(R"(/.*)", [](const httplib::Request&, httplib::Response& res) {
      res.status = 204;
      res.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
      res.set_header("Access-Control-Allow-Headers", "Authorization, Content-Type");
      res.set_header("Access-Control-Max-Age", "86400");
    });
  }
  http.set_post_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (config_.cors_origins.empty()) return;
    const std::string origin = req.get_header_value("Origin");
    const auto& allowed = config_.cors_origins;
    if (std::find(allowed.begin(), allowed.end(), "*") != allowed.end()) {
      res.set_header("Access-Control-Allow-Origin", "*");
    } else if (!origin.empty() && std::find(allowed.begin(), allowed.end(), origin) != allowed.end()) {
      res.set_header("Access-Control-Allow-Origin", origin);
      res.set_header("Vary", "Origin");
    }
  });
  http.set_pre_routing_handler([](const httplib::Request&, httplib::Response&) {
    t_request_start = request_received();  // the wait for a free thread counts
    t_request_started = true;
    return httplib::Server::HandlerResponse::Unhandled;
  });
  http.set_error_handler(httplib::Server::HandlerWithResponse([this](const httplib::Request& req,
                                                                     httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    std::string message = status_text(res.status);
    if (res.status == 404) message += ": " + shown(req.method) + " " + shown(req.path, 200);
    if (res.status == 413) message = "Request body larger than " + std::to_string(config_.limits.max_body_bytes) + " bytes";
    send_json(res, res.status, Json{{"error", message}});
    return httplib::Server::HandlerResponse::Handled;
  }));
  http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr error) {
    std::string message = "internal error";
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      message += std::string(": ") + e.what();
    } catch (...) {
    }
    send_json(res, 500, Json{{"error", message}});
  });
  http.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    const double seconds =
        t_request_started ? std::chrono::duration<double>(Clock::now() - t_request_start).count() : -1.0;
    t_request_started = false;
    metrics_.request(route_of(req.path), res.status, seconds);
  });
}

// httplib's Server with its connections handled by Connections: each accepted socket goes
// there (process_and_close_socket), and a request thread hands a whole request back to
// httplib's parsing and routing (process_request).
class HttpServer : public httplib::Server {
 public:
  void set_connections(Connections* connections) { connections_ = connections; }
  bool serve(httplib::Stream& stream, bool close, bool& closed) {
    return process_request(stream, close, closed, nullptr);
  }

 private:
  bool process_and_close_socket(socket_t sock) override {
    connections_->add(sock);
    return true;
  }
  Connections* connections_ = nullptr;
};

// httplib's accept loop runs its "tasks" here at once (each hands a socket to Connections);
// when the loop ends (stop()), the connections finish what they hold.
class HandOver : public httplib::TaskQueue {
 public:
  explicit HandOver(Connections& connections) : connections_(connections) {}
  void enqueue(std::function<void()> task) override { task(); }
  void shutdown() override { connections_.stop(); }

 private:
  Connections& connections_;
};

}  // namespace

int run_server(const ServerConfig& config) {
  // SIGTERM/SIGINT are taken by one thread (sigtimedwait); every thread created from here on
  // inherits the blocked mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  // Sockets for slow clients (ConnectionOptions::max_connections is kept below the limit).
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &files);
  }

  Service service(config);
  HttpServer http;
  service.install(http);
  ConnectionOptions connection_options;
  connection_options.request_threads = std::max(1, config.http_threads);
  connection_options.read_seconds = config.limits.read_timeout_seconds;
  connection_options.per_address = config.limits.max_client_connections;
  connection_options.max_body_bytes = config.limits.max_body_bytes;
  connection_options.max_buffered_bytes = std::max<size_t>(size_t(16) << 20, 64 * config.limits.max_body_bytes);
  Connections connections(connection_options, [&http](httplib::Stream& stream, bool close, bool& closed) {
    return http.serve(stream, close, closed);
  }, &service.metrics());
  http.set_connections(&connections);
  http.new_task_queue = [&connections] { return new HandOver(connections); };
  http.set_tcp_nodelay(true);
  http.set_payload_max_length(config.limits.max_body_bytes);
  // Only SO_REUSEADDR: httplib's default also sets SO_REUSEPORT, which would let a second
  // server bind the same port and silently take half of the connections.
  int listen_fd = -1;
  http.set_socket_options([&listen_fd](socket_t fd) {
    int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    listen_fd = fd;
  });
  int port = config.port;
  if (port == 0) {
    port = http.bind_to_any_port(config.host);
  } else if (!http.bind_to_port(config.host, port)) {
    port = -1;
  }
  if (port <= 0)
    throw Error("cannot listen on " + config.host + ":" + std::to_string(config.port) + " (" + std::strerror(errno) + ")");
  // httplib listens with a backlog of 5; 64 clients connecting at once need more.
  if (listen_fd >= 0) ::listen(listen_fd, 1024);
  const std::string host = config.host.find(':') != std::string::npos ? "[" + config.host + "]" : config.host;
  std::cout << "ordo serve: listening on http://" << host << ":" << port << std::endl;

  std::atomic<bool> listening_done{false}, stop_requested{false};
  bool listen_ok = true;
  std::thread listener([&] {
    listen_ok = http.listen_after_bind();
    listening_done = true;
  });
  std::thread signal_waiter([&] {
    bool stopped = false;
    while (!listening_done) {
      timespec wait{0, 100 * 1000 * 1000};
      const int signal = sigtimedwait(&stop_signals, nullptr, &wait);
      if (signal == SIGTERM || signal == SIGINT) {
        std::cerr << "ordo serve: " << (signal == SIGTERM ? "SIGTERM" : "SIGINT")
                  << ": finishing the requests in flight" << std::endl;
        stop_requested = true;
      }
      if (stop_requested && !stopped && http.is_running()) {
        service.set_draining();
        http.stop();  // no new connections; the ones in flight are answered
        stopped = true;
      }
    }
  });
  const auto stop_threads = [&] {
    stop_requested = true;
    listener.join();
    signal_waiter.join();
    service.shutdown();
  };

  try {
    service.load_models();
  } catch (...) {
    stop_threads();
    throw;
  }
  if (!stop_requested) {
    service.set_ready(true);
    std::string names;
    for (const auto& m : service.models().models())
      names += (names.empty() ? "" : ", ") + m->name + " (" + task_name(m->task) + ")";
    std::cout << "ordo serve: ready: " << names << std::endl;
  }
  listener.join();
  signal_waiter.join();
  service.shutdown();
  if (!listen_ok && !stop_requested) throw Error("the HTTP server stopped unexpectedly");
  std::cerr << "ordo serve: stopped" << std::endl;
  return 0;
}

}  // namespace ordo::server
