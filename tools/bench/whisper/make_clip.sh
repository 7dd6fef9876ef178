#!/bin/sh
# The speech the Whisper speed comparison (tools/bench/whisper/bench.py) transcribes: espeak-ng
# reading English news sentences (newstest2014's English side, in order) one after another, cut to
# exactly SECONDS (default 600: 20 full 30 s windows, so no engine has a short last window to treat
# its own way), resampled by ffmpeg to 16 kHz mono s16, the input every engine reads as it is.
# Also writes its first 60 s as clip60s.wav, the clip of `bench.py --quick`, and its first 25 s as
# clip25s.wav, one window in every engine, on which bench.py checks each engine's token cap.
#   sh tools/bench/whisper/make_clip.sh [OUT_WAV] [SECONDS]
#   OUT_WAV  default /work/peers/whisper-bench/clip10m.wav      DATA  folder holding newstest/
set -eu
root="$(cd "$(dirname "$0")/../../.." && pwd)"
out="${1:-/work/peers/whisper-bench/clip10m.wav}"
seconds="${2:-600}"
data="${DATA:-$root/../shared/data}"
src="$data/newstest/newstest2014.en"
[ -s "$src" ] || { echo "make_clip: no $src (set DATA)" >&2; exit 1; }
mkdir -p "$(dirname "$out")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
ff() { ffmpeg -nostdin -hide_banner -loglevel error -y "$@"; }

# About 7 s per sentence at 160 words a minute: take sentences until there is enough speech.
lines=$(( seconds / 6 + 10 ))
head -n "$lines" "$src" > "$work/text.txt"
espeak-ng -v en -s 160 -f "$work/text.txt" -w "$work/speech.wav"
have=$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$work/speech.wav")
echo "make_clip: $lines sentences, ${have} s of speech" >&2
# apad: never shorter than asked (silence at the end if espeak-ng spoke less).
ff -i "$work/speech.wav" -af "aresample=16000,apad" -t "$seconds" -ac 1 -ar 16000 -c:a pcm_s16le \
  -map_metadata -1 -fflags +bitexact "$out"
for s in 60 25; do
  ff -i "$out" -t "$s" -c:a pcm_s16le -map_metadata -1 -fflags +bitexact "$(dirname "$out")/clip${s}s.wav"
done
for f in "$out" "$(dirname "$out")/clip60s.wav" "$(dirname "$out")/clip25s.wav"; do
  printf '%s: %s s\n' "$f" "$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$f")"
done
