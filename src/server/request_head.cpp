#include "server/request_head.h"

#include <strings.h>

#include <cctype>

#include "server/request_fields.h"

namespace ordo::server {
namespace {

bool equals_nocase(const std::string& a, const char* b) { return strcasecmp(a.c_str(), b) == 0; }

std::string trimmed(const std::string& s) {
  const size_t start = s.find_first_not_of(" \t");
  if (start == std::string::npos) return "";
  return s.substr(start, s.find_last_not_of(" \t") + 1 - start);
}

}  // namespace

const char* status_text(int status) {
  switch (status) {
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Payload Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 431: return "Request Header Fields Too Large";
    case 499: return "Client Closed Request";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    default: return "Error";
  }
}

RequestHead parse_request_head(const std::string& bytes, size_t max_head_bytes, size_t max_body_bytes) {
  RequestHead h;
  const auto refuse = [&](int status, const std::string& why) {
    h.status = status;
    h.error = std::string(status_text(status)) + ": " + why;
    return h;
  };
  const size_t end = bytes.find("\r\n\r\n");
  if ((end == std::string::npos && bytes.size() > max_head_bytes) ||
      (end != std::string::npos && end + 4 > max_head_bytes))
    return refuse(431, "the request line and headers exceed " + std::to_string(max_head_bytes) + " bytes");
  if (end == std::string::npos) return h;  // not whole yet
  const size_t line_end = bytes.find("\r\n");
  const std::string line = bytes.substr(0, line_end);
  const size_t sp1 = line.find(' '), sp2 = sp1 == std::string::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp1 == 0 || sp2 == std::string::npos || sp2 == sp1 + 1)
    return refuse(400, "malformed request line '" + shown(line) + "'");
  h.method = line.substr(0, sp1);
  const std::string target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  h.path = target.substr(0, target.find('?'));
  int lengths = 0;
  bool has_encoding = false;
  for (size_t at = line_end + 2; at < end + 2;) {
    const size_t next = bytes.find("\r\n", at);
    const std::string header = bytes.substr(at, next - at);
    const size_t header_at = at;
    at = next + 2;
    const size_t colon = header.find(':');
    if (colon == std::string::npos) continue;
    const std::string name = trimmed(header.substr(0, colon)), value = trimmed(header.substr(colon + 1));
    if (equals_nocase(name, "Content-Length")) {
      if (++lengths > 1) return refuse(400, "more than one Content-Length header");
      if (value.empty() || value.size() > 18 || value.find_first_not_of("0123456789") != std::string::npos)
        return refuse(400, "invalid Content-Length '" + shown(value) + "'");
      h.body_bytes = static_cast<size_t>(std::stoull(value));
    } else if (equals_nocase(name, "Transfer-Encoding")) {
      if (has_encoding) return refuse(400, "more than one Transfer-Encoding header");
      has_encoding = true;
      if (!equals_nocase(value, "chunked"))
        return refuse(501, "Transfer-Encoding '" + shown(value) + "' (only chunked)");
      h.chunked = true;
    } else if (equals_nocase(name, "Expect") && equals_nocase(value, "100-continue")) {
      h.expect_at = header_at + header.find_first_not_of(" \t");
    }
  }
  if (h.chunked && lengths) return refuse(400, "both Transfer-Encoding and Content-Length");
  if (h.body_bytes > max_body_bytes) {
    h.status = 413;
    h.error = "Request body larger than " + std::to_string(max_body_bytes) + " bytes";
    return h;
  }
  h.head_bytes = end + 4;
  return h;
}

ChunkedBody chunked_body_end(const std::string& bytes, size_t start, size_t max_body_bytes) {
  ChunkedBody body;
  const auto refuse = [&](int status, const std::string& why) {
    body.status = status;
    body.error = status == 413 ? "Request body larger than " + std::to_string(max_body_bytes) + " bytes"
                               : std::string(status_text(status)) + ": " + why;
    return body;
  };
  constexpr size_t kMaxLine = 1024;  // a chunk-size line (with extensions) or a trailer
  size_t at = start, data = 0;
  while (true) {
    const size_t line_end = bytes.find("\r\n", at);
    if (line_end == std::string::npos)
      return bytes.size() - at > kMaxLine ? refuse(400, "a chunk size line longer than 1024 bytes") : body;
    if (line_end - at > kMaxLine) return refuse(400, "a chunk size line longer than 1024 bytes");
    size_t size = 0, digits = 0;
    for (size_t i = at; i < line_end && std::isxdigit(static_cast<unsigned char>(bytes[i])); ++i, ++digits) {
      if (digits == 15) return refuse(413, "");
      size = size * 16 + static_cast<size_t>(std::isdigit(static_cast<unsigned char>(bytes[i]))
                                                 ? bytes[i] - '0'
                                                 : (std::tolower(static_cast<unsigned char>(bytes[i])) - 'a' + 10));
    }
    const char after = at + digits < line_end ? bytes[at + digits] : ';';
    if (digits == 0 || (after != ';' && after != ' ' && after != '\t')) return refuse(400, "malformed chunk size");
    if (size > max_body_bytes - data) return refuse(413, "");
    data += size;
    at = line_end + 2;
    if (size == 0) break;
    if (bytes.size() < at + size + 2) return body;  // the chunk is not whole yet
    if (bytes.compare(at + size, 2, "\r\n") != 0) return refuse(400, "a chunk not followed by CRLF");
    at += size + 2;
  }
  // Trailers, up to the blank line.
  for (int trailers = 0;; ++trailers) {
    const size_t line_end = bytes.find("\r\n", at);
    if (line_end == std::string::npos)
      return bytes.size() - at > kMaxLine ? refuse(400, "a trailer longer than 1024 bytes") : body;
    if (line_end - at > kMaxLine || trailers > 64)
      return refuse(400, "a trailer longer than 1024 bytes, or more than 64");
    const bool blank = line_end == at;
    at = line_end + 2;
    if (blank) {
      body.end = at;
      return body;
    }
  }
}

}  // namespace ordo::server
