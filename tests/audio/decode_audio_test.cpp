// ctest-label: unit
// decode_audio / read_audio on the clips of tools/codegen/whisper/make_clips.sh
// (tests/data/audio/): every container and codec decodes to the WAV's duration and content at
// 16 kHz, resampling and the downmix give what the ffmpeg CLI gives, each bad input gets its
// own error, the limits hold, and calls run concurrently.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "audio/log_mel.h"
#include "io/file.h"
#include "ordo/speech.h"
#include "support/errors.h"
#include "support/golden_arrays.h"
#include "support/fixtures.h"

namespace ordo {
namespace {

using ordo::testing::error_of;

std::string clip(const std::string& name) { return ordo::testing::data_dir() + "/audio/" + name; }
std::string bytes_of(const std::string& name) { return io::read_regular_file(clip(name)); }

// The largest normalised cross-correlation of a and b over shifts of up to `max_lag` samples.
double best_correlation(const std::vector<float>& a, const std::vector<float>& b, int max_lag, int* lag_out = nullptr) {
  double best = -1.0;
  for (int lag = -max_lag; lag <= max_lag; ++lag) {
    double ab = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      const int64_t j = static_cast<int64_t>(i) + lag;
      if (j < 0 || j >= static_cast<int64_t>(b.size())) continue;
      ab += double(a[i]) * b[size_t(j)];
      aa += double(a[i]) * a[i];
      bb += double(b[size_t(j)]) * b[size_t(j)];
    }
    const double c = aa > 0 && bb > 0 ? ab / std::sqrt(aa * bb) : 0.0;
    if (c > best) {
      best = c;
      if (lag_out) *lag_out = lag;
    }
  }
  return best;
}

// Mean |difference| of two clips' log-mel features (80 x 3000, values about -1.5 to 1.5).
double feature_distance(const std::vector<float>& a, const std::vector<float>& b) {
  const audio::MelSettings settings;
  const std::vector<float> fa = audio::log_mel(a.data(), a.size(), settings);
  const std::vector<float> fb = audio::log_mel(b.data(), b.size(), settings);
  double sum = 0;
  for (size_t i = 0; i < fa.size(); ++i) sum += std::fabs(fa[i] - fb[i]);
  return sum / static_cast<double>(fa.size());
}

// ---------------------------------------------------------------- formats
struct Encoded {
  const char* file;
  size_t samples;  // what `ffmpeg -i FILE -ac 1 -ar 16000` decodes it to (AAC's last frame untrimmed)
};

class AudioFormats : public ::testing::TestWithParam<Encoded> {};

TEST_P(AudioFormats, DecodesToTheDurationAndContentOfTheWav) {
  const std::vector<float> reference = read_audio(clip("en_22050.wav"));
  const std::vector<float> samples = read_audio(clip(GetParam().file));
  EXPECT_NEAR(static_cast<double>(samples.size()), static_cast<double>(GetParam().samples), 1.0);
  int lag = 0;
  const double correlation = best_correlation(samples, reference, 40, &lag);
  // Measured: 0.9-1.0 at lag 0 (24-32 kbit/s AAC lowest), mean feature distance 0-0.04.
  EXPECT_GT(correlation, 0.85) << "lag " << lag;
  EXPECT_LE(std::abs(lag), 2);
  EXPECT_LT(feature_distance(samples, reference), 0.06);
}

INSTANTIATE_TEST_SUITE_P(Audio, AudioFormats,
                         ::testing::Values(Encoded{"en_22050.wav", 49325}, Encoded{"en.mp3", 49354},
                                           Encoded{"en.flac", 49325}, Encoded{"en.ogg", 49325},
                                           Encoded{"en.webm", 49326}, Encoded{"en.m4a", 49784},
                                           Encoded{"en.mp4", 48298}),
                         [](const ::testing::TestParamInfo<Encoded>& info) {
                           std::string name = info.param.file;
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

TEST(AudioDecode, ReadsA16kHzWavExactlyAsInt16Over32768) {
  const std::string path = ordo::testing::fixture_dir("whisper") + "/audio/en_16k.wav";
  const std::string bytes = io::read_regular_file(path);
  EXPECT_EQ(decode_audio(bytes, "en_16k.wav"), testing::pcm16_wav_samples(bytes));
}

TEST(AudioDecode, ResamplesFrom8kHzToTwiceTheSamples) {
  const std::vector<float> samples = read_audio(clip("de_8k.wav"));
  const size_t in = testing::pcm16_wav_samples(bytes_of("de_8k.wav")).size();
  EXPECT_NEAR(static_cast<double>(samples.size()), 2.0 * in, 2.0);
}

TEST(AudioDecode, ResamplesFrom22050HzToTheSameDuration) {
  const std::vector<float> samples = read_audio(clip("en_22050.wav"));
  const size_t in = testing::pcm16_wav_samples(bytes_of("en_22050.wav")).size();
  EXPECT_NEAR(static_cast<double>(samples.size()), in * 16000.0 / 22050.0, 2.0);
}

TEST(AudioDecode, Resamples44100HzStereoMp3AsTheFfmpegCliDoes) {
  // `ffmpeg -i es_44k_stereo.mp3 -ac 1 -ar 16000` to 16-bit: openai-whisper's way of loading.
  const std::vector<float> expected = testing::pcm16_wav_samples(bytes_of("es_44k_stereo_ffmpeg_16k.wav"));
  const std::vector<float> samples = read_audio(clip("es_44k_stereo.mp3"));
  ASSERT_EQ(samples.size(), expected.size());
  float worst = 0.0f;
  for (size_t i = 0; i < samples.size(); ++i) worst = std::max(worst, std::fabs(samples[i] - expected[i]));
  EXPECT_LE(worst, 1.5f / 32768);  // the CLI's rounding to 16 bits
}

TEST(AudioDecode, DownmixesStereoToTheMeanOfItsChannels) {
  // Left: the German clip; right: silence.
  const std::vector<float> mono = read_audio(clip("de_8k.wav"));
  const std::vector<float> stereo = read_audio(clip("stereo_8k.wav"));
  ASSERT_EQ(stereo.size(), mono.size());
  for (size_t i = 0; i < mono.size(); ++i) ASSERT_NEAR(stereo[i], 0.5f * mono[i], 1e-6f) << i;
}

TEST(AudioDecode, DecodesOpusInOgg) {
  const std::vector<float> samples = read_audio(clip("fr.opus"));
  EXPECT_EQ(samples.size(), size_t{40428});  // as the ffmpeg CLI decodes it
}

TEST(AudioDecode, KeepsWhiteNoiseAsItIs) {
  const std::vector<float> samples = read_audio(clip("noise.flac"));
  ASSERT_EQ(samples.size(), size_t{8000});
  double squares = 0;
  for (float x : samples) squares += double(x) * x;
  EXPECT_NEAR(std::sqrt(squares / samples.size()), 0.5 / std::sqrt(3.0), 0.02);  // uniform in [-0.5, 0.5]
}

TEST(AudioDecode, ClampsOverdrivenAudioToPlusMinusOne) {
  // The clipped clip's MP3 decodes to about +-1.7 (the codec's overshoot on square waves).
  const std::vector<float> samples = read_audio(clip("clipped.mp3"));
  EXPECT_EQ(samples.size(), size_t{24000});
  float peak = 0.0f;
  for (float x : samples) peak = std::max(peak, std::fabs(x));
  EXPECT_EQ(peak, 1.0f);
}

// ---------------------------------------------------------------- bad inputs
TEST(AudioErrors, TextFileIsNotAudio) {
  const std::string message = error_of([] { read_audio(clip("not_audio.wav")); });
  EXPECT_NE(message.find("not_audio.wav: not audio"), std::string::npos) << message;
}

TEST(AudioErrors, EmptyFileIsEmpty) {
  const std::string message = error_of([] { read_audio(clip("empty.wav")); });
  EXPECT_NE(message.find("empty.wav: empty file"), std::string::npos) << message;
}

TEST(AudioErrors, WavWithoutSamplesIsEmptyAudio) {
  const std::string message = error_of([] { read_audio(clip("zero_samples.wav")); });
  EXPECT_NE(message.find("zero_samples.wav: empty audio (no samples)"), std::string::npos) << message;
}

TEST(AudioErrors, VideoWithoutSoundHasNoAudioStream) {
  const std::string message = error_of([] { read_audio(clip("video_only.mp4")); });
  EXPECT_NE(message.find("video_only.mp4: no audio stream (streams: video h264)"), std::string::npos) << message;
}

TEST(AudioErrors, WavShorterThanItsHeaderIsTruncated) {
  const std::string message = error_of([] { read_audio(clip("truncated.wav")); });
  EXPECT_NE(message.find("truncated.wav: truncated: its WAV header promises 41060 bytes of samples, the file holds "
                         "11956"),
            std::string::npos)
      << message;
}

TEST(AudioErrors, FlacCutShortIsTruncated) {
  const std::string bytes = bytes_of("en.flac");
  const std::string message = error_of([&] { decode_audio(bytes.substr(0, bytes.size() / 2), "cut.flac"); });
  EXPECT_NE(message.find("cut.flac: "), std::string::npos) << message;
  EXPECT_NE(message.find("truncated"), std::string::npos) << message;
}

TEST(AudioErrors, Mp4CutShortIsRefused) {
  const std::string bytes = bytes_of("en.m4a");
  const std::string message = error_of([&] { decode_audio(bytes.substr(0, bytes.size() * 2 / 3), "cut.m4a"); });
  EXPECT_EQ(message.rfind("cut.m4a: ", 0), 0u) << message;
}

TEST(AudioErrors, GarbageInsideAFlacIsCorrupt) {
  std::string bytes = bytes_of("en.flac");
  for (size_t i = bytes.size() / 3; i < bytes.size() / 3 + 2000; ++i) bytes[i] = static_cast<char>(i * 7919 % 251);
  const std::string message = error_of([&] { decode_audio(bytes, "garbled.flac"); });
  EXPECT_NE(message.find("garbled.flac: corrupt or truncated audio data at "), std::string::npos) << message;
}

TEST(AudioErrors, PlaylistsNeverOpenTheFilesTheyName) {
  // Bytes from a client must not make the server read its own files.
  const std::string hls = "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:3.0,\n" + clip("en.mp3") + "\n#EXT-X-ENDLIST\n";
  const std::string hls_error = error_of([&] { decode_audio(hls, "list.m3u8"); });
  EXPECT_EQ(hls_error.rfind("list.m3u8: corrupt or truncated", 0), 0u) << hls_error;
  const std::string concat = "ffconcat version 1.0\nfile " + clip("en.flac") + "\n";
  const std::string concat_error = error_of([&] { decode_audio(concat, "list.ffconcat"); });
  EXPECT_EQ(concat_error.rfind("list.ffconcat: corrupt or truncated", 0), 0u) << concat_error;
}

TEST(AudioErrors, ReadingADirectoryNamesIt) {
  const std::string message = error_of([] { read_audio(ordo::testing::data_dir() + "/audio"); });
  EXPECT_NE(message.find("/audio: is a directory"), std::string::npos) << message;
}

// ---------------------------------------------------------------- limits
TEST(AudioLimits, BytesOverTheLimitAreRefusedBeforeDecoding) {
  AudioLimits limits;
  limits.max_bytes = 1000;
  const std::string bytes = bytes_of("en.flac");
  const std::string message = error_of([&] { decode_audio(bytes, "en.flac", limits); });
  EXPECT_NE(message.find("en.flac: " + std::to_string(bytes.size()) +
                         " bytes, over the limit of 1000 bytes (AudioLimits::max_bytes)"),
            std::string::npos)
      << message;
}

TEST(AudioLimits, ReadAudioRefusesALargeFileBeforeReadingIt) {
  AudioLimits limits;
  limits.max_bytes = 1000;
  const std::string message = error_of([&] { read_audio(clip("en.flac"), limits); });
  EXPECT_NE(message.find("en.flac: " + std::to_string(bytes_of("en.flac").size()) + " bytes, over the limit of 1000"),
            std::string::npos)
      << message;
}

TEST(AudioLimits, DecodingStopsAtTheDurationLimit) {
  AudioLimits limits;
  limits.max_seconds = 1.0;
  const std::string message = error_of([&] { read_audio(clip("en.mp3"), limits); });
  EXPECT_NE(message.find("en.mp3: longer than the limit of 1 s (AudioLimits::max_seconds)"), std::string::npos)
      << message;
}

TEST(AudioLimits, AnHourOfAudioIsRefusedAfterTheLimitNotDecoded) {
  // An hour of 8 kHz 8-bit silence (28.8 MB, 57.6 M samples once decoded) under a 2 s limit:
  // decoding stops after the first packets past 2 s (the samples kept stay under 3 s).
  const uint32_t data = 8000 * 3600;
  std::string wav = "RIFF";
  auto le32 = [&](uint32_t v) {
    for (int i = 0; i < 4; ++i) wav.push_back(static_cast<char>(v >> (8 * i)));
  };
  auto le16 = [&](uint16_t v) {
    for (int i = 0; i < 2; ++i) wav.push_back(static_cast<char>(v >> (8 * i)));
  };
  le32(36 + data);
  wav += "WAVEfmt ";
  le32(16), le16(1), le16(1), le32(8000), le32(8000), le16(1), le16(8);
  wav += "data";
  le32(data);
  wav.append(data, static_cast<char>(128));
  AudioLimits limits;
  limits.max_seconds = 2.0;
  const std::string message = error_of([&] { decode_audio(wav, "hour.wav", limits); });
  EXPECT_NE(message.find("hour.wav: longer than the limit of 2 s"), std::string::npos) << message;
  limits.max_seconds = 4 * 3600.0;
  limits.max_bytes = 1 << 20;
  EXPECT_NE(error_of([&] { decode_audio(wav, "hour.wav", limits); }).find("over the limit of 1048576 bytes"),
            std::string::npos);
}

TEST(AudioLimits, LimitsMustBePositive) {
  AudioLimits limits;
  limits.max_seconds = 0.0;
  EXPECT_NE(
      error_of([&] { decode_audio("x", "x.wav", limits); }).find("AudioLimits::max_seconds must be a positive number"),
      std::string::npos);
  limits = AudioLimits{};
  limits.max_bytes = -1;
  EXPECT_NE(error_of([&] { decode_audio("x", "x.wav", limits); }).find("AudioLimits::max_bytes must be positive"),
            std::string::npos);
}

// ---------------------------------------------------------------- threads
TEST(AudioDecode, ConcurrentCallsGiveTheSameSamples) {
  const std::vector<std::string> files = {"en.mp3", "en.flac", "en.ogg",    "en.webm",
                                          "en.m4a", "en.mp4",  "de_8k.wav", "es_44k_stereo.mp3"};
  std::vector<std::string> bytes;
  std::vector<std::vector<float>> expected;
  for (const std::string& f : files) {
    bytes.push_back(bytes_of(f));
    expected.push_back(decode_audio(bytes.back(), f));
  }
  const size_t rounds = 3;
  std::vector<std::vector<float>> results(files.size() * rounds);
  std::vector<std::string> errors(results.size());
  std::vector<std::thread> threads;
  for (size_t t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (size_t i = t; i < results.size(); i += 4) {
        results[i] = decode_audio(bytes[i % files.size()], files[i % files.size()]);
        // Errors from other threads never leak into this one's messages.
        errors[i] = error_of([&] { decode_audio("this is not audio at all", "text" + std::to_string(i)); });
      }
    });
  for (std::thread& thread : threads) thread.join();
  for (size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(results[i], expected[i % files.size()]) << files[i % files.size()];
    EXPECT_EQ(errors[i].rfind("text" + std::to_string(i) + ": not audio", 0), 0u) << errors[i];
  }
}

}  // namespace
}  // namespace ordo
