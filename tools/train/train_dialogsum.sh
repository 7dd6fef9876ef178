#!/usr/bin/env bash
# Trains the bundled dialogue summarizer (models/dialogsum) on DialogSum (CC BY-NC-SA 4.0).
# Resumable like train_multi30k.sh; state in runs/dialogsum/. Model selection by ROUGE-L.
#   bash tools/train/train_dialogsum.sh [extra ordo-train flags, e.g. --max-minutes 120]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/training_env.sh"
data="$shared_data/dialogsum"
exec "$build/ordo-train" \
  --train-source "$data/dialogsum.train.jsonl#dialogue" --train-target "$data/dialogsum.train.jsonl#summary" \
  --valid-source "$data/dialogsum.dev.jsonl#dialogue" --valid-target "$data/dialogsum.dev.jsonl#summary" \
  --work "$root/runs/dialogsum" --source-lang en --target-lang en --metric rougeL \
  --spm-vocab 8000 --d-model 256 --layers 3 --heads 4 --ffn-dim 1024 --activation relu --max-positions 512 \
  --max-len 512 --batch-tokens 6000 --lr 7e-4 --warmup 800 --dropout 0.1 --label-smoothing 0.1 \
  --max-epochs 20 --valid-every 500 --valid-lines 200 --valid-max-new-tokens 64 --threads "$OMP_NUM_THREADS" "$@"
