// Results as JSON, for the faces that answer in it: `ordo translate --json` and `ordo serve`'s
// /v1 routes. The hypotheses' text, tokens and score, and their word alignment and
// cross-attention: what `--alignment hard|soft [--alignment-words] --attention` adds to each
// hypothesis and what /v1/translate answers for its "alignment", "alignment_words" and
// "attention" fields. One writer for both faces, so the two cannot drift apart (the page's test
// compares them). An internal layer over the public API, linked by the CLI and the server, never
// part of libordo.
//
// The weights are many (layers x heads x target x source per hypothesis: 1.5 million for one
// 256-token sentence of a small 6-layer model) and are written as text straight from their
// floats, never as a JSON tree: a tree costs ~30 bytes a weight, its text ~11.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "ordo/alignment.h"
#include "ordo/options.h"

namespace ordo::faces {

// Alignment links in Pharaoh format as Marian prints them: "0-0 1-2 2-1" (source-target).
std::string pharaoh(const std::vector<AlignmentLink>& links);

// {"text", "tokens", "score"} of one hypothesis.
nlohmann::ordered_json hypothesis_json(const Hypothesis& h);
// What /v1/translate answers for one input without alignments: its best hypothesis' fields,
// "n_best" with every hypothesis, and "truncated_tokens" when its source was cut.
nlohmann::ordered_json result_json(const TranslationResult& r);

struct AttentionFields {
  std::string alignment;   // "", "hard" or "soft"
  bool words = false;      // hard alignment between words, not pieces
  bool attention = false;  // every layer's and head's weights
  bool any() const { return !alignment.empty() || attention; }
};

// A JSON object written as text, field by field, in the order of the calls: the small values
// as nlohmann dumps them, the large ones by the caller straight into the text (raw_field).
class JsonObjectWriter {
 public:
  explicit JsonObjectWriter(std::string& out) : out_(out) { out_ += '{'; }
  void field(const char* key, const nlohmann::ordered_json& value);
  // Writes the key; the caller appends the value's JSON text to the returned string.
  std::string& raw_field(const char* key);
  void close() { out_ += '}'; }

 private:
  std::string& out_;
  bool first_ = true;
};

// Appends "alignment" (pairs [source, target], or soft rows) and, with `attention`, "id_pieces"
// and "attention" ([layer][head][target position][source position], as Hugging Face's
// cross_attentions) to `out`.
void add_alignment_and_attention(JsonObjectWriter& out, const TranslationResult& result, const Hypothesis& h,
                                 const AttentionFields& fields);

// The weights of `a` as JSON text, [layer][head][target][source], each the shortest text that
// reads back as the same float.
void append_attention(std::string& out, const Attention& a);

// How many cross-attention weights the hypotheses of `results` hold.
size_t attention_weights(const std::vector<TranslationResult>& results);

}  // namespace ordo::faces
