// The routes' table and the middleware every request passes: errors as LibreTranslate's
// {"error": ...} (DeepL's /v2 routes: {"message": ...}, deepl_routes.cpp; OpenAI's audio routes:
// {"error": {"message", ...}}, audio_routes.cpp), CORS, the latency metric (service.h).
#include "server/service.h"
#include "web/page_assets.h"

namespace ordo::server {

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
  http.Post("/detect", guarded([this](const httplib::Request& req, httplib::Response& res, const Reader& reader) {
              libre_detect(req, res, reader);
            }));
  http.Post("/translate_file", guarded([this](const httplib::Request& req, httplib::Response& res,
                                              const Reader& reader) { libre_translate_file(req, res, reader); }));
  http.Get(R"(/download_file/([0-9a-f]{32})\.(.+))", [this](const httplib::Request& req, httplib::Response& res) {
    try {
      libre_download_file(req, res);
    } catch (const ApiError& e) {
      send_error(res, e);
    }
  });
  install_deepl(http);
  install_audio(http);
  http.Post("/v1/translate", guarded([this](const httplib::Request& req, httplib::Response& res, const Reader& reader) {
              ordo_generate(Task::kTranslate, req, res, reader);
            }));
  http.Post("/v1/summarize", guarded([this](const httplib::Request& req, httplib::Response& res, const Reader& reader) {
              ordo_generate(Task::kSummarize, req, res, reader);
            }));
  http.Post("/v1/score", guarded([this](const httplib::Request& req, httplib::Response& res, const Reader& reader) {
              ordo_score(req, res, reader);
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
    // ordo's description of each model, and OpenAI's list (its clients' models.list()).
    const ModelSet& set = models();
    send_json(res, 200,
              Json{{"object", "list"}, {"data", Json(set.openai_models_json())}, {"models", Json(set.models_json())}});
  });
  // GET /frontend/settings as LibreTranslate answers it (its page and clients read the limits
  // there), with ordo's other request limits beside them; open like /languages.
  http.Get("/frontend/settings", [this](const httplib::Request&, httplib::Response& res) {
    if (!ready_) return send_error(res, ApiError(503, "the models are still loading", 1));
    const Json languages = Json(models().languages_json());
    Json source = {{"code", "auto"}, {"name", "Auto Detect"}}, target = source;
    if (!languages.empty()) {
      source = {{"code", languages[0]["code"]}, {"name", languages[0]["name"]}};
      const std::string code =
          languages[0]["targets"].empty() ? std::string() : languages[0]["targets"][0].get<std::string>();
      target = {{"code", code}, {"name", language_name(code)}};
    }
    Json extensions = Json::array();  // POST /translate_file's formats (ordo/files.h)
    for (const FileFormatInfo& info : file_formats())
      for (const std::string& extension : info.extensions) extensions.push_back(extension);
    send_json(res, 200,
              Json{{"charLimit", config_.limits.max_chars},
                   {"frontendTimeout", 500},
                   {"apiKeys", !keys_.empty()},
                   {"keyRequired", !keys_.empty()},
                   {"suggestions", false},
                   {"filesTranslation", true},
                   {"supportedFilesFormat", extensions},
                   {"language", {{"source", source}, {"target", target}}},
                   {"maxTexts", config_.limits.max_texts},
                   {"maxBodyBytes", config_.limits.max_body_bytes},
                   {"timeoutSeconds", config_.limits.timeout_seconds},
                   {"maxAudioBytes", config_.speech.max_audio_bytes},
                   {"maxAudioSeconds", config_.speech.max_audio_seconds}});
  });
  // The page (src/web), unless --no-page: static files compiled into the binary, revalidated
  // by ETag, with a Content-Security-Policy that allows nothing from elsewhere.
  if (config_.page) {
    const auto page = [](const httplib::Request& req, httplib::Response& res) {
      const web::PageAsset* asset = web::page_asset(req.path);
      if (!asset) return send_error(res, ApiError(404, "Not Found: GET " + shown(req.path, 200)));
      res.set_header("ETag", asset->etag);
      res.set_header("Cache-Control", "no-cache");
      res.set_header("Content-Security-Policy", web::page_content_security_policy());
      res.set_header("X-Content-Type-Options", "nosniff");
      res.set_header("Referrer-Policy", "no-referrer");
      if (req.get_header_value("If-None-Match") == asset->etag) {
        res.status = 304;
        return;
      }
      res.set_content(asset->body.data(), asset->body.size(), asset->content_type);
    };
    http.Get("/", page);
    http.Get("/index.html", page);
    http.Get(R"(/static/[a-z_]+\.(js|css))", page);
  }
  http.Get("/health", [](const httplib::Request&, httplib::Response& res) {
    send_json(res, 200, Json{{"status", "ok"}});
  });
  http.Get("/ready", [this](const httplib::Request&, httplib::Response& res) {
    if (draining_) return send_json(res, 503, Json{{"status", "draining"}});
    if (!ready_) return send_json(res, 503, Json{{"status", "loading"}});
    send_json(res, 200, Json{{"status", "ready"}});
  });
  http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    for (const ApiKey& key : keys_.keys()) {
      const KeyLimiter::Usage use = limiter_.usage(key);
      metrics_.key_window(key.id, use.requests, use.chars);
    }
    metrics_.access_log_dropped(access_log_->dropped(), access_log_->unwritten());
    res.set_content(metrics_.text(), Metrics::content_type());
  });
  // POST /admin/reload (reload.cpp) exists only with --admin-key: its key, as Bearer or api_key.
  if (!admin_keys_.empty()) {
    http.Post("/admin/reload", [this](const httplib::Request& req, httplib::Response& res, const Reader& reader) {
      try {
        RequestFields fields;
        if (req.get_header_value("Authorization").empty()) fields = read_fields(req, res, reader, false);
        if (!given_key(admin_keys_, &fields, req)) throw ApiError(403, "Invalid API key");
        if (!ready_ || draining_)
          throw ApiError(503, draining_ ? "the server is shutting down" : "the models are still loading", 1);
        const Json report = reload("POST /admin/reload");
        send_json(res, report["result"] == "ok" ? 200 : 422, report);
      } catch (const ApiError& e) {
        send_error(res, e);
      }
    });
  }

  if (!config_.cors_origins.empty()) {
    http.Options(R"(/.*)", [](const httplib::Request&, httplib::Response& res) {
      res.status = 204;
      res.set_header("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS");
      res.set_header("Access-Control-Allow-Headers", "Authorization, Content-Type");
      res.set_header("Access-Control-Max-Age", "86400");
    });
  }
  http.set_post_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    // Every answer carries its request id (the client's X-Request-Id if sane), as the access
    // log line does.
    AccessRecord& record = *contexts_.of(req).record;
    if (record.id.empty()) record.id = request_id(req.get_header_value("X-Request-Id"));
    res.set_header("X-Request-Id", record.id);
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
  http.set_error_handler(
      httplib::Server::HandlerWithResponse([this](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        std::string message = status_text(res.status);
        if (res.status == 404) message += ": " + shown(req.method) + " " + shown(req.path, 200);
        if (res.status == 413)
          message = "Request body larger than " + std::to_string(config_.limits.max_body_bytes) + " bytes";
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
    // From when the request was whole: the wait for a free thread counts.
    const RequestContext context = contexts_.of(req);
    const double seconds = std::chrono::duration<double>(Clock::now() - context.received).count();
    metrics_.request(route_of(req.path), res.status, seconds);
    // The access log line (access_log.h): what the handler noted, never a key.
    const AccessRecord& r = *context.record;
    Json line = {
        {"time", AccessLog::now_text()}, {"id", r.id.empty() ? request_id(req.get_header_value("X-Request-Id")) : r.id},
        {"method", req.method},          {"route", route_of(req.path)},
        {"status", res.status},          {"latency_ms", std::round(seconds * 1e4) / 10}};
    if (!req.remote_addr.empty()) line["client"] = req.remote_addr;
    if (r.chars >= 0) line["chars"] = r.chars;
    if (!r.model.empty()) line["model"] = r.model;
    if (!r.key_id.empty()) line["key"] = r.key_id;
    if (access_log_->log_text() && !r.texts.empty()) line["text"] = r.texts;
    access_log_->write(line);
  });
}

}  // namespace ordo::server
