#!/bin/sh
# End-to-end check of `kwire capture FILE --tui` in a real terminal (tmux,
# 200x50) on a real capture (kafka-python against tansu, with gzip batches):
# the frame list is `capture --list`'s lines (responses with their latency), as
# many as a third of the terminal; search (text and hex bytes) goes across
# frames and into decompressed data, which the grid then shows as its own buffer; the filter
# speaks the command line's words; p jumps between a request and its
# response, } along a connection, t toggles relative times; a capture on
# standard input streams into the list; `kwire tui` opens a capture (a
# file or piped in) the same way; q quits with status 0, at once
# while standard input stays open and idle; at 200x50 and 80x24, s sorts the
# list, + and - resize it down to hidden, < > scroll the tree, w hides the
# plumbing and z zooms.
#
# Usage: scripts/explorer-capture-e2e.sh     (KWIRE_BIN=path/to/kwire skips the build)
set -eu

if ! command -v tmux >/dev/null 2>&1; then
    echo "SKIP: tmux is not installed (apt-get install -y tmux)"
    exit 0
fi

cd "$(dirname "$0")/.."
SOCKET_NAME=kwire-capture-e2e
. scripts/tmux-e2e-lib.sh
CAPTURE=samples/captures/kafka-python.pcap

# The explorer lists frames and, among them, each connection's SYN, FIN and RST, as --list does.
"$KWIRE_BIN" capture "$CAPTURE" --list > "$WORK/list.txt"
t new-session -d -s e2e -x 200 -y 50 sh
run "'$KWIRE_BIN' capture $CAPTURE --tui" kwire
wait_for " frames (58) " 100

# The list: each line exactly as --list prints it (a response's with its
# latency between size and summary, in both).
rows=0
for n in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14; do
    line=$(sed -n "$((n + 1))p" "$WORK/list.txt")
    pane | grep -qF -- "$line" || fail "line $n is not: $line"
    case "$line" in
        *" ← "*" ms ok") responses=yes ;;
    esac
    rows=$((rows + 1))
done
[ "${responses:-}" = yes ] || fail "no response line with its latency among the first lines"
echo "ok: the first $rows lines of the frame list are --list's (connection rows included, responses with their latency), a third of the terminal high"

# Search across frames, into decompressed data: the grid shows that buffer.
# Matches come in the frame's order: the batch's attributes (compression=gzip),
# its compressed records, then the decompressed records' values.
t send-keys -t e2e / gzip Enter
wait_for "match 1 of 7 in frame #28 for gzip"
pane | grep -qF "attributes int16 = 1 (compression=gzip" || fail "the first match is not the batch's attributes"
t send-keys -t e2e n n
wait_for "match 3 of 7 for gzip"
wait_for "hex · decompressed from records · 175 B · offsets d:"
pane | grep -qF "0000  44 00 00 00 04 6b 30 20  70 61 79 6d 65 6e 74 20  D....k0 payment" || fail "the grid does not show the decompressed records"
pane | grep -qF 'value    0x7061796d656e7420302028677a697029 (text "payment 0 (gzip)")' || fail "the details do not read the decompressed bytes"
echo "ok: / found gzip in frame #28's decompressed records; the grid and details show that data"
t send-keys -t e2e n
wait_for "match 4 of 7"
# A key right after Esc reads as Alt and that key: a person pauses.
t send-keys -t e2e Escape
sleep 0.3

# Hex bytes are looked for in decompressed data too: "payment 1 (gz" is only there.
t send-keys -t e2e / "70 61 79 6d 65 6e 74 20 31 20 28 67 7a" Enter
wait_for "match 1 of 1 for 70 61 79 6d 65 6e 74 20 31 20 28 67 7a"
pane | grep -qF "hex · decompressed from records · 175 B · offsets d:" || fail "a hex match in decompressed data does not show that buffer"
pane | grep -qF "0030  6e 74 20 31 20 28 67 7a  69 70 29 02 0a 74 72 61  nt 1 (gzip)..tra" || fail "the grid does not show the matched decompressed bytes"
pane | grep -qF 'value    0x7061796d656e7420312028677a697029 (text "payment 1 (gzip)")' || fail "the details are not of the record value holding the match"
echo "ok: / with hex bytes found them inside frame #28's decompressed records"
t send-keys -t e2e Escape
sleep 0.3

# The frame's records as a table; Enter selects one in the tree and the grid.
t send-keys -t e2e r
wait_for " records (5) of frame #28 · Enter selects it in the tree"
# A produced record's offset is the broker's, from the Produce response (5 + 2).
wait_for 'payments/0                  7  2026-12-01T16:24:01.172Z  "k2" · "payment 2 (gzip)" · "trace"="abc"'
t send-keys -t e2e j j Enter
wait_for "frame #28 of 58 (conn 5 →) · byte d:0x0046"
pane | grep -qF "Record[2] Record [d:0x0046, 35B]" || fail "Enter did not select Record[2] (its offsets d:, in the decompressed data)"
echo "ok: r lists frame #28's 5 records (topic, partition, the broker's offset, time, key, value, headers); Enter selects Record[2] at d:0x0046"

# A collapsed record says what it holds (the tree has Record[2] selected).
t send-keys -t e2e Left
wait_for '⟨offset 2 · key "k2" · value "payment 2 (gzip)" · 35 B⟩'
echo "ok: a collapsed record shows its offset, key, value and size"
t send-keys -t e2e Escape Tab

# The records of every frame listed: Enter goes to the frame and the record.
t send-keys -t e2e R
wait_for " records (20) of 3 frames "
wait_for '    #52 payments/0                  6  2026-12-01T16:24:01.172Z  "k1" · "payment 1 (gzip)"'
t send-keys -t e2e G Enter
wait_for "frame #52 of 58 (conn 7 ←)"
echo "ok: R lists the 20 records of the 3 frames that carry them; Enter goes to frame #52's last record"

t send-keys -t e2e Tab

# The filter, in the command line's words.
t send-keys -t e2e f "api=Produce" Enter
wait_for " frames (4 of 58, filter api=Produce) "
wait_for "filter api=Produce: 4 of 58 frames"
# The frames listed, exported as a pcap, read back by `kwire capture`.
t send-keys -t e2e x "pcap $WORK/produce.pcap" Enter
wait_for "wrote 4 frames of 2 connections"
"$KWIRE_BIN" capture "$WORK/produce.pcap" --list > "$WORK/produce.txt" || fail "the exported pcap does not read back"
[ "$(grep -c ' Produce v9 corr=3 ' "$WORK/produce.txt")" = 4 ] || fail "the exported pcap does not hold the 4 Produce frames: $(cat "$WORK/produce.txt")"
t send-keys -t e2e f C-u Enter
wait_for "no filter: 58 frames"
echo "ok: f api=Produce shows the 4 Produce frames, x pcap writes them (kwire capture reads them back); an empty filter shows all"

# Request to response and back; along the connection; relative times.
t send-keys -t e2e g
wait_for "frame #0 of 58"
t send-keys -t e2e p
wait_for "frame #1 of 58"
t send-keys -t e2e p
wait_for "frame #0 of 58"
t send-keys -t e2e "}" "}"
wait_for "frame #2 of 58"
t send-keys -t e2e t
wait_for "    0      +0.000000s conn 0 → ApiVersions v4 corr=1 47B"
echo "ok: p pairs frames #0 and #1, } moves along conn 0, t shows times since the first frame"

# The frame as JSON and its root's bytes as hex: kwire reads both back.
t send-keys -t e2e "[" "[" Tab Tab g
t send-keys -t e2e x "json $WORK/f0.json" Enter
wait_for "wrote the frame as JSON to"
t send-keys -t e2e x "hex $WORK/f0.hex" Enter
wait_for "wrote 47 bytes as hex to"
"$KWIRE_BIN" decode "$WORK/f0.hex" | grep -qF "ApiVersionsRequest" || fail "the exported hex does not decode"
grep -qF '"ClientSoftwareName": "kafka-python"' "$WORK/f0.json" || fail "the exported JSON lacks the body: $(cat "$WORK/f0.json")"
echo "ok: x json and x hex write frame #0 (47 bytes), and kwire decode reads the hex back"

t send-keys -t e2e q
wait_for "kwire exited 0"

# From standard input: the capture streams into the list.
run "cat $CAPTURE | '$KWIRE_BIN' capture - --tui" piped
wait_for " frames (58) " 100
wait_for "$(sed -n 1p "$WORK/list.txt")"
t send-keys -t e2e q
wait_for "piped exited 0"
echo "ok: a capture on standard input fills the list"

# `kwire tui` opens a capture file, or one piped in, as `capture --tui` does
# (it used to read the capture's bytes as one Kafka frame).
run "'$KWIRE_BIN' tui $CAPTURE" tui-file
wait_for " frames (58) " 100
wait_for "$(sed -n 1p "$WORK/list.txt")"
t send-keys -t e2e q
wait_for "tui-file exited 0"
run "cat $CAPTURE | '$KWIRE_BIN' tui --api Produce" tui-piped
wait_for "$(grep -m1 ' Produce' "$WORK/list.txt")" 100
t send-keys -t e2e q
wait_for "tui-piped exited 0"
echo "ok: kwire tui opens a capture file and a piped capture in the capture explorer"

# `kwire tui` opens a log segment as one frame of its batches (it used to
# refuse it), the first batch open over the grid.
run "'$KWIRE_BIN' tui samples/00000000000000000000.log" tui-segment
wait_for "LogSegment records [0x0000, 1279B]" 100
wait_for "RecordBatch[0] RecordBatch v2 [0x0000, 433B]"
wait_for "crc uint32 = 1935539063 (0x735dfb77, CRC-32C ok)"
t send-keys -t e2e q
wait_for "tui-segment exited 0"
echo "ok: kwire tui opens a log segment's batches"

# q quits at once while standard input stays open and idle.
t send-keys -t e2e "clear; sleep 60 | ('$KWIRE_BIN' capture - --tui; echo \"idle exited \$?\")" Enter
wait_for "reading the capture…" 50
t send-keys -t e2e q
wait_for "idle exited 0" 20
# The shell still waits for sleep, which Ctrl-C ends.
t send-keys -t e2e C-c
echo "ok: q quits within 2 s while standard input is idle"

# s sorts the list (latency, size, API, then capture order again); + and -
# move the split under it, down to hidden; > scrolls the tree sideways; at
# 200x50 and at 80x24.
SLOWEST=$("$KWIRE_BIN" stats "$CAPTURE" --format json | python3 -c "
import json, sys
rows = json.load(sys.stdin)['by_api']
print(max(rows, key=lambda r: r['latency_us']['max'] or 0)['api_name'])")
for size in "200 50" "80 24"; do
    t resize-window -t e2e -x "${size% *}" -y "${size#* }"
    run "'$KWIRE_BIN' capture $CAPTURE --tui" "sorted-${size% *}"
    wait_for " frames (58) " 100
    t send-keys -t e2e s
    wait_for "sorted by latency (s)"
    # The list's first line is the slowest exchange's.
    pane | sed -n 2p | grep -qF " $SLOWEST v" || fail "$size: the first line is not a $SLOWEST frame: $(pane | sed -n 2p)"
    t send-keys -t e2e s
    wait_for "sorted by size (s)"
    t send-keys -t e2e s s
    wait_for "frames sorted by time"
    pane | grep -q "^conn 0 = 127.0.0.1:" || fail "$size: back in capture order without the connection's name line"
    pane | grep -qF "▾   RequestHeader v2" || fail "$size: the tree does not show the request header"
    t send-keys -t e2e ">"
    sleep 0.3
    pane | grep -qF "▾   RequestHeader v2" && fail "$size: > did not scroll the tree sideways"
    pane | grep -qF "Header v2 [0x0004, 22B]" || fail "$size: > scrolled the header line away"
    t send-keys -t e2e "<"
    wait_for "▾   RequestHeader v2"
    # w hides the wire's plumbing in the tree; z zooms the focused pane (the list) and back.
    # (At 80x24 the tree's few lines hold no tagged_fields line to watch.)
    big=$([ "$size" = "200 50" ] && echo yes || echo no)
    [ "$big" = no ] || pane | grep -qF "tagged_fields uvarint = 0" || fail "$size: no empty tagged_fields before w"
    t send-keys -t e2e w
    wait_for "the wire's plumbing is hidden"
    [ "$big" = no ] || ! pane | grep -qF "tagged_fields uvarint = 0" || fail "$size: w did not hide the empty tagged_fields"
    t send-keys -t e2e w
    wait_for "every node of the wire is shown"
    t send-keys -t e2e z
    sleep 0.3
    pane | grep -qF " hex " && fail "$size: z left the grid beside the zoomed list"
    pane | grep -qF " frames (58) " || fail "$size: z did not zoom the list"
    t send-keys -t e2e z
    wait_for " hex "
    # Last, as it leaves the list at its tallest.
    for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do t send-keys -t e2e -- -; done
    sleep 0.3
    pane | grep -qF " frames (58) " && fail "$size: - did not hide the list"
    for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do t send-keys -t e2e +; done
    wait_for " frames (58) "
    pane | grep -qF " hex " || fail "$size: + left no room for the grid"
    t send-keys -t e2e q
    wait_for "sorted-${size% *} exited 0"
    echo "ok: at ${size% *}x${size#* } s sorts the list by latency ($SLOWEST first), size, API and back; - hides it, + brings it back; > and < scroll the tree; w hides the plumbing; z zooms the list and back"
done
t resize-window -t e2e -x 200 -y 50

# ! lists what went wrong (what kwire check finds: the frames' own findings
# and the conversation rules'), worst first; Enter goes to the selected
# group's frames one after another.
run "'$KWIRE_BIN' capture samples/captures/diagnosis/old-librdkafka.pcap --tui" diag
wait_for " frames (156) " 100
t send-keys -t e2e "!"
wait_for " findings (3) · Enter goes to the next frame of one"
pane | grep -qE "error +error-not-in-version +JoinGroup v0 +1× \"old-librdkafka\"" || fail "the first group is not the JoinGroup v0 error"
pane | grep -qE "error +truncated +ListOffsets v0 +60× \"old-librdkafka\"" || fail "the frames' own errors are not listed (60 truncated ListOffsets v0 responses)"
wait_for "answered MEMBER_ID_REQUIRED (79) to JoinGroup v0"
t send-keys -t e2e Down
wait_for "OldStyleOffsets length: needs 4 bytes, 0 remain"
t send-keys -t e2e Down
wait_for "answered with a response that does not decode 60 times in a row"
t send-keys -t e2e Enter
wait_for "frame #30 · ! returns to the findings"
t send-keys -t e2e "!"
t send-keys -t e2e Enter
wait_for "frame #31 · ! returns to the findings"
t send-keys -t e2e q
wait_for "diag exited 0"
echo "ok: ! lists the findings and Enter walks a group's frames"
echo "PASS: capture explorer end-to-end"
