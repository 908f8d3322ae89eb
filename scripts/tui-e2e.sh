#!/bin/sh
# End-to-end check of `kwire tui` in a real terminal (tmux, 100x30): jump to
# TopicId, read the details pane, paste a second message with bracketed paste
# and an od dump whose lines the terminal ends with CR, see the frame list,
# hide the wire's plumbing (w), zoom the tree (z), collapse it (c), quit, and
# find the terminal restored; at 80x24 the panes and the help still fit; a
# note on standard error wraps to the terminal; then the same
# after Ctrl-C and, when KWIRE_PANIC_CMD names a command that panics inside
# the explorer's terminal mode (tests/tui_e2e.rs passes one), after a panic.
#
# Usage: scripts/tui-e2e.sh     (KWIRE_BIN=path/to/kwire skips the build)
set -eu

if ! command -v tmux >/dev/null 2>&1; then
    echo "SKIP: tmux is not installed (apt-get install -y tmux)"
    exit 0
fi

cd "$(dirname "$0")/.."
SOCKET_NAME=kwire-e2e
. scripts/tmux-e2e-lib.sh
SAMPLE=samples/write-share-group-state-v0-request.hex

# tmux's view of the pane's terminal: alternate screen on, mouse reporting on.
modes() { t display-message -p -t e2e '#{alternate_on} #{mouse_any_flag}'; }

# The terminal is back to normal: main screen, no mouse reporting, and the
# line discipline cooked. In a raw terminal Enter would not even end the
# line (no icrnl, no icanon), so the stty command below would never run.
check_restored() {
    [ "$(modes)" = "0 0" ] || fail "$1: alternate screen or mouse reporting left on: $(modes)"
    rm -f "$WORK/stty"
    t send-keys -t e2e "stty -a > '$WORK/stty.tmp' && mv '$WORK/stty.tmp' '$WORK/stty'" Enter
    i=0
    while [ ! -s "$WORK/stty" ]; do
        [ "$i" -lt 50 ] || fail "$1: the shell did not run stty afterwards"
        sleep 0.1
        i=$((i + 1))
    done
    on=$(tr ' ;' '\n\n' < "$WORK/stty" | grep -xE -- '-?(icanon|echo|isig|icrnl|opost)' | tr '\n' ' ')
    for mode in icanon echo isig icrnl opost; do
        echo " $on" | grep -qF -- " $mode " || fail "$1: terminal mode $mode is off: $on"
    done
    echo "ok: terminal restored after $1 ($on)"
}

# A plain sh: unlike an interactive bash it does not reset the terminal
# itself, so stty afterwards shows what kwire left behind.
t new-session -d -s e2e -x 100 -y 30 "env PS1='$ ' sh"

run "'$KWIRE_BIN' tui $SAMPLE" kwire
wait_for " hex · 78 B " 100
[ "$(modes)" = "1 1" ] || fail "explorer not in the alternate screen with mouse reporting: $(modes)"

# Jump to 0x11, the first byte of TopicId.
t send-keys -t e2e ":"
t send-keys -t e2e -l "0x11"
t send-keys -t e2e Enter
wait_for "offset 0x0011 (17)  length 16"
pane | grep -qF "path     WriteShareGroupStateRequest.Topics[0].TopicId" || fail "details do not name TopicId"
pane | grep -qF "TopicId uuid = 00000000-0000-0000-0000-000000000000 [0x0011, 16B]" || fail "tree does not show TopicId"
echo "ok: details show TopicId at offset 0x0011, length 16"

# Paste a second message the way a terminal does (bracketed paste).
t set-buffer -b msg -- "$(cat samples/delete-share-group-state-v0-request.hex)"
t paste-buffer -p -b msg -t e2e
wait_for " frames (2) "
wait_for "#2  paste 1 +0x0000  DeleteShareGroupStateRequest message v0  41 B"
pane | grep -qF "0000  00 00 00 25 00 56" || fail "grid does not show the pasted frame"
echo "ok: the pasted message is frame #2 in the frame list"

# A dump with offsets (od -A x -t x1z of a 278-byte Produce request): tmux
# sends CR between pasted lines, as terminals do; the frame is read whole.
python3 -c "import sys; sys.stdout.buffer.write(bytes.fromhex(open('samples/produce-v9-request.hex').read()))" > "$WORK/produce.bin"
od -A x -t x1z "$WORK/produce.bin" > "$WORK/produce.od"
t set-buffer -b od -- "$(cat "$WORK/produce.od")"
t paste-buffer -p -b od -t e2e
wait_for " frames (3) "
wait_for "#3  paste 2 +0x0000  ProduceRequest message v9  278 B"
echo "ok: an od dump pasted with CR line breaks is frame #3, 278 bytes whole"

# The tree: w hides lengths, counts and empty tagged_fields; z zooms it; >
# scrolls it sideways; c collapses it to header and body.
t send-keys -t e2e "[" "["
wait_for "0000  00 00 00 4a"
t send-keys -t e2e Tab
t send-keys -t e2e z
sleep 0.3
pane | grep -qF " details " && fail "z did not zoom the tree"
pane | grep -qF "0000  00 00 00 4a" && fail "z left the grid on screen"
pane | grep -qF "tagged_fields uvarint = 0" || fail "the zoomed tree does not show the empty tagged_fields before w"
t send-keys -t e2e w
wait_for "the wire's plumbing is hidden"
pane | grep -qF "tagged_fields uvarint = 0" && fail "w did not hide the empty tagged_fields"
t send-keys -t e2e z w
wait_for " details "
wait_for "every node of the wire is shown"
t send-keys -t e2e c
wait_for "▸   RequestHeader v2"
echo "ok: w hides the plumbing, z zooms the tree and back, c collapses to header and body"

t send-keys -t e2e q
wait_for "kwire exited 0"
check_restored q

# At 80x24 the explorer stays usable: the grid, the tree and the keys' help.
t resize-window -t e2e -x 80 -y 24
run "'$KWIRE_BIN' tui $SAMPLE" small
wait_for " hex · 78 B " 100
pane | grep -qF " tree " || fail "no tree at 80x24"
t send-keys -t e2e "?"
wait_for "q Ctrl-C"
t send-keys -t e2e Escape
sleep 0.3
t send-keys -t e2e q
wait_for "small exited 0"
t resize-window -t e2e -x 100 -y 30
echo "ok: at 80x24 the grid, tree and every key of the help fit"

# A side note on standard error wraps at words to the terminal, its
# following lines under its text; piped, it would stay one line.
t send-keys -t e2e "clear" Enter
run "'$KWIRE_BIN' check samples/captures/tls/tls13-aes128gcm.pcap" tls-check
# It exits 2: what it found are notes of what it could not read.
wait_for "tls-check exited 2"
pane | grep -qxF "kwire: 6 TLS connections were not decrypted, so not decoded (6 for want of keys: give the session" ||
    fail "the TLS note's first line is not wrapped at the last word that fits 100 columns"
pane | grep -qxF "       keys with --tls-keylog FILE (an SSLKEYLOGFILE), or a pcapng with a Decryption Secrets Block" ||
    fail "the TLS note's second line is not under its text"
echo "ok: a note on standard error wraps at words to 100 columns"

# A filter's error: the expression and the caret under it are not wrapped,
# so the terminal cuts both at 100 columns and the caret stays under `<`.
long='api == Produce and client_id matches "^console-producer-of-the-orders-service" and latency > 100ms and version >< 4'
run "'$KWIRE_BIN' capture samples/captures/kcat.pcap --list -Y '$long'" bad-filter
# The status, not just "exited": the typed command line shows `exited $?`
# until its `clear` runs, and on a slow machine that matched too early.
wait_for "bad-filter exited 2"
caret=$(pane | grep -n '\^' | tail -1)
[ -n "$caret" ] || fail "no caret under the filter's error"
row=${caret%%:*}
col=$(printf '%s' "${caret#*:}" | awk '{ print index($0, "^") }')
above=$(pane | sed -n "$((row - 2))p" | cut -c"$col")
[ "$above" = "<" ] || fail "the caret (row $row, column $col) is not under the error: '$above'"
echo "ok: a long filter's caret stays under its error at 100 columns"

# Ctrl-C arrives as a key in raw mode: it quits the same way.
run "'$KWIRE_BIN' decode --tui $SAMPLE" kwire-decode
wait_for " hex · 78 B " 100
t send-keys -t e2e C-c
wait_for "kwire-decode exited 0"
check_restored Ctrl-C

if [ -n "${KWIRE_PANIC_CMD:-}" ]; then
    run "$KWIRE_PANIC_CMD" panicker
    # With its status: the typed command line itself holds "panicker exited"
    # until the shell clears the pane, and a bare match there raced the panic.
    # A test binary that panics exits 101.
    wait_for "panicker exited 101" 100
    # The hook restores before the message is printed, so it is on the main
    # screen; a long backtrace (RUST_BACKTRACE=full) scrolls it into the
    # pane's history, which is searched too.
    t capture-pane -p -S - -t e2e | grep -qF "deliberate panic" ||
        fail "the panic message was lost in the alternate screen"
    check_restored panic
else
    echo "skip: panic check (set KWIRE_PANIC_CMD; tests/tui_e2e.rs does)"
fi
echo "PASS: tui end-to-end"
