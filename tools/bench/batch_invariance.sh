#!/usr/bin/env bash
# Batch invariance on real sentences (docs/reliability.md, "Batch invariance"): the first N lines of
# newstest2014.en translated by the bundled en-de model one sentence at a time and in the
# usual length-sorted batches, with 1 and 2 intra-op threads and with 2 translations at once,
# greedy and beam 4; every setting's JSON lines (tokens and scores as printed: float32
# round-trip precision) are compared with the one-at-a-time run of the same beam.
#   tools/bench/batch_invariance.sh [ORDO_BINARY] [LINES]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
ordo="${1:-$root/build/ordo}"
lines="${2:-500}"
input="${ORDO_NEWSTEST:-$root/../shared/data/newstest/newstest2014.en}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
head -n "$lines" "$input" > "$work/in.en"
total=0 differing=0
for beam in 1 4; do
  "$ordo" translate -q -m en-de -b "$beam" -n "$beam" --json -t 1 --batch-size 1 -i "$work/in.en" -o "$work/alone.jsonl"
  for setting in "-t 1 --batch-size 32" "-t 2 --batch-size 32" "-t 2 --inter-threads 2 --batch-size 16" "-t 1 --batch-size 7"; do
    # shellcheck disable=SC2086
    "$ordo" translate -q -m en-de -b "$beam" -n "$beam" --json $setting -i "$work/in.en" -o "$work/batched.jsonl"
    d=$(paste -d '\n' "$work/alone.jsonl" "$work/batched.jsonl" | awk 'NR % 2 { a = $0; next } a != $0 { n++ } END { print n + 0 }')
    echo "beam $beam, $setting: $d of $lines sentences differ from one at a time"
    total=$((total + lines)) differing=$((differing + d))
  done
done
echo "total: $differing of $total sentence translations differ"
