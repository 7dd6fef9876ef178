#!/usr/bin/env bash
# Back-translation for the bundled translators: translates the Multi30k task-2 monolingual
# captions (../shared/data/multi30k-task2, 5 x 29,000 lines per language, captions of the
# task-1 *training* images only) with ordo itself, making synthetic pairs for train_bt.sh.
#   bash tools/train/back_translate.sh de en beam     # German captions -> English with models/de-en
#   bash tools/train/back_translate.sh en de sample   # English captions -> German, sampled (top-k 10)
# Output: runs/bt/<src>-<tgt>.<mode>/train.N.<src> (the real captions, copied) and
# train.N.<tgt> (their translations). Resumable file by file (each file is written to a
# temporary name and renamed when complete), so an interrupted run loses at most one file.
# ORDO_BT_SEED=K (sampling) draws other samples: file N uses seed K*5+N instead of N, into
# runs/bt/<src>-<tgt>.sample.seedK/ (train_bt.sh reads it with the same variable).
set -euo pipefail
if [[ $# -lt 3 || ! "$1 $2" =~ ^(en de|de en)$ || ! "$3" =~ ^(beam|sample)$ ]]; then
  echo "usage: $0 en de|de en beam|sample [model folder]" >&2
  exit 2
fi
src="$1" tgt="$2" mode="$3"
source "$(dirname "${BASH_SOURCE[0]}")/training_env.sh"
model="${4:-$root/models/$src-$tgt}"
out="$(bt_dir "$src" "$tgt" "$mode")"
seed="${ORDO_BT_SEED:-0}"   # a whole number: bt_dir checked it
mkdir -p "$out"
case "$mode" in
  # Beam 4, the models' default; sampling: top-k 10 at temperature 1 (Edunov et al., 2018,
  # "Understanding Back-Translation at Scale": restricted sampling), one fixed seed per file.
  beam) decode=(--beam-size 4) ;;
  sample) decode=(--sample true --top-k 10 --temperature 1) ;;
esac
for n in 1 2 3 4 5; do
  input="$shared_data/multi30k-task2/train.$n.$src"
  [[ -s "$out/train.$n.$tgt" ]] && continue
  start=$(date +%s)
  # 2 batches at once of 64 sentences, one thread each: the fastest setting on 2 cores.
  "$build/ordo" translate -q -m "$model" -i "$input" -o "$out/train.$n.$tgt.tmp" \
    -t 1 --inter-threads 2 --batch-size 64 --seed "$((seed * 5 + n))" "${decode[@]}"
  if [[ $(wc -l < "$out/train.$n.$tgt.tmp") -ne $(wc -l < "$input") ]]; then
    echo "back_translate: $out/train.$n.$tgt.tmp has not as many lines as $input" >&2
    exit 1
  fi
  cp "$input" "$out/train.$n.$src"
  mv "$out/train.$n.$tgt.tmp" "$out/train.$n.$tgt"
  echo "train.$n: $(wc -l < "$input") lines in $(( $(date +%s) - start )) s ($mode, $model)" | tee -a "$out/log.txt"
done
