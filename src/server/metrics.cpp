#include "server/metrics.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

namespace ordo::server {
namespace {

const prometheus::Histogram::BucketBoundaries kLatencyBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                                 0.5,   1,    2.5,   5,    10,  30};
const prometheus::Histogram::BucketBoundaries kBatchSizeBuckets = {1, 2, 4, 8, 16, 32, 64, 128};
const prometheus::Histogram::BucketBoundaries kBatchTokenBuckets = {16, 64, 256, 1024, 4096, 16384};

}  // namespace

Metrics::Metrics() : registry_(std::make_shared<prometheus::Registry>()) {
  requests_ = &prometheus::BuildCounter()
                   .Name("ordo_http_requests_total")
                   .Help("HTTP requests answered, by route and status code")
                   .Register(*registry_);
  latency_ = &prometheus::BuildHistogram()
                  .Name("ordo_http_request_duration_seconds")
                  .Help("Time from reading a request's headers to its answer, by route")
                  .Register(*registry_);
  queue_depth_ = &prometheus::BuildGauge()
                      .Name("ordo_queue_sentences")
                      .Help("Sentences waiting for a batch")
                      .Register(*registry_)
                      .Add({});
  in_flight_ = &prometheus::BuildGauge()
                    .Name("ordo_http_requests_in_flight")
                    .Help("Translation requests being answered")
                    .Register(*registry_)
                    .Add({});
  batch_sentences_ = &prometheus::BuildHistogram()
                          .Name("ordo_batch_sentences")
                          .Help("Sentences per batch, by model")
                          .Register(*registry_);
  batch_tokens_ = &prometheus::BuildHistogram()
                       .Name("ordo_batch_padded_source_tokens")
                       .Help("Source tokens per batch, padding included (rows x longest), by model")
                       .Register(*registry_);
  batch_seconds_ = &prometheus::BuildHistogram()
                        .Name("ordo_batch_duration_seconds")
                        .Help("Time to translate one batch, by model")
                        .Register(*registry_);
  generated_tokens_ = &prometheus::BuildCounter()
                           .Name("ordo_generated_tokens_total")
                           .Help("Target tokens generated (best hypotheses), by model")
                           .Register(*registry_);
  sentences_ = &prometheus::BuildCounter()
                    .Name("ordo_translated_sentences_total")
                    .Help("Sentences translated or summarized, by model")
                    .Register(*registry_);
  connections_ = &prometheus::BuildGauge()
                      .Name("ordo_http_connections")
                      .Help("Open client connections")
                      .Register(*registry_)
                      .Add({});
  dropped_ = &prometheus::BuildCounter()
                  .Name("ordo_http_connections_dropped_total")
                  .Help("Connections closed before a request of theirs was answered, by reason (read_timeout, "
                        "evicted, refused, budget, bad_request)")
                  .Register(*registry_);
}

Metrics::~Metrics() = default;

void Metrics::request(const std::string& route, int status, double seconds) {
  requests_->Add({{"route", route}, {"status", std::to_string(status)}}).Increment();
  if (seconds >= 0) latency_->Add({{"route", route}}, kLatencyBuckets).Observe(seconds);
}

void Metrics::queue_depth(size_t sentences) { queue_depth_->Set(static_cast<double>(sentences)); }

void Metrics::in_flight(int delta) { in_flight_->Increment(delta); }

void Metrics::open_connections(size_t count) { connections_->Set(static_cast<double>(count)); }

void Metrics::connection_dropped(const char* reason) { dropped_->Add({{"reason", reason}}).Increment(); }

void Metrics::batch_done(const std::string& model, size_t sentences, size_t padded_tokens, size_t generated_tokens,
                         double seconds) {
  const prometheus::Labels labels = {{"model", model}};
  batch_sentences_->Add(labels, kBatchSizeBuckets).Observe(static_cast<double>(sentences));
  batch_tokens_->Add(labels, kBatchTokenBuckets).Observe(static_cast<double>(padded_tokens));
  batch_seconds_->Add(labels, kLatencyBuckets).Observe(seconds);
  generated_tokens_->Add(labels).Increment(static_cast<double>(generated_tokens));
  sentences_->Add(labels).Increment(static_cast<double>(sentences));
}

std::string Metrics::text() const {
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

}  // namespace ordo::server
