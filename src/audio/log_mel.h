// Whisper's input features: the log-mel spectrogram of one window of 16 kHz samples, exactly as
// transformers 4.31's WhisperFeatureExtractor computes it (audio_utils.spectrogram and
// mel_filter_bank): padded with zeros or cut to the window, a centred STFT with reflect padding
// and a periodic Hann window in float64, the power spectrum, a Slaney mel filter bank over
// 0-8000 Hz, log10 of at least 1e-10, the last frame dropped, clamped to 8 below the maximum
// and scaled as (x + 4) / 4. FFTW does the real FFTs (Whisper's n_fft is 400, no power of two).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ordo::audio {

struct MelSettings {
  int64_t n_mels = 80;             // feature_size (large-v3: 128)
  int64_t n_fft = 400;             // samples per STFT frame
  int64_t hop_length = 160;        // samples between frames
  int64_t sampling_rate = 16000;   // always ordo::kSpeechSampleRate (what decode_audio gives)
  int64_t chunk_samples = 480000;  // one window: chunk_length (30 s) x sampling_rate
};

// A model folder's preprocessor_config.json (feature_size, n_fft, hop_length, sampling_rate,
// chunk_length); `n_mels_from_config` is config.json's num_mel_bins, which feature_size must
// equal. A missing file gives Whisper's defaults with those n_mels. As in 4.31, the window is
// chunk_length x sampling_rate (the file's n_samples and nb_max_frames are not read). Throws
// ordo::Error naming the file and the field that is missing a sense (a mismatch, a
// sampling_rate other than 16000, sizes out of range).
MelSettings read_mel_settings(const std::string& preprocessor_config_json_path, int64_t n_mels_from_config);

// Throws ordo::Error when the settings cannot make a spectrogram ("<where>: n_fft ...").
void check_mel_settings(const MelSettings& settings, const std::string& where);

// Frames per window: chunk_samples / hop_length (3000 for Whisper).
int64_t mel_frames(const MelSettings& settings);

// The features of samples[0, count), [n_mels][mel_frames] row-major (80 x 3000). Samples past
// chunk_samples are ignored; fewer are padded with zeros. Thread-safe; ~ms per 30 s window.
std::vector<float> log_mel(const float* samples, size_t count, const MelSettings& settings);

}  // namespace ordo::audio
