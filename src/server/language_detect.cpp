#include "server/language_detect.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>  // compact_lang_det.h uses FILE without including it

#include <cld2/public/compact_lang_det.h>
#include <cld2/public/encodings.h>

#include "ordo/error.h"
#include "ordo/text.h"
#include "server/language_codes.h"

namespace ordo::server {
namespace {

// Valid UTF-8 as CLD2 takes it ("interchange-valid"): C0 controls other than tab, line feed and
// carriage return, DEL, C1 controls and the noncharacters U+FDD0..U+FDEF and U+xxFFFE/U+xxFFFF
// become one space each. CLD2's checking call refuses a text holding any of them.
std::string interchange_text(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = s[i];
    const size_t length = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;  // valid UTF-8: checked before
    uint32_t code = length == 1 ? c : length == 2 ? c & 0x1f : length == 3 ? c & 0x0f : c & 0x07;
    for (size_t k = 1; k < length; ++k) code = (code << 6) | (s[i + k] & 0x3f);
    const bool refused = (code < 0x20 && code != '\t' && code != '\n' && code != '\r') ||
                         (code >= 0x7f && code <= 0x9f) || (code >= 0xfdd0 && code <= 0xfdef) ||
                         (code & 0xfffe) == 0xfffe;
    if (refused)
      out += ' ';
    else
      out.append(text, i, length);
    i += length;
  }
  return out;
}

struct Cld2Answer {
  CLD2::Language languages[3] = {CLD2::UNKNOWN_LANGUAGE, CLD2::UNKNOWN_LANGUAGE, CLD2::UNKNOWN_LANGUAGE};
  int percents[3] = {0, 0, 0};
  bool reliable = false;
};

// One call of CLD2, through its checking entry point (it reads nothing past a byte it refuses).
// False when it refused part of the text (its other outputs are then not set).
bool run_cld2(const std::string& text, bool html, int flags, Cld2Answer& answer) {
  const CLD2::CLDHints hints = {nullptr, nullptr, CLD2::UNKNOWN_ENCODING, CLD2::UNKNOWN_LANGUAGE};
  double scores[3] = {0, 0, 0};
  int text_bytes = 0, valid_bytes = 0;
  const int length = static_cast<int>(std::min<size_t>(text.size(), INT32_MAX));
  CLD2::ExtDetectLanguageSummaryCheckUTF8(text.data(), length, !html, &hints, flags, answer.languages, answer.percents,
                                          scores, nullptr, &text_bytes, &answer.reliable, &valid_bytes);
  return valid_bytes == length;
}

}  // namespace

Detection detect_language(const std::string& text, const std::vector<std::string>& candidates, bool html) {
  Detection detection;
  try {
    check_utf8(text, "text");
  } catch (const Error&) {
    return detection;
  }
  const std::string clean = interchange_text(text);
  Cld2Answer answer;
  if (!run_cld2(clean, html, 0, answer)) return detection;
  detection.reliable = answer.reliable && answer.languages[0] != CLD2::UNKNOWN_LANGUAGE;
  // Text too short for CLD2's own threshold: its best guess, never called reliable.
  if (answer.languages[0] == CLD2::UNKNOWN_LANGUAGE) {
    if (!run_cld2(clean, html, CLD2::kCLDFlagBestEffort, answer)) return detection;
    detection.reliable = false;
  }
  std::vector<std::string> canonical;
  for (const std::string& c : candidates) canonical.push_back(canonical_language(c));
  for (int k = 0; k < 3; ++k) {
    if (answer.languages[k] == CLD2::UNKNOWN_LANGUAGE || answer.percents[k] <= 0) continue;
    const std::string language = canonical_language(CLD2::LanguageCode(answer.languages[k]));
    const auto at = std::find(canonical.begin(), canonical.end(), language);
    if (at == canonical.end()) continue;
    const std::string& code = candidates[static_cast<size_t>(at - canonical.begin())];
    // Two of CLD2's languages can be one of the server's (zh and zh-Hant: zh): their shares add.
    auto same = std::find_if(detection.languages.begin(), detection.languages.end(),
                             [&](const DetectedLanguage& d) { return d.language == code; });
    if (same != detection.languages.end())
      same->confidence += answer.percents[k];
    else
      detection.languages.push_back({code, static_cast<double>(answer.percents[k])});
  }
  std::stable_sort(detection.languages.begin(), detection.languages.end(),
                   [](const DetectedLanguage& a, const DetectedLanguage& b) { return a.confidence > b.confidence; });
  // The top language among the server's is the one CLD2 found reliably, or a guess.
  const std::string top = canonical_language(CLD2::LanguageCode(answer.languages[0]));
  if (detection.languages.empty() || top != canonical_language(detection.languages[0].language)) {
    if (detection.reliable && std::find(canonical.begin(), canonical.end(), top) == canonical.end())
      detection.other = top;
    detection.reliable = false;
  }
  return detection;
}

}  // namespace ordo::server
