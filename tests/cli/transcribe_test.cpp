// `ordo transcribe` run as a user runs it, on the tiny random Whisper fixture and its clips: its
// transcripts are the library's (and transformers' ids where speech.json has them), written in
// each format, to stdout, a file or a folder; a bad input is one error line and the other inputs
// are still written.
// ctest-label: integration
#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ordo/speech.h"
#include "support/cli_run.h"
#include "support/fixtures.h"
#include "support/temp_dir.h"

namespace {

using ordo::testing::CliRun;
using ordo::testing::read_file;
using ordo::testing::TempDir;

std::string model_dir() { return ordo::testing::fixture_dir("whisper"); }
std::string clip(const std::string& name) { return model_dir() + "/audio/" + name; }

// Greedy, one temperature and no thresholds: transformers' generate() on a clip of one window.
const std::string kExact =
    " --beam-size 1 --max-length 32 --temperature 0 --compression-ratio-threshold off --logprob-threshold off"
    " --no-speech-threshold off";

CliRun transcribe(const std::string& args, const std::string& input = "") {
  return ordo::testing::run_ordo("transcribe -m '" + model_dir() + "' " + args, input);
}

const ordo::SpeechRecognizer& recognizer() {
  static const ordo::SpeechRecognizer model(model_dir());
  return model;
}

// The options kExact sets, with a language.
ordo::TranscribeOptions exact_options(const std::string& language) {
  ordo::TranscribeOptions o;
  o.language = language;
  o.temperatures = {0.0f};
  o.decode.beam_size = 1;
  o.decode.max_new_tokens = 32;
  return o;
}

std::string library_transcript(const std::string& audio, const ordo::TranscribeOptions& options,
                               ordo::TranscriptFormat format) {
  const ordo::Transcription t = recognizer().transcribe(ordo::read_audio(clip(audio)), options);
  return ordo::write_transcript(t, format, options.task);
}

TEST(TranscribeCli, PrintsTheTextOfTransformersGreedyIdsWithoutTimestamps) {
  const nlohmann::json golden = ordo::testing::load_fixture_json("whisper", "speech.json");
  const nlohmann::json& c = golden["cases"][0];  // en_16k.wav, transcribe, en, no timestamps
  ASSERT_EQ(c["audio"], "en_16k.wav");
  ASSERT_EQ(c["timestamps"], false);
  const CliRun run = transcribe("'" + clip("en_16k.wav") + "' --language en --no-timestamps --format json" + kExact);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string text = c["greedy_text"];  // transformers' decode of its ids
  const nlohmann::json expected = {{"text", text.substr(text.find_first_not_of(' '))}};
  EXPECT_EQ(run.out, expected.dump() + "\n");
}

TEST(TranscribeCli, WritesEachFormatAsTheLibraryWritesIt) {
  for (const std::string& name : ordo::transcript_format_names()) {
    const ordo::TranscriptFormat format = ordo::parse_transcript_format(name, "format");
    const CliRun run = transcribe("'" + clip("en_16k.wav") + "' --language en --format " + name + kExact);
    ASSERT_EQ(run.exit_code, 0) << name << ": " << run.err;
    std::string expected = library_transcript("en_16k.wav", exact_options("en"), format);
    if (format == ordo::TranscriptFormat::kJson || format == ordo::TranscriptFormat::kVerboseJson) expected += "\n";
    EXPECT_EQ(run.out, expected) << name;
  }
}

TEST(TranscribeCli, TranslatesWithTaskTranslate) {
  const CliRun run =
      transcribe("'" + clip("de_16k.wav") + "' --language de --task translate --format verbose_json" + kExact);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ordo::TranscribeOptions options = exact_options("de");
  options.task = "translate";
  EXPECT_EQ(run.out, library_transcript("de_16k.wav", options, ordo::TranscriptFormat::kVerboseJson) + "\n");
  EXPECT_EQ(nlohmann::json::parse(run.out)["task"], "translate");
}

TEST(TranscribeCli, DetectsTheLanguageWithLanguageAuto) {
  const CliRun run = transcribe("'" + clip("fr_16k.wav") + "' --language auto --format verbose_json" + kExact);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, library_transcript("fr_16k.wav", exact_options(""), ordo::TranscriptFormat::kVerboseJson) + "\n");
}

TEST(TranscribeCli, ReadsAudioFromStdinAsFromItsFile) {
  const CliRun from_file = transcribe("'" + clip("en_16k.wav") + "' --language en" + kExact);
  const CliRun from_stdin = transcribe("- --language en" + kExact, read_file(clip("en_16k.wav")));
  ASSERT_EQ(from_stdin.exit_code, 0) << from_stdin.err;
  EXPECT_EQ(from_stdin.out, from_file.out);
}

TEST(TranscribeCli, WritesOneFileOfTheFormatsExtensionPerInputIntoTheOutputFolder) {
  TempDir dir;
  const std::string folder = dir.file("out");
  const CliRun run = transcribe("'" + clip("en_16k.wav") + "' '" + clip("de_16k.wav") +
                                "' --language en --format srt -o '" + folder + "'" + kExact);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "");
  for (const std::string stem : {"en_16k", "de_16k"})
    EXPECT_EQ(read_file(folder + "/" + stem + ".srt"),
              library_transcript(stem + ".wav", exact_options("en"), ordo::TranscriptFormat::kSrt))
        << stem;
}

TEST(TranscribeCli, WritesOneInputToTheOutputFile) {
  TempDir dir;
  const CliRun run =
      transcribe("'" + clip("en_16k.wav") + "' --language en --format vtt -o '" + dir.file("talk.vtt") + "'" + kExact);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(read_file(dir.file("talk.vtt")),
            library_transcript("en_16k.wav", exact_options("en"), ordo::TranscriptFormat::kVtt));
}

TEST(TranscribeCli, AMissingFileIsOneErrorLineAndTheOtherInputsAreStillWritten) {
  TempDir dir;
  const std::string missing = dir.file("missing.wav");
  const CliRun run = transcribe("'" + clip("en_16k.wav") + "' '" + missing + "' '" + clip("de_16k.wav") +
                                "' --language en -o '" + dir.file("out") + "'" + kExact);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.err.rfind("ordo: error: " + missing + ": ", 0), 0u) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  EXPECT_FALSE(read_file(dir.file("out/en_16k.txt")).empty());
  EXPECT_FALSE(read_file(dir.file("out/de_16k.txt")).empty());
  EXPECT_FALSE(std::filesystem::exists(dir.file("out/missing.txt")));
}

TEST(TranscribeCli, AFileThatIsNotAudioIsOneErrorLineNamingIt) {
  TempDir dir;
  const std::string text = dir.write("notes.wav", "These are not audio samples.\n");
  const CliRun run = transcribe("'" + text + "' '" + clip("en_16k.wav") + "' --language en" + kExact);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.err.rfind("ordo: error: " + text + ": ", 0), 0u) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  // The good input after it is still transcribed, to stdout.
  EXPECT_EQ(run.out, library_transcript("en_16k.wav", exact_options("en"), ordo::TranscriptFormat::kText));
}

TEST(TranscribeCli, RefusesTwoInputsThatWouldWriteOneFile) {
  TempDir dir;
  const std::string copy = dir.file("en_16k.wav");
  std::filesystem::copy_file(clip("en_16k.wav"), copy);
  const CliRun run = transcribe("'" + clip("en_16k.wav") + "' '" + copy + "' -o '" + dir.file("out") + "'");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("would both be written to"), std::string::npos) << run.err;
}

TEST(TranscribeCli, RefusesALanguageTheModelDoesNotKnowNamingTheFlag) {
  const CliRun run = transcribe("'" + clip("en_16k.wav") + "' --language xx");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.err.rfind("ordo: error: --language xx: not a language of the model", 0), 0u) << run.err;
}

TEST(TranscribeCli, RefusesABadTemperatureListAtParseTime) {
  const CliRun run = transcribe("'" + clip("en_16k.wav") + "' --temperature 0,hot");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--temperature: 'hot' must be a number from 0 to 100"), std::string::npos) << run.err;
}

TEST(TranscribeCli, RefusesAnUnknownFormatAtParseTime) {
  const CliRun run = transcribe("'" + clip("en_16k.wav") + "' --format docx");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--format"), std::string::npos) << run.err;
}

TEST(TranscribeCli, RefusesATextModelFolder) {
  const CliRun run = ordo::testing::run_ordo("transcribe -m '" + ordo::testing::fixture_dir("marian_opus_en_mg") +
                                             "' '" + clip("en_16k.wav") + "'");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("not a speech model"), std::string::npos) << run.err;
}

TEST(TranscribeCli, ShowsProgressLinesWithProgressWhenStderrIsNoTerminal) {
  const CliRun quiet = transcribe("'" + clip("en_16k.wav") + "' --language en" + kExact);
  EXPECT_EQ(quiet.err, "");
  const CliRun run = transcribe("'" + clip("en_16k.wav") + "' --language en --progress" + kExact);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.err.rfind("ordo: " + clip("en_16k.wav") + ": ", 0), 0u) << run.err;
  EXPECT_NE(run.err.find(" of 2.8 s\n"), std::string::npos) << run.err;
}

TEST(TranscribeCli, IsListedInTheHelp) {
  const CliRun run = ordo::testing::run_ordo("--help");
  EXPECT_NE(run.out.find("transcribe"), std::string::npos);
}

}  // namespace
