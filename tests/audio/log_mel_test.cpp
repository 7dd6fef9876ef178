// ctest-label: unit
// The log-mel features against transformers 4.31's WhisperFeatureExtractor: the fixture's
// features (tests/data/hf/whisper/features/*.npy, 80 bins) and the 128-bin goldens of
// tools/codegen/whisper/make_mel_goldens.py; and the settings read from preprocessor_config.json.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "audio/log_mel.h"
#include "io/file.h"
#include "io/json_file.h"
#include "support/errors.h"
#include "support/golden_arrays.h"
#include "support/fixtures.h"
#include "support/temp_dir.h"

namespace ordo::audio {
namespace {

using ordo::testing::error_of;

std::vector<float> wav_samples(const std::string& path) {
  return testing::pcm16_wav_samples(io::read_regular_file(path));
}

const char* const kClips[] = {"de_16k", "en_16k", "en_long_16k", "fr_16k", "silence_16k"};

std::string whisper_dir() { return ordo::testing::fixture_dir("whisper"); }

float max_abs_difference(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  float worst = 0.0f;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) worst = std::max(worst, std::fabs(a[i] - b[i]));
  return worst;
}

TEST(LogMel, MatchesWhisperFeatureExtractorWithin1e4) {
  const MelSettings settings = read_mel_settings(whisper_dir() + "/preprocessor_config.json", 80);
  float worst = 0.0f;
  for (const char* clip : kClips) {
    SCOPED_TRACE(clip);
    const std::vector<float> samples = wav_samples(whisper_dir() + "/audio/" + clip + ".wav");
    const std::vector<float> expected = testing::read_npy_float32(whisper_dir() + "/features/" + clip + ".npy");
    const std::vector<float> features = log_mel(samples.data(), samples.size(), settings);
    ASSERT_EQ(features.size(), size_t{80 * 3000});
    const float difference = max_abs_difference(features, expected);
    EXPECT_LE(difference, 1e-4f);
    worst = std::max(worst, difference);
  }
  RecordProperty("max_abs_difference", std::to_string(worst));  // 0 when written: bit for bit
}

TEST(LogMel, MatchesWhisperFeatureExtractorWith128MelBins) {
  const nlohmann::json goldens = io::read_json_file(ordo::testing::data_dir() + "/audio/mel_goldens.json");
  const MelSettings settings{128, 400, 160, 16000, 480000};
  for (const char* clip : {"en_16k", "en_long_16k"}) {
    SCOPED_TRACE(clip);
    const nlohmann::json& golden = goldens.at(std::string(clip) + "_128_mels");
    const std::vector<float> samples = wav_samples(whisper_dir() + "/audio/" + clip + ".wav");
    const std::vector<float> features = log_mel(samples.data(), samples.size(), settings);
    ASSERT_EQ(features.size(), size_t{128 * 3000});
    const size_t every = golden.at("every").get<size_t>();
    const std::vector<float> values = golden.at("values").get<std::vector<float>>();
    for (size_t i = 0; i < values.size(); ++i) EXPECT_NEAR(features[i * every], values[i], 1e-4) << "at " << i * every;
    const auto corner = golden.at("corner_4x6").get<std::vector<std::vector<float>>>();
    for (size_t m = 0; m < corner.size(); ++m)
      for (size_t t = 0; t < corner[m].size(); ++t) EXPECT_NEAR(features[m * 3000 + t], corner[m][t], 1e-4);
    double sum = 0.0, squares = 0.0;
    for (float x : features) sum += x;
    const double mean = sum / static_cast<double>(features.size());
    for (float x : features) squares += (x - mean) * (x - mean);
    EXPECT_NEAR(mean, golden.at("mean").get<double>(), 1e-5);
    EXPECT_NEAR(std::sqrt(squares / static_cast<double>(features.size())), golden.at("std").get<double>(), 1e-5);
  }
}

TEST(LogMel, CutsSamplesPastTheWindow) {
  const MelSettings settings;
  const std::vector<float> samples = wav_samples(whisper_dir() + "/audio/en_long_16k.wav");
  ASSERT_GT(samples.size(), size_t{480000});
  const std::vector<float> whole = log_mel(samples.data(), samples.size(), settings);
  const std::vector<float> window = log_mel(samples.data(), 480000, settings);
  EXPECT_EQ(whole, window);
}

TEST(LogMel, PadsShortAudioWithZeros) {
  const MelSettings settings;
  const std::vector<float> samples = wav_samples(whisper_dir() + "/audio/en_16k.wav");
  std::vector<float> padded = samples;
  padded.resize(480000, 0.0f);
  EXPECT_EQ(log_mel(samples.data(), samples.size(), settings), log_mel(padded.data(), padded.size(), settings));
}

TEST(LogMel, NoSamplesGiveTheConstantOfSilence) {
  const std::vector<float> features = log_mel(nullptr, 0, MelSettings{});
  ASSERT_EQ(features.size(), size_t{80 * 3000});
  for (float x : features) ASSERT_EQ(x, (-10.0f + 4.0f) / 4.0f);
}

TEST(LogMel, ConcurrentCallsGiveTheSameFeatures) {
  // Settings no other test uses: the threads race to make the FFT plan and the filter bank.
  const std::vector<float> samples = wav_samples(whisper_dir() + "/audio/en_long_16k.wav");
  const MelSettings a{64, 320, 160, 16000, 480000}, b{96, 400, 160, 16000, 480000};
  std::vector<std::vector<float>> results(8);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < results.size(); ++i)
    threads.emplace_back([&, i] { results[i] = log_mel(samples.data(), samples.size(), i % 2 ? b : a); });
  for (std::thread& thread : threads) thread.join();
  const std::vector<float> expected_a = log_mel(samples.data(), samples.size(), a);
  const std::vector<float> expected_b = log_mel(samples.data(), samples.size(), b);
  for (size_t i = 0; i < results.size(); ++i) EXPECT_EQ(results[i], i % 2 ? expected_b : expected_a) << i;
}

TEST(LogMel, OtherFftAndHopSizesGiveTheirFrameCount) {
  const std::vector<float> samples = wav_samples(whisper_dir() + "/audio/en_16k.wav");
  const MelSettings settings{40, 512, 256, 16000, 160000};
  EXPECT_EQ(mel_frames(settings), 625);
  EXPECT_EQ(log_mel(samples.data(), samples.size(), settings).size(), size_t{40 * 625});
  const MelSettings odd{80, 401, 160, 16000, 16000};
  EXPECT_EQ(mel_frames(odd), 99);  // (16000 + 400 - 401) // 160 + 1 frames, the last dropped
  EXPECT_EQ(log_mel(samples.data(), samples.size(), odd).size(), size_t{80 * 99});
}

TEST(LogMel, RefusesSettingsThatMakeNoSpectrogram) {
  MelSettings settings;
  settings.hop_length = 0;
  EXPECT_NE(error_of([&] { log_mel(nullptr, 0, settings); }).find("hop_length is 0"), std::string::npos);
  settings = MelSettings{};
  settings.chunk_samples = 100;
  EXPECT_NE(error_of([&] { log_mel(nullptr, 0, settings); }).find("chunk_samples is 100"), std::string::npos);
}

TEST(LogMelSettings, ReadsTheFixturesPreprocessorConfig) {
  const MelSettings s = read_mel_settings(whisper_dir() + "/preprocessor_config.json", 80);
  EXPECT_EQ(s.n_mels, 80);
  EXPECT_EQ(s.n_fft, 400);
  EXPECT_EQ(s.hop_length, 160);
  EXPECT_EQ(s.sampling_rate, 16000);
  EXPECT_EQ(s.chunk_samples, 480000);
  EXPECT_EQ(mel_frames(s), 3000);
}

TEST(LogMelSettings, MissingFileGivesWhisperDefaultsWithTheModelsMelBins) {
  const MelSettings s = read_mel_settings(whisper_dir() + "/no_such_preprocessor_config.json", 128);
  EXPECT_EQ(s.n_mels, 128);
  EXPECT_EQ(s.n_fft, 400);
  EXPECT_EQ(s.hop_length, 160);
  EXPECT_EQ(s.chunk_samples, 480000);
}

TEST(LogMelSettings, FeatureSizeOtherThanTheModelsMelBinsIsAnError) {
  const std::string message = error_of([&] { read_mel_settings(whisper_dir() + "/preprocessor_config.json", 128); });
  EXPECT_NE(message.find("preprocessor_config.json: field 'feature_size' is 80 but config.json's num_mel_bins is 128"),
            std::string::npos)
      << message;
}

TEST(LogMelSettings, NonsenseValuesAreErrorsNamingTheField) {
  ordo::testing::TempDir dir;
  const std::string path = dir.write("preprocessor_config.json", R"({"feature_size": 80, "n_fft": -4})");
  EXPECT_NE(error_of([&] { read_mel_settings(path, 80); }).find("field 'n_fft' is -4"), std::string::npos);
  dir.write("preprocessor_config.json", R"({"feature_size": 80, "sampling_rate": 44100})");
  EXPECT_NE(error_of([&] { read_mel_settings(path, 80); }).find("field 'sampling_rate' is 44100"), std::string::npos);
  dir.write("preprocessor_config.json", R"({"feature_size": 80, "hop_length": "160"})");
  EXPECT_NE(error_of([&] { read_mel_settings(path, 80); }).find("field 'hop_length' must be an integer"),
            std::string::npos);
  dir.write("preprocessor_config.json", R"({"feature_size": 80, "chunk_length": 0})");
  EXPECT_NE(error_of([&] { read_mel_settings(path, 80); }).find("field 'chunk_length' is 0"), std::string::npos);
}

TEST(LogMelSettings, ChunkLengthSetsTheWindowAsTransformersDoes) {
  ordo::testing::TempDir dir;
  // 4.31 recomputes n_samples from chunk_length x sampling_rate; the stored value is not read.
  const std::string path =
      dir.write("preprocessor_config.json", R"({"feature_size": 80, "chunk_length": 10, "n_samples": 480000})");
  const MelSettings s = read_mel_settings(path, 80);
  EXPECT_EQ(s.chunk_samples, 160000);
  EXPECT_EQ(mel_frames(s), 1000);
}

}  // namespace
}  // namespace ordo::audio
