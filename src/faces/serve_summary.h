// What `ordo --help` says of `ordo serve`, and `ordo serve --help` first: one text for the
// command line, which lists the command, and the server's module, which runs it.
#pragma once

namespace ordo::faces {

inline constexpr const char* kServeSummary =
    "Serve models over HTTP: LibreTranslate's API (POST /translate, GET /languages) and ordo's\n"
    "(POST /v1/translate, /v1/summarize, GET /v1/models, /health, /ready, /metrics), with\n"
    "concurrent requests batched together, and a translation page at GET / (--no-page: API only).\n"
    "Stops on SIGTERM/SIGINT after answering what is in flight.";

}  // namespace ordo::faces
