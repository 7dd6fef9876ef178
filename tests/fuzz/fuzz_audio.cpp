// libFuzzer harness: audio (ordo::decode_audio: FFmpeg's demuxers and decoders reading from
// memory, the resampler, the truncation and limit checks), then the log-mel features of what
// decodes. The first byte picks the duration limit (0.5-64 s); the rest is the file. Anything
// but samples or an ordo::Error is a finding, and so are samples outside [-1, 1], no samples,
// more samples than the limit allows, and features that are not finite.
#include <cmath>
#include <string>
#include <vector>

#include "audio/log_mel.h"
#include "fuzz_util.h"
#include "ordo/error.h"
#include "ordo/speech.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  ordo::AudioLimits limits;
  limits.max_bytes = 1 << 20;
  limits.max_seconds = 0.5 * (1 + data[0] % 128);
  const std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::vector<float> samples;
  try {
    samples = ordo::decode_audio(bytes, "input", limits);
  } catch (const ordo::Error&) {
    return 0;
  }
  if (samples.empty()) ordo::fuzz::fail("decode_audio returned no samples");
  // The limit is checked on the decoded frames; the resampler adds at most a few ms.
  if (static_cast<double>(samples.size()) > (limits.max_seconds + 1.0) * ordo::kSpeechSampleRate)
    ordo::fuzz::fail("decode_audio returned " + std::to_string(samples.size()) + " samples past the limit");
  for (float x : samples)
    if (!(x >= -1.0f && x <= 1.0f)) ordo::fuzz::fail("a sample outside [-1, 1]: " + std::to_string(x));
  const std::vector<float> features = ordo::audio::log_mel(samples.data(), samples.size(), ordo::audio::MelSettings{});
  for (float x : features)
    if (!std::isfinite(x)) ordo::fuzz::fail("a log-mel feature that is not finite");
  return 0;
}
