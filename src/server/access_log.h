// The access log of `ordo serve`: one JSON line per answered request (time, request id, method,
// route, status, latency, characters, model, key id; the texts only with --log-text), written
// from httplib's logger hook, which also counts the request in /metrics (http_app.cpp). To
// stderr (default) or --access-log FILE; "off" writes none. The request id is the client's
// X-Request-Id when it is sane, else a new one, and is sent back in X-Request-Id.
#pragma once

#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ordo::server {

struct ApiKey;

// What a handler learns about its request for the log line (RequestContext::record): written
// by the request's own thread, read by the logger on the same thread after the handler.
struct AccessRecord {
  std::string id;      // the request id (request_id())
  const ApiKey* key = nullptr;  // the request's API key (Service::check_key)
  std::string key_id;  // its id (api_keys.h), never the key
  std::string model;   // the served model's name
  int64_t chars = -1;  // characters of the request's texts (-1: none read)
  std::vector<std::string> texts;  // with --log-text only
};

// The client's X-Request-Id when it is 1-128 characters of letters, digits and "-_.:/+=",
// else a new id (16 hex digits, unique in the process).
std::string request_id(const std::string& client_value);

class AccessLog {
 public:
  // `path`: "" or "-" for stderr, "off" for none, else a file opened for appending (ordo::Error
  // naming it when it cannot be).
  explicit AccessLog(const std::string& path, bool log_text);
  ~AccessLog();
  AccessLog(const AccessLog&) = delete;
  AccessLog& operator=(const AccessLog&) = delete;

  bool log_text() const { return log_text_; }
  // Writes `line` (one JSON object) and a newline, whole, under a lock.
  void write(const nlohmann::ordered_json& line);
  // The UTC time now as 2026-11-26T10:56:51.123Z.
  static std::string now_text();

 private:
  std::FILE* out_ = nullptr;
  bool own_ = false;
  bool log_text_ = false;
  std::mutex mutex_;
};

}  // namespace ordo::server
