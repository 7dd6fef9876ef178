# Sourced by the training recipes (train_multi30k.sh, train_dialogsum.sh, back_translate.sh,
# train_bt.sh): where things are, and the BLAS and allocator settings training needs.
#   root   the source tree;  build   ordo's build folder ($ORDO_BUILD_DIR);
#   shared_data   the corpora ($ORDO_DATA_DIR, default ../shared/data beside the tree).
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${ORDO_BUILD_DIR:-$root/build}"
shared_data="${ORDO_DATA_DIR:-$root/../shared/data}"
# bt_dir FROM TO MODE: where back_translate.sh puts (and train_bt.sh finds) the task-2 captions
# in FROM with their translations into TO: runs/bt/FROM-TO.MODE, or .MODE.seedK for the other
# samples ORDO_BT_SEED=K draws (sampling only). Exits with a message on a bad ORDO_BT_SEED.
bt_dir() {
  local seed="${ORDO_BT_SEED:-0}" dir="$root/runs/bt/$1-$2.$3"
  [[ "$seed" =~ ^[0-9]+$ ]] || { echo "$0: ORDO_BT_SEED must be a whole number, not '$seed'" >&2; exit 2; }
  [[ "$seed" == 0 || "$3" == sample ]] || { echo "$0: ORDO_BT_SEED draws other samples: sampling only" >&2; exit 2; }
  [[ "$seed" == 0 ]] && echo "$dir" || echo "$dir.seed$seed"
}
# Debian's OpenBLAS takes this CPU for "Prescott" unless told; LibTorch's autograd GEMMs go
# through it (libopenblas0-openmp; the reference BLAS is far slower).
export OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-SkylakeX}"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$(nproc)}"
# glibc serves allocations over 32 MB with mmap and gives them back with munmap when freed.
# A training step makes and frees several such tensors (the logits and their gradient: ~100 MB
# for 3,000 tokens x 8,001 pieces), so every step would fault ~100s of MB in afresh, and on a
# virtual machine page faults are dear (with these two settings a training run goes more than
# twice as fast on one core). From the heap only, never trimmed, the freed memory is reused
# instead.
export MALLOC_MMAP_MAX_="${MALLOC_MMAP_MAX_:-0}"
export MALLOC_TRIM_THRESHOLD_="${MALLOC_TRIM_THRESHOLD_:-4000000000}"
