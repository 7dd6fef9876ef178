#!/usr/bin/env bash
# Runs openai_node_test.mjs against a real `ordo serve` on 127.0.0.1 (an ephemeral port, the
# tiny Whisper fixture beside the bundled en-de, one API key): starts the server, waits
# (bounded) for its "ready" line, runs the client, stops the server. Exits 77 (skipped) only
# when the openai package is not installed here (tools/test.sh installs it: npm ci --prefix
# tests/faces/openai_node).
# Usage: run.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
source_dir=$1
build_dir=$2
here=$(cd "$(dirname "$0")" && pwd)
if [[ ! -d $here/node_modules/openai ]] || ! command -v node >/dev/null; then
  echo "SKIP: openai is not installed (npm ci --prefix tests/faces/openai_node)"
  exit 77
fi
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
echo "k-openai-node name=openai-node" > "$work/keys.txt"
"$build_dir/ordo" serve --host 127.0.0.1 --port 0 --model "$source_dir/tests/data/hf/whisper" \
  --model "$source_dir/models/en-de" --threads 2 --api-keys "$work/keys.txt" --access-log off \
  > "$work/stdout" 2> "$work/stderr" &
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
ORDO_URL="http://127.0.0.1:$port" ORDO_KEY=k-openai-node ORDO_SOURCE_DIR="$source_dir" \
  node --test --test-reporter=spec openai_node_test.mjs
