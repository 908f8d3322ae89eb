#!/usr/bin/env bash
# TLS: decrypting and decoding a TLS 1.3 capture (TLS_AES_128_GCM_SHA256)
# against the same traffic in clear, by `examples/make_tls_bench` (the
# benchmark's mixed conversation of Produce, a 1 MB Fetch response and
# heartbeats, repeated on new connections). The difference between the two
# runs of a command is what decryption costs.
# Usage: scripts/bench-tls.sh [MB]   (default 100); RUNS=N runs each command N
# times (default 3) and reports the median.
set -euo pipefail
cd "$(dirname "$0")/.."
mb=${1:-100}
runs=${RUNS:-3}
dir=${BENCH_DIR:-/tmp/kwire-bench-tls}
target=${CARGO_TARGET_DIR:-target}
cargo build --release -q --bin kwire --example make_tls_bench
kwire=$target/release/kwire
"$target/release/examples/make_tls_bench" "$dir" "$mb"
measure() { # one run: prints "wall_s cpu_s peak_kb"
  local start=$EPOCHREALTIME
  /usr/bin/time -f "%U %S %M" -o "$dir/time.txt" "$@" > /dev/null 2>&1 || true
  local end=$EPOCHREALTIME
  awk -v s="$start" -v e="$end" '{ printf "%.3f %.2f %s\n", e - s, $1 + $2, $3 }' "$dir/time.txt"
}
median() { for _ in $(seq "$runs"); do measure "$@"; done | sort -n | awk '{ a[NR] = $0 } END { print a[int((NR + 1) / 2)] }'; }
row() { # name args...: the same command on the clear capture and on the TLS capture with its key log
  local name=$1; shift
  read -r cw cc cm < <(median "$kwire" "$1" "$dir/clear.pcap" "${@:2}")
  read -r tw tc tm < <(median "$kwire" "$1" "$dir/tls.pcap" "${@:2}" --tls-keylog "$dir/tls.keylog")
  awk -v n="$name" -v cw="$cw" -v cm="$cm" -v tw="$tw" -v tm="$tm" 'BEGIN {
    d = tw - cw
    printf "%-22s clear %7.3fs %5.0f MB   TLS %7.3fs %5.0f MB   decryption %+7.3fs = %5.1f%% of the clear run\n", n, cw, cm/1024, tw, tm/1024, d, 100*d/(cw>0?cw:0.001) }'
}
echo "== $(stat -c %s "$dir/tls.pcap" | awk '{printf "%.0f", $1/1048576}') MB TLS capture vs $(stat -c %s "$dir/clear.pcap" | awk '{printf "%.0f", $1/1048576}') MB in clear (median of $runs runs; peak RSS)"
row "capture --json" capture --json
row "capture (trees)" capture
row "stats" stats
row "capture --list" capture --list
read -r nw _ _ < <(median "$kwire" capture "$dir/tls.pcap" --list)
echo "without keys: capture --list on the TLS capture (records counted, nothing decrypted) ${nw}s"
