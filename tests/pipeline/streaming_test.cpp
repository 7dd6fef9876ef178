// DecodeOptions::on_token: greedy and sampled translations streamed token by token. The deltas
// of an input concatenate to exactly the non-streamed text, each event's text extends the one
// before it, the event ids are the result's, a callback that returns false stops its input only,
// and beam search gives one final event per input.
// ctest-label: integration
#include <unistd.h>

#include <cstdio>
#include <map>
#include <mutex>

#include <gtest/gtest.h>

#include "ordo/ordo.h"
#include "pipeline/token_stream.h"
#include "support/cli_run.h"
#include "support/fixtures.h"
#include "support/temp_dir.h"

namespace {

using ordo::DecodeOptions;
using ordo::TokenEvent;
using ordo::Translator;
using ordo::testing::fixture_dir;
using ordo::testing::load_golden;

std::vector<std::string> golden_sentences(const std::string& fixture) {
  const nlohmann::json golden = load_golden(fixture);
  std::vector<std::string> sentences;
  for (const auto& s : golden.at("sentences")) sentences.push_back(s.get<std::string>());
  return sentences;
}

// Every event of a call, by input, in the order they came.
struct Recorder {
  std::mutex mutex;
  std::map<size_t, std::vector<TokenEvent>> events;
  void add(const TokenEvent& e) {
    std::lock_guard<std::mutex> lock(mutex);
    events[e.input].push_back(e);
  }
};

void expect_stream_matches(const std::vector<TokenEvent>& events, const ordo::Hypothesis& result, bool per_token,
                           const std::string& where) {
  ASSERT_FALSE(events.empty()) << where;
  EXPECT_TRUE(events.back().done) << where;
  EXPECT_EQ(events.back().text, result.text) << where;
  std::string joined;
  std::vector<int64_t> ids;
  for (size_t k = 0; k < events.size(); ++k) {
    const TokenEvent& e = events[k];
    EXPECT_EQ(e.done, k + 1 == events.size()) << where;
    joined += e.delta;
    EXPECT_EQ(e.text, joined) << where << " event " << k;  // text = the deltas so far
    EXPECT_EQ(result.text.compare(0, e.text.size(), e.text), 0) << where << " event " << k << ": '" << e.text << "'";
    if (!e.done) ids.push_back(e.id);
  }
  EXPECT_EQ(joined, result.text) << where;
  if (per_token) {
    EXPECT_EQ(ids, result.ids) << where;
  } else {
    EXPECT_EQ(events.size(), 1u) << where;
  }
}

TEST(Streaming, DeltasConcatenateToTheTextOnEveryFamily) {
  const std::map<std::string, std::string> target_lang = {{"m2m100", "de"}, {"mbart50", "de_DE"}};
  for (const std::string fixture : {"marian_opus_en_mg", "pegasus", "m2m100", "bart", "mbart50", "t5"}) {
    const Translator translator(fixture_dir(fixture));
    const std::vector<std::string> sentences = golden_sentences(fixture);
    for (const bool sample : {false, true}) {
      DecodeOptions options;
      options.beam_size = 1;
      options.max_new_tokens = 40;
      if (target_lang.count(fixture)) options.target_lang = target_lang.at(fixture);
      if (sample) {
        options.sample = true;
        options.seed = 7;
      }
      const auto reference = translator.translate(sentences, options);
      Recorder recorder;
      options.on_token = [&recorder](const TokenEvent& e) {
        recorder.add(e);
        return true;
      };
      const auto streamed = translator.translate(sentences, options);
      ASSERT_EQ(streamed.size(), sentences.size());
      size_t words = 0;
      std::string texts;
      for (size_t i = 0; i < sentences.size(); ++i) {
        const std::string where = fixture + (sample ? " sampled" : " greedy") + " input " + std::to_string(i);
        EXPECT_EQ(streamed[i].hypotheses[0].ids, reference[i].hypotheses[0].ids) << where;
        if (!ordo::has_text(sentences[i])) {
          EXPECT_EQ(recorder.events.count(i), 0u) << where;  // not run: no event
          continue;
        }
        expect_stream_matches(recorder.events[i], streamed[i].hypotheses[0], true, where);
        for (const TokenEvent& e : recorder.events[i]) words += !e.done && !e.delta.empty();
        texts += "[" + streamed[i].hypotheses[0].text + "] ";
      }
      EXPECT_GT(words, 5u) << fixture << ": text must come before the end, not only in the final event: " << texts;
    }
  }
}

TEST(Streaming, ReturningFalseStopsThatInputOnly) {
  const Translator translator(fixture_dir("marian_opus_en_mg"));
  const std::vector<std::string> sentences = {"My neighbour planted three apple trees in the garden last spring.",
                                              "Where is the train station?"};
  DecodeOptions options;
  options.beam_size = 1;
  options.min_new_tokens = 20;
  options.max_new_tokens = 20;
  const auto reference = translator.translate(sentences, options);
  Recorder recorder;
  options.on_token = [&recorder](const TokenEvent& e) {
    recorder.add(e);
    return !(e.input == 0 && recorder.events[0].size() >= 3);
  };
  const auto stopped = translator.translate(sentences, options);
  const std::vector<int64_t>& full = reference[0].hypotheses[0].ids;
  EXPECT_EQ(stopped[0].hypotheses[0].ids, std::vector<int64_t>(full.begin(), full.begin() + 3));
  EXPECT_EQ(stopped[1].hypotheses[0].ids, reference[1].hypotheses[0].ids);
  expect_stream_matches(recorder.events[0], stopped[0].hypotheses[0], true, "stopped input");
  expect_stream_matches(recorder.events[1], stopped[1].hypotheses[0], true, "other input");
}

// Per-input target prefixes of different lengths run in groups of their own: each event still
// names its input, and the prefix tokens are streamed as the output keeps them.
TEST(Streaming, TargetPrefixesOfDifferentLengthsKeepEachEventsInput) {
  const Translator translator(fixture_dir("marian_opus_en_mg"));
  const std::vector<std::string> sentences = {"Where is the train station?", "Line one.", "", "Hello world."};
  const std::vector<std::string> prefixes = {"", "Aiza ny", "", "Tsara"};
  DecodeOptions options;
  options.beam_size = 1;
  options.max_new_tokens = 30;
  const auto reference = translator.translate(sentences, options, {}, prefixes);
  Recorder recorder;
  options.on_token = [&recorder](const TokenEvent& e) {
    recorder.add(e);
    return true;
  };
  const auto streamed = translator.translate(sentences, options, {}, prefixes);
  EXPECT_EQ(recorder.events.count(2), 0u);
  for (size_t i : {size_t(0), size_t(1), size_t(3)}) {
    EXPECT_EQ(streamed[i].hypotheses[0].ids, reference[i].hypotheses[0].ids) << i;
    expect_stream_matches(recorder.events[i], streamed[i].hypotheses[0], true, "prefixed input " + std::to_string(i));
  }
}

TEST(Streaming, BeamSearchGivesOnlyTheFinalEvent) {
  const Translator translator(fixture_dir("marian_opus_en_mg"));
  const std::vector<std::string> sentences = {"Where is the train station?", "", "Line one."};
  DecodeOptions options;
  options.beam_size = 3;
  const auto reference = translator.translate(sentences, options);
  Recorder recorder;
  options.on_token = [&recorder](const TokenEvent& e) {
    recorder.add(e);
    return false;  // ignored: nothing to stop
  };
  const auto streamed = translator.translate(sentences, options);
  EXPECT_EQ(recorder.events.size(), 2u);  // the empty input is not run
  for (size_t i : {size_t(0), size_t(2)}) {
    EXPECT_EQ(streamed[i].hypotheses[0].ids, reference[i].hypotheses[0].ids);
    expect_stream_matches(recorder.events[i], streamed[i].hypotheses[0], false, "beam input " + std::to_string(i));
  }
}

TEST(Streaming, OnlyTextLaterTokensCannotChangeIsGiven) {
  using ordo::pipeline::final_part;
  EXPECT_EQ(final_part("Hello wor"), "Hello");
  EXPECT_EQ(final_part("Hello world "), "Hello world");  // the space may yet be joined (" .")
  EXPECT_EQ(final_part("Hello"), "");
  EXPECT_EQ(final_part("a\nb"), "a");
  EXPECT_EQ(final_part("ab \xE2\x82"), "ab");                                         // half a character is never given
  EXPECT_EQ(final_part("x \xE6\x9D\xB1\xE4\xBA\xAC"), "x \xE6\x9D\xB1\xE4\xBA\xAC");  // CJK: whole
  EXPECT_EQ(final_part("x \xEF\xBF\xBD"), "x");                                       // a trailing U+FFFD waits
}

// The pieces `command`'s stdout arrives in, read from a pipe as it comes (at most 60 s).
std::vector<std::string> stdout_pieces(const std::string& command, int& exit_code) {
  FILE* pipe = ::popen(("timeout 60 " + command).c_str(), "r");
  if (!pipe) return {};
  std::vector<std::string> pieces;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fileno(pipe), buffer, sizeof buffer)) > 0;)
    pieces.emplace_back(buffer, static_cast<size_t>(n));
  const int status = ::pclose(pipe);
  exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return pieces;
}

// `ordo summarize --stream` / `ordo translate --stream`: the words reach the pipe while the
// line is being generated (some piece read ends inside a line), and the whole output is byte
// for byte the output without --stream. Lines of 200 tokens: on a busy machine the reader may
// wake only once a short line is whole, never across the whole of two long ones.
struct StreamRuns {
  int plain_code = -1, stream_code = -1;
  std::string plain;
  std::vector<std::string> pieces;  // of the --stream output, as read
};

// `ordo <command> -m <fixture>` run once with and once without --stream (once per process).
const StreamRuns& stream_runs(const std::string& command, const std::string& fixture) {
  static std::map<std::string, StreamRuns> runs;
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  const auto found = runs.find(command);
  if (found != runs.end()) return found->second;
  ordo::testing::TempDir dir;
  const std::string input = dir.write("in.txt",
                                      "My neighbour planted three apple trees in the garden last spring.\n\n"
                                      "Where is the train station?\n");
  const std::string base = std::string(ORDO_BINARY_DIR) + "/ordo " + command + " -m '" + fixture_dir(fixture) +
                           "' -i '" + input + "' --beam-size 1 --min-length 200 --max-length 200 -q";
  StreamRuns made;
  for (const std::string& piece : stdout_pieces(base, made.plain_code)) made.plain += piece;
  made.pieces = stdout_pieces(base + " --stream", made.stream_code);
  return runs.emplace(command, std::move(made)).first->second;
}

void expect_the_output_without_stream(const std::string& command, const std::string& fixture) {
  const StreamRuns& runs = stream_runs(command, fixture);
  ASSERT_EQ(runs.plain_code, 0) << command;
  ASSERT_EQ(runs.stream_code, 0) << command;
  std::string streamed;
  for (const std::string& piece : runs.pieces) streamed += piece;
  EXPECT_EQ(streamed, runs.plain) << command;
}

void expect_words_before_their_lines_end(const std::string& command, const std::string& fixture) {
  const StreamRuns& runs = stream_runs(command, fixture);
  ASSERT_EQ(runs.stream_code, 0) << command;
  bool cut_inside_a_line = false;
  for (size_t i = 0; i + 1 < runs.pieces.size(); ++i)
    cut_inside_a_line = cut_inside_a_line || runs.pieces[i].back() != '\n';
  EXPECT_TRUE(cut_inside_a_line) << command << ": the words must reach the pipe before their line's end ("
                                 << runs.pieces.size() << " pieces)";
}

TEST(CliStreaming, AStreamedSummaryIsTheOutputWithoutStream) {
  expect_the_output_without_stream("summarize", "pegasus");
}

TEST(CliStreaming, SummaryWordsReachThePipeBeforeTheirLineEnds) {
  expect_words_before_their_lines_end("summarize", "pegasus");
}

TEST(CliStreaming, AStreamedTranslationIsTheOutputWithoutStream) {
  expect_the_output_without_stream("translate", "bart");
}

TEST(CliStreaming, TranslationWordsReachThePipeBeforeTheirLineEnds) {
  expect_words_before_their_lines_end("translate", "bart");
}

TEST(CliStreaming, OptionsAStreamCannotFollowAreRefusedNamingThem) {
  const std::string model = "-m '" + fixture_dir("marian_opus_en_mg") + "'";
  for (const auto& [flags, named] : {std::pair<std::string, std::string>{"--json", "--json"},
                                     {"--beam-size 2 --n-best 2", "--n-best"},
                                     {"--paragraphs", "--paragraphs"},
                                     {"--split-sentences", "--split-sentences"},
                                     {"--format html", "--format html"},
                                     {"--alignment hard", "--alignment"}}) {
    const ordo::testing::CliRun run = ordo::testing::run_ordo("translate " + model + " --stream " + flags, "Hello.\n");
    EXPECT_EQ(run.exit_code, 1) << flags << ": " << run.err;
    EXPECT_NE(run.err.find("--stream cannot be combined with " + named), std::string::npos) << run.err;
  }
  // Beam search: the output all the same, with a warning that lines come whole.
  const ordo::testing::CliRun beam =
      ordo::testing::run_ordo("translate " + model + " --stream --beam-size 2", "Hello.\n");
  EXPECT_EQ(beam.exit_code, 0) << beam.err;
  EXPECT_EQ(beam.out, ordo::testing::run_ordo("translate " + model + " --beam-size 2", "Hello.\n").out);
  EXPECT_NE(beam.err.find("--stream with beam search (2 beams)"), std::string::npos) << beam.err;
}

}  // namespace
