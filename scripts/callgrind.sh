#!/usr/bin/env bash
# Instructions per input byte (valgrind --tool=callgrind, repeatable on a busy
# machine): kwire's annotated tree, its annotated decode (the tape the tree is
# built from), its values-only decode, and its values-only JSON (decode and
# writing the text) against kafka-protocol's typed decode, for
# each benchmark input. kwire's values-only JSON prints
# record data as hex without decoding the records (the JSON contract), so its
# ratios are also given against kafka-protocol without its record-batch
# decoder ("kp bare"); the tree decodes every record.
# Each figure is one iteration in steady state: three iterations less one,
# halved, so that neither side's first-use costs (the allocator's first pages,
# a tape's first growth) count, only what every further input costs.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --example profile_decode -q
bin="${CARGO_TARGET_DIR:-target}/release/examples/profile_decode"
count() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$1" "$2" "$3" 2>&1 | sed -n 's/.*Collected : //p'; }
size() { "$bin" "$1" 0 kwire 2>&1 | sed -n 's/.*: \([0-9]*\) bytes.*/\1/p'; }
printf '%-11s %9s %10s %10s %10s %10s %10s %10s %8s %9s %9s %9s %14s\n' input bytes "tree" "annotated" "values" "JSON" "kp" "kp bare" "tree/kp" "annot/kp" "values/kp" "JSON/kp" "values/kp bare"
for input in produce fetch metadata heartbeats; do
  bytes=$(size "$input")
  steady() { echo $(( ($(count "$input" 3 "$1") - $(count "$input" 1 "$1")) / 2 )); }
  tree=$(steady kwire)
  annotated=$(steady annotated)
  values=$(steady values-decode)
  json=$(steady values)
  kp=$(steady oracle)
  bare=$(steady oracle-bare)
  awk -v i="$input" -v b="$bytes" -v t="$tree" -v a="$annotated" -v v="$values" -v j="$json" -v k="$kp" -v kb="$bare" 'BEGIN {
    printf "%-11s %9d %8.1f/B %8.1f/B %8.1f/B %8.1f/B %8.1f/B %8.1f/B %7.1fx %8.1fx %8.1fx %8.1fx %14s\n", i, b, t/b, a/b, v/b, j/b, k/b, (kb > 0 ? kb : 0)/b, t/k, a/k, v/k, j/k, (kb > b ? sprintf("%.1fx", v/kb) : "(kp ~0)") }'
done
echo "tree: the annotated tree (built from the tape); annotated: the annotated decode alone (the tape); values: the values-only decode; JSON: values-only decode and JSON text (--format json)"
