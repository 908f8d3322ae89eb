# Sourced by the recording scripts: start and stop a fresh tansu broker on
# 127.0.0.1:$port with in-memory storage. Needs $port, $tansu and $log set.
start_broker() {
  "$tansu" broker \
    --listener-url "tcp://127.0.0.1:$port" \
    --advertised-listener-url "tcp://127.0.0.1:$port" \
    --storage-engine "memory://tansu/" >"$log" 2>&1 &
  broker=$!
  for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && return; sleep 0.2; done
  echo "tansu did not start: $(cat "$log")" >&2
  exit 1
}
stop_broker() { kill "$broker" 2>/dev/null || true; wait "$broker" 2>/dev/null || true; }
