// Encoded audio (any file Debian's FFmpeg reads) to 16 kHz mono float samples, for Whisper.
// Audio is untrusted input (a server's clients send it), so the bytes are read from memory
// through a custom AVIOContext (never a temporary file), a demuxer's attempts to open other
// files or URLs (playlists, references) are refused, probing is bounded, and the decoded
// duration is checked as it grows (an hour of audio is never decoded to be refused). Decoder
// errors are errors, not glitches skipped: a transcript of half a file must not look whole.
// FFmpeg's own log is never printed: the message of a failing call goes into the ordo::Error.
// The resampling and the downmix are swresample's defaults, as `ffmpeg -ac 1 -ar 16000` (the
// way openai-whisper and transformers' pipeline load audio) does them.

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/channel_layout.h>
#include <libavutil/error.h>
#include <libavutil/log.h>
#include <libavutil/opt.h>
#include <libswresample/swresample.h>
}

#include "io/file.h"
#include "ordo/error.h"
#include "ordo/speech.h"

namespace ordo {
namespace {

constexpr int64_t kProbeBytes = 1 << 20;             // what probing and find_stream_info may read
constexpr int64_t kAnalyzeMicroseconds = 5'000'000;  // and decode to learn the streams
constexpr int kIoBufferBytes = 1 << 15;

// ---------------------------------------------------------------- FFmpeg's log
// The callback is process-wide; the message is kept for the call running on this thread (the
// decoders run single-threaded, so they log on the caller's thread) and dropped otherwise.
thread_local std::string* t_ffmpeg_message = nullptr;

void capture_log(void*, int level, const char* format, va_list args) {
  if (level > AV_LOG_ERROR || t_ffmpeg_message == nullptr) return;
  char line[512];
  std::vsnprintf(line, sizeof line, format, args);
  std::string text(line);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  if (!text.empty()) *t_ffmpeg_message = text;
}

void quiet_ffmpeg_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    av_log_set_level(AV_LOG_QUIET);
    av_log_set_callback(capture_log);
  });
}

// Collects FFmpeg's last error message while it lives, on this thread.
class FfmpegMessages {
 public:
  FfmpegMessages() : previous_(t_ffmpeg_message) { t_ffmpeg_message = &last_; }
  ~FfmpegMessages() { t_ffmpeg_message = previous_; }
  FfmpegMessages(const FfmpegMessages&) = delete;
  FfmpegMessages& operator=(const FfmpegMessages&) = delete;

  // "Invalid data found when processing input: Header missing"
  std::string describe(int error) {
    char text[AV_ERROR_MAX_STRING_SIZE] = {};
    av_strerror(error, text, sizeof text);
    std::string out = text;
    if (!last_.empty() && last_ != out) out += ": " + last_;
    last_.clear();
    return out;
  }

 private:
  std::string last_;
  std::string* previous_;
};

// ---------------------------------------------------------------- reading from memory
struct MemoryInput {
  const uint8_t* data;
  int64_t size;
  int64_t position = 0;
};

int read_memory(void* opaque, uint8_t* buffer, int buffer_size) {
  auto* in = static_cast<MemoryInput*>(opaque);
  const int64_t left = in->size - in->position;
  if (left <= 0 || buffer_size <= 0) return AVERROR_EOF;
  const int n = static_cast<int>(std::min<int64_t>(left, buffer_size));
  std::memcpy(buffer, in->data + in->position, static_cast<size_t>(n));
  in->position += n;
  return n;
}

int64_t seek_memory(void* opaque, int64_t offset, int whence) {
  auto* in = static_cast<MemoryInput*>(opaque);
  whence &= ~AVSEEK_FORCE;
  if (whence == AVSEEK_SIZE) return in->size;
  int64_t base = 0;
  if (whence == SEEK_CUR)
    base = in->position;
  else if (whence == SEEK_END)
    base = in->size;
  else if (whence != SEEK_SET)
    return AVERROR(EINVAL);
  // base + offset in [0, size], without overflow for any offset.
  if (offset < -base || offset > in->size - base) return AVERROR(EINVAL);
  in->position = base + offset;
  return in->position;
}

// A demuxer that would open another file or URL (HLS, DASH, concat lists, image sequences,
// references in a QuickTime file) reads only the bytes it was given.
int refuse_nested_open(AVFormatContext*, AVIOContext**, const char*, int, AVDictionary**) { return AVERROR(EPERM); }

struct IoContextFree {
  void operator()(AVIOContext* io) const {
    if (io) av_freep(&io->buffer);  // FFmpeg may have replaced the buffer given to it
    avio_context_free(&io);
  }
};
struct FormatClose {
  void operator()(AVFormatContext* f) const { avformat_close_input(&f); }
};
struct CodecFree {
  void operator()(AVCodecContext* c) const { avcodec_free_context(&c); }
};
struct FrameFree {
  void operator()(AVFrame* f) const { av_frame_free(&f); }
};
struct PacketFree {
  void operator()(AVPacket* p) const { av_packet_free(&p); }
};
struct SwrFree {
  void operator()(SwrContext* s) const { swr_free(&s); }
};
using IoPtr = std::unique_ptr<AVIOContext, IoContextFree>;
using FormatPtr = std::unique_ptr<AVFormatContext, FormatClose>;
using CodecPtr = std::unique_ptr<AVCodecContext, CodecFree>;
using FramePtr = std::unique_ptr<AVFrame, FrameFree>;
using PacketPtr = std::unique_ptr<AVPacket, PacketFree>;
using SwrPtr = std::unique_ptr<SwrContext, SwrFree>;

uint32_t le32(const std::string& bytes, size_t at) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + at);
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

// A RIFF/WAVE file whose "data" chunk promises more bytes than follow it: FFmpeg's WAV reader
// silently stops at the end, so a cut upload would pass for a short recording. Sizes 0 and
// 0xFFFFFFFF (written by streaming recorders that never went back to the header) promise nothing.
void check_wav_data_size(const std::string& bytes, const std::string& name) {
  if (bytes.size() < 12 || bytes.compare(0, 4, "RIFF") != 0 || bytes.compare(8, 4, "WAVE") != 0) return;
  size_t at = 12;
  while (at + 8 <= bytes.size()) {
    const uint32_t size = le32(bytes, at + 4);
    if (bytes.compare(at, 4, "data") == 0) {
      const uint64_t held = bytes.size() - (at + 8);
      if (size != 0 && size != 0xFFFFFFFFu && size > held)
        throw Error(name + ": truncated: its WAV header promises " + std::to_string(size) +
                    " bytes of samples, the file holds " + std::to_string(held));
      return;
    }
    at += 8 + uint64_t{size} + (size & 1);
  }
}

std::string seconds_text(double seconds) {
  std::ostringstream out;
  out.precision(seconds < 10 ? 3 : 6);
  out << seconds;
  return out.str();
}

// ---------------------------------------------------------------- decoding
class Decoder {
 public:
  Decoder(const std::string& bytes, const std::string& name, const AudioLimits& limits)
      : name_(name), limits_(limits), input_{reinterpret_cast<const uint8_t*>(bytes.data()), int64_t(bytes.size())} {}
  ~Decoder() { av_channel_layout_uninit(&in_layout_); }
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;

  std::vector<float> run() {
    open();
    decode_all();
    if (samples_.empty()) throw Error(name_ + ": empty audio (no samples)");
    check_declared_duration();
    return std::move(samples_);
  }

 private:
  void open() {
    auto* buffer = static_cast<unsigned char*>(av_malloc(kIoBufferBytes));
    if (!buffer) throw Error(name_ + ": out of memory");
    io_.reset(avio_alloc_context(buffer, kIoBufferBytes, 0, &input_, read_memory, nullptr, seek_memory));
    if (!io_) {
      av_free(buffer);
      throw Error(name_ + ": out of memory");
    }
    // The format from the content alone (no file name: never from an extension), so that
    // "not audio" and "a damaged file of a known format" are told apart.
    const AVInputFormat* input_format = nullptr;
    int err = av_probe_input_buffer2(io_.get(), &input_format, "", nullptr, 0, static_cast<unsigned>(kProbeBytes));
    if (err < 0 || !input_format)
      throw Error(name_ + ": not audio: FFmpeg recognises no audio or video format in it (" +
                  log_.describe(err < 0 ? err : AVERROR_INVALIDDATA) + ")");
    const std::string format_name = input_format->long_name ? input_format->long_name : input_format->name;
    AVFormatContext* format = avformat_alloc_context();
    if (!format) throw Error(name_ + ": out of memory");
    format->pb = io_.get();
    format->probesize = kProbeBytes;
    format->format_probesize = static_cast<int>(kProbeBytes);
    format->max_analyze_duration = kAnalyzeMicroseconds;
    // Nested opens go through io_open, or (the concat demuxer's inner inputs) through the
    // protocols of a whitelist they inherit: both refuse.
    format->io_open = refuse_nested_open;
    format->protocol_whitelist = av_strdup("none");
    err = avformat_open_input(&format, nullptr, input_format, nullptr);
    if (err < 0)  // avformat_open_input freed `format`
      throw Error(name_ + ": corrupt or truncated " + format_name + " file (" + log_.describe(err) + ")");
    format_.reset(format);
    err = avformat_find_stream_info(format, nullptr);
    if (err < 0)
      throw Error(name_ + ": corrupt or truncated " + format_name + " file: cannot read its streams (" +
                  log_.describe(err) + ")");

    const AVCodec* codec = nullptr;
    stream_ = av_find_best_stream(format, AVMEDIA_TYPE_AUDIO, -1, -1, &codec, 0);
    const AVCodecParameters* audio = nullptr;  // the first audio stream, usable or not
    for (unsigned i = 0; i < format->nb_streams && !audio; ++i)
      if (format->streams[i]->codecpar->codec_type == AVMEDIA_TYPE_AUDIO) audio = format->streams[i]->codecpar;
    if (stream_ == AVERROR_STREAM_NOT_FOUND && audio)
      throw Error(name_ + ": corrupt " + format_name + " file: its audio stream (" + avcodec_get_name(audio->codec_id) +
                  ") has no sample rate or channels");
    if (stream_ == AVERROR_STREAM_NOT_FOUND) throw Error(name_ + ": no audio stream" + stream_list());
    if (stream_ < 0 || !codec)
      throw Error(name_ + ": no decoder for its audio (" +
                  (audio && audio->codec_id != AV_CODEC_ID_NONE ? avcodec_get_name(audio->codec_id) : "unknown codec") +
                  ")");
    for (unsigned i = 0; i < format->nb_streams; ++i)
      if (static_cast<int>(i) != stream_) format->streams[i]->discard = AVDISCARD_ALL;

    AVStream* stream = format->streams[stream_];
    codec_.reset(avcodec_alloc_context3(codec));
    if (!codec_) throw Error(name_ + ": out of memory");
    err = avcodec_parameters_to_context(codec_.get(), stream->codecpar);
    if (err < 0) throw Error(name_ + ": corrupt: " + log_.describe(err));
    codec_->pkt_timebase = stream->time_base;
    codec_->thread_count = 1;  // callers decode several files at once; and the log stays on this thread
    err = avcodec_open2(codec_.get(), codec, nullptr);
    if (err < 0)
      throw Error(name_ + ": cannot decode its audio (" + std::string(codec->name) + ": " + log_.describe(err) + ")");
  }

  // " (streams: video h264, subtitle subrip)"
  std::string stream_list() const {
    std::string out;
    for (unsigned i = 0; i < format_->nb_streams; ++i) {
      const AVCodecParameters* p = format_->streams[i]->codecpar;
      const char* type = av_get_media_type_string(p->codec_type);
      out += std::string(out.empty() ? "" : ", ") + (type ? type : "data") + " " + avcodec_get_name(p->codec_id);
    }
    return out.empty() ? " (no streams at all)" : " (streams: " + out + ")";
  }

  [[noreturn]] void corrupt(int error) const {
    throw Error(name_ + ": corrupt or truncated audio data at " + seconds_text(decoded_seconds_) + " s (" +
                log_.describe(error) + ")");
  }

  void decode_all() {
    PacketPtr packet(av_packet_alloc());
    frame_.reset(av_frame_alloc());
    if (!packet || !frame_) throw Error(name_ + ": out of memory");
    // Room for the stated duration (within the limit) at once: a long file's samples are not
    // copied over and over as they grow. Pages nobody writes cost nothing, should it lie.
    const double expected = std::min(declared_seconds(), limits_.max_seconds) + 1.0;
    samples_.reserve(static_cast<size_t>(expected * kSpeechSampleRate));
    int err;
    while ((err = av_read_frame(format_.get(), packet.get())) >= 0) {
      if (packet->stream_index == stream_) {
        // A decoder full of frames takes the packet once they are taken out (EAGAIN).
        int sent = avcodec_send_packet(codec_.get(), packet.get());
        if (sent == AVERROR(EAGAIN)) {
          receive_frames();
          sent = avcodec_send_packet(codec_.get(), packet.get());
        }
        av_packet_unref(packet.get());
        if (sent < 0) corrupt(sent);
        receive_frames();
      } else {
        av_packet_unref(packet.get());
      }
    }
    if (err != AVERROR_EOF) corrupt(err);
    err = avcodec_send_packet(codec_.get(), nullptr);
    if (err < 0 && err != AVERROR_EOF) corrupt(err);
    receive_frames();
    flush_resampler();
  }

  void receive_frames() {
    while (true) {
      const int err = avcodec_receive_frame(codec_.get(), frame_.get());
      if (err == AVERROR(EAGAIN) || err == AVERROR_EOF) return;
      if (err < 0) corrupt(err);
      const AVFrame& f = *frame_;
      if (f.decode_error_flags != 0 || (f.flags & AV_FRAME_FLAG_CORRUPT)) corrupt(AVERROR_INVALIDDATA);
      if (f.nb_samples > 0) {
        if (f.sample_rate <= 0 || f.ch_layout.nb_channels <= 0) corrupt(AVERROR_INVALIDDATA);
        decoded_seconds_ += static_cast<double>(f.nb_samples) / f.sample_rate;
        if (decoded_seconds_ > limits_.max_seconds)
          throw Error(name_ + ": longer than the limit of " + seconds_text(limits_.max_seconds) +
                      " s (AudioLimits::max_seconds)");
        resample(f);
      }
      av_frame_unref(frame_.get());
    }
  }

  bool same_input(const AVFrame& f) const {
    return swr_ && f.format == in_format_ && f.sample_rate == in_rate_ &&
           av_channel_layout_compare(&f.ch_layout, &in_layout_) == 0;
  }

  // (Re)configures the resampler for this frame's format, rate and channels: a stream may
  // change them midway (chained Ogg, concatenated MP3); what the old one holds is drained first.
  void configure(const AVFrame& f) {
    flush_resampler();
    swr_.reset();
    av_channel_layout_uninit(&in_layout_);
    int err = av_channel_layout_copy(&in_layout_, &f.ch_layout);
    if (err < 0) corrupt(err);
    AVChannelLayout layout{};
    const bool unspecified = f.ch_layout.order == AV_CHANNEL_ORDER_UNSPEC;
    if (unspecified)
      av_channel_layout_default(&layout, f.ch_layout.nb_channels);
    else
      av_channel_layout_copy(&layout, &f.ch_layout);
    AVChannelLayout mono = AV_CHANNEL_LAYOUT_MONO;
    SwrContext* swr = nullptr;
    err = swr_alloc_set_opts2(&swr, &mono, AV_SAMPLE_FMT_FLT, kSpeechSampleRate, &layout,
                              static_cast<AVSampleFormat>(f.format), f.sample_rate, 0, nullptr);
    swr_.reset(swr);
    if (err >= 0) {
      // The downmix's coefficients sum to at most 1 (stereo: (L + R) / 2), as ffmpeg's -ac 1
      // gives with 16-bit output.
      av_opt_set_double(swr, "rematrix_maxval", 1.0, 0);
      if (unspecified || layout.order != AV_CHANNEL_ORDER_NATIVE) {
        // Channels without names: their mean.
        const int n = layout.nb_channels;
        std::vector<double> matrix(static_cast<size_t>(n), 1.0 / n);
        err = swr_set_matrix(swr, matrix.data(), n);
      }
    }
    if (err >= 0) err = swr_init(swr);
    av_channel_layout_uninit(&layout);
    if (err < 0)
      throw Error(name_ + ": cannot resample its audio (" + std::to_string(f.ch_layout.nb_channels) + " channels at " +
                  std::to_string(f.sample_rate) + " Hz: " + log_.describe(err) + ")");
    in_format_ = f.format;
    in_rate_ = f.sample_rate;
  }

  void resample(const AVFrame& f) {
    if (!same_input(f)) configure(f);
    convert(const_cast<const uint8_t**>(f.extended_data), f.nb_samples);
  }

  void flush_resampler() {
    if (swr_) convert(nullptr, 0);
  }

  void convert(const uint8_t** in, int in_samples) {
    const int room = swr_get_out_samples(swr_.get(), in_samples);
    if (room < 0) corrupt(room);
    const size_t old = samples_.size();
    samples_.resize(old + static_cast<size_t>(room));
    auto* out = reinterpret_cast<uint8_t*>(samples_.data() + old);
    const int n = swr_convert(swr_.get(), &out, room, in, in_samples);
    if (n < 0) {
      samples_.resize(old);
      corrupt(n);
    }
    samples_.resize(old + static_cast<size_t>(n));
    for (size_t i = old; i < samples_.size(); ++i) {
      float& x = samples_[i];
      if (!std::isfinite(x)) throw Error(name_ + ": corrupt audio data: samples that are not numbers");
      x = std::clamp(x, -1.0f, 1.0f);  // decoders overshoot on clipped audio
    }
  }

  // The audio stream's duration as the container states it (not estimated from the bit rate),
  // or 0 when unknown.
  double declared_seconds() const {
    if (format_->duration_estimation_method == AVFMT_DURATION_FROM_BITRATE) return 0.0;
    const AVStream* stream = format_->streams[stream_];
    if (stream->duration <= 0 || stream->duration == AV_NOPTS_VALUE) return 0.0;
    const double declared = static_cast<double>(stream->duration) * av_q2d(stream->time_base);
    return std::isfinite(declared) && declared > 0 ? declared : 0.0;
  }

  // A container that says how long its audio is (not estimated from the bit rate) and holds much
  // less: cut short at a frame boundary, where no decoder notices.
  void check_declared_duration() const {
    const double declared = declared_seconds();
    if (declared > 0 && declared - decoded_seconds_ > std::max(1.0, 0.1 * declared))
      throw Error(name_ + ": truncated: it declares " + seconds_text(declared) + " s of audio and holds " +
                  seconds_text(decoded_seconds_) + " s");
  }

  const std::string& name_;
  const AudioLimits& limits_;
  MemoryInput input_;
  mutable FfmpegMessages log_;
  IoPtr io_;
  FormatPtr format_;
  CodecPtr codec_;
  FramePtr frame_;
  int stream_ = -1;
  SwrPtr swr_;
  int in_format_ = -1;
  int in_rate_ = 0;
  AVChannelLayout in_layout_{};
  double decoded_seconds_ = 0.0;
  std::vector<float> samples_;
};

void check_limits(const AudioLimits& limits, const std::string& name) {
  if (!(limits.max_bytes > 0))
    throw Error(name + ": AudioLimits::max_bytes must be positive, not " + std::to_string(limits.max_bytes));
  if (!(limits.max_seconds > 0) || !std::isfinite(limits.max_seconds))
    throw Error(name + ": AudioLimits::max_seconds must be a positive number of seconds, not " +
                seconds_text(limits.max_seconds));
}

constexpr const char* kBytesLimit = "AudioLimits::max_bytes";

}  // namespace

std::vector<float> decode_audio(const std::string& bytes, const std::string& name, const AudioLimits& limits) {
  check_limits(limits, name);
  if (static_cast<uint64_t>(bytes.size()) > static_cast<uint64_t>(limits.max_bytes))
    throw Error(io::over_byte_limit(name, static_cast<int64_t>(bytes.size()), limits.max_bytes, kBytesLimit));
  if (bytes.empty()) throw Error(name + ": empty file (0 bytes)");
  check_wav_data_size(bytes, name);
  quiet_ffmpeg_once();
  Decoder decoder(bytes, name, limits);
  return decoder.run();
}

std::vector<float> read_audio(const std::string& path, const AudioLimits& limits) {
  check_limits(limits, path);
  return decode_audio(io::read_regular_file(path, limits.max_bytes, kBytesLimit), path, limits);
}

}  // namespace ordo
