#!/usr/bin/env bash
# Instructions per input byte (valgrind --tool=callgrind, repeatable on a busy
# machine): kwire's annotated tree, its annotated decode (the tape the tree is
# built from), its values-only decode, and its values-only JSON (decode and
# writing the text) against kafka-protocol's typed decode, for
# each benchmark input. Setup (making the input, loading the catalogue) is
# measured with 0 iterations and subtracted. kwire's values-only JSON prints
# record data as hex without decoding the records (the JSON contract), so its
# ratios are also given against kafka-protocol without its record-batch
# decoder ("kp bare"); the tree decodes every record.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --example profile_decode -q
bin="${CARGO_TARGET_DIR:-target}/release/examples/profile_decode"
count() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$1" "$2" "$3" 2>&1 | sed -n 's/.*Collected : //p'; }
size() { "$bin" "$1" 0 kwire 2>&1 | sed -n 's/.*: \([0-9]*\) bytes.*/\1/p'; }
printf '%-11s %9s %10s %10s %10s %10s %10s %10s %8s %9s %9s %9s %14s\n' input bytes "tree" "annotated" "values" "JSON" "kp" "kp bare" "tree/kp" "annot/kp" "values/kp" "JSON/kp" "values/kp bare"
for input in produce fetch metadata heartbeats; do
  bytes=$(size "$input")
  base=$(count "$input" 0 kwire)
  tree=$(( $(count "$input" 1 kwire) - base ))
  annotated=$(( $(count "$input" 1 annotated) - base ))
  values=$(( $(count "$input" 1 values-decode) - base ))
  json=$(( $(count "$input" 1 values) - base ))
  kp=$(( $(count "$input" 1 oracle) - base ))
  bare=$(( $(count "$input" 1 oracle-bare) - base ))
  awk -v i="$input" -v b="$bytes" -v t="$tree" -v a="$annotated" -v v="$values" -v j="$json" -v k="$kp" -v kb="$bare" 'BEGIN {
    printf "%-11s %9d %8.1f/B %8.1f/B %8.1f/B %8.1f/B %8.1f/B %8.1f/B %7.1fx %8.1fx %8.1fx %8.1fx %14s\n", i, b, t/b, a/b, v/b, j/b, k/b, (kb > 0 ? kb : 0)/b, t/k, a/k, v/k, j/k, (kb > b / 10 ? sprintf("%.1fx", v/kb) : "(kp ~0)") }'
done
echo "tree: the annotated tree (built from the tape); annotated: the annotated decode alone (the tape); values: the values-only decode; JSON: values-only decode and JSON text (--format json)"
