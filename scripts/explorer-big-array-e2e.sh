#!/bin/sh
# The explorer on one frame whose array is too big to hold as a whole tree
# (a Metadata v12 response of one topic with many partitions), in a real
# terminal (tmux, 200x50), under /usr/bin/time: it opens with the array as
# a stub per element, each collapsed row summed up; search reaches the last
# element by name, Enter in the tree opens it into its fields, q quits with
# status 0. Prints the explorer's peak resident set as `peak_kib=N` for the
# caller to judge.
#
# Usage: scripts/explorer-big-array-e2e.sh FILE PARTITIONS
#   FILE: the response frame's bytes; PARTITIONS: how many its one topic has.
#   KWIRE_BIN=path/to/kwire skips the build.
set -eu

if ! command -v tmux >/dev/null 2>&1; then
    echo "SKIP: tmux is not installed (apt-get install -y tmux)"
    exit 0
fi
FILE=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
LAST=$(($2 - 1))

cd "$(dirname "$0")/.."
SOCKET_NAME=kwire-big-array-e2e
. scripts/tmux-e2e-lib.sh

t new-session -d -s e2e -x 200 -y 50 sh
run "/usr/bin/time -f %M -o '$WORK/peak' '$KWIRE_BIN' decode --binary '$FILE' --response --api Metadata --version 12 --tui" big
wait_for "frame 1/1 (input)" 1200
echo "ok: the explorer opened the frame"

# The last partition by name: search (which walks every stub in turn)
# selects its stub in the tree, whose row keeps the element's first fields.
t send-keys -t e2e / "MetadataResponsePartition[$LAST]" Enter
wait_for "match 1 of 1 for MetadataResponsePartition[$LAST]" 300
pane | grep -F "MetadataResponsePartition[$LAST] MetadataResponsePartition = struct" |
    grep -qF "⟨ErrorCode=0, Partition" || fail "the last element's stub is not summed up"
echo "ok: search reached the last element's stub, summed up"
# The tree takes the keys (Tab from the grid), Enter opens the stub, j
# steps to its first field.
t send-keys -t e2e Tab Enter
wait_for "PartitionIndex int32 = $LAST " 100
t send-keys -t e2e j
wait_for "path     MetadataResponse.Topics[0].Partitions[$LAST].ErrorCode" 100
echo "ok: Enter opened MetadataResponsePartition[$LAST] into its fields"

t send-keys -t e2e q
wait_for "big exited 0" 100
echo "peak_kib=$(cat "$WORK/peak")"
echo "PASS: explorer on a big array end-to-end"
