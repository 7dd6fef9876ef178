#!/usr/bin/env bash
# Trains a bundled Multi30k translation model: `en de` gives models/en-de, `de en` models/de-en.
# Resumable: rerun the same command after an interruption; state lives in runs/<src>-<tgt>/
# (resume.safetensors), the selected model in runs/<src>-<tgt>/best/.
#   bash tools/train/train_multi30k.sh en de [extra ordo-train flags, e.g. --max-minutes 120]
set -euo pipefail
if [[ $# -lt 2 || ! "$1 $2" =~ ^(en de|de en)$ ]]; then
  echo "usage: $0 en de|de en [ordo-train flags]" >&2
  exit 2
fi
src="$1" tgt="$2"
shift 2
# en-de ran 30 epochs (1 h 57 min); de-en 20, to fit one working session.
epochs=$([[ $src == en ]] && echo 30 || echo 20)
source "$(dirname "${BASH_SOURCE[0]}")/training_env.sh"
data="$shared_data/multi30k"
exec "$build/ordo-train" \
  --train-source "$data/train.$src" --train-target "$data/train.$tgt" \
  --valid-source "$data/val.$src" --valid-target "$data/val.$tgt" \
  --work "$root/runs/$src-$tgt" --source-lang "$src" --target-lang "$tgt" \
  --spm-vocab 8000 --d-model 256 --layers 3 --heads 4 --ffn-dim 1024 --activation relu \
  --batch-tokens 3000 --lr 7e-4 --warmup 800 --dropout 0.2 --label-smoothing 0.1 \
  --max-epochs "$epochs" --valid-every 500 --threads "$OMP_NUM_THREADS" "$@"
