#!/usr/bin/env bash
# Whole-command comparisons in one run, with ratios: kwire against tshark's Kafka
# dissector on the same captures (the mixed pcap, and the 40,000-frame Produce
# v8 capture; wall time, CPU time, peak RSS), plus the criterion decode
# benchmarks against kafka-protocol.
# Usage: scripts/bench.sh [PCAP_MB] [JSON_MB]
#   PCAP_MB  size of the mixed pcap for the listing (default 200; the issue's figure uses 1024)
#   JSON_MB  size of the pcap for JSON (default: PCAP_MB, the same file; `tshark -T json`
#            takes about 6-12 minutes on 1 GB here)
# SKIP_CRITERION=1 skips the criterion part; RUNS=N runs each kwire command N times
# (default 3) and reports the median (tshark runs once: it runs long enough).
set -euo pipefail
cd "$(dirname "$0")/.."
pcap_mb=${1:-200}
json_mb=${2:-$pcap_mb}
runs=${RUNS:-3}
dir=${BENCH_DIR:-/tmp/kwire-bench}
target=${CARGO_TARGET_DIR:-target}
cargo build --release -q --bin kwire --example make_bench_inputs
kwire=$target/release/kwire
"$target/release/examples/make_bench_inputs" "$dir" "$pcap_mb"
json_pcap=$dir/mixed.pcap
if [ "$json_mb" != "$pcap_mb" ]; then
  "$target/release/examples/make_bench_inputs" "$dir/json" "$json_mb" 2>/dev/null
  json_pcap=$dir/json/mixed.pcap
fi
command -v tshark >/dev/null || { echo "tshark is not installed (apt-get install tshark): skipping the comparison"; exit 0; }
measure() { # one run: prints "wall_s cpu_s peak_kb" (wall to the millisecond: short runs)
  local start=$EPOCHREALTIME
  /usr/bin/time -f "%U %S %M" -o "$dir/time.txt" "$@" > /dev/null 2>&1 || true
  local end=$EPOCHREALTIME
  awk -v s="$start" -v e="$end" '{ printf "%.3f %.2f %s\n", e - s, $1 + $2, $3 }' "$dir/time.txt"
}
median() { # N runs of a command: the run with the median wall time
  for _ in $(seq "$runs"); do measure "$@"; done | sort -n | awk '{ a[NR] = $0 } END { print a[int((NR + 1) / 2)] }'
}
row() { # name kwire-cmd... -- tshark-cmd...
  local name=$1; shift
  local k=() t=()
  while [ "$1" != "--" ]; do k+=("$1"); shift; done; shift
  t=("$@")
  read -r kw kc km < <(median "${k[@]}")
  read -r tw tc tm < <(measure "${t[@]}")
  awk -v n="$name" -v kw="$kw" -v kc="$kc" -v km="$km" -v tw="$tw" -v tc="$tc" -v tm="$tm" 'BEGIN {
    printf "%-30s kwire %7.3fs (cpu %6.2fs) %5.0f MB   tshark %7.2fs (cpu %7.2fs) %5.0f MB   kwire %5.1fx faster (cpu %5.1fx)\n",
      n, kw, kc, km/1024, tw, tc, tm/1024, tw/(kw>0?kw:0.001), tc/(kc>0?kc:0.01) }'
}
echo "== captures: listing on a $pcap_mb MB pcap, JSON on a $json_mb MB pcap (kwire: median of $runs runs; peak RSS)"
row "listing vs -T fields api_key" "$kwire" capture "$dir/mixed.pcap" --list -- tshark -r "$dir/mixed.pcap" -d tcp.port==9092,kafka -T fields -e kafka.api_key
row "JSON vs -T json" "$kwire" capture "$json_pcap" --json -- tshark -r "$json_pcap" -d tcp.port==9092,kafka -T json
produce=$dir/produce-40k.pcap
echo "== the 40,000-frame Produce v8 capture ($(($(stat -c %s "$produce") >> 20)) MB; kwire: median of $runs runs)"
row "listing vs -T fields api_key" "$kwire" capture "$produce" --list -- tshark -r "$produce" -d tcp.port==9092,kafka -T fields -e kafka.api_key
row "text tree vs -V" "$kwire" capture "$produce" -- tshark -r "$produce" -d tcp.port==9092,kafka -V
row "tree-json vs -T json" "$kwire" capture "$produce" --format tree-json -- tshark -r "$produce" -d tcp.port==9092,kafka -T json
row "JSON vs -T json" "$kwire" capture "$produce" --json -- tshark -r "$produce" -d tcp.port==9092,kafka -T json
row "filter ErrorCode != 0 vs -Y" "$kwire" capture "$produce" --list --filter 'ErrorCode != 0' -- tshark -r "$produce" -d tcp.port==9092,kafka -Y 'kafka.error != 0'
echo "== display filter on the $pcap_mb MB mixed pcap (peak RSS: flat against the pcap's size)"
row "filter ErrorCode != 0 vs -Y" "$kwire" capture "$dir/mixed.pcap" --list --filter 'ErrorCode != 0' -- tshark -r "$dir/mixed.pcap" -d tcp.port==9092,kafka -Y 'kafka.error != 0'
[ "${SKIP_CRITERION:-0}" = 1 ] && exit 0
echo "== decode (criterion, kafka-protocol typed decode as the reference)"
cargo bench --bench decode -q -- --warm-up-time 1 --measurement-time 3 2>/dev/null | awk '/^[a-z_0-9]+\// { name=$1 } /time:/ { print name, $0 }' | sed 's/ \+/ /g'
