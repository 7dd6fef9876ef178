// The word alignment and cross-attention of one hypothesis as JSON: what `ordo translate --json
// --alignment hard|soft [--alignment-words] --attention` adds to each hypothesis and what
// /v1/translate answers for its "alignment", "alignment_words" and "attention" fields. One
// writer for both faces, so the two cannot drift apart (the page's test compares them).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "ordo/options.h"

namespace ordo::server {

struct AttentionFields {
  std::string alignment;  // "", "hard" or "soft"
  bool words = false;     // hard alignment between words, not pieces
  bool attention = false; // every layer's and head's weights
  bool any() const { return !alignment.empty() || attention; }
};

// Adds "alignment" (pairs [source, target], or soft rows) and, with `attention`, "id_pieces" and
// "attention" ([layer][head][target position][source position], as Hugging Face's
// cross_attentions) to `out`.
void add_alignment_and_attention(nlohmann::ordered_json& out, const TranslationResult& result,
                                 const Hypothesis& h, const AttentionFields& fields);

}  // namespace ordo::server
