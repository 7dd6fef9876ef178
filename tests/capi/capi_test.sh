#!/usr/bin/env bash
# The C ABI from plain C: builds examples/c/translate.c and tests/capi/error_paths.c with
#   CC -std=c11 -Wall -Wextra -Werror ... -lordo
# against the build tree's include/ and libordo.so, then
#   error:   runs error_paths (NULL handles, bad options, bad models, bad glossaries, callbacks)
#   example: the example's output equals `ordo translate`'s on a fixture (greedy, and beam 3 with
#            3-best lines and scores), and a bad model path gives the library's message and exit 1.
#   glossary: tests/capi/glossary_translate.c with the glossary "bicycle<TAB>Velo" (read from a
#            file, and built term by term) gives `ordo translate --glossary`'s lines.
#   glossary-untouched: with that glossary, sentences without the term are translated as
#            `ordo translate` without a glossary translates them.
#   file:    tests/capi/file_translate.c gives `ordo translate -i FILE -o OUT`'s bytes for a .docx
#            and an .srt (by path and in memory), and a file that is not its format fails with
#            the library's message, leaving no output.
#   transcribe: tests/capi/transcribe_file.c on the Whisper fixture's clips gives `ordo transcribe`'s
#            transcript (verbose_json, srt; from the file, and from samples read in C), and a missing
#            file or a text model fails with the library's message naming it.
#   capi_test.sh error|example|glossary|glossary-untouched|file|transcribe SOURCE_DIR BUILD_DIR MODEL_DIR [CC]
set -euo pipefail
what="$1" source_dir="$2" build_dir="$3" model="$4" cc="${5:-cc}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
build() {  # build NAME SOURCE
  "$cc" -std=c11 -Wall -Wextra -Werror -o "$work/$1" "$2" -I"$source_dir/include" -L"$build_dir" -lordo \
    -Wl,-rpath,"$build_dir" -lm
}
if [ "$what" = error ]; then
  build error_paths "$source_dir/tests/capi/error_paths.c"
  "$work/error_paths" "$model" "$work"
  exit
fi
if [ "$what" = file ]; then
  build file_translate "$source_dir/tests/capi/file_translate.c"
  failed=0
  printf '1\n00:00:01,000 --> 00:00:02,500\nA man is riding a bicycle\n\n2\n00:00:02,600 --> 00:00:04,000\ndown the street.\n' \
    > "$work/talk.srt"
  cp "$source_dir/tests/data/files/report.docx" "$work/report.docx"
  for name in report.docx talk.srt; do
    "$build_dir/ordo" translate -m "$model" -q -i "$work/$name" -o "$work/ordo.$name"
    "$work/file_translate" "$model" "$work/$name" "$work/c.$name"
    "$work/file_translate" "$model" "$work/$name" "$work/data.$name" "${name##*.}"
    for got in "c.$name" "data.$name"; do
      if cmp -s "$work/$got" "$work/ordo.$name" && [ -s "$work/$got" ]; then
        echo "ok: $got = ordo translate -i $name"
      else
        echo "FAILED: $got differs from ordo translate -i $name"; failed=1
      fi
    done
  done
  printf 'not a zip' > "$work/bad.docx"
  if "$work/file_translate" "$model" "$work/bad.docx" "$work/out.docx" 2> "$work/err.txt"; then
    echo "FAILED: a .docx that is not a zip was translated"; failed=1
  elif grep -q "bad.docx: DOCX file: not a zip archive" "$work/err.txt" && [ ! -e "$work/out.docx" ]; then
    echo "ok: $(cat "$work/err.txt")"
  else
    echo "FAILED: $(cat "$work/err.txt")"; failed=1
  fi
  exit $failed
fi
if [ "$what" = transcribe ]; then
  build transcribe_file "$source_dir/tests/capi/transcribe_file.c"
  failed=0
  exact="--beam-size 1 --max-length 32 --temperature 0 --compression-ratio-threshold off --logprob-threshold off"
  exact="$exact --no-speech-threshold off"
  # Two formats, two languages: each format's writer is the library's (tests/speech checks them
  # all); here what reaches C is what reaches the command line.
  for format in verbose_json srt; do
    for clip in en de; do
      audio="$model/audio/${clip}_16k.wav"
      # shellcheck disable=SC2086
      "$build_dir/ordo" transcribe -m "$model" -q "$audio" --language "$clip" --format "$format" $exact \
        > "$work/ordo.$format"
      for how in file raw; do
        "$work/transcribe_file" "$model" "$audio" "$format" "$clip" $([ $how = raw ] && echo raw) > "$work/c.$format"
        case "$format" in json | verbose_json) echo >> "$work/c.$format" ;; esac  # the command line ends the line
        if cmp -s "$work/c.$format" "$work/ordo.$format" && [ -s "$work/c.$format" ]; then
          echo "ok: $clip $format ($how) = ordo transcribe"
        else
          echo "FAILED: $clip $format ($how) differs from ordo transcribe"; diff "$work/c.$format" "$work/ordo.$format" | head -5
          failed=1
        fi
      done
    done
  done
  if "$work/transcribe_file" "$model" "$work/missing.wav" text en 2> "$work/err.txt"; then
    echo "FAILED: a missing file was transcribed"; failed=1
  elif grep -q "^transcribe_file: $work/missing.wav: " "$work/err.txt"; then
    echo "ok: $(cat "$work/err.txt")"
  else
    echo "FAILED: $(cat "$work/err.txt")"; failed=1
  fi
  if "$work/transcribe_file" "$source_dir/tests/data/hf/marian_opus_en_mg" "$model/audio/en_16k.wav" text en \
    2> "$work/err.txt"; then
    echo "FAILED: a text model transcribed"; failed=1
  elif grep -q "not a speech model" "$work/err.txt"; then
    echo "ok: $(cat "$work/err.txt")"
  else
    echo "FAILED: $(cat "$work/err.txt")"; failed=1
  fi
  exit $failed
fi
if [ "$what" = glossary ] || [ "$what" = glossary-untouched ]; then
  build glossary_translate "$source_dir/tests/capi/glossary_translate.c"
  printf 'bicycle\tVelo\n' > "$work/terms.tsv"
  failed=0
  same() {  # same LABEL FILE1 FILE2
    if cmp -s "$2" "$3" && [ -s "$2" ]; then
      echo "ok: $1 ($(wc -l < "$2") lines)"
    else
      echo "FAILED: $1"; diff "$2" "$3" | head -20; failed=1
    fi
  }
  if [ "$what" = glossary ]; then
    printf '%s\n' "A man is riding a bicycle down the street." "The cat sat on the mat." \
      "Two children push a BICYCLE up a hill." > "$work/input.txt"
    "$work/glossary_translate" "$model" "$work/terms.tsv" < "$work/input.txt" > "$work/c.txt"
    "$work/glossary_translate" "$model" - bicycle=Velo < "$work/input.txt" > "$work/c_added.txt"
    "$build_dir/ordo" translate -m "$model" -q --glossary "$work/terms.tsv" < "$work/input.txt" > "$work/ordo.txt"
    same "glossary read from a file = ordo translate --glossary" "$work/c.txt" "$work/ordo.txt"
    same "glossary built with ordo_glossary_add = ordo translate --glossary" "$work/c_added.txt" "$work/ordo.txt"
    printf '%s\n' "Ein Mann fährt auf einem Velo die Straße entlang." > "$work/expected.txt"
    head -1 "$work/c.txt" > "$work/c_first.txt"
    same "the term's sentence" "$work/c_first.txt" "$work/expected.txt"
  else
    printf '%s\n' "The cat sat on the mat." "Where is the train station?" "A man rides a bike." \
      "Bicycles are parked by the wall." > "$work/input.txt"
    "$work/glossary_translate" "$model" "$work/terms.tsv" < "$work/input.txt" > "$work/c.txt"
    "$build_dir/ordo" translate -m "$model" -q < "$work/input.txt" > "$work/ordo.txt"
    same "sentences without the term, glossary = no glossary" "$work/c.txt" "$work/ordo.txt"
  fi
  exit $failed
fi
build translate "$source_dir/examples/c/translate.c"
printf '%s\n' "Where is the train station?" "A man is riding a bicycle down the street." "" \
  "The cat sat on the mat." "Café, naïve, 東京." > "$work/input.txt"
failed=0
compare() {  # compare LABEL "C EXAMPLE OPTIONS" "ORDO OPTIONS"
  "$work/translate" "$model" $2 < "$work/input.txt" > "$work/c.txt"
  "$build_dir/ordo" translate -m "$model" -q $3 < "$work/input.txt" > "$work/ordo.txt"
  if cmp -s "$work/c.txt" "$work/ordo.txt" && [ -s "$work/c.txt" ]; then
    echo "ok: $1 ($(wc -l < "$work/c.txt") lines)"
  else
    echo "FAILED: $1"; diff "$work/c.txt" "$work/ordo.txt" | head -20; failed=1
  fi
}
compare "greedy" "beam_size=1 max_new_tokens=12" "-b 1 --max-length 12"
compare "beam 3, 3-best with scores" "beam_size=3 n_best=3 max_new_tokens=10" "-b 3 -n 3 --max-length 10"
compare "model defaults" "max_new_tokens=10" "--max-length 10"
# A bad model path: the library's message (naming the file) and exit status 1, not a crash.
set +e
"$work/translate" "$work/no-such-model" < "$work/input.txt" > "$work/out.txt" 2> "$work/err.txt"
status=$?
set -e
if [ "$status" = 1 ] && grep -q "no-such-model/config.json" "$work/err.txt" && [ ! -s "$work/out.txt" ]; then
  echo "ok: bad model path -> exit 1: $(head -1 "$work/err.txt")"
else
  echo "FAILED: bad model path gave status $status, stderr: $(cat "$work/err.txt")"; failed=1
fi
set +e
"$work/translate" "$model" beam_size=zero < "$work/input.txt" > /dev/null 2> "$work/err.txt"
status=$?
set -e
if [ "$status" = 1 ] && grep -q "'beam_size': 'zero' must be an integer" "$work/err.txt"; then
  echo "ok: bad option value -> exit 1"
else
  echo "FAILED: bad option value gave status $status, stderr: $(cat "$work/err.txt")"; failed=1
fi
exit $failed
