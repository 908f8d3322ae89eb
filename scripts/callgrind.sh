#!/usr/bin/env bash
# Instructions per input byte (valgrind --tool=callgrind, repeatable on a busy
# machine): kwire's annotated tree and values-only JSON against kafka-protocol's
# typed decode, for each benchmark input. Setup (making the input, loading the
# catalogue) is measured with 0 iterations and subtracted.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --example profile_decode -q
bin="${CARGO_TARGET_DIR:-target}/release/examples/profile_decode"
count() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$1" "$2" "$3" 2>&1 | sed -n 's/.*Collected : //p'; }
size() { "$bin" "$1" 0 kwire 2>&1 | sed -n 's/.*: \([0-9]*\) bytes.*/\1/p'; }
printf '%-11s %12s %14s %14s %14s %10s %10s\n' input bytes "kwire tree" "kwire values" kafka-protocol "tree/kp" "values/kp"
for input in produce fetch metadata heartbeats; do
  bytes=$(size "$input")
  base=$(count "$input" 0 kwire)
  tree=$(( $(count "$input" 1 kwire) - base ))
  values=$(( $(count "$input" 1 values) - base ))
  kp=$(( $(count "$input" 1 oracle) - base ))
  awk -v i="$input" -v b="$bytes" -v t="$tree" -v v="$values" -v k="$kp" 'BEGIN { printf "%-11s %12d %11.1f/B %11.1f/B %11.1f/B %9.1fx %9.1fx\n", i, b, t/b, v/b, k/b, t/k, v/k }'
done
