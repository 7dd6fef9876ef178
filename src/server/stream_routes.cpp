// "stream": true on POST /v1/translate and /v1/summarize: the answer as server-sent events
// (text/event-stream). One `token` event per generated token of each text, with the final text
// so far (TokenEvent), then one `done` event whose data is exactly the JSON answer without
// "stream"; a failure after the stream began is an `error` event with the status it would
// have had. The request goes through the batcher as any other: its sentences' events come
// from the workers into a queue, and the connection's thread writes them while it waits for
// the batch (at least every 100 ms). A client that closes the connection cancels its request:
// its queued sentences leave the queue and its running ones stop at their next token.
#include <memory>
#include <mutex>

#include "server/service.h"

namespace ordo::server {
namespace {

std::string sse_event(const char* name, const Json& data) {
  return std::string("event: ") + name + "\ndata: " + dump(data) + "\n\n";
}

// Events the workers made and the connection has not written yet.
struct EventQueue {
  std::mutex mutex;
  std::string pending;
};

}  // namespace

void Service::stream_generate(const ServedModel& model, const DecodeOptions& options,
                              const std::vector<std::string>& texts, const RequestContext& context,
                              Clock::time_point deadline, httplib::Response& res) {
  // What can be refused is refused before the stream begins, with its status.
  size_t with_text = 0;
  for (const std::string& text : texts) with_text += has_text(text);
  // (Attention does not stream: the source lengths, which only it counts, are not needed.)
  if (with_text > 0) check_work(*model.translator, options, std::vector<size_t>(with_text, 0));
  const ServedModel* served = &model;
  auto queue = std::make_shared<EventQueue>();
  res.set_chunked_content_provider("text/event-stream", [this, served, options, texts, context, deadline, queue](
                                                            size_t, httplib::DataSink& sink) {
    const auto write_pending = [&] {
      std::string out;
      {
        std::lock_guard<std::mutex> lock(queue->mutex);
        out.swap(queue->pending);
      }
      return out.empty() || sink.write(out.data(), out.size());
    };
    const StreamFn on_token = [queue](size_t index, const TokenEvent& e) {
      if (e.done) return true;  // the whole answer follows in the done event
      const std::string event = sse_event(
          "token", Json{{"index", index}, {"id", e.id}, {"piece", e.piece}, {"text", e.text}, {"delta", e.delta}});
      std::lock_guard<std::mutex> lock(queue->mutex);
      queue->pending += event;
      return true;
    };
    std::string last;
    try {
      const std::vector<TranslationResult> results = translate(*served, options, texts, context, deadline, on_token,
                                                               [&] { return write_pending() && sink.is_writable(); });
      if (!write_pending()) return false;
      Json lines = Json::array();
      for (const TranslationResult& r : results) lines.push_back(faces::result_json(r));
      last = sse_event("done", Json{{"model", served->name}, {"results", lines}});
    } catch (const ApiError& e) {
      if (e.status == 499 || !write_pending()) return false;  // nobody reads it
      last = sse_event("error", Json{{"error", e.what()}, {"status", e.status}});
    } catch (const std::exception& e) {
      if (!write_pending()) return false;
      last = sse_event("error", Json{{"error", e.what()}, {"status", 500}});
    }
    if (!sink.write(last.data(), last.size())) return false;
    sink.done();
    return true;
  });
  res.set_header("Cache-Control", "no-cache");
}

}  // namespace ordo::server
