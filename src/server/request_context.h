// What a request thread knows of the request it answers beyond httplib's Request: when it was
// whole, and its client's socket. Connections makes it (connections.h) and hands it, with the
// request's bytes, to the ServeFn; the route handlers find it by their Request.
//
// Why by the Request's address: cpp-httplib (0.11) calls a route handler with its Request and
// Response and nothing else of the caller's, and Request has no slot for user data. What it does
// have is process_request()'s setup_request callback, called on the Request after its head is
// parsed and before routing (httplib's SSLServer uses it to attach the SSL*). So the server
// registers the context under the Request's address there, and drops it when process_request()
// returns (the Request lives on that call's stack until then); a handler and the logger (run
// inside the same call) ask RequestContexts::of(req). Nothing hides in thread-local state.
// The one request without a context is one httplib answers itself before setup_request (a
// Range header it cannot parse: 416; Connections has already refused bad heads): its latency
// metric counts from its answer, not from when it was whole.
#pragma once

#include <httplib.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "server/access_log.h"

namespace ordo::server {

struct RequestContext {
  // When Connections had the request whole: its latency and --timeout count from there, the
  // wait for a free request thread included.
  std::chrono::steady_clock::time_point received = std::chrono::steady_clock::now();
  int client_fd = -1;  // the client's socket; -1: none (a request not read by Connections)
  // What the handler learned for the access log (access_log.h); copies of the context share it.
  std::shared_ptr<AccessRecord> record = std::make_shared<AccessRecord>();

  // Whether the client has closed or reset its connection: a client that closes its side
  // while waiting has given up (as nginx takes it).
  bool client_gone() const;
};

class RequestContexts {
 public:
  // Registers `context` for `req` until the Scope ends.
  class Scope {
   public:
    explicit Scope(RequestContexts& contexts) : contexts_(contexts) {}
    ~Scope() {
      if (req_) contexts_.remove(req_);
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    void add(const httplib::Request* req, const RequestContext* context) {
      contexts_.add(req, context);
      req_ = req;
    }

   private:
    RequestContexts& contexts_;
    const httplib::Request* req_ = nullptr;
  };

  // The context registered for `req`; for one that has none, a context received now with no
  // socket.
  RequestContext of(const httplib::Request& req) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = contexts_.find(&req);
    return it == contexts_.end() ? RequestContext{} : *it->second;
  }

 private:
  void add(const httplib::Request* req, const RequestContext* context) {
    std::lock_guard<std::mutex> lock(mutex_);
    contexts_[req] = context;
  }
  void remove(const httplib::Request* req) {
    std::lock_guard<std::mutex> lock(mutex_);
    contexts_.erase(req);
  }

  mutable std::mutex mutex_;
  std::unordered_map<const httplib::Request*, const RequestContext*> contexts_;
};

}  // namespace ordo::server
