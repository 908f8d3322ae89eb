#!/usr/bin/env bash
# `kwire export` (five Parquet tables) against `tshark -T fields` writing the
# exchange columns it has (time, stream, API key and version, correlation
# id, client id, error, topic names) as CSV, side by side on the same mixed
# capture: wall and CPU seconds, peak RSS, and the ratio. The issue's bound:
# export's peak memory at most 256 MB at 1 GB.
# Usage: scripts/bench-export.sh [MB...]   (default 100 1024)
# RUNS=N runs each command N times (default 3) and reports the median.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -gt 0 ]; then sizes=("$@"); else sizes=(100 1024); fi
runs=${RUNS:-3}
dir=${BENCH_DIR:-/tmp/kwire-bench-export}
target=${CARGO_TARGET_DIR:-target}
cargo build --release -q --bin kwire --example make_bench_inputs
kwire=$target/release/kwire
command -v tshark > /dev/null || { echo "bench-export: tshark is missing (apt-get install tshark)" >&2; exit 1; }
mkdir -p "$dir"
source scripts/bench-lib.sh
printf "%-8s %-22s %9s %9s %10s\n" capture command wall_s cpu_s peak_MB
for mb in "${sizes[@]}"; do
  mkdir -p "$dir/$mb"
  [ -f "$dir/$mb/mixed.pcap" ] || "$target/release/examples/make_bench_inputs" "$dir/$mb" "$mb" > /dev/null
  pcap=$dir/$mb/mixed.pcap
  read -r kw kc km < <(median sh -c "rm -rf '$dir/out'; exec '$kwire' export '$pcap' --out '$dir/out'")
  read -r tw tc tm < <(median sh -c "exec tshark -r '$pcap' -d tcp.port==9092,kafka -T fields -E separator=, \
    -e frame.time_epoch -e tcp.stream -e kafka.api_key -e kafka.api_version -e kafka.correlation_id \
    -e kafka.client_id -e kafka.error -e kafka.topic_name > '$dir/tshark.csv'")
  printf "%-8s %-22s %9s %9s %10.1f\n" "${mb}MB" "kwire export" "$kw" "$kc" "$(echo "$km / 1024" | bc -l)"
  printf "%-8s %-22s %9s %9s %10.1f\n" "${mb}MB" "tshark -T fields" "$tw" "$tc" "$(echo "$tm / 1024" | bc -l)"
  awk -v a="$kw" -v b="$tw" 'BEGIN { printf "%-8s export/tshark: wall %.2f (%.1fx faster)\n", "", a / b, b / a }'
  rm -rf "$dir/out" "$dir/tshark.csv"
done
