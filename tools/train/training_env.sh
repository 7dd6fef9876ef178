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
