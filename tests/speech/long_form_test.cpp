// ctest-label: unit
// openai-whisper's long-form loop (src/speech/long_form.h) on scripted windows: what each
// window is asked (where it starts, its prompt, its temperature) and the segments made of the
// tokens the script answers. Text tokens are below 50 (" w<id>"), <|endoftext|> is 50, and
// timestamps start at 60 (<|0.00|>), 0.02 s apart.
#include "speech/long_form.h"

#include <functional>

#include <gtest/gtest.h>

#include "speech/compression_ratio.h"

namespace ordo::speech {
namespace {

using Ids = std::vector<int64_t>;
constexpr int64_t kEot = 50, kT0 = 60;

WindowModel scripted(std::vector<WindowRequest>& asked, std::function<WindowResult(const WindowRequest&)> answer) {
  WindowModel m;
  m.decode = [&asked, answer](const WindowRequest& r) {
    asked.push_back(r);
    return answer(r);
  };
  m.text = [](const Ids& ids) {
    std::string s;
    for (int64_t id : ids) s += " w" + std::to_string(id);
    return s;
  };
  return m;
}

WindowResult answer(Ids tokens, double avg_logprob = -0.1, double no_speech = 0.0, double ratio = 1.0) {
  WindowResult r;
  r.tokens = std::move(tokens);
  r.avg_logprob = avg_logprob;
  r.no_speech_prob = no_speech;
  r.compression_ratio = ratio;
  return r;
}

LongFormSettings settings(int64_t frames) {
  LongFormSettings s;
  s.content_frames = frames;
  s.timestamp_begin = kT0;
  s.eot = kEot;
  return s;
}

TEST(LongForm, SegmentsEndAtConsecutiveTimestampsAndSeekToTheLastOne) {
  std::vector<WindowRequest> asked;
  const WindowModel m = scripted(asked, [](const WindowRequest&) { return answer({}); });
  const WindowSegments w =
      split_window({kT0, 1, 2, kT0 + 50, kT0 + 50, 3, kT0 + 100, kT0 + 100, 4}, 5.0, 3000, m, settings(10000));
  ASSERT_EQ(w.segments.size(), 2u);
  EXPECT_DOUBLE_EQ(w.segments[0].start, 5.0);
  EXPECT_DOUBLE_EQ(w.segments[0].end, 6.0);
  EXPECT_EQ(w.segments[0].text, " w1 w2");
  EXPECT_EQ(w.segments[0].tokens, (Ids{kT0, 1, 2, kT0 + 50}));
  EXPECT_DOUBLE_EQ(w.segments[1].start, 6.0);
  EXPECT_DOUBLE_EQ(w.segments[1].end, 7.0);
  EXPECT_EQ(w.advance, 200);  // the last timestamp, 2.00 s, in frames
  EXPECT_FALSE(w.single_timestamp_ending);
}

TEST(LongForm, ASingleTimestampAtTheEndSeeksPastTheWindow) {
  std::vector<WindowRequest> asked;
  const WindowModel m = scripted(asked, [](const WindowRequest&) { return answer({}); });
  const WindowSegments w = split_window({kT0, 1, kT0 + 50, kT0 + 50, 2, kT0 + 100}, 0.0, 2500, m, settings(10000));
  ASSERT_EQ(w.segments.size(), 2u);
  EXPECT_DOUBLE_EQ(w.segments[1].end, 2.0);
  EXPECT_TRUE(w.single_timestamp_ending);
  EXPECT_EQ(w.advance, 2500);
}

TEST(LongForm, WithoutATimestampPairTheWindowIsOneSegmentUpToItsLastTimestamp) {
  std::vector<WindowRequest> asked;
  const WindowModel m = scripted(asked, [](const WindowRequest&) { return answer({}); });
  const WindowSegments w = split_window({kT0, 1, 2, kT0 + 125}, 1.0, 3000, m, settings(10000));
  ASSERT_EQ(w.segments.size(), 1u);
  EXPECT_DOUBLE_EQ(w.segments[0].start, 1.0);
  EXPECT_DOUBLE_EQ(w.segments[0].end, 3.5);
  EXPECT_EQ(w.advance, 3000);
}

TEST(LongForm, OneWindowKeepsTheTextAfterTheLastPairUpToTheEnd) {
  std::vector<WindowRequest> asked;
  const WindowModel m = scripted(asked, [](const WindowRequest&) { return answer({}); });
  LongFormSettings s = settings(1500);
  s.one_window = true;
  const WindowSegments w = split_window({kT0, 1, kT0 + 50, kT0 + 50, 2}, 0.0, 1500, m, s);
  ASSERT_EQ(w.segments.size(), 2u);
  EXPECT_EQ(w.segments[1].text, " w2");
  EXPECT_DOUBLE_EQ(w.segments[1].start, 1.0);
  EXPECT_DOUBLE_EQ(w.segments[1].end, 15.0);
}

TEST(LongForm, APairAtTimeZeroStillMovesForward) {
  std::vector<WindowRequest> asked;
  const WindowModel m = scripted(asked, [](const WindowRequest&) { return answer({}); });
  EXPECT_EQ(split_window({kT0, kT0, 1}, 0.0, 3000, m, settings(10000)).advance, 3000);
}

TEST(LongForm, WindowsFollowTheLastTimestampWithThePreviousTextAsPrompt) {
  std::vector<WindowRequest> asked;
  const WindowModel m = scripted(asked, [](const WindowRequest& r) {
    if (r.seek == 0) return answer({kT0, 1, kT0 + 50, kT0 + 50, 2});  // seek to 1.00 s
    if (r.seek == 100) return answer({kT0, 3, 4, kT0 + 100});         // no pair: past the window
    if (r.seek == 3100) return answer({kT0, 5, kT0 + 10, kT0 + 10});  // seek to 0.20 s after 31 s
    return answer({});
  });
  const std::vector<Segment> segments = transcribe_windows(m, settings(5000));
  ASSERT_EQ(asked.size(), 4u);
  EXPECT_EQ(asked[1].seek, 100);
  EXPECT_EQ(asked[1].frames, 3000);
  EXPECT_EQ(asked[2].seek, 3100);
  EXPECT_EQ(asked[2].frames, 1900);
  EXPECT_EQ(asked[3].seek, 3120);
  EXPECT_TRUE(asked[0].prompt.empty());
  EXPECT_EQ(asked[1].prompt, (Ids{kT0, 1, kT0 + 50}));
  EXPECT_EQ(asked[2].prompt, (Ids{kT0, 1, kT0 + 50, kT0, 3, 4, kT0 + 100}));
  ASSERT_EQ(segments.size(), 3u);  // the last window's empty one is left out
  EXPECT_DOUBLE_EQ(segments[1].start, 1.0);
  EXPECT_DOUBLE_EQ(segments[1].end, 3.0);
  EXPECT_DOUBLE_EQ(segments[2].start, 31.0);
  EXPECT_DOUBLE_EQ(segments[2].end, 31.2);
  EXPECT_EQ(segments[2].id, 2);
}

TEST(LongForm, TheInitialPromptComesFirstAndPromptsKeepOnlyTheLastTokens) {
  std::vector<WindowRequest> asked;
  const WindowModel m = scripted(asked, [](const WindowRequest& r) {
    return r.seek == 0 ? answer({kT0, 1, 2, 3, kT0 + 50, kT0 + 50}) : answer({});
  });
  LongFormSettings s = settings(4000);
  s.initial_prompt = {7, 8};
  s.max_prompt_tokens = 4;
  transcribe_windows(m, s);
  ASSERT_GE(asked.size(), 2u);
  EXPECT_EQ(asked[0].prompt, (Ids{7, 8}));
  EXPECT_EQ(asked[1].prompt, (Ids{1, 2, 3, kT0 + 50}));
}

TEST(LongForm, WithoutConditioningNoWindowHasAPrompt) {
  std::vector<WindowRequest> asked;
  const WindowModel m = scripted(asked, [](const WindowRequest& r) { return answer({kT0, 1, kT0 + 50, kT0 + 50}); });
  LongFormSettings s = settings(400);
  s.condition_on_previous_text = false;
  transcribe_windows(m, s);
  ASSERT_GE(asked.size(), 2u);
  EXPECT_TRUE(asked[1].prompt.empty());
}

TEST(LongForm, ARepetitiveWindowIsDecodedAgainAtTheNextTemperature) {
  std::vector<WindowRequest> asked;
  const WindowModel m = scripted(asked, [](const WindowRequest& r) {
    return answer({kT0, 1, kT0 + 50}, -0.1, 0.0, r.temperature < 0.3f ? 3.0 : 1.5);
  });
  LongFormSettings s = settings(1000);
  s.temperatures = {0.0f, 0.2f, 0.4f};
  s.compression_ratio_threshold = 2.4f;
  const std::vector<Segment> segments = transcribe_windows(m, s);
  ASSERT_EQ(asked.size(), 3u);
  EXPECT_FLOAT_EQ(asked[1].temperature, 0.2f);
  EXPECT_EQ(asked[2].attempt, 2);
  ASSERT_EQ(segments.size(), 1u);
  EXPECT_FLOAT_EQ(segments[0].temperature, 0.4f);
  EXPECT_DOUBLE_EQ(segments[0].compression_ratio, 1.5);
}

TEST(LongForm, AWindowOfSilenceIsNotRetriedAndIsSkipped) {
  std::vector<WindowRequest> asked;
  const WindowModel m = scripted(asked, [](const WindowRequest&) { return answer({kT0, 1, kT0 + 50}, -2.0, 0.9); });
  LongFormSettings s = settings(1000);
  s.temperatures = {0.0f, 0.5f};
  s.log_prob_threshold = -1.0f;
  s.no_speech_threshold = 0.6f;
  EXPECT_TRUE(transcribe_windows(m, s).empty());
  EXPECT_EQ(asked.size(), 1u);
}

TEST(LongForm, ConfidentTextIsKeptDespiteAHighNoSpeechProbability) {
  std::vector<WindowRequest> asked;
  const WindowModel m = scripted(asked, [](const WindowRequest&) { return answer({kT0, 1, kT0 + 50}, -0.5, 0.9); });
  LongFormSettings s = settings(1000);
  s.log_prob_threshold = -1.0f;
  s.no_speech_threshold = 0.6f;
  const std::vector<Segment> segments = transcribe_windows(m, s);
  ASSERT_EQ(segments.size(), 1u);
  EXPECT_DOUBLE_EQ(segments[0].no_speech_prob, 0.9);
}

TEST(LongForm, AWindowDecodedHotLeavesTheNextWithoutPrompt) {
  std::vector<WindowRequest> asked;
  const WindowModel m = scripted(asked, [](const WindowRequest& r) {
    return answer({kT0, 1, kT0 + 50, kT0 + 50}, r.temperature > 0.5f ? -0.5 : -2.0);
  });
  LongFormSettings s = settings(200);
  s.temperatures = {0.0f, 0.6f};
  s.log_prob_threshold = -1.0f;
  transcribe_windows(m, s);
  ASSERT_EQ(asked.size(), 4u);  // two windows, each at 0 then 0.6
  EXPECT_EQ(asked[2].seek, 100);
  EXPECT_TRUE(asked[2].prompt.empty());
}

TEST(LongForm, ProgressAnsweringFalseStopsWithTheSegmentsSoFar) {
  std::vector<WindowRequest> asked;
  const WindowModel m = scripted(asked, [](const WindowRequest&) { return answer({kT0, 1, kT0 + 50, kT0 + 50}); });
  LongFormSettings s = settings(1000);
  std::vector<double> done;
  s.on_progress = [&](double seconds, double total) {
    done.push_back(seconds);
    EXPECT_DOUBLE_EQ(total, 10.0);
    return done.size() < 2;
  };
  const std::vector<Segment> segments = transcribe_windows(m, s);
  EXPECT_EQ(asked.size(), 2u);
  EXPECT_EQ(segments.size(), 2u);
  EXPECT_EQ(done, (std::vector<double>{1.0, 2.0}));
}

TEST(LongForm, WordsTakeTheirTokensTimesAndMeanProbability) {
  std::vector<WindowRequest> asked;
  const WindowModel m = scripted(asked, [](const WindowRequest&) {
    WindowResult r = answer({kT0, 1, 2, kT0 + 50});
    r.token_times = {0.0, 0.1, 0.4, 0.9, 1.0};
    r.token_probabilities = {1.0f, 0.5f, 0.25f, 1.0f};
    return r;
  });
  LongFormSettings s = settings(1000);
  s.word_timestamps = true;
  s.one_window = true;
  const std::vector<Segment> segments = transcribe_windows(m, s);
  ASSERT_EQ(segments.size(), 1u);
  ASSERT_EQ(segments[0].words.size(), 2u);
  EXPECT_EQ(segments[0].words[0].word, " w1");
  EXPECT_DOUBLE_EQ(segments[0].words[0].start, 0.1);
  EXPECT_DOUBLE_EQ(segments[0].words[0].end, 0.4);
  EXPECT_FLOAT_EQ(segments[0].words[1].probability, 0.25f);
  EXPECT_DOUBLE_EQ(segments[0].words[1].end, 0.9);
}

TEST(LongForm, CompressionRatioIsPythonsZlibRatio) {
  EXPECT_NEAR(compression_ratio("hello hello hello hello hello hello"), 2.0588235294117645, 1e-12);
  EXPECT_NEAR(compression_ratio(" The quick brown fox jumps over the lazy dog."), 0.8653846153846154, 1e-12);
  EXPECT_EQ(compression_ratio(""), 0.0);
}

}  // namespace
}  // namespace ordo::speech
