// What `ordo serve` is started with: the limits of one request and the server's whole
// configuration. Apart from server.h (run_server) so that the service behind the routes
// (service.h) reads its configuration without depending on the server that runs it.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ordo/options.h"
#include "server/api_keys.h"
#include "server/batcher.h"
#include "server/models.h"

namespace ordo::server {

// What one request may ask for. Past a limit the answer is an error, never a stall.
struct Limits {
  size_t max_body_bytes = 1 << 20;  // 413 past it
  // A file upload's body (POST /translate_file, /v2/document: office files with pictures run to
  // megabytes); 413 past it.
  size_t max_file_bytes = 20 << 20;
  size_t max_chars = 10000;     // characters per text (q element); 400 past it
  size_t max_texts = 256;       // texts per request; 400 past it
  double timeout_seconds = 60;  // a request not answered by then: 504
  int max_beam_size = 16;       // beam_size, n_best; alternatives < this
  int max_new_tokens = 1024;    // max_new_tokens, max_length
  // Decoding work: sentences x beams x new tokens (see request_cost()); 400 past it.
  size_t max_request_cost = size_t(1) << 18;
  // Cross-attention weights a request may hold (asked by "attention", "alignment" or
  // format=html): sentences x max(beams, n_best) x decoder layers x heads x new tokens (as the
  // cost counts them) x source tokens; 400 past it, before decoding, and after it on the
  // weights the hypotheses hold. 2^24 floats: 64 MB, and at most ~0.4 GB of JSON text.
  size_t max_attention_values = size_t(1) << 24;
  double read_timeout_seconds = 10;     // a request's head and body must arrive within this: 408
  size_t max_client_connections = 256;  // open connections per client address (0: no cap)
};

// Files (POST /translate_file, DeepL's /v2/document) and DeepL's glossaries: what the server
// keeps between requests (file_store.h). A file's bytes are a request body: --max-body-bytes
// bounds them.
struct FileServing {
  double ttl_seconds = 3600;                     // a translated file is kept this long for its download
  size_t max_stored_bytes = size_t(256) << 20;   // all kept files and uploads waiting together
  size_t max_stored_files = 64;                  // files and document jobs kept at once
  double timeout_seconds = 600;                  // one file's translation; past it the job fails
  size_t workers = 1;                            // DeepL documents translated at once (the rest queue)
  size_t max_glossaries = 1000;                  // DeepL glossaries kept, all keys together
  size_t max_glossary_entries = 10000;           // entries of one glossary
  size_t max_glossary_bytes = size_t(64) << 20;  // the terms of all glossaries together
};

// Speech (POST /v1/audio/transcriptions and /translations, OpenAI's API; audio_routes.cpp):
// what one upload may cost. An upload is decoded and transcribed by one of the speech workers
// (as many as the batches run at once, --inter-threads), within FileServing::timeout_seconds.
struct SpeechServing {
  size_t max_audio_bytes = size_t(25) << 20;  // the file part (OpenAI's 25 MB); 413 past it
  double max_audio_seconds = 2 * 3600.0;      // its duration once decoded; 400 past it
  size_t max_waiting = 16;                    // uploads waiting for a worker; 429 past it
};

struct ServerConfig {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: any free port (printed)
  std::vector<ModelSpec> models;
  std::shared_ptr<const DecodeOptions> translation_preset, summarization_preset;
  BatchingOptions batching;
  Limits limits;
  FileServing files;
  SpeechServing speech;
  std::vector<ApiKey> api_keys;           // non-empty: every translation needs one of them
  std::vector<std::string> cors_origins;  // allowed browser origins ("*" = any)
  // Operating it (docs/serving.md): POST /admin/reload exists with admin keys (--admin-key);
  // SIGHUP and that route re-read the models with `reread_models` (unset: `models` again).
  std::vector<ApiKey> admin_keys;
  std::function<std::vector<ModelSpec>()> reread_models;
  double key_minute_seconds = 60, key_day_seconds = 86400;  // the windows of the keys' limits
  std::string access_log;  // "" or "-": stderr; "off": none; else a file (access_log.h)
  bool log_text = false;   // the access log also holds the texts
  int http_threads = 128;  // requests answered at once (GET /health, /ready and
                           // /metrics have threads of their own)
  bool page = true;        // GET / serves the translation page (src/web); false: 404
};

// The body an audio upload may have: its file (SpeechServing::max_audio_bytes), its other
// fields (Limits::max_body_bytes) and the multipart framing.
inline size_t audio_upload_bytes(const ServerConfig& config) {
  return config.speech.max_audio_bytes + config.limits.max_body_bytes + 65536;
}

}  // namespace ordo::server
