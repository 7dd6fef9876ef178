// GET /metrics: Prometheus text exposition through prometheus-cpp (Debian's prometheus-cpp-dev,
// the core library only: ordo serves the text itself on its own port and route).
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "server/api_keys.h"
#include "server/batcher.h"
#include "server/connections.h"

namespace prometheus {
class Registry;
template <typename T>
class Family;
class Counter;
class Gauge;
class Histogram;
}  // namespace prometheus

namespace ordo::server {

class Metrics : public BatchObserver, public ConnectionObserver {
 public:
  Metrics();
  ~Metrics() override;

  // One answered request: `route` is the route pattern (a fixed set: "/translate", ..., "other").
  void request(const std::string& route, int status, double seconds);
  void queue_depth(size_t sentences) override;
  void batch_done(const std::string& model, size_t sentences, size_t padded_tokens, size_t generated_tokens,
                  double seconds) override;
  void in_flight(int delta);
  void open_connections(size_t count) override;
  void connection_dropped(const char* reason) override;

  // Reloads (reload.cpp): each one's result ("ok", "failed"), each model that did not load,
  // and how many models are served.
  void reload(const std::string& result);
  void model_load_error(const std::string& model);
  void models_served(size_t count);
  // API keys by id (never the key): the limits of the file, requests and characters admitted,
  // requests refused by limit, and the use of the current windows (set before each scrape).
  void key_limits(const std::string& key, const KeyLimits& limits);
  void key_used(const std::string& key, int64_t chars);
  void key_limited(const std::string& key, const char* limit);
  void key_window(const std::string& key, int64_t requests, int64_t chars);
  // Access-log lines dropped since start (access_log.h), brought up to date before each scrape:
  // reason "queue_full" (the log could not keep up), "write_failed" (not written whole).
  void access_log_dropped(uint64_t queue_full, uint64_t write_failed);

  // The text format (version 0.0.4).
  std::string text() const;
  static const char* content_type() { return "text/plain; version=0.0.4; charset=utf-8"; }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>* requests_;
  prometheus::Family<prometheus::Histogram>* latency_;
  prometheus::Gauge* queue_depth_;
  prometheus::Gauge* in_flight_;
  prometheus::Family<prometheus::Histogram>* batch_sentences_;
  prometheus::Family<prometheus::Histogram>* batch_tokens_;
  prometheus::Family<prometheus::Histogram>* batch_seconds_;
  prometheus::Family<prometheus::Counter>* generated_tokens_;
  prometheus::Family<prometheus::Counter>* sentences_;
  prometheus::Gauge* connections_;
  prometheus::Family<prometheus::Counter>* dropped_;
  prometheus::Family<prometheus::Counter>* reloads_;
  prometheus::Family<prometheus::Counter>* load_errors_;
  prometheus::Gauge* models_;
  prometheus::Family<prometheus::Gauge>* key_limit_;
  prometheus::Family<prometheus::Counter>* key_requests_;
  prometheus::Family<prometheus::Counter>* key_chars_;
  prometheus::Family<prometheus::Counter>* key_limited_;
  prometheus::Family<prometheus::Gauge>* key_window_requests_;
  prometheus::Family<prometheus::Gauge>* key_window_chars_;
  prometheus::Family<prometheus::Counter>* log_dropped_;
  std::mutex log_dropped_mutex_;  // two scrapes at once add each difference once
};

}  // namespace ordo::server
