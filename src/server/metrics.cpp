#include "server/metrics.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <utility>

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
                  .Help(
                      "Connections closed before a request of theirs was answered, by reason (read_timeout, "
                      "evicted, refused, budget, bad_request)")
                  .Register(*registry_);
  reloads_ = &prometheus::BuildCounter()
                  .Name("ordo_reload_total")
                  .Help("Reloads of the models (SIGHUP, POST /admin/reload), by result (ok, failed)")
                  .Register(*registry_);
  load_errors_ = &prometheus::BuildCounter()
                      .Name("ordo_model_load_errors_total")
                      .Help("Models a reload could not load (the old one, if any, kept serving), by model")
                      .Register(*registry_);
  models_ = &prometheus::BuildGauge().Name("ordo_models").Help("Models served").Register(*registry_).Add({});
  key_limit_ = &prometheus::BuildGauge()
                    .Name("ordo_api_key_limit")
                    .Help(
                        "Limits of each API key (by its id), by limit: req_limit (requests per minute), "
                        "char_limit (characters per request), daily_char_limit (characters per day); 0: none")
                    .Register(*registry_);
  key_requests_ = &prometheus::BuildCounter()
                       .Name("ordo_api_key_requests_total")
                       .Help("Requests admitted, by API key id")
                       .Register(*registry_);
  key_chars_ = &prometheus::BuildCounter()
                    .Name("ordo_api_key_characters_total")
                    .Help("Characters of the requests admitted, by API key id")
                    .Register(*registry_);
  key_limited_ = &prometheus::BuildCounter()
                      .Name("ordo_api_key_limited_total")
                      .Help("Requests refused for a limit of their API key, by key id and limit")
                      .Register(*registry_);
  key_window_requests_ = &prometheus::BuildGauge()
                              .Name("ordo_api_key_window_requests")
                              .Help("Requests of each API key in its current minute window (req_limit)")
                              .Register(*registry_);
  key_window_chars_ = &prometheus::BuildGauge()
                           .Name("ordo_api_key_window_characters")
                           .Help("Characters of each API key in its current day window (daily_char_limit)")
                           .Register(*registry_);
  log_dropped_ = &prometheus::BuildCounter()
                      .Name("ordo_access_log_dropped_lines_total")
                      .Help(
                          "Access-log lines dropped, by reason: queue_full (10000 were waiting to be written), "
                          "write_failed (the disk or a file size limit did not take them whole)")
                      .Register(*registry_);
  access_log_dropped(0, 0);
}

Metrics::~Metrics() = default;

void Metrics::reload(const std::string& result) { reloads_->Add({{"result", result}}).Increment(); }

void Metrics::model_load_error(const std::string& model) { load_errors_->Add({{"model", model}}).Increment(); }

void Metrics::models_served(size_t count) { models_->Set(static_cast<double>(count)); }

void Metrics::key_limits(const std::string& key, const KeyLimits& limits) {
  key_limit_->Add({{"key", key}, {"limit", "req_limit"}}).Set(static_cast<double>(limits.requests_per_minute));
  key_limit_->Add({{"key", key}, {"limit", "char_limit"}}).Set(static_cast<double>(limits.chars_per_request));
  key_limit_->Add({{"key", key}, {"limit", "daily_char_limit"}}).Set(static_cast<double>(limits.chars_per_day));
  key_requests_->Add({{"key", key}});
  key_chars_->Add({{"key", key}});
  key_window(key, 0, 0);
}

void Metrics::key_used(const std::string& key, int64_t chars) {
  key_requests_->Add({{"key", key}}).Increment();
  key_chars_->Add({{"key", key}}).Increment(static_cast<double>(chars));
}

void Metrics::key_limited(const std::string& key, const char* limit) {
  key_limited_->Add({{"key", key}, {"limit", limit}}).Increment();
}

void Metrics::access_log_dropped(uint64_t queue_full, uint64_t write_failed) {
  std::lock_guard<std::mutex> lock(log_dropped_mutex_);
  const std::pair<const char*, uint64_t> totals[] = {{"queue_full", queue_full}, {"write_failed", write_failed}};
  for (const auto& [reason, lines] : totals) {
    prometheus::Counter& counter = log_dropped_->Add({{"reason", reason}});
    const double more = static_cast<double>(lines) - counter.Value();
    if (more > 0) counter.Increment(more);
  }
}

void Metrics::key_window(const std::string& key, int64_t requests, int64_t chars) {
  key_window_requests_->Add({{"key", key}}).Set(static_cast<double>(requests));
  key_window_chars_->Add({{"key", key}}).Set(static_cast<double>(chars));
}

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

std::string Metrics::text() const { return prometheus::TextSerializer().Serialize(registry_->Collect()); }

}  // namespace ordo::server
