#!/usr/bin/env bash
# Runs one Node.js client test (a face's *_test.mjs) against a real `ordo serve` on 127.0.0.1
# (an ephemeral port, one API key): starts the server with the given models, waits (bounded)
# for its "ready" line, runs the client, stops the server. Exits 77 (skipped) only when the
# face's client package is not installed (tools/test.sh installs it: npm ci --prefix
# tests/faces/FACE).
# Usage: node_client.sh SOURCE_DIR BUILD_DIR FACE PACKAGE KEY_LINE MODEL_DIR...
#   FACE      the folder under tests/faces/ holding FACE_test.mjs and its node_modules
#   PACKAGE   the client package that must be installed there (deepl-node, openai)
#   KEY_LINE  the keys file's one line ("KEY name=... [limits]"); its key reaches the test as ORDO_KEY
set -euo pipefail
source_dir=$1 build_dir=$2 face=$3 package=$4 key_line=$5
shift 5
here="$(cd "$(dirname "$0")" && pwd)/$face"
if [[ ! -d $here/node_modules/$package ]] || ! command -v node >/dev/null; then
  echo "SKIP: $package is not installed (npm ci --prefix tests/faces/$face)"
  exit 77
fi
models=()
for model in "$@"; do models+=(--model "$model"); done
work=$(mktemp -d)
server=""
cleanup() {
  if [[ -n $server ]]; then
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
echo "$key_line" > "$work/keys.txt"
"$build_dir/ordo" serve --host 127.0.0.1 --port 0 "${models[@]}" --threads 2 \
  --api-keys "$work/keys.txt" --access-log off > "$work/stdout" 2> "$work/stderr" &
server=$!
port=""
for _ in $(seq 1 600); do  # at most 60 s
  if grep -q "^ordo serve: ready: " "$work/stdout"; then
    port=$(sed -n 's|^ordo serve: listening on http://127.0.0.1:\([0-9]*\)$|\1|p' "$work/stdout")
    break
  fi
  if ! kill -0 "$server" 2>/dev/null; then break; fi
  sleep 0.1
done
if [[ -z $port ]]; then
  echo "ordo serve did not become ready:" >&2
  cat "$work/stderr" >&2
  exit 1
fi
cd "$here"
ORDO_URL="http://127.0.0.1:$port" ORDO_KEY="${key_line%% *}" ORDO_SOURCE_DIR="$source_dir" \
  node --test --test-reporter=spec "${face}_test.mjs"
