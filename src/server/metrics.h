// GET /metrics: Prometheus text exposition through prometheus-cpp (Debian's prometheus-cpp-dev,
// the core library only: ordo serves the text itself on its own port and route).
#pragma once

#include <memory>
#include <string>

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
};

}  // namespace ordo::server
