#include "pipeline/token_stream.h"

#include <utility>

namespace ordo::pipeline {
namespace {

// The code point that ends `s` (0 when it ends in an incomplete or invalid sequence).
char32_t last_code_point(const std::string& s) {
  size_t start = s.size();
  while (start > 0 && (static_cast<unsigned char>(s[start - 1]) & 0xC0) == 0x80 && s.size() - start < 3) --start;
  if (start == 0) return 0;
  --start;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data() + start);
  const size_t n = s.size() - start;
  if (p[0] < 0x80) return n == 1 ? p[0] : 0;
  if ((p[0] & 0xE0) == 0xC0 && n == 2) return (char32_t(p[0] & 0x1F) << 6) | (p[1] & 0x3F);
  if ((p[0] & 0xF0) == 0xE0 && n == 3)
    return (char32_t(p[0] & 0x0F) << 12) | (char32_t(p[1] & 0x3F) << 6) | (p[2] & 0x3F);
  if ((p[0] & 0xF8) == 0xF0 && n == 4)
    return (char32_t(p[0] & 0x07) << 18) | (char32_t(p[1] & 0x3F) << 12) | (char32_t(p[2] & 0x3F) << 6) | (p[3] & 0x3F);
  return 0;
}

// Scripts written without spaces between words: Han, kana, Hangul, CJK punctuation.
bool spaceless_script(char32_t c) {
  return (c >= 0x3000 && c <= 0x30FF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x4E00 && c <= 0x9FFF) ||
         (c >= 0xAC00 && c <= 0xD7AF) || (c >= 0xF900 && c <= 0xFAFF) || (c >= 0xFF00 && c <= 0xFFEF && c != 0xFFFD) ||
         (c >= 0x20000 && c <= 0x2FA1F);
}

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

}  // namespace

std::string final_part(const std::string& decoded) {
  if (spaceless_script(last_code_point(decoded))) return decoded;
  size_t end = decoded.size();
  while (end > 0 && !is_space(decoded[end - 1])) --end;  // the word being written
  while (end > 0 && is_space(decoded[end - 1])) --end;   // the space before it
  return decoded.substr(0, end);
}

TokenEvent TextStream::push(const text::Tokenizer& tokenizer, int64_t id) {
  ids_.push_back(id);
  TokenEvent event;
  event.id = id;
  event.piece = tokenizer.target_piece(id);
  std::string now = final_part(tokenizer.decode(ids_));
  // Never taken back: a text that does not extend what was given waits for a later token.
  if (now.size() > given_.size() && now.compare(0, given_.size(), given_) == 0) {
    event.delta = now.substr(given_.size());
    given_ = std::move(now);
  }
  event.text = given_;
  return event;
}

TokenEvent TextStream::finish(const std::string& text) const {
  TokenEvent event;
  event.done = true;
  event.text = text;
  if (text.compare(0, given_.size(), given_) == 0) event.delta = text.substr(given_.size());
  return event;
}

TokenStreamStep::TokenStreamStep(search::StepModel& step, const text::Tokenizer& tokenizer,
                                 const std::function<bool(const TokenEvent&)>& on_token, std::vector<size_t> inputs,
                                 bool per_token)
    : ForwardingStep(step),
      tokenizer_(tokenizer),
      on_token_(on_token),
      inputs_(std::move(inputs)),
      per_token_(per_token),
      streams_(inputs_.size()) {}

bool TokenStreamStep::on_token(int64_t hypothesis, int64_t id, float log_prob) {
  if (!inner_.on_token(hypothesis, id, log_prob)) return false;
  if (!per_token_) return true;
  const size_t i = static_cast<size_t>(hypothesis);
  TokenEvent event = streams_[i].push(tokenizer_, id);
  event.input = inputs_[i];
  event.log_prob = log_prob;
  return on_token_(event);
}

void TokenStreamStep::finish(size_t i, const TranslationResult& result) {
  TokenEvent event = streams_[i].finish(result.hypotheses.empty() ? std::string() : result.hypotheses[0].text);
  event.input = inputs_[i];
  on_token_(event);
}

DecodeOptions with_stream_inputs(const DecodeOptions& options, const std::vector<size_t>& index) {
  if (!options.on_token) return options;
  DecodeOptions mapped = options;
  mapped.on_token = [on_token = options.on_token, index](const TokenEvent& event) {
    TokenEvent e = event;
    e.input = index[event.input];
    return on_token(e);
  };
  return mapped;
}

}  // namespace ordo::pipeline
