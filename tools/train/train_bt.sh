#!/usr/bin/env bash
# Continues a bundled Multi30k translator on real + synthetic pairs (the recipe behind
# models/en-de and models/de-en; see models/README.md, "Back-translation and self-training"):
#   bash tools/train/back_translate.sh de en beam      # synthetic English for German captions
#   bash tools/train/train_bt.sh en de beam [ordo-train flags, e.g. --max-minutes 60]
# trains en-de from models/en-de (--init) on Multi30k task-1 `train` (29,000 real pairs, twice)
# + the task-2 German captions (those clean_targets.py keeps) with their back-translations as
# sources, selects on `val` by greedy BLEU, and averages the last 6 validation checkpoints.
# Resumable: rerun the same command; state in runs/<src>-<tgt>.bt-<mode>/ (.ft-<mode>/ forward).
# ORDO_BT_INIT=<folder> starts from another model than models/<src>-<tgt>; ORDO_BT_EPOCHS=N
# trains N epochs instead of 3 (OMP_NUM_THREADS=1 runs both directions side by side, one core each);
# ORDO_BT_FILES="1 2 3" uses only those task-2 files (29,000 captions each); ORDO_BT_LR the peak
# learning rate (5e-4); ORDO_BT_KIND=forward self-training instead of back-translation (below);
# ORDO_BT_WORK=<folder> keeps the state elsewhere than runs/<src>-<tgt>.bt-<mode>/.
# ORDO_BT_SEED=K reads the synthetic pairs `ORDO_BT_SEED=K back_translate.sh` sampled.
# ORDO_BT_TAG=<word> (back-translation only) starts every synthetic source with that word, a
# marker the real sources never carry (tagged back-translation, Caswell et al., 2019: the model
# learns the synthetic pairs' style apart from the real ones'); "@@" for the bundled models,
# whose captions never contain '@'. Input to translate carries no tag, which asks for the
# real pairs' style.
set -euo pipefail
if [[ $# -lt 3 || ! "$1 $2" =~ ^(en de|de en)$ || ! "$3" =~ ^(beam|sample)$ ]]; then
  echo "usage: $0 en de|de en beam|sample [ordo-train flags]" >&2
  exit 2
fi
src="$1" tgt="$2" mode="$3"
shift 3
source "$(dirname "${BASH_SOURCE[0]}")/training_env.sh"
data="$shared_data/multi30k"
# Back-translation: real $tgt captions with their translations into $src as sources.
# ORDO_BT_KIND=forward: real $src captions with the translations into $tgt that
# `back_translate.sh $src $tgt` made for the other direction as targets (self-training).
case "${ORDO_BT_KIND:-back}" in
  back) synthetic="$(bt_dir "$tgt" "$src" "$mode")" work="$root/runs/$src-$tgt.bt-$mode" ;;
  forward) synthetic="$(bt_dir "$src" "$tgt" "$mode")" work="$root/runs/$src-$tgt.ft-$mode" ;;
  *) echo "$0: ORDO_BT_KIND must be back or forward" >&2; exit 2 ;;
esac
tag="${ORDO_BT_TAG:-}"
if [[ -n "$tag" ]]; then
  [[ "${ORDO_BT_KIND:-back}" == back ]] || { echo "$0: ORDO_BT_TAG marks synthetic sources: back-translation only" >&2; exit 2; }
  [[ "$tag" =~ ^[^[:space:]]+$ ]] || { echo "$0: ORDO_BT_TAG must be one word without spaces, not '$tag'" >&2; exit 2; }
  if grep -q -F -- "$tag" "$shared_data/multi30k/train.$src"; then
    echo "$0: ORDO_BT_TAG '$tag' occurs in the real sources $shared_data/multi30k/train.$src: pick a marker they never contain" >&2; exit 2
  fi
fi
work="${ORDO_BT_WORK:-$work}"   # another state folder, e.g. for a second round from a new --init
files="${ORDO_BT_FILES:-1 2 3 4 5}"   # which of the five task-2 files to use
mkdir -p "$work"
if [[ ! -s "$work/train.$tgt" ]]; then
  for n in $files; do
    [[ -s "$synthetic/train.$n.$src" ]] || { echo "$0: $synthetic/train.$n.$src missing: make it with tools/train/back_translate.sh first" >&2; exit 1; }
  done
  # Real pairs twice (so that they are ~30 % of what the model sees), then the synthetic pairs
  # whose two sides are non-empty and within a 1:3 word-count ratio (drops the rare runaway
  # repetition of a sampled or beam output).
  # (Tabs inside a caption become spaces, as SentencePiece would make them anyway.)
  pair() { paste <(tr '\t' ' ' < "$1") <(tr '\t' ' ' < "$2"); }
  {
    pair "$data/train.$src" "$data/train.$tgt"
    pair "$data/train.$src" "$data/train.$tgt"
    for n in $files; do pair "$synthetic/train.$n.$src" "$synthetic/train.$n.$tgt"; done |
      python3 "$root/tools/train/clean_targets.py" "$data/train.$tgt" |
      awk -F'\t' 'NF == 2 { s = split($1, a, " "); t = split($2, b, " ");
                   if (s > 0 && t > 0 && s <= 3 * t && t <= 3 * s) print }' |
      awk -F'\t' -v OFS='\t' -v tag="$tag" 'tag != "" { $1 = tag " " $1 } { print }'
  } > "$work/pairs.tmp"
  cut -f1 "$work/pairs.tmp" > "$work/train.$src"
  cut -f2 "$work/pairs.tmp" > "$work/train.$tgt.tmp"
  rm "$work/pairs.tmp"
  mv "$work/train.$tgt.tmp" "$work/train.$tgt"
  echo "$(wc -l < "$work/train.$tgt") training pairs in $work/train.{$src,$tgt}" >&2
fi
# Continued training: a new warm-up (Adam starts afresh) to a lower peak than from scratch.
exec "$build/ordo-train" --init "${ORDO_BT_INIT:-$root/models/$src-$tgt}" \
  --train-source "$work/train.$src" --train-target "$work/train.$tgt" \
  --valid-source "$data/val.$src" --valid-target "$data/val.$tgt" \
  --work "$work" --source-lang "$src" --target-lang "$tgt" \
  --batch-tokens 3000 --lr "${ORDO_BT_LR:-5e-4}" --warmup 400 --dropout 0.2 --label-smoothing 0.1 \
  --max-epochs "${ORDO_BT_EPOCHS:-3}" --valid-every 250 --average 6 --threads "$OMP_NUM_THREADS" "$@"
