#!/usr/bin/env bash
# The explorer on a capture of many small frames (BENCHMARKS.md, "Explorer
# rows"): 875,000 Heartbeat exchanges, 1.75 million frames, opened with
# `kwire capture FILE --tui` in tmux; prints the process's peak and resident
# memory once its index is complete, and how long the index took.
# Usage: scripts/bench-explorer-rows.sh [EXCHANGES]   (default 875000)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-875000}
dir=${BENCH_DIR:-/tmp/kwire-bench-rows}
target=${CARGO_TARGET_DIR:-target}
cargo build --release -q --bin kwire
mkdir -p "$dir"
pcap=$dir/heartbeats-$n.pcap
[ -f "$pcap" ] || python3 scripts/make-heartbeats-pcap.py "$pcap" "$n"
kwire=$(cd "$target/release" && pwd)/kwire
sock=kwire-rows-$$
t() { tmux -L "$sock" -f /dev/null "$@"; }
trap 't kill-server 2>/dev/null || true' EXIT
start=$EPOCHREALTIME
t new-session -d -s b -x 200 -y 60 "$kwire capture $pcap --tui"
sleep 0.5
pid=$(t list-panes -t b -F '#{pane_pid}')
until ! t capture-pane -p -t b | grep -q 'indexing'; do sleep 0.1; done
end=$EPOCHREALTIME
sleep 0.5
grep -E "VmHWM|VmRSS" "/proc/$pid/status" | tr -s ' \t\n' ' '
awk -v a="$start" -v b="$end" 'BEGIN { printf "indexed in %.1f s\n", b - a }'
