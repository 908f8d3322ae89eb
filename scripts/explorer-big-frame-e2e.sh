#!/bin/sh
# The explorer on one frame too big to hold as a whole tree (a Fetch v4
# response whose records field is over a megabyte), in a real terminal
# (tmux, 200x50), under /usr/bin/time: it opens with the records field as a
# stub per batch, search reaches a batch by name, Enter in the tree opens
# that batch into its fields, q quits with status 0. Prints the explorer's
# peak resident set as `peak_kib=N` for the caller to judge.
#
# Usage: scripts/explorer-big-frame-e2e.sh FILE BATCHES
#   FILE: the response frame's bytes; BATCHES: how many batches it holds.
#   KWIRE_BIN=path/to/kwire skips the build.
set -eu

if ! command -v tmux >/dev/null 2>&1; then
    echo "SKIP: tmux is not installed (apt-get install -y tmux)"
    exit 0
fi
FILE=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
BATCHES=$2
LAST=$((BATCHES - 1))

cd "$(dirname "$0")/.."
SOCKET_NAME=kwire-big-frame-e2e
. scripts/tmux-e2e-lib.sh

t new-session -d -s e2e -x 200 -y 50 sh
run "/usr/bin/time -f %M -o '$WORK/peak' '$KWIRE_BIN' decode --binary '$FILE' --response --api Fetch --version 4 --tui" big
wait_for "frame 1/1 (input)" 1200
echo "ok: the explorer opened the frame"

# The last batch by name: search (which walks every stub in turn) selects
# its stub in the tree.
t send-keys -t e2e / "RecordBatch[$LAST]" Enter
wait_for "match 1 of 1 for RecordBatch[$LAST]" 100
# The tree takes the keys (Tab from the grid), Enter opens the stub, j
# steps to its first field, G to the last line: its last record's.
t send-keys -t e2e Tab Enter
wait_for "RecordBatch[$LAST] RecordBatch v2" 100
t send-keys -t e2e j
wait_for "path     FetchResponse.Responses[0].Partitions[0].Records[$LAST].baseOffset" 100
t send-keys -t e2e G
wait_for "path     FetchResponse.Responses[0].Partitions[0].Records[$LAST][99]." 100
echo "ok: Enter opened RecordBatch[$LAST] into its fields and 100 records"

t send-keys -t e2e q
wait_for "big exited 0" 100
echo "peak_kib=$(cat "$WORK/peak")"
echo "PASS: explorer on a big frame end-to-end"
