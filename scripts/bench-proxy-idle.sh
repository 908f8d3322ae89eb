#!/usr/bin/env bash
# What idle clients cost kwire proxy (BENCHMARKS.md, "Proxy"): a tansu 0.6.0
# broker in memory, kwire proxy in front of it, and N clients that connect
# through the proxy and send nothing; once every one has reached the broker,
# the proxy's threads, open descriptors and resident memory (from /proc).
# Needs tansu and python3 (.ci/run installs them).
# Usage: scripts/bench-proxy-idle.sh [N]     (KWIRE=path/to/kwire skips the build)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-2000}
tansu=${TANSU:-tansu}
kwire=${KWIRE:-target/release/kwire}
[ -n "${KWIRE:-}" ] || cargo build --release --quiet
ulimit -n "$(ulimit -Hn)"
dir=$(mktemp -d)
source scripts/bench-lib.sh
start_broker_and_proxy "$dir" --max-connections $((n + 10))
python3 - "$proxy_port" "$n" "$proxy" <<'PY'
import os, socket, sys, time
port, n, pid = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
def footprint():
    status = dict(l.split(":", 1) for l in open(f"/proc/{pid}/status") if ":" in l)
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    return int(status["Threads"]), fds, int(status["VmRSS"].split()[0])
threads0, fds0, rss0 = footprint()
conns = [socket.create_connection(("127.0.0.1", port)) for _ in range(n)]
deadline = time.time() + 60
while footprint()[1] < fds0 + 2 * n and time.time() < deadline:
    time.sleep(0.1)
threads, fds, rss = footprint()
print(f"{n} idle connections: {threads} threads (were {threads0}), "
      f"{fds} descriptors (were {fds0}), {rss / 1024:.1f} MB resident (was {rss0 / 1024:.1f} MB)")
PY
