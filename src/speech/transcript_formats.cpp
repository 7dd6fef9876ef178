// A transcription written out the way the tools people already use write it, so that what reads
// their files reads ordo's: OpenAI's transcription API for json ({"text"}) and verbose_json (its
// fields, in its order, the language by its English name as the API gives it, the text trimmed
// as the API trims it), openai-whisper's writers for text (one trimmed segment per line), srt,
// vtt and tsv. Times are openai-whisper's: milliseconds rounded half to even (Python's round()),
// hours always written (srt "00:00:01,080", vtt "00:00:01.080", the form OpenAI's API answers
// with), tsv in whole milliseconds. With word timestamps a cue runs from its first word's start
// to its last word's end, as openai-whisper's subtitle writers place it.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ordo/error.h"
#include "ordo/speech.h"

namespace ordo {
namespace {

using Json = nlohmann::ordered_json;

struct FormatName {
  TranscriptFormat format;
  const char* name;
};

const FormatName kFormats[] = {
    {TranscriptFormat::kText, "text"},
    {TranscriptFormat::kJson, "json"},
    {TranscriptFormat::kVerboseJson, "verbose_json"},
    {TranscriptFormat::kSrt, "srt"},
    {TranscriptFormat::kVtt, "vtt"},
    {TranscriptFormat::kTsv, "tsv"},
};

// Whisper's languages by the names OpenAI's API reports them with ("de" -> "german").
struct LanguageName {
  const char* code;
  const char* name;
};

const LanguageName kLanguageNames[] = {
    {"en", "english"},        {"zh", "chinese"},       {"de", "german"},    {"es", "spanish"},    {"ru", "russian"},
    {"ko", "korean"},         {"fr", "french"},        {"ja", "japanese"},  {"pt", "portuguese"}, {"tr", "turkish"},
    {"pl", "polish"},         {"ca", "catalan"},       {"nl", "dutch"},     {"ar", "arabic"},     {"sv", "swedish"},
    {"it", "italian"},        {"id", "indonesian"},    {"hi", "hindi"},     {"fi", "finnish"},    {"vi", "vietnamese"},
    {"he", "hebrew"},         {"uk", "ukrainian"},     {"el", "greek"},     {"ms", "malay"},      {"cs", "czech"},
    {"ro", "romanian"},       {"da", "danish"},        {"hu", "hungarian"}, {"ta", "tamil"},      {"no", "norwegian"},
    {"th", "thai"},           {"ur", "urdu"},          {"hr", "croatian"},  {"bg", "bulgarian"},  {"lt", "lithuanian"},
    {"la", "latin"},          {"mi", "maori"},         {"ml", "malayalam"}, {"cy", "welsh"},      {"sk", "slovak"},
    {"te", "telugu"},         {"fa", "persian"},       {"lv", "latvian"},   {"bn", "bengali"},    {"sr", "serbian"},
    {"az", "azerbaijani"},    {"sl", "slovenian"},     {"kn", "kannada"},   {"et", "estonian"},   {"mk", "macedonian"},
    {"br", "breton"},         {"eu", "basque"},        {"is", "icelandic"}, {"hy", "armenian"},   {"ne", "nepali"},
    {"mn", "mongolian"},      {"bs", "bosnian"},       {"kk", "kazakh"},    {"sq", "albanian"},   {"sw", "swahili"},
    {"gl", "galician"},       {"mr", "marathi"},       {"pa", "punjabi"},   {"si", "sinhala"},    {"km", "khmer"},
    {"sn", "shona"},          {"yo", "yoruba"},        {"so", "somali"},    {"af", "afrikaans"},  {"oc", "occitan"},
    {"ka", "georgian"},       {"be", "belarusian"},    {"tg", "tajik"},     {"sd", "sindhi"},     {"gu", "gujarati"},
    {"am", "amharic"},        {"yi", "yiddish"},       {"lo", "lao"},       {"uz", "uzbek"},      {"fo", "faroese"},
    {"ht", "haitian creole"}, {"ps", "pashto"},        {"tk", "turkmen"},   {"nn", "nynorsk"},    {"mt", "maltese"},
    {"sa", "sanskrit"},       {"lb", "luxembourgish"}, {"my", "myanmar"},   {"bo", "tibetan"},    {"tl", "tagalog"},
    {"mg", "malagasy"},       {"as", "assamese"},      {"tt", "tatar"},     {"haw", "hawaiian"},  {"ln", "lingala"},
    {"ha", "hausa"},          {"ba", "bashkir"},       {"jw", "javanese"},  {"su", "sundanese"},  {"yue", "cantonese"},
};

// The language's name; a code the table lacks stays as it is.
std::string language_name(const std::string& code) {
  for (const LanguageName& l : kLanguageNames)
    if (code == l.code) return l.name;
  return code;
}

bool space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && space(s[b])) ++b;
  while (e > b && space(s[e - 1])) --e;
  return s.substr(b, e - b);
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

size_t code_points(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

// Whole milliseconds of `seconds`, rounded half to even (Python's round(); nearbyint rounds so
// in the default rounding mode). Negative or not a number: 0; past a century: capped.
int64_t milliseconds(double seconds) {
  if (!(seconds > 0)) return 0;
  return static_cast<int64_t>(std::nearbyint(std::fmin(seconds, 3.2e9) * 1000.0));
}

// "HH:MM:SS,mmm" (srt) / "HH:MM:SS.mmm" (vtt): hours of two digits or more.
std::string timestamp(double seconds, char decimal_marker) {
  int64_t ms = milliseconds(seconds);
  const int64_t hours = ms / 3600000;
  ms -= hours * 3600000;
  const int64_t minutes = ms / 60000;
  ms -= minutes * 60000;
  const int64_t secs = ms / 1000;
  ms -= secs * 1000;
  char text[96];
  std::snprintf(text, sizeof text, "%02lld:%02lld:%02lld%c%03lld", static_cast<long long>(hours),
                static_cast<long long>(minutes), static_cast<long long>(secs), decimal_marker,
                static_cast<long long>(ms));
  return text;
}

// A float as the shortest decimal that reads back as it (0.2, not 0.20000000298023224).
double shortest(float value) {
  if (!std::isfinite(value)) return value;
  char text[32];
  const auto end = std::to_chars(text, text + sizeof text, value).ptr;
  return std::strtod(std::string(text, end).c_str(), nullptr);
}

std::string dump(const Json& json) { return json.dump(-1, ' ', false, Json::error_handler_t::replace); }

struct Cue {
  double start = 0.0, end = 0.0;
  std::string text;
};

bool has_words(const Transcription& t) {
  for (const Segment& s : t.segments)
    if (!s.words.empty()) return true;
  return false;
}

// The cues of srt and vtt. Segments: one cue each, its text trimmed and "-->" written "->".
// Words: one cue per segment that has words, from its first word's start to its last word's
// end, the words joined as spelled (the first trimmed), a line broken before a word that would
// take it past openai-whisper's default width of 1000 characters.
std::vector<Cue> cues(const Transcription& t) {
  std::vector<Cue> out;
  if (!has_words(t)) {
    for (const Segment& s : t.segments) out.push_back({s.start, s.end, replace_all(trim(s.text), "-->", "->")});
    return out;
  }
  constexpr size_t kMaxLineWidth = 1000;
  for (const Segment& s : t.segments) {
    if (s.words.empty()) continue;
    Cue cue{s.words.front().start, s.words.back().end, {}};
    size_t line = 0;
    for (const Word& w : s.words) {
      const size_t width = code_points(w.word);
      if (line > 0 && line + width <= kMaxLineWidth) {
        cue.text += w.word;
        line += width;
      } else {
        const std::string word = trim(w.word);
        cue.text += (line > 0 ? "\n" : "") + word;
        line = code_points(word);
      }
    }
    out.push_back(std::move(cue));
  }
  return out;
}

std::string text_lines(const Transcription& t) {
  std::string out;
  for (const Segment& s : t.segments) out += trim(s.text) + "\n";
  return out;
}

std::string srt(const Transcription& t) {
  std::string out;
  size_t index = 0;
  for (const Cue& c : cues(t))
    out += std::to_string(++index) + "\n" + timestamp(c.start, ',') + " --> " + timestamp(c.end, ',') + "\n" + c.text +
           "\n\n";
  return out;
}

std::string vtt(const Transcription& t) {
  std::string out = "WEBVTT\n\n";
  for (const Cue& c : cues(t))
    out += timestamp(c.start, '.') + " --> " + timestamp(c.end, '.') + "\n" + c.text + "\n\n";
  return out;
}

std::string tsv(const Transcription& t) {
  std::string out = "start\tend\ttext\n";
  for (const Segment& s : t.segments)
    out += std::to_string(milliseconds(s.start)) + "\t" + std::to_string(milliseconds(s.end)) + "\t" +
           replace_all(trim(s.text), "\t", " ") + "\n";
  return out;
}

std::string verbose_json(const Transcription& t, const std::string& task) {
  Json out;
  out["task"] = task;
  out["language"] = language_name(t.language);
  out["duration"] = t.duration;
  out["text"] = trim(t.text);
  Json segments = Json::array(), words = Json::array();
  for (const Segment& s : t.segments) {
    segments.push_back(Json{{"id", s.id},
                            {"seek", s.seek},
                            {"start", s.start},
                            {"end", s.end},
                            {"text", s.text},
                            {"tokens", s.tokens},
                            {"temperature", shortest(s.temperature)},
                            {"avg_logprob", s.avg_logprob},
                            {"compression_ratio", s.compression_ratio},
                            {"no_speech_prob", s.no_speech_prob}});
    for (const Word& w : s.words) words.push_back(Json{{"word", trim(w.word)}, {"start", w.start}, {"end", w.end}});
  }
  out["segments"] = std::move(segments);
  if (!words.empty()) out["words"] = std::move(words);
  return dump(out);
}

}  // namespace

TranscriptFormat parse_transcript_format(const std::string& name, const std::string& field) {
  for (const FormatName& f : kFormats)
    if (name == f.name) return f.format;
  std::string names;
  for (const FormatName& f : kFormats) names += (names.empty() ? "" : ", ") + std::string(f.name);
  throw Error(field + ": unknown transcript format '" + name + "' (formats: " + names + ")");
}

std::vector<std::string> transcript_format_names() {
  std::vector<std::string> names;
  for (const FormatName& f : kFormats) names.push_back(f.name);
  return names;
}

std::string write_transcript(const Transcription& transcription, TranscriptFormat format, const std::string& task) {
  switch (format) {
    case TranscriptFormat::kText: return text_lines(transcription);
    case TranscriptFormat::kJson: return dump(Json{{"text", trim(transcription.text)}});
    case TranscriptFormat::kVerboseJson: return verbose_json(transcription, task);
    case TranscriptFormat::kSrt: return srt(transcription);
    case TranscriptFormat::kVtt: return vtt(transcription);
    case TranscriptFormat::kTsv: return tsv(transcription);
  }
  throw Error("write_transcript: unknown transcript format");
}

}  // namespace ordo
