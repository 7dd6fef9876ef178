#include "server/attention_json.h"

#include <cstdint>
#include <utility>
#include <vector>

#include "ordo/alignment.h"

namespace ordo::server {

void add_alignment_and_attention(nlohmann::ordered_json& out, const TranslationResult& result,
                                 const Hypothesis& h, const AttentionFields& fields) {
  using Json = nlohmann::ordered_json;
  if (fields.alignment == "soft") {
    out["alignment"] = soft_alignment(result, h);
  } else if (!fields.alignment.empty()) {
    Json pairs = Json::array();
    for (const AlignmentLink& l : fields.words ? word_alignment(result, h) : hard_alignment(result, h))
      pairs.push_back({l.source, l.target});
    out["alignment"] = std::move(pairs);
  }
  if (!fields.attention || h.attention.empty()) return;
  const Attention& a = h.attention;
  Json layers = Json::array();
  for (int64_t l = 0; l < a.layers; ++l) {
    Json heads = Json::array();
    for (int64_t head = 0; head < a.heads; ++head) {
      Json rows = Json::array();
      for (int64_t t = 0; t < a.target_length; ++t) {
        const float* row = a.weights.data() + ((l * a.heads + head) * a.target_length + t) * a.source_length;
        rows.push_back(std::vector<float>(row, row + a.source_length));
      }
      heads.push_back(std::move(rows));
    }
    layers.push_back(std::move(heads));
  }
  out["id_pieces"] = h.id_pieces;
  out["attention"] = std::move(layers);
}

}  // namespace ordo::server
