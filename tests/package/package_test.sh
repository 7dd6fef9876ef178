#!/usr/bin/env bash
# The Debian package (cmake/package.cmake, docs/operations.md), built and checked without
# touching the machine: cpack -G DEB into a scratch folder; its contents (dpkg-deb -c), control
# fields and dependencies (dpkg-deb -I / -f: every dependency a package this machine knows);
# unpacked into a throw-away root (dpkg -x), whose binary translates with the packaged model as
# the build does, serves the packaged /etc/ordo/models.json, and whose libordo builds the
# README's embedding example with find_package(ordo) (embed_example_test.sh); the unit passes
# systemd-analyze verify against that root.
#   package_test.sh SOURCE_DIR BUILD_DIR VERSION [CXX_COMPILER CXX_FLAGS]
set -euo pipefail
source_dir="$1" build_dir="$2" version="$3" cxx="${4:-}" cxx_flags="${5:-}"
work="$(mktemp -d)"
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2> /dev/null || true; wait "$server" 2> /dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "package test: $*" >&2; exit 1; }
passed=0
ok() { echo "ok: $*"; passed=$((passed + 1)); }

# ---------------------------------------------------------------- build the .deb
start=$(date +%s)
timeout 600 cpack --config "$build_dir/CPackConfig.cmake" -G DEB -B "$work/out" > "$work/cpack.log" 2>&1 \
  || { cat "$work/cpack.log" >&2; fail "cpack -G DEB failed"; }
arch=$(dpkg --print-architecture)
deb="$work/out/ordo_${version}_${arch}.deb"
[ -f "$deb" ] || { ls "$work/out" >&2; fail "no $deb"; }
ok "cpack -G DEB wrote $(basename "$deb") ($(du -m "$deb" | cut -f1) MB) in $(( $(date +%s) - start )) s"

# ---------------------------------------------------------------- contents
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|; s|/$||' > "$work/contents"
libdir=$(sed -n 's|^\(/usr/lib[^ ]*\)/libordo\.so\.0$|\1|p' "$work/contents" | head -n 1)
[ -n "$libdir" ] || fail "no libordo.so.0 in the package"
for path in /usr/bin/ordo "$libdir/libordo.so.$version" "$libdir/libordo.so" "$libdir/libordo_sentencepiece.so" \
    /usr/include/ordo/ordo.h "$libdir/cmake/ordo/ordoConfig.cmake" "$libdir/cmake/ordo/ordoConfigVersion.cmake" \
    "$libdir/cmake/ordo/ordoTargets.cmake" /usr/share/ordo/models/en-de/model.safetensors \
    /usr/share/ordo/models/de-en/config.json /usr/share/ordo/models/dialogsum/target.spm \
    /usr/share/ordo/configs/translation.json /usr/share/ordo/configs/summarization.json \
    /usr/share/man/man1/ordo.1.gz /lib/systemd/system/ordo.service /etc/ordo/models.json; do
  grep -qxF "$path" "$work/contents" || fail "$path is not in the package (dpkg-deb -c)"
done
if grep -q 'ORDO_CLI_LAUNCHER:BOOL=ON' "$build_dir/CMakeCache.txt"; then
  grep -qxF "$libdir/libordo_cli.so" "$work/contents" || fail "$libdir/libordo_cli.so is not in the package"
fi
ok "dpkg-deb -c: binary, libordo + shim, headers, CMake files, 3 models, presets, man page, unit, /etc/ordo/models.json"

# ---------------------------------------------------------------- control: fields, dependencies, conffiles
[ "$(dpkg-deb -f "$deb" Package)" = ordo ] || fail "Package is not ordo"
[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] || fail "Version $(dpkg-deb -f "$deb" Version), want $version"
[ "$(dpkg-deb -f "$deb" Architecture)" = "$arch" ] || fail "Architecture is not $arch"
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
for needed in libc6 libstdc++6 libtorch libdnnl libicu libsentencepiece libcpp-httplib libprometheus-cpp-core; do
  grep -q "\b$needed" <<< "$depends" || fail "Depends has no $needed: $depends"
done
# Every dependency is a package this (bookworm) machine has installed: apt-get would find it.
while read -r name; do
  dpkg-query -W -f '${Status}' "$name" 2> /dev/null | grep -q 'install ok installed' \
    || fail "dependency $name is not a package installed here"
done < <(tr ',' '\n' <<< "$depends" | sed 's/|.*//; s/(.*)//; s/:.*//; s/ //g' | grep .)
if grep -q '/dist-packages/ordo/' "$work/contents"; then  # the Python package: its interpreter
  grep -q '^python3 (>= ' <<< "$(dpkg-deb -f "$deb" Recommends)" || fail "the Python package is in, Recommends has no python3"
fi
dpkg-deb -e "$deb" "$work/control"
grep -qxF /etc/ordo/models.json "$work/control/conffiles" || fail "/etc/ordo/models.json is not a conffile"
for script in postinst prerm postrm; do
  [ -x "$work/control/$script" ] || fail "no executable $script"
  sh -n "$work/control/$script" || fail "$script is not valid sh"
done
ok "dpkg-deb -I: ordo $version $arch, $(tr ',' '\n' <<< "$depends" | grep -c .) dependencies all installed here, conffile, maintainer scripts"

# ---------------------------------------------------------------- a throw-away root
root="$work/root"
dpkg -x "$deb" "$root"
# Nothing installed points back into the build tree (RUNPATH) or needs LD_LIBRARY_PATH.
for elf in "$root/usr/bin/ordo" "$root$libdir"/libordo*.so*; do
  [ -L "$elf" ] && continue
  if readelf -d "$elf" | grep -E 'RUNPATH|RPATH' | grep -qF "$build_dir"; then fail "$elf has the build tree in its RUNPATH"; fi
done
unset LD_LIBRARY_PATH ORDO_MODELS_DIR ORDO_CONFIGS_DIR ORDO_SENTENCEPIECE_SHIM
export ORDO_CACHE_DIR="$work/cache"
[ "$("$root/usr/bin/ordo" --version)" = "ordo $version" ] || fail "ordo --version: $("$root/usr/bin/ordo" --version 2>&1)"
sentence="A man is riding a bicycle down the street."
want=$(echo "$sentence" | "$build_dir/ordo" translate -q -m "$source_dir/models/en-de")
# No --model: the bundled en-de, found beside the binary (/usr/share/ordo/models).
got=$(echo "$sentence" | "$root/usr/bin/ordo" translate -q)
echo "installed ordo: $got"
[ -n "$got" ] && [ "$got" = "$want" ] || fail "installed ordo translate gave '$got', the build '$want'"
got=$(echo "Ein Mann fährt mit dem Fahrrad die Straße entlang." | "$root/usr/bin/ordo" translate -q -m de-en)
[ -n "$got" ] || fail "installed ordo translate -m de-en gave nothing"
ok "the unpacked binary translates with the packaged models ('$want')"

zcat "$root/usr/share/man/man1/ordo.1.gz" > "$work/ordo.1"
for heading in '.SH NAME' '.SH "ORDO TRANSLATE"' '.SH "ORDO SERVE"' '.SH "ORDO SUMMARIZE"'; do
  grep -qF "$heading" "$work/ordo.1" || fail "the man page has no $heading"
done
grep -qF '\-\-models' "$work/ordo.1" || fail "the man page does not list ordo serve --models"
if command -v groff > /dev/null; then
  warnings=$(groff -man -Tutf8 -ww -z "$work/ordo.1" 2>&1 || true)
  [ -z "$warnings" ] || fail "groff warns about the man page: $warnings"
fi
ok "man page ordo(1) has every subcommand's options"

# ---------------------------------------------------------------- the packaged models.json, served
sed "s|\"/usr/share/ordo|\"$root/usr/share/ordo|g" "$root/etc/ordo/models.json" > "$work/models.json"
"$root/usr/bin/ordo" serve --models "$work/models.json" --host 127.0.0.1 --port 0 --threads 1 > "$work/serve.log" 2>&1 &
server=$!
port=""
for _ in $(seq 1 600); do  # 60 s at most
  port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$work/serve.log")
  grep -q "ordo serve: ready" "$work/serve.log" && [ -n "$port" ] && break
  kill -0 "$server" 2> /dev/null || { cat "$work/serve.log" >&2; fail "ordo serve --models (packaged) exited"; }
  sleep 0.1
done
grep -q "ordo serve: ready" "$work/serve.log" || { cat "$work/serve.log" >&2; fail "ordo serve not ready in 60 s"; }
answer=$(curl -s --max-time 60 "http://127.0.0.1:$port/translate" -H 'Content-Type: application/json' \
  -d "{\"q\": \"$sentence\", \"source\": \"en\", \"target\": \"de\"}")
[ "$answer" = "$(python3 -c 'import json, sys; print(json.dumps({"translatedText": sys.argv[1]}, ensure_ascii=False, separators=(",", ":")))' "$want")" ] \
  || fail "served /translate: $answer (want $want)"
models=$(curl -s --max-time 10 "http://127.0.0.1:$port/v1/models")
for name in en-de de-en dialogsum; do grep -q "\"name\":\"$name\"" <<< "$models" || fail "/v1/models has no $name: $models"; done
kill -TERM "$server"
wait "$server" || fail "ordo serve did not exit 0 on SIGTERM"
server=""
ok "ordo serve --models (the packaged /etc/ordo/models.json) serves en-de, de-en, dialogsum; exits 0 on SIGTERM"

# ---------------------------------------------------------------- find_package(ordo) against the package
ORDO_INSTALLED_PREFIX="$root/usr" bash "$source_dir/tests/embed_example_test.sh" "$source_dir" "$build_dir" \
  "$source_dir/tests/data/hf/marian_opus_en_mg" "$cxx" "$cxx_flags" > "$work/embed.log" 2>&1 \
  || { cat "$work/embed.log" >&2; fail "the embedding example does not build or run against the package"; }
ok "find_package(ordo) against the package: examples/translate builds and translates as ordo does"

# ---------------------------------------------------------------- systemd-analyze verify
# The unit as packaged, its ExecStart pointed at the unpacked binary (verify checks that it is
# executable) and man:ordo(1) looked up in the unpacked man pages. No systemd runs in a
# container, so the unit is checked, not started. Warnings (an unknown key, a bad value) count.
if command -v systemd-analyze > /dev/null; then
  mkdir -p "$work/unit"
  sed "s|/usr/bin/ordo|$root/usr/bin/ordo|g" "$root/lib/systemd/system/ordo.service" > "$work/unit/ordo.service"
  grep -q '^DynamicUser=yes$' "$work/unit/ordo.service" || fail "ordo.service does not run as DynamicUser=yes"
  grep -q '^ExecStart=.*/usr/bin/ordo serve --models /etc/ordo/models.json' "$work/unit/ordo.service" \
    || fail "ordo.service does not run ordo serve --models /etc/ordo/models.json"
  man_check=()  # Documentation=man:ordo(1) is looked up with man(1) when there is one
  command -v man > /dev/null || man_check=(--man=no)
  out=$(SYSTEMD_LOG_TARGET=console MANPATH="$root/usr/share/man" systemd-analyze verify "${man_check[@]}" \
    "$work/unit/ordo.service" 2>&1) \
    || { echo "$out" >&2; fail "systemd-analyze verify ordo.service failed"; }
  [ -z "$out" ] || { echo "$out" >&2; fail "systemd-analyze verify warns about ordo.service"; }
  exposure=$(SYSTEMD_LOG_TARGET=console systemd-analyze security --offline=true "$work/unit/ordo.service" 2>&1 \
    | sed -n 's/.*Overall exposure level for ordo.service: \([0-9.]*\).*/\1/p')
  ok "systemd-analyze verify ordo.service: no warning (security exposure ${exposure:-?})"
else
  echo "skip: no systemd-analyze"
fi
echo "$passed passed, 0 failed"
