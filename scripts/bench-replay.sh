#!/usr/bin/env bash
# kwire replay against the same client traffic sent directly, in the same run
# (BENCHMARKS.md, "Replay"). A real client session is recorded once through
# kwire proxy --write-pcap: kafka-python produces MESSAGES small messages in
# many small Produce requests (one in flight, no linger, 512-byte batches), then
# a consumer group reads them back, at a fresh broker. Then, round by round, in turn:
#   direct: the same client session run again straight at a tansu broker
#           (a topic and group of its own each round), timed as a process;
#   replay: kwire replay --fast --map of the recording at a fresh tansu
#           (started before the clock starts), timed as a process.
# Each figure is exchanges per second: the recording's exchange count over
# the process's wall time. The ratio replay/direct is printed per round and
# as the median. Both include starting the process; the client's own idle
# waits (its consumer's last polls) count against it, which is the point:
# replay sends what the client sent without the client's thinking.
# Needs tansu and python3 with kafka-python (.ci/run installs them).
# Usage: scripts/bench-replay.sh [MESSAGES [ROUNDS]]
set -euo pipefail
cd "$(dirname "$0")/.."
messages=${1:-10000}
rounds=${2:-5}
tansu=${TANSU:-tansu}
kwire=${KWIRE:-target/release/kwire}
[ -n "${KWIRE:-}" ] || cargo build --release --quiet
work=$(mktemp -d)
source scripts/bench-lib.sh
pids=()
stop() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap stop EXIT
[ -z "${KEEP:-}" ] || trap 'cp "$work/session.pcapng" "$KEEP"; stop' EXIT
broker() { # PORT: a tansu broker in memory on it; its pid in $last
  local port=$1
  "$tansu" broker --listener-url "tcp://127.0.0.1:$port" --advertised-listener-url "tcp://127.0.0.1:$port" \
    --storage-engine "memory://tansu/" >>"$work/tansu-$port.log" 2>&1 &
  last=$!
  pids+=("$last")
  wait_port "$port"
}
recorded_port=$(free_port); broker "$recorded_port"
direct_port=$(free_port); broker "$direct_port"

python3 - "$messages" >"$work/messages.jsonl" <<'PY'
import json, sys
for i in range(int(sys.argv[1])):
    print(json.dumps({"key": f"k{i}".encode().hex(), "value": (f"message {i} " * 4).encode().hex()}))
PY
session() { # BOOTSTRAP TOPIC GROUP
  python3 scripts/e2e-clients/produce_consume.py "$1" "$2" "$3" "$work/messages.jsonl" "$work/out.jsonl" \
    --lib kafka-python --max-in-flight 1 --linger-ms 0 --batch-bytes 512 --stay 0
}

# The recording, through the proxy.
proxy_port=$(free_port)
"$kwire" proxy --listen "127.0.0.1:$proxy_port" --broker "127.0.0.1:$recorded_port" \
  --write-pcap "$work/session.pcapng" >/dev/null 2>"$work/proxy.err" &
proxy=$!
wait_port "$proxy_port"
session "127.0.0.1:$proxy_port" bench-replay bench-replay-group >/dev/null
kill -INT "$proxy"; wait "$proxy" || true
exchanges=$("$kwire" stats "$work/session.pcapng" --format json | python3 -c '
import json, sys
print(json.load(sys.stdin)["pairs"])')

now() { date +%s.%N; }
echo "$kwire (checkout $(git rev-parse --short HEAD 2>/dev/null || echo "?")), $("$tansu" --version), kafka-python $(python3 -c 'import kafka; print(kafka.__version__)'), $(nproc) cores"
echo "the session: $messages messages produced and consumed back by kafka-python, $exchanges exchanges recorded"
printf '%-6s %12s %12s %8s  %s\n' round "direct ex/s" "replay ex/s" ratio "replay verdicts"
ratios=()
for round in $(seq "$rounds"); do
  t0=$(now)
  session "127.0.0.1:$direct_port" "bench-direct-$round" "bench-direct-group-$round" >/dev/null
  # Each replay meets a fresh broker, as the recording did, so its verdicts say whether it was the same session.
  replay_port=$(free_port); broker "$replay_port"; replay_broker=$last
  t1=$(now)
  "$kwire" replay "$work/session.pcapng" --broker "127.0.0.1:$replay_port" --fast --map --format json >"$work/replay.jsonl" || true
  t2=$(now)
  kill "$replay_broker"; wait "$replay_broker" 2>/dev/null || true
  verdicts=$(python3 -c '
import collections, json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
c = collections.Counter(r["verdict"] for r in rows if "verdict" in r)
print(", ".join(f"{n} {v}" for v, n in sorted(c.items())))' "$work/replay.jsonl")
  line=$(python3 -c '
import sys
n, t0, t1, t2 = int(sys.argv[1]), *map(float, sys.argv[2:5])
d, r = n / (t1 - t0), n / (t2 - t1)
print(f"{d:.0f} {r:.0f} {r / d:.2f}")' "$exchanges" "$t0" "$t1" "$t2")
  read -r direct replay ratio <<<"$line"
  ratios+=("$ratio")
  printf '%-6s %12s %12s %8s  %s\n' "$round" "$direct" "$replay" "$ratio" "$verdicts"
done
python3 -c '
import statistics, sys
print(f"median ratio replay/direct: {statistics.median(map(float, sys.argv[1:])):.2f} (goal >= 1.00: replay keeps up with the client it replays)")' "${ratios[@]}"
