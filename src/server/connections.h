// Connections: what stands between the sockets and the request threads. cpp-httplib gives each
// connection a thread from its first byte, with a timeout per read: a client sending a byte a
// second holds that thread for ever (slowloris), and it reads each pipelined request with a
// fresh buffer, dropping what came after the first. Here one thread reads every connection
// without blocking (epoll) and hands a request to a request thread only once it is whole (its
// head and its body, Content-Length or chunked; 100 Continue is answered from here), so
//   - a trickling or idle client holds no thread: only its socket and the bytes it sent (the
//     bytes of requests unfinished or waiting for a thread have a budget: past it the request
//     read longest gets 503);
//   - a request not whole `read_seconds` after its first byte gets 408 and its connection
//     is closed (one deadline for head and body, not per read);
//   - an address at its connection cap (or everyone at the total cap) loses its oldest
//     connection that is not being answered; if all are being answered, the new one gets 503;
//   - GET /health, /ready and /metrics have threads of their own: they answer while every
//     request thread is busy;
//   - pipelined requests stay in the connection's one buffer and are answered in order;
//   - a duplicate or malformed Content-Length, or Transfer-Encoding beside it: 400; a head past
//     `max_head_bytes`: 431; a body past `max_body_bytes`: 413 (for Content-Length, before the body is read).
// The request threads run httplib's own request parsing and routing (ServeFn) on the buffered
// bytes. Errors answered here are {"error": message} as the server's other errors.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/request_context.h"
#include "server/request_head.h"

namespace ordo::server {

struct ConnectionOptions {
  int request_threads = 128;        // requests answered at once (--http-threads)
  int probe_threads = 2;            // for GET /health, /ready, /metrics only
  double read_seconds = 10;         // a request's head and body, from its first byte (--read-timeout)
  double idle_seconds = 5;          // keep-alive: a connection without a request this long is closed
  double write_seconds = 10;        // an answer the client does not take in this long: closed
  size_t per_address = 256;         // connections from one client address; 0 = no cap
  size_t max_connections = 8192;    // all addresses together (also kept under RLIMIT_NOFILE)
  size_t max_head_bytes = 16384;    // request line and headers
  size_t max_body_bytes = 1 << 20;  // Content-Length, or the data of a chunked body
  // The bodies of requests to these paths (file uploads) may have up to max_upload_bytes.
  std::vector<std::string> upload_paths;
  size_t max_upload_bytes = 0;
  // Bytes of requests unfinished or waiting for a thread, all connections together: past it the
  // unfinished one read longest is refused (503).
  size_t max_buffered_bytes = size_t(64) << 20;
};

// Answers one request read from `stream` (httplib's Server::process_request), whose `context`
// says when it was whole and on which socket (request_context.h): false when the connection
// must be closed; `close` asks for "Connection: close"; `closed` is set when the client asked
// for it.
using ServeFn = std::function<bool(httplib::Stream& stream, const RequestContext& context, bool close, bool& closed)>;

// What the metrics see of the connections.
class ConnectionObserver {
 public:
  virtual ~ConnectionObserver() = default;
  virtual void open_connections(size_t count) {}  // every 50 ms
  // A connection closed (or answered an error and closed) before a request of it was answered:
  // "read_timeout", "evicted" (for a newer one at a cap), "refused" (a new one at a cap with
  // nothing to evict), "budget" (buffered bytes), "bad_request" (framing, sizes).
  virtual void connection_dropped(const char* reason) {}
};

class Connections {
 public:
  Connections(ConnectionOptions options, ServeFn serve, ConnectionObserver* observer = nullptr);
  ~Connections();
  Connections(const Connections&) = delete;
  Connections& operator=(const Connections&) = delete;

  // Takes an accepted socket (from httplib's accept loop); it is closed here.
  void add(int fd);
  // Stops reading new requests: idle and partly read connections are closed, whole requests
  // already read are answered (Connection: close), then the threads end. Idempotent.
  void stop();

  struct Connection;

 private:
  void loop();
  void work(bool probes);
  void accept_pending();
  void take_returned();
  void readable(Connection& c);
  void advance(Connection& c);  // a whole request buffered: hand it over; else keep reading
  void reject(Connection& c, int status, const std::string& message, const char* reason);
  size_t buffer_cap() const;    // bytes buffered per connection
  size_t largest_body() const;  // of any route
  // The body limit of a request target ("/v2/document?x"): an upload path's, else max_body_bytes.
  size_t body_limit(const std::string& target) const;
  void close(Connection& c);
  bool evict_for(const std::string& address);
  void sweep();
  void wake();

  const ConnectionOptions options_;
  const ServeFn serve_;
  ConnectionObserver* const observer_;
  int epoll_fd_ = -1, wake_fd_ = -1;
  // Owned by the loop thread.
  std::map<int, std::unique_ptr<Connection>> connections_;
  std::map<std::string, size_t> per_address_;
  size_t reading_bytes_ = 0;             // buffered by connections in kReading
  std::atomic<size_t> queued_bytes_{0};  // of whole requests waiting for a thread
  uint64_t next_id_ = 0;
  // Shared; guarded by mutex_.
  std::mutex mutex_;
  std::condition_variable work_ready_, probe_ready_;
  std::vector<int> pending_;                   // accepted, not yet seen by the loop
  std::vector<Connection*> returned_;          // answered by a request thread
  std::deque<Connection*> requests_, probes_;  // whole requests waiting for a thread
  bool stopping_ = false;
  bool threads_done_ = false;
  std::thread loop_thread_;
  std::vector<std::thread> workers_;
};

}  // namespace ordo::server
