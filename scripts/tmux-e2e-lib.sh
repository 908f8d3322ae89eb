# Shared by the tmux end-to-end scripts (scripts/tui-e2e.sh,
# scripts/explorer-capture-e2e.sh): sourced after `cd` to the repository.
# Sets KWIRE_BIN (built when unset), a private tmux server on socket
# "$SOCKET_NAME-$$" whose session "e2e" the helpers address, and WORK, a
# temporary folder; both go away when the script exits.

if [ -z "${KWIRE_BIN:-}" ]; then
    cargo build --quiet
    KWIRE_BIN="${CARGO_TARGET_DIR:-target}/debug/kwire"
fi
KWIRE_BIN=$(cd "$(dirname "$KWIRE_BIN")" && pwd)/$(basename "$KWIRE_BIN")

# A private tmux server, so that no user configuration or session interferes.
unset TMUX
SOCKET="$SOCKET_NAME-$$"
WORK=$(mktemp -d)
t() { tmux -L "$SOCKET" -f /dev/null "$@"; }
trap 't kill-server 2>/dev/null || true; rm -rf "$WORK"' EXIT INT TERM

pane() { t capture-pane -p -t e2e; }

fail() {
    echo "FAIL: $*"
    echo "--- pane ---"
    pane || true
    exit 1
}

# Poll the pane until it shows the fixed string $1 (up to $2 tenths of a second).
wait_for() {
    i=0
    while [ "$i" -lt "${2:-50}" ]; do
        if pane | grep -qF -- "$1"; then
            return 0
        fi
        sleep 0.1
        i=$((i + 1))
    done
    fail "timed out waiting for: $1"
}

# Run $1 in the pane's shell, then print "<$2> exited <status>".
run() { t send-keys -t e2e "clear; $1; echo \"$2 exited \$?\"" Enter; }
