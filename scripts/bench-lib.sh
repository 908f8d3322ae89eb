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
wait_port() { for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return; sleep 0.1; done; echo "nothing listens on $1" >&2; exit 1; }
