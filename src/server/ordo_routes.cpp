// ordo's own API: POST /v1/translate and /v1/summarize, every decoding option of the table,
// answers shaped like `ordo translate --json`; POST /v1/score, shaped like `ordo score --json`
// (service.h).
#include "server/service.h"

#include <limits>

#include "ordo/alignment.h"
#include "ordo/document.h"

namespace ordo::server {

namespace {

using faces::AttentionFields;
using faces::JsonObjectWriter;

// /v1/translate's "alignment" ("hard" | "soft"), "alignment_words" and "attention" fields:
// what `ordo translate --json --alignment ... [--alignment-words] --attention` adds to each
// hypothesis, and the source pieces the alignment's indices count (source index i is
// "source_tokens" at "source_text_positions"[i]; include/ordo/alignment.h).
AttentionFields attention_fields(const RequestFields& fields) {
  AttentionFields f;
  f.alignment = fields.string("alignment").value_or("");
  if (!f.alignment.empty() && f.alignment != "hard" && f.alignment != "soft")
    throw ApiError(400,
                   "Invalid request: field 'alignment' must be \"hard\" or \"soft\", not '" + shown(f.alignment) + "'");
  f.words = fields.boolean("alignment_words").value_or(false);
  if (f.words && f.alignment != "hard")
    throw ApiError(400, "Invalid request: field 'alignment_words' needs \"alignment\": \"hard\"");
  f.attention = fields.boolean("attention").value_or(false);
  return f;
}

void add_attention(JsonObjectWriter& out, const TranslationResult& r, const Hypothesis& h, const AttentionFields& f) {
  faces::add_alignment_and_attention(out, r, h, f);
  if (f.attention && !h.attention.empty()) {
    out.field("token_positions", h.token_positions);  // the row of each entry of "tokens"
    out.field("alignment_layer", h.attention.alignment_layer);
  }
}

// One entry of "results": faces::result_json(r), with each hypothesis' alignment and
// attention written as text (faces/result_json.h), in the fields' order of `ordo translate --json`.
void append_result(std::string& out, const TranslationResult& r, const AttentionFields& f) {
  const Json plain = faces::result_json(r);
  if (!f.any()) {
    out += dump(plain);
    return;
  }
  JsonObjectWriter line(out);
  for (const auto& [key, value] : plain.items()) {
    if (key != "n_best") {
      line.field(key.c_str(), value);
      continue;
    }
    std::string& list = line.raw_field("n_best");
    list += '[';
    for (size_t k = 0; k < r.hypotheses.size(); ++k) {
      if (k) list += ',';
      JsonObjectWriter hypothesis(list);
      for (const auto& [name, item] : value[k].items()) hypothesis.field(name.c_str(), item);
      add_attention(hypothesis, r, r.hypotheses[k], f);
      hypothesis.close();
    }
    list += ']';
  }
  if (!r.hypotheses.empty()) add_attention(line, r, r.hypotheses[0], f);
  line.field("source_tokens", r.source_tokens);
  line.field("source_text_positions", r.source_text_positions);
  line.close();
}

}  // namespace

// The model a request names (field "model"), or the one its source_lang/target_lang choose,
// or the only one of its task; the languages then as that model names them (a one-pair model
// only checks them and drops them). ApiError 400 naming the field otherwise.
const ServedModel& Service::model_for(Task task, const RequestFields& fields, DecodeOptions& options) const {
  const ModelSet& set = models();
  const ServedModel* model = nullptr;
  if (const std::optional<std::string> name = fields.string("model")) {
    model = set.by_name(*name);
    if (model && model->task == Task::kTranscribe)
      throw ApiError(400, "Invalid request: model '" + model->name +
                              "' is a speech model: send it audio at POST /v1/audio/transcriptions (served " +
                              task_name(task) + " models: " + set.model_list(task) + ")");
    if (!model || model->task != task)
      throw ApiError(400, "Invalid request: unknown " + std::string(task_name(task)) + " model '" + shown(*name) +
                              "' (served: " + set.model_list(task) + ")");
  } else if (task == Task::kTranslate && options.source_lang && options.target_lang) {
    model = set.for_pair(*options.source_lang, *options.target_lang);
    if (!model)
      throw ApiError(400, "Invalid request: no model translates " + shown(*options.source_lang) + " into " +
                              shown(*options.target_lang) + " (served pairs: " + set.pair_list() + ")");
  } else {
    const auto candidates = set.of_task(task);
    if (candidates.size() != 1)
      throw ApiError(400, "Invalid request: field 'model' is required (served " + std::string(task_name(task)) +
                              " models: " + set.model_list(task) + ")");
    model = candidates.front();
  }
  // Languages: a multilingual model takes them as the model names them; a one-pair model only
  // checks them.
  for (const auto member : {&DecodeOptions::source_lang, &DecodeOptions::target_lang}) {
    const char* field = decode_option_spec(member).name;
    std::optional<std::string>* value = &(options.*member);
    if (!*value) continue;
    if (model->multilingual()) {
      const std::string code = model->model_code(**value);
      if (code.empty())
        throw ApiError(400, "Invalid request: field '" + std::string(field) + "': model '" + model->name +
                                "' does not know language '" + shown(**value) +
                                "' (known: " + join(model->languages, 40) + ")");
      *value = code;
    } else {
      const std::string& served = member == &DecodeOptions::source_lang ? model->source_lang : model->target_lang;
      if (**value != served)
        throw ApiError(400, "Invalid request: field '" + std::string(field) + "': model '" + model->name + "' " +
                                task_name(task) + "s " + model->source_lang + " into " + model->target_lang +
                                ", not '" + shown(**value) + "'");
      value->reset();
    }
  }
  return *model;
}

void Service::ordo_generate(Task task, const httplib::Request& req, httplib::Response& res, const Reader& reader) {
  const RequestContext context = contexts_.of(req);
  const Clock::time_point deadline = request_deadline(context, config_.limits.timeout_seconds);
  const RequestFields fields = read_fields(req, res, reader, true);
  check_key(&fields, req);
  require_ready();
  // "stream" is a field of the request, not a decoding option: it changes how the answer is
  // sent (server-sent events), not what is decoded, and streaming requests share batches with
  // the others (stream_routes.cpp).
  std::vector<std::string> known = {"model", "text", "api_key"};
  for (const std::string& name : decode_option_names()) known.push_back(name);
  known.push_back("stream");
  for (const char* name : {"alignment", "alignment_words", "attention"}) known.push_back(name);
  if (task == Task::kSummarize)
    for (const char* name : {"long_input", "chunk_tokens"}) known.push_back(name);
  for (const std::string& name : fields.names())
    if (std::find(known.begin(), known.end(), name) == known.end())
      throw ApiError(400, "Invalid request: unknown field '" + shown(name) + "' (known: " + join(known) + ")");
  bool is_list = false;
  const std::vector<std::string> texts = checked_texts(
      fields, "text", is_list, "Invalid request: field 'text' is required (a string or an array of strings)",
      false);  // [] gives "results": []
  DecodeOptions options = decode_options(fields, config_.limits.max_beam_size, config_.limits.max_new_tokens);
  const AttentionFields attention = attention_fields(fields);
  if (attention.any()) {
    if (fields.boolean("stream").value_or(false))
      throw ApiError(400, "Invalid request: fields 'alignment' and 'attention' do not stream (leave out \"stream\")");
    options.return_attention = true;
  }

  const ServedModel* model = &model_for(task, fields, options);
  admit(req, texts, model->name);  // the key's limits; the access log
  options.preset = model->preset;
  // A folder with a summarization task (T5's task_specific_params) summarizes with it, as
  // `ordo summarize` does: its prefix, its settings below the request's.
  const std::vector<std::string> tasks = model->translator->tasks();
  if (task == Task::kSummarize && !options.task && std::count(tasks.begin(), tasks.end(), "summarization"))
    options.task = "summarization";
  try {
    model->translator->resolved_settings(options);  // the option errors of the command line
  } catch (const Error& e) {
    throw ApiError(400, std::string("Invalid request: ") + e.what());
  }

  // A document longer than the model's positions is summarized in parts (ordo/document.h),
  // its chunks batched with the other requests.
  LongInputOptions long_input;
  if (task == Task::kSummarize) {
    try {
      long_input.mode = parse_long_input(fields.string("long_input").value_or("chunk"), "field 'long_input'");
    } catch (const Error& e) {
      throw ApiError(400, std::string("Invalid request: ") + e.what());
    }
    long_input.chunk_tokens = fields.integer("chunk_tokens", 0, std::numeric_limits<int32_t>::max()).value_or(0);
  }
  const auto run = [&](const std::vector<std::string>& in, const DecodeOptions& o) {
    if (task != Task::kSummarize) return translate(*model, o, in, context, deadline);
    try {
      return summarize_documents(*model->translator, in, o, long_input,
                                 [&](const std::vector<std::string>& part, const DecodeOptions& po) {
                                   return translate(*model, po, part, context, deadline);
                                 });
    } catch (const Error& e) {
      throw ApiError(400, std::string("Invalid request: ") + e.what());
    }
  };

  // An empty or blank text is not run: one empty hypothesis, score 0 (the library's policy).
  if (fields.boolean("stream").value_or(false)) {
    if (task == Task::kSummarize && long_input.mode == LongInput::kChunk)
      for (const std::string& text : texts)
        if (model->translator->encode(text, options).size() >
            static_cast<size_t>(model->translator->max_source_tokens()))
          throw ApiError(400, "Invalid request: a document longer than the model's " +
                                  std::to_string(model->translator->max_source_tokens()) +
                                  " tokens is summarized in parts and does not stream (leave out \"stream\")");
    return stream_generate(*model, options, texts, context, deadline, res);
  }
  auto results = std::make_shared<const std::vector<TranslationResult>>(run(texts, options));
  // The estimate counts max_new_tokens at most kCostTokensPerSentence: the weights themselves
  // bound the answer.
  const size_t weights = attention.attention ? faces::attention_weights(*results) : 0;
  if (weights > config_.limits.max_attention_values)
    throw ApiError(400, "Invalid request: the translations hold " + std::to_string(weights) +
                            " attention weights, more than this server's limit of " +
                            std::to_string(config_.limits.max_attention_values) +
                            " (--max-attention-values): send fewer or shorter texts, or fewer new tokens");
  const std::string head = "{\"model\":" + dump(Json(model->name)) + ",\"results\":[";
  if (!attention.attention) {
    std::string body = head;
    for (size_t i = 0; i < results->size(); ++i) {
      if (i) body += ',';
      append_result(body, (*results)[i], attention);
    }
    body += "]}\n";
    return send_json_text(res, 200, std::move(body));
  }
  // With the weights, the answer goes out one result at a time (chunked): besides the floats,
  // memory holds the text of one result, not of the whole answer.
  res.status = 200;
  auto next = std::make_shared<size_t>(0);
  res.set_chunked_content_provider("application/json",
                                   [results, next, head, attention](size_t, httplib::DataSink& sink) {
                                     std::string text = *next == 0 ? head : std::string();
                                     if (*next < results->size()) {
                                       if (*next > 0) text += ',';
                                       append_result(text, (*results)[*next], attention);
                                       ++*next;
                                     }
                                     if (*next < results->size()) return sink.write(text.data(), text.size());
                                     text += "]}\n";
                                     if (!sink.write(text.data(), text.size())) return false;
                                     sink.done();
                                     return true;
                                   });
}

// POST /v1/score {"model", "source": "..." or [...], "target": the same shape, "source_lang",
// "target_lang", "task"} -> {"model", "results": [{"score", "tokens", "log_probs"}, ...]}: the
// log-probability of each target given its source (Translator::score), as `ordo score --json`.
void Service::ordo_score(const httplib::Request& req, httplib::Response& res, const Reader& reader) {
  const RequestContext context = contexts_.of(req);
  const Clock::time_point deadline = request_deadline(context, config_.limits.timeout_seconds);
  const RequestFields fields = read_fields(req, res, reader, true);
  check_key(&fields, req);
  require_ready();
  const auto text_field = [](std::optional<std::string> DecodeOptions::*member) {
    return std::string(decode_option_spec(member).name);
  };
  const std::vector<std::string> known = {"model",
                                          "source",
                                          "target",
                                          "api_key",
                                          text_field(&DecodeOptions::source_lang),
                                          text_field(&DecodeOptions::target_lang),
                                          text_field(&DecodeOptions::task)};
  for (const std::string& name : fields.names())
    if (std::find(known.begin(), known.end(), name) == known.end())
      throw ApiError(400, "Invalid request: unknown field '" + shown(name) + "' (known: " + join(known) + ")");
  bool source_list = false, target_list = false;
  const std::vector<std::string> sources =
      checked_texts(fields, "source", source_list,
                    "Invalid request: field 'source' is required (a string or an array of strings)", false);
  const std::vector<std::string> targets =
      checked_texts(fields, "target", target_list,
                    "Invalid request: field 'target' is required (a string or an array of strings)", false);
  if (source_list != target_list || sources.size() != targets.size())
    throw ApiError(400,
                   "Invalid request: fields 'source' and 'target' must have the same shape (one target per source): " +
                       std::to_string(sources.size()) + " sources, " + std::to_string(targets.size()) + " targets");
  DecodeOptions options;
  for (const auto member : {&DecodeOptions::source_lang, &DecodeOptions::target_lang, &DecodeOptions::task})
    options.*member = fields.string(text_field(member));
  const ServedModel& model = model_for(Task::kTranslate, fields, options);
  std::vector<std::string> texts = sources;
  texts.insert(texts.end(), targets.begin(), targets.end());
  admit(req, texts, model.name);  // the key's limits; the access log
  // Teacher forcing reads each target once: a target costs its tokens, as a decoded sentence does.
  size_t tokens = 0;
  for (const std::string& target : targets) tokens += std::max<size_t>(1, utf8_length(target) / 2);
  if (tokens > config_.limits.max_request_cost)
    throw ApiError(400, "Invalid request: too much work: about " + std::to_string(tokens) +
                            " target tokens, more than " + "this server's limit of " +
                            std::to_string(config_.limits.max_request_cost) +
                            " (--max-request-cost); send fewer or shorter targets");
  options.cancelled = [&] { return context.client_gone() || Clock::now() > deadline; };
  std::vector<ScoreResult> scored;
  try {
    scored = model.translator->score(sources, targets, options);
  } catch (const Error& e) {
    if (Clock::now() > deadline) throw ApiError(504, "the request took longer than this server's timeout");
    if (context.client_gone()) throw ApiError(499, "the client closed the connection");
    throw ApiError(400, std::string("Invalid request: ") + e.what());
  }
  Json results = Json::array();
  for (const ScoreResult& r : scored)
    results.push_back(Json{{"score", r.score}, {"tokens", r.tokens}, {"log_probs", r.log_probs}});
  send_json(res, 200, Json{{"model", model.name}, {"results", results}});
}

}  // namespace ordo::server
