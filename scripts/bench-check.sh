#!/usr/bin/env bash
# `kwire check` against `kwire stats` on the mixed capture (requests and
# responses of Produce, Fetch, Metadata and Heartbeat over many connections),
# at two sizes: wall and CPU time with their ratio, and peak RSS, which must
# stay flat from the small capture to the large one (check keeps groups of
# findings and the requests in flight, never the frames).
# Usage: scripts/bench-check.sh [SMALL_MB] [LARGE_MB]   (default 100 1024)
# RUNS=N runs each command N times (default 3) and reports the median.
set -euo pipefail
cd "$(dirname "$0")/.."
small=${1:-100}
large=${2:-1024}
runs=${RUNS:-3}
dir=${BENCH_DIR:-/tmp/kwire-bench-check}
target=${CARGO_TARGET_DIR:-target}
cargo build --release -q --bin kwire --example make_bench_inputs
kwire=$target/release/kwire
source scripts/bench-lib.sh
printf "%-8s %-6s %9s %9s %10s\n" capture command wall_s cpu_s peak_MB
for mb in "$small" "$large"; do
  mkdir -p "$dir/$mb"
  [ -f "$dir/$mb/mixed.pcap" ] || "$target/release/examples/make_bench_inputs" "$dir/$mb" "$mb" > /dev/null
  read -r sw sc sm < <(median "$kwire" stats "$dir/$mb/mixed.pcap")
  read -r cw cc cm < <(median "$kwire" check "$dir/$mb/mixed.pcap")
  printf "%-8s %-6s %9s %9s %10.1f\n" "${mb}MB" stats "$sw" "$sc" "$(echo "$sm / 1024" | bc -l)"
  printf "%-8s %-6s %9s %9s %10.1f\n" "${mb}MB" check "$cw" "$cc" "$(echo "$cm / 1024" | bc -l)"
  awk -v a="$cw" -v b="$sw" -v c="$cc" -v d="$sc" 'BEGIN { printf "%-8s check/stats: wall %.2fx, cpu %.2fx\n", "", a / b, c / d }'
done
