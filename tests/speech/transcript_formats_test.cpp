// Transcripts written as OpenAI's API (json, verbose_json) and openai-whisper's writers (text,
// srt, vtt, tsv) write them, from hand-made transcriptions.
// ctest-label: unit
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ordo/speech.h"
#include "support/fixtures.h"

namespace {

using ordo::Segment;
using ordo::TranscriptFormat;
using ordo::Transcription;
using ordo::Word;

Segment segment(int64_t id, double start, double end, const std::string& text) {
  Segment s;
  s.id = id;
  s.start = start;
  s.end = end;
  s.text = text;
  return s;
}

// Two segments of one window, as a decoded 3.5 s clip would give them.
Transcription two_segments() {
  Transcription t;
  t.language = "de";
  t.language_probability = 0.75f;
  t.duration = 3.5;
  Segment a = segment(0, 0.0, 1.08, " Hallo Welt.");
  a.tokens = {50364, 2425, 1002, 50418};
  a.avg_logprob = -0.25;
  a.compression_ratio = 1.5;
  a.no_speech_prob = 0.125;
  a.temperature = 0.2f;
  Segment b = segment(1, 1.08, 3.5, " Wie geht's?  ");
  b.tokens = {50418, 3212, 50539};
  t.segments = {a, b};
  t.text = " Hallo Welt. Wie geht's?  ";
  return t;
}

std::string write(const Transcription& t, TranscriptFormat format, const std::string& task = "transcribe") {
  return ordo::write_transcript(t, format, task);
}

TEST(TranscriptFormat, ParsesEveryNameItLists) {
  const std::vector<std::string> names = ordo::transcript_format_names();
  ASSERT_EQ(names, (std::vector<std::string>{"text", "json", "verbose_json", "srt", "vtt", "tsv"}));
  EXPECT_EQ(ordo::parse_transcript_format("text", "--format"), TranscriptFormat::kText);
  EXPECT_EQ(ordo::parse_transcript_format("json", "--format"), TranscriptFormat::kJson);
  EXPECT_EQ(ordo::parse_transcript_format("verbose_json", "--format"), TranscriptFormat::kVerboseJson);
  EXPECT_EQ(ordo::parse_transcript_format("srt", "--format"), TranscriptFormat::kSrt);
  EXPECT_EQ(ordo::parse_transcript_format("vtt", "--format"), TranscriptFormat::kVtt);
  EXPECT_EQ(ordo::parse_transcript_format("tsv", "--format"), TranscriptFormat::kTsv);
}

TEST(TranscriptFormat, RefusesAnUnknownNameNamingTheFieldAndTheFormats) {
  try {
    ordo::parse_transcript_format("docx", "response_format");
    FAIL() << "no error";
  } catch (const ordo::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "response_format: unknown transcript format 'docx' (formats: text, json, verbose_json, srt, vtt, tsv)");
  }
}

TEST(TranscriptFormat, TextIsOneTrimmedSegmentPerLine) {
  EXPECT_EQ(write(two_segments(), TranscriptFormat::kText), "Hallo Welt.\nWie geht's?\n");
}

TEST(TranscriptFormat, JsonHoldsTheTrimmedTextOnly) {
  EXPECT_EQ(write(two_segments(), TranscriptFormat::kJson), "{\"text\":\"Hallo Welt. Wie geht's?\"}");
}

TEST(TranscriptFormat, VerboseJsonHasOpenAIsFieldsInItsOrder) {
  const std::string text = write(two_segments(), TranscriptFormat::kVerboseJson, "translate");
  EXPECT_EQ(text,
            "{\"task\":\"translate\",\"language\":\"german\",\"duration\":3.5,\"text\":\"Hallo Welt. Wie geht's?\","
            "\"segments\":[{\"id\":0,\"seek\":0,\"start\":0.0,\"end\":1.08,\"text\":\" Hallo Welt.\","
            "\"tokens\":[50364,2425,1002,50418],\"temperature\":0.2,\"avg_logprob\":-0.25,\"compression_ratio\":1.5,"
            "\"no_speech_prob\":0.125},{\"id\":1,\"seek\":0,\"start\":1.08,\"end\":3.5,\"text\":\" Wie geht's?  \","
            "\"tokens\":[50418,3212,50539],\"temperature\":0.0,\"avg_logprob\":0.0,\"compression_ratio\":0.0,"
            "\"no_speech_prob\":0.0}]}");
}

TEST(TranscriptFormat, VerboseJsonListsTheWordsTrimmedAfterTheSegments) {
  Transcription t = two_segments();
  t.segments[0].words = {{" Hallo", 0.0, 0.5, 0.9f}, {" Welt.", 0.5, 1.08, 0.8f}};
  t.segments[1].words = {{" Wie", 1.08, 1.5, 0.7f}};
  const nlohmann::ordered_json json = nlohmann::ordered_json::parse(write(t, TranscriptFormat::kVerboseJson));
  std::vector<std::string> keys;
  for (const auto& item : json.items()) keys.push_back(item.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"task", "language", "duration", "text", "segments", "words"}));
  EXPECT_EQ(json["words"].dump(),
            "[{\"word\":\"Hallo\",\"start\":0.0,\"end\":0.5},{\"word\":\"Welt.\",\"start\":0.5,\"end\":1.08},"
            "{\"word\":\"Wie\",\"start\":1.08,\"end\":1.5}]");
}

TEST(TranscriptFormat, VerboseJsonNamesEveryLanguageOfTheMultilingualTokenizer) {
  std::ifstream in(ordo::testing::fixture_dir("whisper") + "/added_tokens.json");
  const nlohmann::json added = nlohmann::json::parse(in);
  int languages = 0;
  for (const auto& [token, id] : added.items()) {
    if (id.get<int64_t>() < 50259 || id.get<int64_t>() > 50357) continue;  // <|en|> ... <|su|>
    Transcription t;
    t.language = token.substr(2, token.size() - 4);
    const nlohmann::json json = nlohmann::json::parse(write(t, TranscriptFormat::kVerboseJson));
    EXPECT_NE(json["language"], t.language) << token;
    ++languages;
  }
  EXPECT_EQ(languages, 99);
}

TEST(TranscriptFormat, SrtNumbersCuesFromOneWithCommaMilliseconds) {
  EXPECT_EQ(write(two_segments(), TranscriptFormat::kSrt),
            "1\n00:00:00,000 --> 00:00:01,080\nHallo Welt.\n\n"
            "2\n00:00:01,080 --> 00:00:03,500\nWie geht's?\n\n");
}

TEST(TranscriptFormat, VttStartsWithItsHeaderAndWritesDotMilliseconds) {
  EXPECT_EQ(write(two_segments(), TranscriptFormat::kVtt),
            "WEBVTT\n\n"
            "00:00:00.000 --> 00:00:01.080\nHallo Welt.\n\n"
            "00:00:01.080 --> 00:00:03.500\nWie geht's?\n\n");
}

TEST(TranscriptFormat, TsvWritesWholeMillisecondsUnderItsHeader) {
  Transcription t = two_segments();
  t.segments[1].text = " Wie\tgeht's?";
  EXPECT_EQ(write(t, TranscriptFormat::kTsv), "start\tend\ttext\n0\t1080\tHallo Welt.\n1080\t3500\tWie geht's?\n");
}

TEST(TranscriptFormat, TimesRoundHalfToEvenAsPythonsRound) {
  Transcription t;
  t.segments = {segment(0, 0.0005, 0.0015, "a"), segment(1, 0.0025, 3723.5, "b")};
  EXPECT_EQ(write(t, TranscriptFormat::kTsv), "start\tend\ttext\n0\t2\ta\n2\t3723500\tb\n");
  EXPECT_EQ(write(t, TranscriptFormat::kSrt),
            "1\n00:00:00,000 --> 00:00:00,002\na\n\n2\n00:00:00,002 --> 01:02:03,500\nb\n\n");
}

TEST(TranscriptFormat, NegativeOrNanTimesAreWrittenAsZero) {
  Transcription t;
  t.segments = {segment(0, -1.0, std::nan(""), "a")};
  EXPECT_EQ(write(t, TranscriptFormat::kVtt), "WEBVTT\n\n00:00:00.000 --> 00:00:00.000\na\n\n");
}

TEST(TranscriptFormat, SubtitlesWriteAnArrowInTheTextAsAShortOne) {
  Transcription t;
  t.segments = {segment(0, 0.0, 1.0, " a --> b")};
  EXPECT_EQ(write(t, TranscriptFormat::kSrt), "1\n00:00:00,000 --> 00:00:01,000\na -> b\n\n");
}

TEST(TranscriptFormat, SubtitlesWithWordsRunFromTheFirstWordToTheLast) {
  Transcription t = two_segments();
  t.segments[0].words = {{" Hallo", 0.12, 0.5, 0.9f}, {" Welt.", 0.5, 0.98, 0.8f}};
  t.segments[1].words = {{" Wie", 1.2, 1.5, 0.7f}, {" geht's?", 1.5, 2.25, 0.7f}};
  EXPECT_EQ(write(t, TranscriptFormat::kVtt),
            "WEBVTT\n\n"
            "00:00:00.120 --> 00:00:00.980\nHallo Welt.\n\n"
            "00:00:01.200 --> 00:00:02.250\nWie geht's?\n\n");
  // tsv and text stay by segment.
  EXPECT_EQ(write(t, TranscriptFormat::kTsv), "start\tend\ttext\n0\t1080\tHallo Welt.\n1080\t3500\tWie geht's?\n");
}

TEST(TranscriptFormat, AnEmptyTranscriptionIsAnEmptyDocumentOfEachFormat) {
  const Transcription t;
  EXPECT_EQ(write(t, TranscriptFormat::kText), "");
  EXPECT_EQ(write(t, TranscriptFormat::kJson), "{\"text\":\"\"}");
  EXPECT_EQ(write(t, TranscriptFormat::kSrt), "");
  EXPECT_EQ(write(t, TranscriptFormat::kVtt), "WEBVTT\n\n");
  EXPECT_EQ(write(t, TranscriptFormat::kTsv), "start\tend\ttext\n");
}

}  // namespace
