// DeepL's API v2 as its clients (deepl-node, deepl-python, DeepL-compatible apps) call it, so
// that they work against `ordo serve` by changing the server URL (service.h):
//   POST /v2/translate               text (repeated, or a JSON array), target_lang, source_lang,
//                                    tag_handling=html, glossary_id -> {"translations": [...]}
//   GET|POST /v2/languages           ?type=source|target: the served languages in DeepL's codes
//   GET|POST /v2/usage               the key's characters in its day window and daily_char_limit
//   /v2/glossaries                   create (tsv|csv entries), list, get, entries, delete; per key
//   GET /v2/glossary-language-pairs  the served pairs
//   POST /v2/document                a file (ordo/files.h) translated in the background; its status
//                                    at /v2/document/{id}, its bytes once at .../result
// The key: "Authorization: DeepL-Auth-Key KEY" (also Bearer, or the legacy auth_key field)
// against --api-keys; without them any key or none passes. Errors are DeepL's {"message": ...}.
// What DeepL's models do and ordo's do not (formality, context, ...) is accepted and ignored,
// and the answer's X-Ordo-Ignored header names those fields; what would change the answer's
// meaning and is not done (tag_handling=xml, ignore_tags, style rules) is a 400.
#include <strings.h>

#include <cmath>
#include <ctime>

#include "ordo/text.h"
#include "server/service.h"

namespace ordo::server {

namespace {

// A client's value in a message: shown() in quotes.
std::string in_quotes(const std::string& value, size_t max_chars = 64) { return "'" + shown(value, max_chars) + "'"; }

std::string upper(std::string s) {
  for (char& c : s)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return s;
}

// DeepL's codes ("EN-US", "pt-BR", "ZH-HANS", "de") as the server names languages: the base
// code in lower case ("en", "pt", "zh", "de").
std::string base_code(const std::string& deepl) {
  std::string base = deepl.substr(0, deepl.find('-'));
  for (char& c : base)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return base;
}

// A served target language as DeepL lists it: English and Portuguese only by their variants.
std::vector<std::pair<std::string, std::string>> target_variants(const std::string& code) {
  if (code == "en") return {{"EN-GB", "English (British)"}, {"EN-US", "English (American)"}};
  if (code == "pt") return {{"PT-BR", "Portuguese (Brazilian)"}, {"PT-PT", "Portuguese (European)"}};
  return {{upper(code), language_name(code)}};
}

std::string iso_time_now() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const long millis =
      static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[48];
  const size_t n = std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(text + n, sizeof(text) - n, ".%03ldZ", millis);
  return text;
}

Json glossary_json(const StoredGlossary& g) {
  return Json{{"glossary_id", g.id},
              {"name", g.name},
              {"ready", true},
              {"source_lang", g.source_lang},
              {"target_lang", g.target_lang},
              {"creation_time", g.creation_time},
              {"entry_count", g.entries.size()}};
}

void send_message(httplib::Response& res, const ApiError& e) {
  if (e.retry_after > 0) res.set_header("Retry-After", std::to_string(e.retry_after));
  send_json(res, e.status, Json{{"message", e.what()}});
}

// A DeepL flag: "1"/"0" in forms, true/false (or "1"/"0") in JSON.
bool flag(const RequestFields& fields, const std::string& name) {
  if (!fields.has(name)) return false;
  try {
    return fields.boolean(name).value_or(false);
  } catch (const ApiError&) {
  }
  const std::string value = fields.string(name).value_or("");
  return value == "1" || value == "true";
}

// Fields DeepL's models honour and ordo's cannot: accepted (their values checked where DeepL
// has a fixed set) and named in the answer's X-Ordo-Ignored header.
std::string ignored_fields(const RequestFields& fields) {
  std::vector<std::string> ignored;
  if (const auto formality = fields.string("formality")) {
    static const std::vector<std::string> known = {"default", "more", "less", "prefer_more", "prefer_less"};
    if (std::find(known.begin(), known.end(), *formality) == known.end())
      throw ApiError(400, "Value for 'formality' not supported: " + in_quotes(*formality) + " (" + join(known) + ")");
    if (*formality != "default") ignored.push_back("formality");
  }
  if (const auto split = fields.has("split_sentences") ? fields.string("split_sentences") : std::nullopt) {
    if (*split != "0" && *split != "1" && *split != "nonewlines")
      throw ApiError(400, "Value for 'split_sentences' not supported: " + in_quotes(*split) + " (0, 1, nonewlines)");
    if (*split == "0") ignored.push_back("split_sentences");
  }
  for (const char* name : {"preserve_formatting", "outline_detection", "non_splitting_tags", "splitting_tags",
                           "context", "model_type", "tag_handling_version"})
    if (fields.has(name)) ignored.push_back(name);
  for (const char* name : {"style_id", "translation_memory_id", "custom_instructions"})
    if (fields.has(name))
      throw ApiError(400, std::string("Parameter '") + name + "' is not supported by this server (ordo serve)");
  if (fields.has("ignore_tags") && !fields.string("ignore_tags").value_or("").empty())
    throw ApiError(400,
                   "Parameter 'ignore_tags' is not supported by this server (ordo serve): every text is translated");
  return join(ignored);
}

}  // namespace

void Service::install_deepl(httplib::Server& http) {
  using Handler = std::function<void(const httplib::Request&, httplib::Response&, const RequestFields&)>;
  // Every route's errors as DeepL's {"message": ...}.
  const auto guarded = [this](const httplib::Request&, httplib::Response& res, const std::function<void()>& body) {
    metrics_.in_flight(1);
    try {
      body();
    } catch (const ApiError& e) {
      send_message(res, e);
    } catch (const Error& e) {
      send_message(res, ApiError(400, e.what()));
    } catch (const std::exception& e) {
      send_message(res, ApiError(500, std::string("internal error: ") + e.what()));
    }
    metrics_.in_flight(-1);
  };
  // GET: the fields are the query's; POST: the body's (form, JSON or multipart).
  const auto get = [&http, guarded](const std::string& pattern, Handler handler) {
    http.Get(pattern, [guarded, handler](const httplib::Request& req, httplib::Response& res) {
      guarded(req, res, [&] {
        std::multimap<std::string, std::string> query(req.params.begin(), req.params.end());
        handler(req, res, RequestFields::from_form(std::move(query)));
      });
    });
  };
  const auto post = [this, &http, guarded](const std::string& pattern, Handler handler) {
    http.Post(pattern,
              [this, guarded, handler](const httplib::Request& req, httplib::Response& res, const Reader& reader) {
                guarded(req, res, [&] { handler(req, res, read_fields(req, res, reader, false)); });
              });
  };

  // The request's key (nullptr without --api-keys), noted for the access log and admit().
  const auto key_of = [this](const RequestFields& fields, const httplib::Request& req) -> const ApiKey* {
    if (keys_.empty()) return nullptr;
    std::string key;
    const std::string authorization = req.get_header_value("Authorization");
    for (const char* scheme : {"DeepL-Auth-Key ", "Bearer "}) {
      const size_t n = std::strlen(scheme);
      if (authorization.size() > n && strncasecmp(authorization.c_str(), scheme, n) == 0) {
        const size_t start = authorization.find_first_not_of(' ', n), end = authorization.find_last_not_of(' ');
        if (start != std::string::npos) key = authorization.substr(start, end + 1 - start);
      }
    }
    if (key.empty()) key = fields.string("auth_key").value_or(req.get_param_value("auth_key"));
    if (key.empty())
      throw ApiError(403, "Authorization failure: this server needs a key (Authorization: DeepL-Auth-Key KEY)");
    const ApiKey* found = keys_.find(key);
    if (!found) throw ApiError(403, "Authorization failure: the key is not valid");
    const RequestContext context = contexts_.of(req);
    context.record->key = found;
    context.record->key_id = found->id;
    return found;
  };
  const auto owner_of = [](const ApiKey* key) { return key ? key->id : std::string(); };

  // The languages and glossary of a translation request; the source detected when not given
  // (`sample` for detection: the texts, or the file's sentences).
  struct Pair {
    std::string source, target;
    bool detected = false;
    std::shared_ptr<const Glossary> glossary;
  };
  const auto pair_of = [this](const RequestFields& fields, const ApiKey* key, const ModelSet& set) {
    Pair pair;
    const std::optional<std::string> target = fields.string("target_lang");
    if (!target || target->empty()) throw ApiError(400, "Parameter 'target_lang' not specified.");
    pair.target = base_code(*target);
    if (!set.serves_language(pair.target))
      throw ApiError(400, "Value for 'target_lang' not supported: " + in_quotes(*target) +
                              " (served languages: " + set.language_list() + ")");
    pair.source = base_code(fields.string("source_lang").value_or(""));
    std::string glossary_id = fields.string("glossary_id").value_or("");
    if (const auto ids = fields.string("glossary_ids"); ids && !ids->empty()) {
      if (ids->find(',') != std::string::npos)
        throw ApiError(400, "Parameter 'glossary_ids': this server applies one glossary at a time");
      glossary_id = *ids;
    }
    if (!glossary_id.empty()) {
      if (pair.source.empty())
        throw ApiError(400, "Use of a glossary requires the source_lang parameter to be specified.");
      const auto glossary = glossaries_.find(key ? key->id : "", glossary_id);
      if (!glossary) throw ApiError(404, "Glossary not found: " + in_quotes(glossary_id));
      if (glossary->source_lang != pair.source || glossary->target_lang != pair.target)
        throw ApiError(400, "The glossary " + in_quotes(glossary_id) + " is for " + glossary->source_lang + "->" +
                                glossary->target_lang + ", this request translates " + pair.source + "->" +
                                pair.target);
      pair.glossary = glossary->glossary;
    }
    return pair;
  };

  post("/v2/translate", [this, key_of, pair_of](const httplib::Request& req, httplib::Response& res,
                                                const RequestFields& fields) {
    const RequestContext context = contexts_.of(req);
    const Clock::time_point deadline = request_deadline(context, config_.limits.timeout_seconds);
    const ApiKey* key = key_of(fields, req);
    require_ready();
    bool is_list = false;
    const std::vector<std::string> texts =
        checked_texts(fields, "text", is_list, "Parameter 'text' not specified.", false);
    if (texts.empty()) throw ApiError(400, "Parameter 'text' not specified.");
    const std::string tag_handling = fields.string("tag_handling").value_or("");
    if (!tag_handling.empty() && tag_handling != "html")
      throw ApiError(400, "Value for 'tag_handling' not supported: " + in_quotes(tag_handling) +
                              " (this server handles html; xml is not)");
    const bool html = tag_handling == "html";
    const std::string ignored = ignored_fields(fields);
    const LineBreaks breaks =
        fields.string("split_sentences").value_or("1") == "nonewlines" ? LineBreaks::kSoftWrap : LineBreaks::kEndLine;
    const bool billed = flag(fields, "show_billed_characters");

    const ModelSet& set = models();
    Pair pair = pair_of(fields, key, set);
    if (pair.source.empty()) {
      pair.source = detect_source(set, texts, pair.target, html, "source_lang", "text").language;
      pair.detected = true;
    }
    DecodeOptions options;
    const ServedModel& model = pair_model(set, pair.source, pair.target, "source_lang", "target_lang", options);
    options.glossary = pair.glossary;
    int64_t chars = 0;
    for (const std::string& text : texts) chars += static_cast<int64_t>(utf8_length(text));
    admit_characters(req, chars, model.name, true);
    if (access_log_->log_text()) context.record->texts = texts;

    TextsForm form;
    form.html = html;
    form.breaks = breaks;
    form.sliced = true;
    form.name = [](size_t i) { return "text[" + std::to_string(i) + "]"; };
    const TranslatedTexts out = translate_texts(model, options, texts, pair.source, form, context, deadline);
    Json translations = Json::array();
    for (size_t i = 0; i < texts.size(); ++i) {
      Json translation = {{"detected_source_language", upper(pair.source)}, {"text", out.best[i]}};
      if (billed) translation["billed_characters"] = utf8_length(texts[i]);
      translations.push_back(translation);
    }
    if (!ignored.empty()) res.set_header("X-Ordo-Ignored", ignored);
    send_json(res, 200, Json{{"translations", translations}});
  });

  const Handler languages = [this, key_of](const httplib::Request& req, httplib::Response& res,
                                           const RequestFields& fields) {
    key_of(fields, req);
    require_ready();
    const std::string type = fields.string("type").value_or("source");
    if (type != "source" && type != "target")
      throw ApiError(400, "Value for 'type' not supported: " + in_quotes(type) + " (source, target)");
    std::map<std::string, Json> out;  // by DeepL's code, as DeepL lists them
    if (type == "source") {
      for (const std::string& code : models().source_languages())
        out[upper(code)] = Json{{"language", upper(code)}, {"name", language_name(code)}};
    } else {
      for (const auto& entry : models().languages_json())
        for (const auto& target : entry["targets"])
          for (const auto& [code, name] : target_variants(target.get<std::string>()))
            out[code] = Json{{"language", code}, {"name", name}, {"supports_formality", false}};
    }
    Json list = Json::array();
    for (auto& [code, entry] : out) list.push_back(std::move(entry));
    send_json(res, 200, list);
  };
  get("/v2/languages", languages);
  post("/v2/languages", languages);

  // The key's characters in its current day window and its daily_char_limit (no limit: 10^12,
  // as DeepL answers for an account without one); without --api-keys nothing is counted.
  const Handler usage = [this, key_of](const httplib::Request& req, httplib::Response& res,
                                       const RequestFields& fields) {
    const ApiKey* key = key_of(fields, req);
    constexpr int64_t kNoLimit = 1000000000000;
    int64_t count = 0, limit = kNoLimit;
    if (key) {
      count = limiter_.usage(*key).chars;
      if (key->limits.chars_per_day > 0) limit = key->limits.chars_per_day;
    }
    send_json(res, 200, Json{{"character_count", count}, {"character_limit", limit}});
  };
  get("/v2/usage", usage);
  post("/v2/usage", usage);

  const Handler language_pairs = [this, key_of](const httplib::Request& req, httplib::Response& res,
                                                const RequestFields& fields) {
    key_of(fields, req);
    require_ready();
    Json pairs = Json::array();
    for (const auto& entry : models().languages_json())
      for (const auto& target : entry["targets"])
        pairs.push_back(Json{{"source_lang", entry["code"]}, {"target_lang", target}});
    send_json(res, 200, Json{{"supported_languages", pairs}});
  };
  get("/v2/glossary-language-pairs", language_pairs);

  post("/v2/glossaries",
       [this, key_of, owner_of](const httplib::Request& req, httplib::Response& res, const RequestFields& fields) {
         const ApiKey* key = key_of(fields, req);
         require_ready();
         StoredGlossary glossary;
         glossary.name = fields.string("name").value_or("");
         if (glossary.name.empty()) throw ApiError(400, "Parameter 'name' not specified.");
         if (glossary.name.size() > 1024) throw ApiError(400, "Parameter 'name' is longer than 1024 bytes");
         try {
           check_utf8(glossary.name, "Parameter 'name'");
         } catch (const Error& e) {
           throw ApiError(400, e.what());
         }
         for (const char* name : {"source_lang", "target_lang", "entries"})
           if (!fields.has(name)) throw ApiError(400, std::string("Parameter '") + name + "' not specified.");
         glossary.source_lang = base_code(fields.string("source_lang").value_or(""));
         glossary.target_lang = base_code(fields.string("target_lang").value_or(""));
         const ModelSet& set = models();
         if (!set.for_pair(glossary.source_lang, glossary.target_lang))
           throw ApiError(400, "Unsupported glossary language pair: " + in_quotes(glossary.source_lang) + "->" +
                                   in_quotes(glossary.target_lang) + " (served pairs: " + set.pair_list() + ")");
         glossary.owner = owner_of(key);
         glossary.creation_time = iso_time_now();
         read_glossary_entries(fields.string("entries").value_or(""), fields.string("entries_format").value_or("tsv"),
                               config_.files.max_glossary_entries, glossary);
         send_json(res, 201, glossary_json(*glossaries_.add(std::move(glossary))));
       });
  get("/v2/glossaries",
      [this, key_of, owner_of](const httplib::Request& req, httplib::Response& res, const RequestFields& fields) {
        const ApiKey* key = key_of(fields, req);
        Json list = Json::array();
        for (const auto& g : glossaries_.list(owner_of(key))) list.push_back(glossary_json(*g));
        send_json(res, 200, Json{{"glossaries", list}});
      });
  const auto glossary_of = [this, key_of, owner_of](const httplib::Request& req, const RequestFields& fields) {
    const ApiKey* key = key_of(fields, req);
    const std::string id = req.matches.size() > 1 ? req.matches[1].str() : "";
    const auto glossary = glossaries_.find(owner_of(key), id);
    if (!glossary) throw ApiError(404, "Glossary not found: " + in_quotes(id));
    return glossary;
  };
  get(R"(/v2/glossaries/([^/]+))",
      [glossary_of](const httplib::Request& req, httplib::Response& res, const RequestFields& fields) {
        send_json(res, 200, glossary_json(*glossary_of(req, fields)));
      });
  get(R"(/v2/glossaries/([^/]+)/entries)",
      [glossary_of](const httplib::Request& req, httplib::Response& res, const RequestFields& fields) {
        const std::string tsv = glossary_tsv(*glossary_of(req, fields));
        res.status = 200;
        res.set_content(tsv, "text/tab-separated-values; charset=utf-8");
      });
  http.Delete(R"(/v2/glossaries/([^/]+))",
              [this, guarded, glossary_of, owner_of, key_of](const httplib::Request& req, httplib::Response& res) {
                guarded(req, res, [&] {
                  const RequestFields fields = RequestFields::from_form({req.params.begin(), req.params.end()});
                  const auto glossary = glossary_of(req, fields);
                  glossaries_.remove(glossary->owner, glossary->id);
                  res.status = 204;
                });
              });

  // POST /v2/document: the file read and counted now (a bad file is a 400 at once), translated
  // by a worker (jobs_) through the batcher; its status and result by document_id and
  // document_key.
  http.Post("/v2/document", [this, guarded, key_of, owner_of, pair_of](const httplib::Request& req,
                                                                       httplib::Response& res, const Reader& reader) {
    guarded(req, res, [&] {
      Upload upload = read_upload(req, res, reader, "file");
      const RequestFields& fields = upload.fields;
      const ApiKey* key = key_of(fields, req);
      require_ready();
      std::string name = fields.string("filename").value_or(upload.file_name);
      name = name.substr(name.find_last_of("/\\") == std::string::npos ? 0 : name.find_last_of("/\\") + 1);
      for (char& c : name)
        if (static_cast<unsigned char>(c) < 0x20 || c == '"') c = '_';
      if (name.empty() || name.size() > 255)
        throw ApiError(400,
                       "Parameter 'filename' not specified (or longer than 255 bytes): the file's name, whose "
                       "extension names its format");
      try {
        check_utf8(name, "Parameter 'filename'");
      } catch (const Error& e) {
        throw ApiError(400, e.what());
      }
      const std::optional<FileFormat> format = file_format_of(name);
      if (!format) {
        std::vector<std::string> extensions;
        for (const FileFormatInfo& info : file_formats())
          extensions.insert(extensions.end(), info.extensions.begin(), info.extensions.end());
        throw ApiError(400,
                       "File type of " + in_quotes(name) + " is not supported (supported: " + join(extensions) + ")");
      }
      const FileFormatInfo& info = file_format_info(*format);
      if (const auto output = fields.string("output_format"); output && !output->empty()) {
        const std::string wanted = "." + base_code(*output);
        if (std::find(info.extensions.begin(), info.extensions.end(), wanted) == info.extensions.end())
          throw ApiError(400, "Value for 'output_format' not supported: " + in_quotes(*output) +
                                  " (this server writes a file in its own format)");
      }
      const std::string ignored = ignored_fields(fields);
      // The models of now stay loaded until the job ends, a reload meanwhile included: pinned
      // before they are read (a pinned epoch keeps every later one).
      const std::shared_ptr<const void> pin = pin_models();
      const ModelSet& set = models();
      Pair pair = pair_of(fields, key, set);
      if (pair.source.empty()) {
        const FileDocument sample = read_file(upload.bytes, *format, "", pair.target);
        pair.source =
            detect_source(set, sample.sentences(), pair.target, false, "source_lang", "the document").language;
      }
      DecodeOptions options;
      const ServedModel& model = pair_model(set, pair.source, pair.target, "source_lang", "target_lang", options);
      options.glossary = pair.glossary;
      auto document = std::make_shared<const FileDocument>(read_file(upload.bytes, *format, pair.source, pair.target));
      const int64_t chars = static_cast<int64_t>(document->characters());
      admit_characters(req, chars, model.name, true);

      StoredFile file;
      file.name = name;
      file.media_type = info.media_type;
      file.owner = owner_of(key);
      file.secret = upper(random_hex(32));
      file.status = "queued";
      file.bytes = std::make_shared<const std::string>(std::move(upload.bytes));
      const std::string secret = file.secret;
      const std::string id = files_.add(std::move(file));
      const ServedModel* served = &model;
      const double timeout = config_.files.timeout_seconds;
      JobRunner::Job job;
      job.run = [this, id, document, pin, served, options, chars, timeout](const JobRunner::Stopping& stopping) {
        files_.update(id, [](StoredFile& f) { f.status = "translating"; });
        const Clock::time_point start = Clock::now();
        try {
          const RequestContext context;  // no client: the job ends with the server
          const auto deadline =
              start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout));
          std::string out = translate_document(
              *served, options, *document, context, deadline, [&] { return !stopping(); },
              [&](size_t done, size_t total) {
                const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
                const double left = done > 0 ? elapsed * static_cast<double>(total - done) / done : 0;
                files_.update(id, [left](StoredFile& f) { f.seconds_left = left; });
              });
          auto bytes = std::make_shared<const std::string>(std::move(out));
          files_.update(id, [&](StoredFile& f) {
            f.status = "done";
            f.characters = chars;
            f.seconds_left = 0;
            f.bytes = bytes;
          });
        } catch (const std::exception& e) {
          const std::string why =
              stopping() ? std::string("the server stopped before the document was translated") : std::string(e.what());
          files_.update(id, [&](StoredFile& f) {
            f.status = "error";
            f.error = why;
            f.bytes.reset();
          });
        }
      };
      job.dropped = [this, id] {
        files_.update(id, [](StoredFile& f) {
          f.status = "error";
          f.error = "the server stopped before the document was translated";
          f.bytes.reset();
        });
      };
      if (!jobs_.submit(std::move(job))) {
        files_.remove(id);
        throw ApiError(
            429,
            "too many documents are waiting for translation (" + std::to_string(jobs_.pending()) + "); try again later",
            5);
      }
      if (!ignored.empty()) res.set_header("X-Ordo-Ignored", ignored);
      send_json(res, 200, Json{{"document_id", id}, {"document_key", secret}});
    });
  });
  // A document job by its id and document_key, the key's own; 404 otherwise (as for none).
  const auto document_of = [this, key_of, owner_of](const httplib::Request& req, const RequestFields& fields) {
    const ApiKey* key = key_of(fields, req);
    const std::string id = req.matches.size() > 1 ? req.matches[1].str() : "";
    const std::optional<std::string> given = fields.string("document_key");
    if (!given || given->empty()) throw ApiError(400, "Parameter 'document_key' not specified.");
    // A pending job is waited for a moment: a small one is done by then (deepl-node looks
    // again only 5 s later).
    std::optional<StoredFile> file = files_.wait(id, Clock::now() + std::chrono::seconds(1));
    if (!file || file->secret.empty() || !keys_equal(*given, file->secret) || file->owner != owner_of(key))
      throw ApiError(404, "Document not found: " + in_quotes(id) + " (a translated document is kept " +
                              seconds_text(config_.files.ttl_seconds) + " s, and downloaded once)");
    return std::make_pair(id, std::move(*file));
  };
  post(R"(/v2/document/([0-9a-f]{32}))",
       [document_of](const httplib::Request& req, httplib::Response& res, const RequestFields& fields) {
         const auto [id, file] = document_of(req, fields);
         Json status = {{"document_id", id}, {"status", file.status}};
         if (file.status == "translating")
           status["seconds_remaining"] = static_cast<int64_t>(std::ceil(file.seconds_left));
         if (file.status == "done") status["billed_characters"] = file.characters;
         if (file.status == "error") status["error_message"] = file.error;
         send_json(res, 200, status);
       });
  post(R"(/v2/document/([0-9a-f]{32})/result)",
       [this, document_of](const httplib::Request& req, httplib::Response& res, const RequestFields& fields) {
         const auto [id, file] = document_of(req, fields);
         if (file.status == "error") throw ApiError(400, "Document translation failed: " + file.error);
         if (file.status != "done" || !file.bytes) throw ApiError(503, "Document not ready: " + file.status);
         // Once: as DeepL deletes a document when it is downloaded.
         if (!files_.remove(id)) throw ApiError(404, "Document not found: " + in_quotes(id) + " (downloaded already)");
         std::string ascii = file.name;
         for (char& c : ascii)
           if (static_cast<unsigned char>(c) >= 0x80 || c == '\\') c = '_';
         res.set_header("Content-Disposition", "attachment; filename=\"" + ascii + "\"");
         res.status = 200;
         res.set_content(file.bytes->data(), file.bytes->size(), file.media_type.c_str());
       });
}

}  // namespace ordo::server
