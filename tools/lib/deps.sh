# Shared by tools/bootstrap.sh and tools/test.sh: installs the Debian packages ordo needs
# when any is missing (nothing else is downloaded), and configures + builds.
#
#   ORDO_BUILD_DIR   build folder (default: build)
#   ORDO_JOBS        parallel compile jobs (default: nproc)

ORDO_PACKAGES=(
  build-essential cmake pkg-config
  libtorch-dev          # LibTorch 1.13 (tensors, autograd for the trainer)
  libopenblas0-openmp   # the BLAS LibTorch calls for attention and the trainer (the default
                        # reference BLAS runs at ~3 GFLOPS; this one honours --threads)
  libdnnl-dev           # oneDNN headers: ordo's GEMMs call it directly (libtorch links it)
  libsentencepiece-dev  # tokenizer library and its trainer (in process, through the shim)
  libicu-dev            # Unicode data + regex engine for the Moses rules of FSMT tokenizers;
                        # sentence boundaries (BreakIterator with CLDR abbreviation suppressions)
  nlohmann-json3-dev libcli11-dev
  libcairo2-dev libpango1.0-dev  # pictures (src/plot/): cairo draws SVG and PNG, Pango lays out UTF-8 text
  fonts-dejavu-core fonts-wqy-microhei  # fonts for those pictures (WenQuanYi: CJK tokens)
  librsvg2-bin          # rsvg-convert: tests render the SVG pictures back to pixels
  libgtest-dev googletest
  libcpp-httplib-dev    # `ordo serve`: HTTP server (and the tests' client)
  libgumbo-dev          # `ordo serve`: HTML5 parser for format=html
  libzip-dev            # files (src/document/, docs/files.md): the zip archives of .docx/.pptx/.xlsx,
                        # OpenDocument and EPUB, read within limits and written with untouched parts copied
  libpugixml-dev        # files: their XML parts and XLIFF (pugixml expands no entities: no entity bombs)
  libavformat-dev libavcodec-dev libswresample-dev libavutil-dev  # speech (src/audio/): FFmpeg decodes
                        # every audio format people send (WAV, FLAC, OGG/Opus, MP3, AAC, a video's sound,
                        # a browser recorder's WebM) and resamples it to 16 kHz mono
  libfftw3-dev          # speech: the log-mel spectrogram's real FFTs of any length (Whisper's n_fft is 400)
  zlib1g-dev            # speech: openai-whisper's compression-ratio check of a window's text (deflate)
  libxxhash-dev         # XXH3 hashes of checkpoints: the packed weights cache's file names
  prometheus-cpp-dev    # `ordo serve`: GET /metrics (prometheus-cpp core)
  libcld2-dev           # `ordo serve`: POST /detect and source "auto" (Compact Language Detector 2,
                        # the identifier Chromium used: 80+ languages, no model files to ship)
  python3-dev pybind11-dev  # the Python package `import ordo` (src/python/): pybind11 is the
                        # maintained C++11 binding library Debian ships; nothing from PyPI
  python3-dask python3-distributed  # `python3 -m ordo.distributed`: corpora on a Dask cluster
)
# tools/test.sh only: what the tests drive ordo with, beside the build's packages.
ORDO_TEST_PACKAGES=(
  python3-pytest        # the Python package's tests (tests/python/)
  python3-docx python3-openpyxl gettext translate-toolkit python3-aeidon  # the files' tests make and
                        # read files with the tools translators use: .docx/.xlsx (python-docx, openpyxl),
                        # catalogues (msgfmt --check), XLIFF and JSON (translate-toolkit's po2xliff,
                        # xliff2po, json2po), subtitles (aeidon, translate-toolkit's sub2po)
  chromium chromium-driver python3-selenium  # the page's tests in a real headless browser (tests/web/)
  dpkg-dev              # cpack -G DEB (dpkg-shlibdeps) for the package test (tests/package/)
  haproxy curl          # the failover test in front of two replicas (tests/ops/)
)
# tools/ci/sanitize.sh and tools/ci/fuzz.sh (CI runs both after the suite): clang with its
# sanitizer and libFuzzer runtimes, and llvm-symbolizer for readable reports.
ORDO_SANITIZER_PACKAGES=(clang-14 libclang-rt-14-dev llvm-14)

# Only for the serving load benchmark (tools/serve/bench.sh), not for builds or tests.
ORDO_BENCH_PACKAGES=(haproxy curl bc time)  # time: peak RSS in ordo-bench --shape

ordo_missing_packages() {  # [extra packages...]
  local missing=()
  for p in "${ORDO_PACKAGES[@]}" "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  echo "${missing[@]}"
}

ordo_install_dependencies() {  # [extra packages...]
  local missing
  missing=$(ordo_missing_packages "$@")
  if [ -z "$missing" ]; then return 0; fi
  echo "ordo: installing Debian packages: $missing" >&2
  local sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing >&2
}

ordo_build() {
  local root="$1"; shift
  local build="${ORDO_BUILD_DIR:-$root/build}"
  local jobs="${ORDO_JOBS:-$(nproc)}"
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release "$@" >&2
  cmake --build "$build" -j "$jobs" >&2
}
