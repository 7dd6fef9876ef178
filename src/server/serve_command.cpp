#include "server/serve_command.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "faces/model_location.h"
#include "faces/option_flags.h"
#include "faces/serve_summary.h"
#include "faces/warnings.h"
#include "ordo/option_table.h"
#include "ordo/ordo.h"
#include "server/server.h"

namespace ordo::server {
namespace {

bool is_file(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::shared_ptr<const DecodeOptions> find_preset(const std::string& name_or_path) {
  return std::make_shared<DecodeOptions>(load_preset(faces::preset_file(name_or_path)));
}

std::string base_name(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// --model NAME | DIR | SRC:TGT=DIR (also SRC:TGT=NAME).
ModelSpec model_spec(const std::string& argument, const ModelOptions& options) {
  ModelSpec spec;
  spec.options = options;
  std::string location = argument;
  const size_t eq = argument.find('=');
  const size_t colon = argument.find(':');
  if (eq != std::string::npos && colon != std::string::npos && colon < eq && argument.find('/') > eq) {
    spec.source_lang = argument.substr(0, colon);
    spec.target_lang = argument.substr(colon + 1, eq - colon - 1);
    location = argument.substr(eq + 1);
    if (spec.source_lang.empty() || spec.target_lang.empty() || location.empty())
      throw Error("--model '" + argument + "': expected SRC:TGT=DIR, e.g. en:de=path/to/opus-mt-en-de");
  }
  spec.dir = faces::resolve_model_dir(location, "en-de");
  spec.name = base_name(location);
  return spec;
}

// --models FILE.json: {"models": [{"name", "path", "source", "target", "task", "compute_type",
// "threads"}, ...]} (or the array alone). Paths are relative to the file's folder.
std::vector<ModelSpec> models_file(const std::string& path, const ModelOptions& defaults) {
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot open the models file");
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + ": invalid JSON (" + e.what() + ")");
  }
  if (json.is_object() && json.contains("models")) json = json["models"];
  if (!json.is_array()) throw Error(path + ": expected {\"models\": [...]} or an array of models");
  const std::string folder = path.find('/') == std::string::npos ? "." : path.substr(0, path.find_last_of('/'));
  std::vector<ModelSpec> specs;
  for (size_t i = 0; i < json.size(); ++i) {
    const std::string where = path + ": models[" + std::to_string(i) + "]";
    const nlohmann::json& m = json[i];
    if (!m.is_object()) throw Error(where + ": expected an object");
    static const std::vector<std::string> known = {"name", "path",         "source", "target",
                                                   "task", "compute_type", "threads"};
    for (const auto& item : m.items())
      if (std::find(known.begin(), known.end(), item.key()) == known.end())
        throw Error(where + ": unknown field '" + item.key() +
                    "' (known: name, path, source, target, task, compute_type, threads)");
    const auto text = [&](const char* key) -> std::string {
      if (!m.contains(key)) return "";
      if (!m[key].is_string()) throw Error(where + ": field '" + key + "' must be a string");
      return m[key].get<std::string>();
    };
    ModelSpec spec;
    spec.options = defaults;
    const std::string location = text("path");
    if (location.empty()) throw Error(where + ": field 'path' is missing (a model folder or a bundled model's name)");
    const bool relative = location[0] != '/' && location.find('/') != std::string::npos;
    const std::string local = relative ? folder + "/" + location : location;
    spec.dir = faces::resolve_model_dir(is_file(local + "/config.json") ? local : location, "en-de");
    spec.name = text("name").empty() ? base_name(location) : text("name");
    spec.source_lang = text("source");
    spec.target_lang = text("target");
    spec.task = text("task");
    for (const char* key : {"compute_type", "threads"}) {  // entries of the table of model options
      if (!m.contains(key)) continue;
      try {
        find_model_option(key)->set(spec.options, json_option_value(m[key]));
      } catch (const OptionError& e) {
        throw Error(where + ": field '" + key + "' " + e.must);
      }
    }
    specs.push_back(spec);
  }
  return specs;
}

}  // namespace

CLI::App* add_serve_command(CLI::App& app, ServeArgs& args) {
  CLI::App* cmd = app.add_subcommand("serve", faces::kServeSummary);
  cmd->add_option("-m,--model", args.models,
                  "A model to serve (repeatable): a bundled name (en-de, de-en, dialogsum), a Hugging Face\n"
                  "folder, or SRC:TGT=DIR for a Marian folder that does not name its languages. A Whisper\n"
                  "folder is served for speech (POST /v1/audio/transcriptions, /v1/audio/translations).\n"
                  "Default: en-de");
  cmd->add_option("--models", args.models_file,
                  "JSON file of models: {\"models\": [{\"name\", \"path\", \"source\", \"target\", \"task\",\n"
                  "\"compute_type\", \"threads\"}]}");
  cmd->add_option("--host", args.host, "Address to listen on (default 127.0.0.1: this machine only)");
  cmd->add_option("--port", args.port, "Port (default 5000, LibreTranslate's; 0 = any free port, printed)")
      ->check(CLI::Range(0, 65535));
  faces::add_option_flags(cmd, model_option_specs(), args.model_options);
  cmd->add_flag("--no-weight-cache", args.no_weight_cache,
                "Pack the weights afresh, without the packed weights cache (see `ordo translate --help`)");
  faces::add_option_flags(cmd, batch_option_specs(), args.batching);
  cmd->add_option("--batch-wait-ms", args.batch_wait_ms,
                  "How long a free worker waits for a batch to fill while another batch runs (default 5)")
      ->check(CLI::Range(0.0, 1000.0));
  cmd->add_option("--idle-release", args.idle_release,
                  "Seconds without a batch after which the memory decoding keeps for the next batch\n"
                  "(the caches' mappings, free heap) is returned to the system (default 30; 0 = never)")
      ->check(CLI::Range(0.0, 86400.0));
  cmd->add_option("--max-body-bytes", args.max_body_bytes, "Largest request body (default 1 MiB; 413 past it)")
      ->check(CLI::Range(size_t(64), size_t(1) << 30));
  cmd->add_option("--max-file-bytes", args.max_file_bytes,
                  "Largest file upload, the body of POST /translate_file and /v2/document (default 20 MiB;\n"
                  "413 past it)")
      ->check(CLI::Range(size_t(64), size_t(1) << 30));
  cmd->add_option("--max-chars", args.max_chars, "Most characters per text (default 10000)")
      ->check(CLI::Range(size_t(1), size_t(1) << 26));
  cmd->add_option("--max-texts", args.max_texts, "Most texts per request (default 256)")
      ->check(CLI::Range(size_t(1), size_t(1) << 20));
  cmd->add_option("--max-queue", args.max_queue, "Most sentences waiting (default 4096; 503 + Retry-After past it)")
      ->check(CLI::Range(size_t(1), size_t(1) << 24));
  cmd->add_option("--timeout", args.timeout, "Seconds a request may take (default 60; 504 past it)")
      ->check(CLI::Range(0.01, 86400.0));
  cmd->add_option("--max-beam-size", args.max_beam_size, "Largest beam_size / n_best a request may ask (default 16)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--max-request-cost", args.max_request_cost,
                  "Most decoding work one request may ask for: sentences x beams x new tokens, each\n"
                  "sentence's tokens counted as its max new tokens but at most 256 unless min_new_tokens\n"
                  "or min_length force more (default 262144; 400 past it)")
      ->check(CLI::Range(size_t(1), size_t(1) << 40));
  cmd->add_option("--max-attention-values", args.max_attention_values,
                  "Most cross-attention weights one request may hold (\"attention\", \"alignment\",\n"
                  "format=html): sentences x max(beams, n_best) x decoder layers x heads x new tokens x\n"
                  "source tokens (default 16777216; 400 past it)")
      ->check(CLI::Range(size_t(1), size_t(1) << 40));
  cmd->add_option("--read-timeout", args.read_timeout,
                  "Seconds a request's head and body may take to arrive, from its first byte (default 10;\n"
                  "408 and the connection closed past it)")
      ->check(CLI::Range(0.1, 3600.0));
  cmd->add_option("--max-client-connections", args.max_client_connections,
                  "Open connections per client address (default 256; 0 = no cap). Past it the address's\n"
                  "oldest connection without a request being answered is closed")
      ->check(CLI::Range(size_t(0), size_t(1) << 20));
  cmd->add_option("--api-keys", args.api_keys_file,
                  "File of API keys, one per line (# starts a comment): translation and speech requests\n"
                  "and GET /v1/models then need one (api_key field or parameter, or Authorization: Bearer KEY),\n"
                  "403 otherwise. After a key, optional fields: name=ID (its id in /metrics and the log),\n"
                  "req_limit=N (requests per minute), char_limit=N (characters per request),\n"
                  "daily_char_limit=N (characters per day); past a limit 429 with Retry-After");
  cmd->add_option("--admin-key", args.admin_key_file,
                  "File holding the admin key (same format as --api-keys): POST /admin/reload, with it as\n"
                  "Authorization: Bearer KEY or api_key, re-reads the models as SIGHUP does. Without it the\n"
                  "route does not exist (404)");
  cmd->add_option("--access-log", args.access_log,
                  "Where the access log goes: one JSON line per request (time, id, route, status, latency_ms,\n"
                  "chars, model, key id). Default - (stderr); off: none; else a file, appended to");
  cmd->add_flag("--log-text", args.log_text, "The access log also holds the request's texts (default: never)");
  cmd->add_option("--key-window-seconds", args.key_window_seconds,
                  "Length of the req_limit window (default 60; for tests)")
      ->check(CLI::Range(0.01, 3600.0))
      ->group("");
  cmd->add_option("--cors-origin", args.cors_origins,
                  "Browser origin allowed to call the API (repeatable; * = any). Default: none")
      ->allow_extra_args(false);
  cmd->add_option("--http-threads", args.http_threads,
                  "Requests answered at once (default 128; more wait, read whole, for a free thread;\n"
                  "/health, /ready and /metrics have threads of their own)")
      ->check(CLI::Range(1, 4096));
  cmd->add_flag("--no-page", args.no_page,
                "Do not serve the translation page at GET / (API only; GET / is then a 404)");
  cmd->add_option("--file-ttl", args.file_ttl,
                  "Seconds a translated file is kept for its download (POST /translate_file's URL, DeepL's\n"
                  "/v2/document result) (default 3600; 404 after)")
      ->check(CLI::Range(0.0, 30.0 * 86400));
  cmd->add_option("--max-stored-files", args.max_stored_files,
                  "Translated files and DeepL documents kept or waiting at once (default 64; 429 past it)")
      ->check(CLI::Range(size_t(1), size_t(1) << 20));
  cmd->add_option("--max-stored-file-bytes", args.max_stored_file_bytes,
                  "Bytes of translated files and waiting uploads kept at once (default 256 MiB; 429 past it).\n"
                  "One file is a request body: --max-body-bytes bounds it")
      ->check(CLI::Range(size_t(1), size_t(1) << 40));
  cmd->add_option("--file-timeout", args.file_timeout,
                  "Seconds one file's translation or one audio upload's transcription may take (default\n"
                  "600): POST /translate_file and /v1/audio/* answer 504 past it, a DeepL document ends with\n"
                  "status error")
      ->check(CLI::Range(0.01, 86400.0));
  cmd->add_option("--file-workers", args.file_workers,
                  "DeepL documents (/v2/document) translated at once; the others wait in turn (default 1)")
      ->check(CLI::Range(size_t(1), size_t(64)));
  cmd->add_option("--max-audio-bytes", args.max_audio_bytes,
                  "Largest audio file of POST /v1/audio/transcriptions and /translations (default 25 MiB,\n"
                  "as OpenAI's; 413 past it)")
      ->check(CLI::Range(size_t(64), size_t(1) << 32));
  cmd->add_option("--max-audio-seconds", args.max_audio_seconds,
                  "Longest audio those routes transcribe, once decoded (default 7200; 400 past it). Each\n"
                  "second decoded holds 64 KB while it is transcribed")
      ->check(CLI::Range(1.0, 86400.0));
  cmd->add_option("--translation-preset", args.translation_preset,
                  "Decoding defaults of translation requests (as `ordo translate --preset`)");
  cmd->add_option("--summarization-preset", args.summarization_preset,
                  "Decoding defaults of summarization requests (as `ordo summarize --preset`)");
  return cmd;
}

int run_serve(const ServeArgs& args) {
  ServerConfig config;
  config.host = args.host;
  config.port = args.port;
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int threads = args.model_options.threads > 0 ? args.model_options.threads : cores;
  const int workers = args.model_options.inter_threads;
  ModelOptions options;
  options.threads = std::max(1, threads / workers);  // per batch
  options.inter_threads = 1;                         // the server runs the batches
  options.compute_type = args.model_options.compute_type;
  options.weight_cache = !args.no_weight_cache;
  options.on_warning = faces::print_warning;
  // The models as the command line and --models FILE.json name them now: at start, and again
  // on every reload (SIGHUP, POST /admin/reload).
  const auto read_models = [args, options] {
    std::vector<ModelSpec> specs;
    for (const std::string& model : args.models) specs.push_back(model_spec(model, options));
    if (!args.models_file.empty())
      for (const ModelSpec& spec : models_file(args.models_file, options)) specs.push_back(spec);
    if (specs.empty()) specs.push_back(model_spec("en-de", options));
    return specs;
  };
  config.models = read_models();
  config.reread_models = read_models;
  config.translation_preset = find_preset(args.translation_preset);
  config.summarization_preset = find_preset(args.summarization_preset);
  config.batching.workers = workers;
  config.batching.max_batch_size = args.batching.batch_size;
  config.batching.max_batch_tokens = args.batching.batch_tokens;
  config.batching.max_wait_ms = args.batch_wait_ms;
  config.batching.idle_seconds = args.idle_release;
  config.batching.on_idle = [] { release_idle_memory(); };
  config.batching.max_queue = args.max_queue;
  config.limits.max_body_bytes = args.max_body_bytes;
  config.limits.max_file_bytes = args.max_file_bytes;
  config.limits.max_chars = args.max_chars;
  config.limits.max_texts = args.max_texts;
  config.limits.timeout_seconds = args.timeout;
  config.limits.max_beam_size = args.max_beam_size;
  config.limits.max_request_cost = args.max_request_cost;
  config.limits.max_attention_values = args.max_attention_values;
  config.limits.read_timeout_seconds = args.read_timeout;
  config.limits.max_client_connections = args.max_client_connections;
  if (!args.api_keys_file.empty()) config.api_keys = read_api_keys(args.api_keys_file);
  if (!args.admin_key_file.empty()) config.admin_keys = read_api_keys(args.admin_key_file);
  config.access_log = args.access_log;
  config.log_text = args.log_text;
  config.key_minute_seconds = args.key_window_seconds;
  config.cors_origins = args.cors_origins;
  config.http_threads = args.http_threads;
  config.page = !args.no_page;
  config.files.ttl_seconds = args.file_ttl;
  config.files.max_stored_files = args.max_stored_files;
  config.files.max_stored_bytes = args.max_stored_file_bytes;
  config.files.timeout_seconds = args.file_timeout;
  config.files.workers = args.file_workers;
  config.speech.max_audio_bytes = args.max_audio_bytes;
  config.speech.max_audio_seconds = args.max_audio_seconds;
  return run_server(config);
}

}  // namespace ordo::server
