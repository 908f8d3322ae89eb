#!/usr/bin/env bash
# Instructions per input byte (valgrind --tool=callgrind, repeatable on a busy
# machine): kwire's annotated tree and values-only JSON against kafka-protocol's
# typed decode, for each benchmark input. Setup (making the input, loading the
# catalogue) is measured with 0 iterations and subtracted. kwire's values-only
# JSON prints record data as hex without decoding the records (the JSON
# contract), so its ratio is also given against kafka-protocol without its
# record-batch decoder ("kp bare"); the tree decodes every record.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --example profile_decode -q
bin="${CARGO_TARGET_DIR:-target}/release/examples/profile_decode"
count() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$1" "$2" "$3" 2>&1 | sed -n 's/.*Collected : //p'; }
size() { "$bin" "$1" 0 kwire 2>&1 | sed -n 's/.*: \([0-9]*\) bytes.*/\1/p'; }
printf '%-11s %10s %12s %13s %13s %13s %9s %10s %15s\n' input bytes "kwire tree" "kwire values" kafka-protocol "kp bare" "tree/kp" "values/kp" "values/kp bare"
for input in produce fetch metadata heartbeats; do
  bytes=$(size "$input")
  base=$(count "$input" 0 kwire)
  tree=$(( $(count "$input" 1 kwire) - base ))
  values=$(( $(count "$input" 1 values) - base ))
  kp=$(( $(count "$input" 1 oracle) - base ))
  bare=$(( $(count "$input" 1 oracle-bare) - base ))
  awk -v i="$input" -v b="$bytes" -v t="$tree" -v v="$values" -v k="$kp" -v kb="$bare" 'BEGIN { printf "%-11s %10d %10.1f/B %11.1f/B %11.1f/B %11.1f/B %8.1fx %9.1fx %14s\n", i, b, t/b, v/b, k/b, (kb > 0 ? kb : 0)/b, t/k, v/k, (kb > b / 10 ? sprintf("%.1fx", v/kb) : "(kp ~0)") }'
done
