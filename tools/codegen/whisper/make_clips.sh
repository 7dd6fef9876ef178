#!/bin/sh
# The audio files of tests/audio/*_test.cpp (src/audio/: decode_audio, read_audio), made by the tools real
# audio comes from: speech by espeak-ng (22,050 Hz mono), encoded by the ffmpeg CLI into each
# container and codec people send (MP3, FLAC, Ogg Vorbis, Opus in WebM, AAC in M4A, a video with
# a sound track), at the rates and channel counts the resampler and the downmix must handle, and
# the broken inputs whose errors the tests check. Small on purpose: a few seconds each.
#   en_22050.wav       English, espeak-ng's own output (22,050 Hz s16): the reference content
#   en.mp3 en.flac en.ogg en.webm en.m4a   the same speech encoded (MP3, FLAC at 16 kHz,
#                      Vorbis, Opus, AAC)
#   en.mp4             a 64x48 test pattern (H.264) with the same speech as AAC
#   video_only.mp4     the test pattern alone: no audio stream
#   de_8k.wav          German at 8 kHz (s16)
#   stereo_8k.wav      German on the left channel, silence on the right (8 kHz s16)
#   es_44k_stereo.mp3  Spanish at 44.1 kHz, the same on both channels
#   es_44k_stereo_ffmpeg_16k.wav   that MP3 as `ffmpeg -ac 1 -ar 16000` (s16) decodes it, the
#                      way openai-whisper loads audio: what decode_audio must come close to
#   fr.opus            French, Opus in Ogg at 48 kHz
#   noise.flac         white noise (16 kHz, 0.5 s)
#   clipped.mp3        English over-driven by 30 dB: its MP3 decodes past +-1
#   zero_samples.wav   a valid WAV header with no samples
#   truncated.wav      the first 12,000 bytes of de_8k.wav (its header promises 2.x s)
#   not_audio.wav      a text file named .wav
#   empty.wav          an empty file
# and the seeds of the audio fuzz harness (tests/fuzz/corpus/audio/): 0.3 s of the German clip
# in each container, a few KB each.
# Run from anywhere: sh tools/codegen/whisper/make_clips.sh (needs espeak-ng and ffmpeg).
set -eu
root="$(cd "$(dirname "$0")/../../.." && pwd)"
out="$root/tests/data/audio"
seeds="$root/tests/fuzz/corpus/audio"
mkdir -p "$out" "$seeds"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
ff() { ffmpeg -nostdin -hide_banner -loglevel error -y "$@"; }
# -bitexact / -fflags +bitexact: no encoder version strings, so running the script again gives
# the same bytes; -map_metadata -1: no tags. (tests/data/audio/mel_goldens.json is made by
# make_mel_goldens.py.)
bx="-map_metadata -1 -fflags +bitexact -flags:a +bitexact"

espeak-ng -v en -s 160 -w "$work/en.wav" "The quick brown fox jumps over the lazy dog."
espeak-ng -v de -s 160 -w "$work/de.wav" "Guten Morgen. Wie geht es dir heute?"
espeak-ng -v es -s 160 -w "$work/es.wav" "Buenos días. ¿Dónde está la estación?"
espeak-ng -v fr -s 160 -w "$work/fr.wav" "Bonjour à tous. Il fait beau aujourd'hui."

ff -i "$work/en.wav" $bx -c:a pcm_s16le "$out/en_22050.wav"
ff -i "$work/en.wav" $bx -c:a libmp3lame -b:a 32k "$out/en.mp3"
ff -i "$work/en.wav" $bx -ar 16000 -c:a flac "$out/en.flac"
ff -i "$work/en.wav" $bx -c:a libvorbis -q:a 0 "$out/en.ogg"
ff -i "$work/en.wav" $bx -c:a libopus -b:a 16k "$out/en.webm"
ff -i "$work/en.wav" $bx -c:a aac -b:a 32k "$out/en.m4a"
ff -f lavfi -i "testsrc=size=64x48:rate=5:duration=3" -i "$work/en.wav" $bx -shortest -map 0:v -map 1:a \
  -c:v libx264 -preset veryslow -crf 40 -pix_fmt yuv420p -c:a aac -b:a 24k "$out/en.mp4"
ff -f lavfi -i "testsrc=size=64x48:rate=5:duration=1" $bx -c:v libx264 -preset veryslow -crf 40 \
  -pix_fmt yuv420p "$out/video_only.mp4"

ff -i "$work/de.wav" $bx -ar 8000 -c:a pcm_s16le "$out/de_8k.wav"
ff -i "$out/de_8k.wav" -f lavfi -i "anullsrc=r=8000:cl=mono" $bx -filter_complex "[0:a][1:a]amerge=inputs=2[s]" \
  -map "[s]" -shortest -ac 2 -c:a pcm_s16le "$out/stereo_8k.wav"
ff -i "$work/es.wav" $bx -ar 44100 -ac 2 -c:a libmp3lame -b:a 64k "$out/es_44k_stereo.mp3"
ff -i "$out/es_44k_stereo.mp3" $bx -ac 1 -ar 16000 -c:a pcm_s16le "$out/es_44k_stereo_ffmpeg_16k.wav"
ff -i "$work/fr.wav" $bx -c:a libopus -b:a 16k "$out/fr.opus"

ff -f lavfi -i "anoisesrc=d=0.5:c=white:r=16000:a=0.5:seed=7" $bx -c:a flac "$out/noise.flac"
ff -i "$work/en.wav" $bx -t 1.5 -af "volume=30dB,aformat=s16" \
  -c:a libmp3lame -b:a 64k "$out/clipped.mp3"
ff -f lavfi -i "anullsrc=r=16000:cl=mono" $bx -t 0 -c:a pcm_s16le "$out/zero_samples.wav"
head -c 12000 "$out/de_8k.wav" > "$out/truncated.wav"
printf 'This is not audio.\nJust a few lines of text\nin a file named like a WAV.\n' > "$out/not_audio.wav"
: > "$out/empty.wav"
ff -i "$work/de.wav" -ss 0.5 -t 0.3 -c:a pcm_s16le "$work/short.wav"
ff -i "$work/short.wav" $bx -ar 8000 -c:a pcm_s16le "$seeds/seed.wav"
ff -i "$work/short.wav" $bx -ac 2 -ar 8000 -c:a pcm_u8 "$seeds/seed_stereo_u8.wav"
ff -i "$work/short.wav" $bx -c:a libmp3lame -b:a 32k "$seeds/seed.mp3"
ff -i "$work/short.wav" $bx -ar 16000 -c:a flac "$seeds/seed.flac"
ff -i "$work/short.wav" $bx -c:a libvorbis -q:a 0 "$seeds/seed.ogg"
ff -i "$work/short.wav" $bx -c:a libopus -b:a 16k "$seeds/seed.webm"
ff -i "$work/short.wav" $bx -c:a aac -b:a 24k "$seeds/seed.m4a"
ff -i "$work/short.wav" $bx -c:a aac -b:a 24k -f adts "$seeds/seed.aac"
ff -f lavfi -i "testsrc=size=16x16:rate=5:duration=0.4" -i "$work/short.wav" $bx -map 0:v -map 1:a \
  -c:v libx264 -preset veryslow -crf 45 -pix_fmt yuv420p -c:a aac -b:a 16k "$seeds/seed.mp4"
cp "$out/zero_samples.wav" "$seeds/zero_samples.wav"
ls -l "$out" "$seeds"
du -ch "$out"/* "$seeds"/* | tail -n 1
