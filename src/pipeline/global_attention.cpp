#include "pipeline/global_attention.h"

#include <algorithm>

#include "ordo/error.h"
#include "ordo/option_table.h"

namespace ordo::pipeline {

namespace {

bool has_global_attention(const models::Seq2SeqModel& model) {
  return model.family().long_attention == nn::LongAttentionKind::kLongformer;
}

int64_t position_of(const std::string& text, const std::string& spec, const std::string& field) {
  const bool digits = !text.empty() && text.size() <= 9 && text.find_first_not_of("0123456789") == std::string::npos;
  if (!digits)
    throw Error(field + " '" + spec + "': '" + text +
                "' is not a token position (expected first, none, or positions and ranges such as 0,4-7)");
  return std::stoll(text);
}

}  // namespace

std::vector<int64_t> global_positions(const std::string& spec, const std::string& field) {
  if (spec == "first") return {0};
  if (spec == "none") return {};
  std::vector<int64_t> positions;
  size_t begin = 0;
  while (begin <= spec.size()) {
    const size_t end = std::min(spec.find(',', begin), spec.size());
    const std::string item = spec.substr(begin, end - begin);
    const size_t dash = item.find('-');
    const int64_t first = position_of(item.substr(0, dash), spec, field);
    const int64_t last = dash == std::string::npos ? first : position_of(item.substr(dash + 1), spec, field);
    if (last < first) throw Error(field + " '" + spec + "': the range '" + item + "' ends before it starts");
    if (last - first > (int64_t{1} << 20)) throw Error(field + " '" + spec + "': the range '" + item + "' is too long");
    for (int64_t p = first; p <= last; ++p) positions.push_back(p);
    begin = end + 1;
  }
  std::sort(positions.begin(), positions.end());
  positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
  return positions;
}

void check_global_attention(const models::Seq2SeqModel& model, const DecodeOptions& options) {
  if (!options.global_attention) return;
  const std::string field = decode_option_spec(&DecodeOptions::global_attention).name;
  global_positions(*options.global_attention, field);
  if (!has_global_attention(model))
    throw Error("invalid decoding option: " + field + " is for LED models (Longformer attention); model_type '" +
                model.config().model_type + "' has no global attention");
}

at::Tensor global_attention_mask(const models::Seq2SeqModel& model, const DecodeOptions& options,
                                 const at::Tensor& mask) {
  if (!options.global_attention || !has_global_attention(model)) return {};
  const std::string field = decode_option_spec(&DecodeOptions::global_attention).name;
  at::Tensor global = at::zeros_like(mask);
  const int64_t length = mask.size(1);
  for (const int64_t p : global_positions(*options.global_attention, field))
    if (p < length) global.select(1, p).fill_(1);
  return global * mask;  // none on padding
}

}  // namespace ordo::pipeline
