// The log-mel spectrogram of transformers 4.31's WhisperFeatureExtractor, step for step in its
// number types: frames in float64, each FFT bin rounded to complex64 (spectrogram() stores them
// so), the power and the mel projection in float64, the log10 rounded to float32, and the
// clamp and scaling in float32. What is not reproduced is the order of the additions inside the
// FFT and the mel sums (within a float32 rounding of the output).
//
// Speed: an FFTW plan per n_fft made once (the planner is not thread-safe: a mutex; executing
// plans on new arrays is), the mel filter bank per settings made once and kept as each filter's
// non-zero run of bins (about two bins of weight per FFT bin instead of n_mels), and frames of
// zeros (a short clip's padding) skipped: they are the constant log10(1e-10).
#include "audio/log_mel.h"

#include <fftw3.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "io/file.h"
#include "io/json_file.h"
#include "ordo/error.h"
#include "ordo/speech.h"

namespace ordo::audio {
namespace {

constexpr int64_t kMaxMels = 1024;
constexpr int64_t kMaxFft = 1 << 16;
constexpr int64_t kMaxChunkSeconds = 3600;
constexpr double kMelFloor = 1e-10;
constexpr double kMaxFrequency = 8000.0;  // WhisperFeatureExtractor's, whatever the rate

// ---------------------------------------------------------------- FFTW plans
struct FftwFree {
  void operator()(void* p) const { fftw_free(p); }
};
template <typename T>
using FftwBuffer = std::unique_ptr<T, FftwFree>;

template <typename T>
FftwBuffer<T> fftw_buffer(int64_t count) {
  auto* p = static_cast<T*>(fftw_malloc(sizeof(T) * static_cast<size_t>(count)));
  if (!p) throw Error("log-mel features: out of memory");
  return FftwBuffer<T>(p);
}

// The real-to-complex plan of length n, planned on fftw_malloc'd arrays (so any other
// fftw_malloc'd arrays have its alignment), kept for the process.
fftw_plan real_fft_plan(int64_t n) {
  // Never destroyed: a plan is in use until the process ends (threads may outlive statics).
  static std::mutex* mutex = new std::mutex;
  static auto* plans = new std::map<int64_t, fftw_plan>;
  std::lock_guard<std::mutex> lock(*mutex);
  auto it = plans->find(n);
  if (it != plans->end()) return it->second;
  FftwBuffer<double> in = fftw_buffer<double>(n);
  FftwBuffer<fftw_complex> out = fftw_buffer<fftw_complex>(n / 2 + 1);
  // FFTW_ESTIMATE: no timing runs, so the same algorithm (and the same roundings) every time.
  const fftw_plan plan = fftw_plan_dft_r2c_1d(static_cast<int>(n), in.get(), out.get(), FFTW_ESTIMATE);
  if (!plan) throw Error("log-mel features: FFTW cannot plan an FFT of " + std::to_string(n) + " samples");
  plans->emplace(n, plan);
  return plan;
}

// ---------------------------------------------------------------- mel filter bank
// audio_utils.hertz_to_mel / mel_to_hertz with mel_scale="slaney".
double hertz_to_mel(double hertz) {
  if (hertz < 1000.0) return 3.0 * hertz / 200.0;
  return 15.0 + std::log(hertz / 1000.0) * (27.0 / std::log(6.4));
}
double mel_to_hertz(double mel) {
  if (mel < 15.0) return 200.0 * mel / 3.0;
  return 1000.0 * std::exp((std::log(6.4) / 27.0) * (mel - 15.0));
}

// numpy.linspace(start, stop, count)[i]: i * step + start, the last exactly `stop`.
double linspace(double start, double stop, int64_t count, int64_t i) {
  if (i == count - 1) return stop;
  return static_cast<double>(i) * ((stop - start) / static_cast<double>(count - 1)) + start;
}

// Each mel filter's weights over its non-zero run of FFT bins [first, first + weights.size()).
struct MelFilter {
  int64_t first = 0;
  std::vector<double> weights;
};
using MelBank = std::vector<MelFilter>;

// audio_utils.mel_filter_bank(1 + n_fft // 2, n_mels, 0, 8000, sampling_rate, norm="slaney",
// mel_scale="slaney").
MelBank make_mel_bank(const MelSettings& s) {
  const int64_t bins = s.n_fft / 2 + 1;
  std::vector<double> fft_freqs(static_cast<size_t>(bins));
  for (int64_t i = 0; i < bins; ++i)
    fft_freqs[size_t(i)] = linspace(0.0, static_cast<double>(s.sampling_rate / 2), bins, i);
  const double mel_min = hertz_to_mel(0.0), mel_max = hertz_to_mel(kMaxFrequency);
  std::vector<double> filter_freqs(static_cast<size_t>(s.n_mels + 2));
  for (int64_t i = 0; i < s.n_mels + 2; ++i)
    filter_freqs[size_t(i)] = mel_to_hertz(linspace(mel_min, mel_max, s.n_mels + 2, i));
  MelBank bank(static_cast<size_t>(s.n_mels));
  for (int64_t m = 0; m < s.n_mels; ++m) {
    const double lower = filter_freqs[size_t(m)], center = filter_freqs[size_t(m + 1)],
                 upper = filter_freqs[size_t(m + 2)];
    const double enorm = 2.0 / (upper - lower);
    MelFilter& filter = bank[size_t(m)];
    for (int64_t f = 0; f < bins; ++f) {
      const double down = -(lower - fft_freqs[size_t(f)]) / (center - lower);
      const double up = (upper - fft_freqs[size_t(f)]) / (upper - center);
      const double weight = std::max(0.0, std::min(down, up)) * enorm;
      if (weight == 0.0) {
        if (!filter.weights.empty()) break;  // past the triangle
        filter.first = f + 1;
        continue;
      }
      filter.weights.push_back(weight);
    }
    if (filter.weights.empty()) filter.first = 0;
  }
  return bank;
}

std::shared_ptr<const MelBank> mel_bank(const MelSettings& s) {
  static std::mutex* mutex = new std::mutex;
  static auto* banks = new std::map<std::tuple<int64_t, int64_t, int64_t>, std::shared_ptr<const MelBank>>;
  const auto key = std::make_tuple(s.n_mels, s.n_fft, s.sampling_rate);
  std::lock_guard<std::mutex> lock(*mutex);
  auto it = banks->find(key);
  if (it != banks->end()) return it->second;
  auto bank = std::make_shared<const MelBank>(make_mel_bank(s));
  banks->emplace(key, bank);
  return bank;
}

}  // namespace

// ---------------------------------------------------------------- settings
void check_mel_settings(const MelSettings& s, const std::string& where) {
  auto fail = [&](const std::string& field, int64_t value, const std::string& expected) {
    throw Error(where + ": " + field + " is " + std::to_string(value) + "; it must be " + expected);
  };
  if (s.n_mels < 1 || s.n_mels > kMaxMels) fail("n_mels", s.n_mels, "1 to " + std::to_string(kMaxMels));
  if (s.n_fft < 2 || s.n_fft > kMaxFft) fail("n_fft", s.n_fft, "2 to " + std::to_string(kMaxFft));
  if (s.hop_length < 1 || s.hop_length > s.n_fft) fail("hop_length", s.hop_length, "1 to n_fft");
  if (s.sampling_rate != kSpeechSampleRate)
    fail("sampling_rate", s.sampling_rate, std::to_string(kSpeechSampleRate) + " (audio is decoded at that rate)");
  if (s.chunk_samples < s.n_fft || s.chunk_samples > kMaxChunkSeconds * s.sampling_rate)
    fail("chunk_samples", s.chunk_samples, "n_fft to " + std::to_string(kMaxChunkSeconds) + " s of samples");
}

MelSettings read_mel_settings(const std::string& path, int64_t n_mels_from_config) {
  MelSettings s;
  s.n_mels = n_mels_from_config;
  if (io::path_kind(path) == io::PathKind::kMissing) {
    check_mel_settings(s, path + " (absent: Whisper's defaults with config.json's num_mel_bins)");
    return s;
  }
  const nlohmann::json json = io::read_json_file(path);
  const io::JsonFields fields(json, path);
  auto field = [&](const char* key, int64_t fallback, int64_t low, int64_t high) {
    const int64_t value = fields.optional_int(key).value_or(fallback);
    if (value < low || value > high)
      fields.fail(
          key, "is " + std::to_string(value) + "; it must be " + std::to_string(low) + " to " + std::to_string(high));
    return value;
  };
  s.n_mels = field("feature_size", n_mels_from_config, 1, kMaxMels);
  if (s.n_mels != n_mels_from_config)
    fields.fail("feature_size", "is " + std::to_string(s.n_mels) + " but config.json's num_mel_bins is " +
                                    std::to_string(n_mels_from_config));
  s.n_fft = field("n_fft", s.n_fft, 2, kMaxFft);
  s.hop_length = field("hop_length", s.hop_length, 1, s.n_fft);
  s.sampling_rate = field("sampling_rate", s.sampling_rate, kSpeechSampleRate, kSpeechSampleRate);
  const int64_t chunk_length = field("chunk_length", 30, 1, kMaxChunkSeconds);
  s.chunk_samples = chunk_length * s.sampling_rate;
  check_mel_settings(s, path);
  return s;
}

int64_t mel_frames(const MelSettings& s) {
  // spectrogram()'s 1 + (padded - n_fft) // hop frames, less the last one Whisper drops.
  return (s.chunk_samples + 2 * (s.n_fft / 2) - s.n_fft) / s.hop_length;
}

// ---------------------------------------------------------------- features
std::vector<float> log_mel(const float* samples, size_t count, const MelSettings& s) {
  check_mel_settings(s, "log-mel features");
  const int64_t n_fft = s.n_fft, hop = s.hop_length, bins = n_fft / 2 + 1, pad = n_fft / 2;
  const int64_t chunk = s.chunk_samples, frames = mel_frames(s);
  const int64_t used = std::min<int64_t>(static_cast<int64_t>(count), chunk);

  // The window padded with zeros (or cut), then reflect-padded by n_fft / 2 on both sides
  // (numpy.pad mode "reflect": the edge sample is not repeated).
  std::vector<float> padded(static_cast<size_t>(chunk + 2 * pad), 0.0f);
  if (used > 0) std::copy(samples, samples + used, padded.begin() + pad);
  for (int64_t i = 0; i < pad; ++i) {
    padded[size_t(pad - 1 - i)] = padded[size_t(pad + 1 + i)];
    padded[size_t(pad + chunk + i)] = padded[size_t(pad + chunk - 2 - i)];
  }
  // The last non-zero sample: frames starting after it are all zeros.
  int64_t last_nonzero = -1;
  for (int64_t i = static_cast<int64_t>(padded.size()) - 1; i >= 0; --i)
    if (padded[size_t(i)] != 0.0f) {
      last_nonzero = i;
      break;
    }

  // numpy.hanning(n_fft + 1)[:-1], the periodic Hann window, as numpy computes it:
  // 0.5 + 0.5 cos(pi n / (M - 1)) for n = 1 - M, 3 - M, ... with M = n_fft + 1.
  std::vector<double> window(static_cast<size_t>(n_fft));
  const double pi = std::acos(-1.0);
  for (int64_t i = 0; i < n_fft; ++i)
    window[size_t(i)] = 0.5 + 0.5 * std::cos(pi * static_cast<double>(-n_fft + 2 * i) / static_cast<double>(n_fft));

  const fftw_plan plan = real_fft_plan(n_fft);
  const std::shared_ptr<const MelBank> bank = mel_bank(s);
  FftwBuffer<double> in = fftw_buffer<double>(n_fft);
  FftwBuffer<fftw_complex> out = fftw_buffer<fftw_complex>(bins);
  std::vector<double> power(static_cast<size_t>(bins));
  const float silent = static_cast<float>(std::log10(kMelFloor));

  std::vector<float> features(static_cast<size_t>(s.n_mels * frames));
  float max_value = -INFINITY;
  for (int64_t t = 0; t < frames; ++t) {
    const int64_t start = t * hop;
    if (start > last_nonzero) {  // all zeros: every mel is the floor
      for (int64_t m = 0; m < s.n_mels; ++m) features[size_t(m * frames + t)] = silent;
      max_value = std::max(max_value, silent);
      continue;
    }
    const float* frame = padded.data() + start;
    for (int64_t i = 0; i < n_fft; ++i) in.get()[i] = static_cast<double>(frame[i]) * window[size_t(i)];
    fftw_execute_dft_r2c(plan, in.get(), out.get());
    for (int64_t k = 0; k < bins; ++k) {
      // spectrogram() keeps the FFT in a complex64 array, then takes abs() ** 2 in float64.
      const double re = static_cast<float>(out.get()[k][0]), im = static_cast<float>(out.get()[k][1]);
      power[size_t(k)] = re * re + im * im;
    }
    for (int64_t m = 0; m < s.n_mels; ++m) {
      const MelFilter& filter = (*bank)[size_t(m)];
      double sum = 0.0;
      const double* p = power.data() + filter.first;
      for (size_t k = 0; k < filter.weights.size(); ++k) sum += filter.weights[k] * p[k];
      const float value = static_cast<float>(std::log10(std::max(kMelFloor, sum)));
      features[size_t(m * frames + t)] = value;
      max_value = std::max(max_value, value);
    }
  }
  // np.maximum(log_spec, log_spec.max() - 8.0): the float64 bound meets a float32 array.
  const float floor = static_cast<float>(static_cast<double>(max_value) - 8.0);
  for (float& x : features) x = (std::max(x, floor) + 4.0f) / 4.0f;
  return features;
}

}  // namespace ordo::audio
