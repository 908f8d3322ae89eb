#!/usr/bin/env bash
# The explorer at capture scale (BENCHMARKS.md): on a capture made by
# make_bench_inputs (the 1 GB mixed pcap by default), in-process timings
# (examples/explorer_capture: first list drawn, index complete, key to
# redraw while indexing, paging through every frame, peak memory), then the
# real command in tmux: from launch to the first list line on the screen,
# and the process's peak resident memory once the index is complete.
# Usage: scripts/bench-explorer.sh [PCAP_MB]    (default 1024)
set -euo pipefail
cd "$(dirname "$0")/.."
mb=${1:-1024}
dir=${BENCH_DIR:-/tmp/kwire-bench-explorer}
target=${CARGO_TARGET_DIR:-target}
cargo build --release -q --bin kwire --example make_bench_inputs --example explorer_capture
"$target/release/examples/make_bench_inputs" "$dir" "$mb" 2>/dev/null
pcap=$dir/mixed.pcap
echo "== in process (ratatui TestBackend, 200x60)"
"$target/release/examples/explorer_capture" "$pcap"
command -v tmux >/dev/null || { echo "tmux is not installed: skipping the terminal measurement"; exit 0; }
echo "== kwire capture FILE --tui in tmux (200x60)"
sock=kwire-bench-$$
t() { tmux -L "$sock" -f /dev/null "$@"; }
trap 't kill-server 2>/dev/null || true' EXIT
start=$EPOCHREALTIME
t new-session -d -s b -x 200 -y 60 "$(cd "$target/release" && pwd)/kwire capture $pcap --tui"
until t capture-pane -p -t b 2>/dev/null | grep -q '^    0 '; do sleep 0.005; done
first=$EPOCHREALTIME
pid=$(t list-panes -t b -F '#{pane_pid}')
until ! t capture-pane -p -t b | grep -q 'indexing'; do sleep 0.05; done
done_at=$EPOCHREALTIME
for _ in $(seq 40); do t send-keys -t b PageDown; done
sleep 1
hwm=$(awk '/VmHWM/ { print $2 }' "/proc/$pid/status")
awk -v s="$start" -v f="$first" -v d="$done_at" -v m="$hwm" 'BEGIN {
  printf "launch to first list line on screen: %.3f s\nlaunch to index complete: %.3f s\npeak resident memory (after 40 pages): %.0f MB\n", f - s, d - s, m / 1024 }'
t send-keys -t b q
