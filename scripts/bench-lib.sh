# Shared by the bench scripts: `source scripts/bench-lib.sh` after setting
# $dir (a scratch folder) and $runs (how many runs a median takes).
measure() { # one run of "$@": "wall_s cpu_s peak_kb"
  local start=$EPOCHREALTIME
  /usr/bin/time -f "%U %S %M" -o "$dir/time.txt" "$@" > /dev/null 2>&1 || true
  local end=$EPOCHREALTIME
  awk -v s="$start" -v e="$end" '{ printf "%.3f %.2f %s\n", e - s, $1 + $2, $3 }' "$dir/time.txt"
}
# The run of median wall time among $runs runs.
median() { for _ in $(seq "$runs"); do measure "$@"; done | sort -n | awk '{ a[NR] = $0 } END { print a[int((NR + 1) / 2)] }'; }
# For the scripts that run brokers and proxies: a free loopback port, and
# waiting (at most 10 s) until something listens on one.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# A tansu broker in memory on a free port, and kwire proxy in front of it
# with the arguments given (its standard output to /dev/null): sets
# broker_port, proxy_port and their processes' PIDs broker and proxy, and
# stops both (and removes $1, the scratch folder) when the script exits.
# Needs $tansu and $kwire.
start_broker_and_proxy() {
  local scratch=$1
  shift
  broker_port=$(free_port)
  proxy_port=$(free_port)
  "$tansu" broker --listener-url "tcp://127.0.0.1:$broker_port" --advertised-listener-url "tcp://127.0.0.1:$broker_port" \
    --storage-engine "memory://tansu/" >"$scratch/tansu.log" 2>&1 &
  broker=$!
  "$kwire" proxy --listen "127.0.0.1:$proxy_port" --broker "127.0.0.1:$broker_port" "$@" >/dev/null 2>"$scratch/proxy.err" &
  proxy=$!
  stop_scratch=$scratch
  trap 'kill -INT "$proxy" 2>/dev/null || true; wait "$proxy" 2>/dev/null || true; kill "$broker" 2>/dev/null || true; wait "$broker" 2>/dev/null || true; rm -rf "$stop_scratch"' EXIT
  wait_port "$broker_port"
  wait_port "$proxy_port"
}
wait_port() { for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return; sleep 0.1; done; echo "nothing listens on $1" >&2; exit 1; }
