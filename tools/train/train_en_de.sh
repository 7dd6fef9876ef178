#!/usr/bin/env bash
# Trains the bundled English->German model (models/en-de) on Multi30k. Resumable: rerun the
# same command after an interruption; state lives in runs/en-de/ (resume.safetensors).
#   bash tools/train/train_en_de.sh [extra ordo-train flags, e.g. --max-minutes 120]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
data="${ORDO_DATA_DIR:-$root/../shared/data}/multi30k"
build="${ORDO_BUILD_DIR:-$root/build}"
# Debian's OpenBLAS takes this CPU for "Prescott" unless told; LibTorch's autograd GEMMs go
# through it (libopenblas0-openmp; the reference BLAS is ~20x slower).
export OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-SkylakeX}"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$(nproc)}"
exec "$build/ordo-train" \
  --train-source "$data/train.en" --train-target "$data/train.de" \
  --valid-source "$data/val.en" --valid-target "$data/val.de" \
  --work "$root/runs/en-de" --source-lang en --target-lang de \
  --spm-vocab 8000 --d-model 256 --layers 3 --heads 4 --ffn-dim 1024 --activation relu \
  --batch-tokens 3000 --lr 7e-4 --warmup 800 --dropout 0.2 --label-smoothing 0.1 \
  --max-epochs 30 --valid-every 500 --threads "$OMP_NUM_THREADS" "$@"
