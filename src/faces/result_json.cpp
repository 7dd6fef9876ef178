#include "faces/result_json.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "ordo/alignment.h"

namespace ordo::faces {

std::string pharaoh(const std::vector<AlignmentLink>& links) {
  std::string out;
  for (const AlignmentLink& link : links)
    out += (out.empty() ? "" : " ") + std::to_string(link.source) + "-" + std::to_string(link.target);
  return out;
}

namespace {

std::string dump(const nlohmann::ordered_json& value) {
  return value.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace

nlohmann::ordered_json hypothesis_json(const Hypothesis& h) {
  return nlohmann::ordered_json{{"text", h.text}, {"tokens", h.tokens}, {"score", h.score}};
}

nlohmann::ordered_json result_json(const TranslationResult& r) {
  using Json = nlohmann::ordered_json;
  Json line = r.hypotheses.empty() ? Json{{"text", ""}, {"tokens", Json::array()}, {"score", 0.0}}
                                   : hypothesis_json(r.hypotheses[0]);
  line["n_best"] = Json::array();
  for (const Hypothesis& h : r.hypotheses) line["n_best"].push_back(hypothesis_json(h));
  if (r.truncated_tokens > 0) line["truncated_tokens"] = r.truncated_tokens;
  return line;
}

void JsonObjectWriter::field(const char* key, const nlohmann::ordered_json& value) { raw_field(key) += dump(value); }

std::string& JsonObjectWriter::raw_field(const char* key) {
  if (!first_) out_ += ',';
  first_ = false;
  out_ += dump(key);
  out_ += ':';
  return out_;
}

void append_attention(std::string& out, const Attention& a) {
  const float* w = a.weights.data();
  char number[32];
  out += '[';
  for (int64_t l = 0; l < a.layers; ++l) {
    out += l ? ",[" : "[";
    for (int64_t head = 0; head < a.heads; ++head) {
      out += head ? ",[" : "[";
      for (int64_t t = 0; t < a.target_length; ++t) {
        out += t ? ",[" : "[";
        for (int64_t s = 0; s < a.source_length; ++s, ++w) {
          if (s) out += ',';
          if (!std::isfinite(*w)) {  // JSON has no NaN: null, as nlohmann writes it
            out += "null";
            continue;
          }
          const auto end = std::to_chars(number, number + sizeof number, *w).ptr;
          out.append(number, end);
        }
        out += ']';
      }
      out += ']';
    }
    out += ']';
  }
  out += ']';
}

void add_alignment_and_attention(JsonObjectWriter& out, const TranslationResult& result, const Hypothesis& h,
                                 const AttentionFields& fields) {
  using Json = nlohmann::ordered_json;
  if (fields.alignment == "soft") {
    out.field("alignment", soft_alignment(result, h));
  } else if (!fields.alignment.empty()) {
    Json pairs = Json::array();
    for (const AlignmentLink& l : fields.words ? word_alignment(result, h) : hard_alignment(result, h))
      pairs.push_back({l.source, l.target});
    out.field("alignment", pairs);
  }
  if (!fields.attention || h.attention.empty()) return;
  out.field("id_pieces", h.id_pieces);
  append_attention(out.raw_field("attention"), h.attention);
}

size_t attention_weights(const std::vector<TranslationResult>& results) {
  size_t n = 0;
  for (const TranslationResult& r : results)
    for (const Hypothesis& h : r.hypotheses) n += h.attention.weights.size();
  return n;
}

}  // namespace ordo::faces
