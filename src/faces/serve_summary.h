// What `ordo --help` says of `ordo serve`, and `ordo serve --help` first: one text for the
// command line, which lists the command, and the server's module, which runs it.
#pragma once

namespace ordo::faces {

inline constexpr const char* kServeSummary =
    "Serve models over HTTP: LibreTranslate's API (POST /translate, /translate_file, GET /languages),\n"
    "DeepL's API v2 (/v2/*), OpenAI's audio API for Whisper models (POST /v1/audio/transcriptions,\n"
    "/v1/audio/translations) and ordo's (POST /v1/translate, /v1/summarize, GET /v1/models, /health,\n"
    "/ready, /metrics), with concurrent requests batched together, and a page at GET / (--no-page:\n"
    "API only).\n"
    "Stops on SIGTERM/SIGINT after answering what is in flight.";

}  // namespace ordo::faces
