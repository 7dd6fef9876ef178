// The framing of an HTTP/1.1 request, read from its head before the request is handed to a
// thread (connections.h): where the head ends, how long the body is, and the heads refused
// because their framing is ambiguous or too large. No HTTP library types (fuzzed alone).
#pragma once

#include <cstddef>
#include <string>

namespace ordo::server {

// "Bad Request" for 400, ...: the reason phrase of the statuses the server answers.
const char* status_text(int status);

// What a request head says about framing, or why it is refused.
struct RequestHead {
  int status = 0;     // 0: fine; else the error status (400, 413, 431, 501) ...
  std::string error;  // ... and its message
  std::string method, path;
  size_t head_bytes = 0;                 // request line and headers, the blank line included
  size_t body_bytes = 0;                 // Content-Length (0 when absent)
  bool chunked = false;                  // Transfer-Encoding: chunked (see chunked_body_end)
  size_t expect_at = std::string::npos;  // offset of an "Expect: 100-continue" header's name
};
// Parses the head at the start of `bytes`: head_bytes == 0 and status == 0 while the head is
// not whole yet. Refused: a head past `max_head_bytes` (431), Content-Length past
// `max_body_bytes` (413), two Content-Length or Transfer-Encoding headers, a malformed
// Content-Length, Transfer-Encoding beside Content-Length (400), an encoding but chunked (501).
RequestHead parse_request_head(const std::string& bytes, size_t max_head_bytes, size_t max_body_bytes);

// Where a chunked body that starts at `start` in `bytes` ends (after the last chunk and the
// trailers): `end` 0 while not whole; `status` 400 (malformed) or 413 (more than
// `max_body_bytes` of data) with `error`.
struct ChunkedBody {
  size_t end = 0;
  int status = 0;
  std::string error;
};
ChunkedBody chunked_body_end(const std::string& bytes, size_t start, size_t max_body_bytes);

}  // namespace ordo::server
