# Sourced by the training recipes (train_multi30k.sh, train_dialogsum.sh): where things are,
# and the BLAS settings training needs.
#   root   the source tree;  build   ordo's build folder ($ORDO_BUILD_DIR);
#   shared_data   the corpora ($ORDO_DATA_DIR, default ../shared/data beside the tree).
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${ORDO_BUILD_DIR:-$root/build}"
shared_data="${ORDO_DATA_DIR:-$root/../shared/data}"
# Debian's OpenBLAS takes this CPU for "Prescott" unless told; LibTorch's autograd GEMMs go
# through it (libopenblas0-openmp; the reference BLAS is ~20x slower).
export OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-SkylakeX}"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$(nproc)}"
# glibc serves allocations over 32 MB with mmap and gives them back with munmap when freed.
# A training step makes and frees several such tensors (the logits and their gradient: ~100 MB
# for 3,000 tokens x 8,001 pieces), so every step faulted ~100s of MB in afresh; on a virtual
# machine page faults are dear (18 % of the samples of a training profile; with these two
# settings the same run went from 1,200 to 2,800 tokens/s on one core, 2026-11-25). From the
# heap only, never trimmed, the freed memory is reused instead.
export MALLOC_MMAP_MAX_="${MALLOC_MMAP_MAX_:-0}"
export MALLOC_TRIM_THRESHOLD_="${MALLOC_TRIM_THRESHOLD_:-4000000000}"
