// `ordo serve`: an HTTP server for translation, summarization and speech recognition.
//
//   routes            LibreTranslate's POST /translate and GET /languages, as its clients call
//                     them; ordo's POST /v1/translate, /v1/summarize (every decoding option,
//                     answers shaped like `ordo translate --json`), GET /v1/models, /health,
//                     /ready, /metrics (Prometheus); OpenAI's POST /v1/audio/transcriptions
//                     and /translations for Whisper models (audio_routes.cpp)
//   the page          GET / and its files (src/web/page_assets.h: compiled into the binary),
//                     GET /frontend/settings (the limits, as LibreTranslate answers them)
//   batching          batcher.h: concurrent requests' sentences share batches
//   what is served    models.h; text cut into sentences and put back: ordo::SentenceLayout and
//                     ordo::HtmlDocument (ordo/document.h)
//
// Built on the public library (include/ordo/) and cpp-httplib; the serve command
// (serve_command.cpp) fills a ServerConfig and calls run_server().
#pragma once

#include "server/server_config.h"

namespace ordo::server {

// Binds, prints "ordo serve: listening on http://HOST:PORT" on stdout, loads the models
// (GET /ready answers 503 until then), prints "ordo serve: ready", and serves until SIGTERM
// or SIGINT: then it stops accepting, answers what is in flight, and returns 0. Throws
// ordo::Error (a model that does not load, an address that cannot be bound).
int run_server(const ServerConfig& config);

}  // namespace ordo::server
