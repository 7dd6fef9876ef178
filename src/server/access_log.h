// The access log of `ordo serve`: one JSON line per answered request (time, request id, method,
// route, status, latency, characters, model, key id; the texts only with --log-text), written
// from httplib's logger hook, which also counts the request in /metrics (http_app.cpp). To
// stderr (default) or --access-log FILE; "off" writes none. The request id is the client's
// X-Request-Id when it is sane, else a new one, and is sent back in X-Request-Id.
// Lines go to a queue that a thread of the log writes out: a request never waits for a slow or
// undrained stderr; past kMaxQueuedLines waiting, new lines are dropped and counted. What is
// queued goes out in one write(2), whole lines only, so a reader of the file never sees half one;
// a write the disk cannot take whole (full, or over a size limit) is cut back to its last whole
// line, and the lines after it are dropped and counted.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

namespace ordo::server {

struct ApiKey;

// What a handler learns about its request for the log line (RequestContext::record): written
// by the request's own thread, read by the logger on the same thread after the handler.
struct AccessRecord {
  std::string id;                  // the request id (request_id())
  const ApiKey* key = nullptr;     // the request's API key (Service::check_key)
  std::string key_id;              // its id (api_keys.h), never the key
  std::string model;               // the served model's name
  int64_t chars = -1;              // characters of the request's texts (-1: none read)
  std::vector<std::string> texts;  // with --log-text only
};

// The client's X-Request-Id when it is 1-128 characters of letters, digits and "-_.:/+=",
// else a new id (16 hex digits, unique in the process).
std::string request_id(const std::string& client_value);

// Writes `line` and a newline to stderr in one write(2): the access log's batches, written to the
// same stderr by its own thread, never land inside one of the server's messages.
void stderr_line(const std::string& line);

class AccessLog {
 public:
  // `path`: "" or "-" for stderr, "off" for none, else a file opened for appending (ordo::Error
  // naming it when it cannot be).
  explicit AccessLog(const std::string& path, bool log_text);
  ~AccessLog();
  AccessLog(const AccessLog&) = delete;
  AccessLog& operator=(const AccessLog&) = delete;

  static constexpr size_t kMaxQueuedLines = 10000;

  bool log_text() const { return log_text_; }
  // Queues `line` (one JSON object) to be written whole with a newline.
  void write(const nlohmann::ordered_json& line);
  // Lines dropped because kMaxQueuedLines were waiting.
  uint64_t dropped() const { return dropped_; }
  // Lines dropped because they could not be written whole (ENOSPC, EFBIG, a closed pipe).
  uint64_t unwritten() const {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    return shared_->unwritten;
  }
  // The UTC time now as 2026-11-26T10:56:51.123Z.
  static std::string now_text();

 private:
  // Shared with the writer thread, which a stop leaves behind (detached) if it is stuck in a
  // write for 5 s (a pipe nobody reads): stopping the server never waits for the log.
  struct Shared {
    int fd = -1;  // stderr's, or the file's (then closed here); -1: no log
    bool own = false;
    std::mutex mutex;
    std::condition_variable wake;
    std::deque<std::string> queue;        // guarded by mutex
    bool stopping = false, done = false;  // guarded by mutex
    uint64_t unwritten = 0;               // guarded by mutex
    ~Shared() {
      if (own) ::close(fd);
    }
  };
  static void run(const std::shared_ptr<Shared>& shared);

  bool log_text_ = false;
  std::atomic<uint64_t> dropped_{0};
  std::shared_ptr<Shared> shared_ = std::make_shared<Shared>();
  std::thread writer_;
};

}  // namespace ordo::server
