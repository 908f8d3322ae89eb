#!/usr/bin/env bash
# Whole-command comparisons in one run, with ratios: kwire against tshark's Kafka
# dissector on the same capture (time and peak RSS), plus the criterion decode
# benchmarks against kafka-protocol. Usage: scripts/bench.sh [PCAP_MB] [JSON_MB]
# (defaults 200 and 20; the issue's figure uses PCAP_MB=1024).
set -euo pipefail
cd "$(dirname "$0")/.."
pcap_mb=${1:-200}
json_mb=${2:-20}
dir=${BENCH_DIR:-/tmp/kwire-bench}
cargo build --release -q --bin kwire --example make_bench_inputs
target/release/examples/make_bench_inputs "$dir" "$pcap_mb"
target/release/examples/make_bench_inputs "$dir/small" "$json_mb" 2>/dev/null
command -v tshark >/dev/null || { echo "tshark is not installed (apt-get install tshark): skipping the comparison"; exit 0; }
measure() { # prints "seconds peak_kb"
  /usr/bin/time -f "%e %M" -o "$dir/time.txt" "$@" > /dev/null 2>&1 || true
  cat "$dir/time.txt"
}
row() { # name kwire-cmd... -- tshark-cmd...
  local name=$1; shift
  local k=() t=()
  while [ "$1" != "--" ]; do k+=("$1"); shift; done; shift
  t=("$@")
  read -r ks km < <(measure "${k[@]}")
  read -r ts tm < <(measure "${t[@]}")
  awk -v n="$name" -v ks="$ks" -v km="$km" -v ts="$ts" -v tm="$tm" 'BEGIN {
    printf "%-32s kwire %7.2fs %7.0f MB   tshark %8.2fs %7.0f MB   kwire is %6.1fx faster\n", n, ks, km/1024, ts, tm/1024, ts/(ks>0?ks:0.001) }'
}
echo "== captures ($pcap_mb MB pcap for listing, $json_mb MB for JSON)"
row "listing vs -T fields api_key" target/release/kwire capture "$dir/mixed.pcap" --list -- tshark -r "$dir/mixed.pcap" -d tcp.port==9092,kafka -T fields -e kafka.api_key
row "JSON vs -T json" target/release/kwire capture "$dir/small/mixed.pcap" --json -- tshark -r "$dir/small/mixed.pcap" -d tcp.port==9092,kafka -T json
echo "== decode (criterion, kafka-protocol typed decode as the reference)"
cargo bench --bench decode -q -- --warm-up-time 1 --measurement-time 3 2>/dev/null | awk '/^[a-z_0-9]+\// { name=$1 } /time:/ { print name, $0 }' | sed 's/ \+/ /g'
