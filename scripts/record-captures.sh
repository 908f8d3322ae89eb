#!/usr/bin/env bash
# Record real clients talking to a real Kafka-compatible broker on 127.0.0.1
# into samples/captures/*.pcap (CI only replays the committed files).
# Needs: tansu (cargo install tansu --no-default-features --features dynostore),
# tcpdump, kcat, python3 with kafka-python (pip install kafka-python).
set -euo pipefail
cd "$(dirname "$0")/.."
out=samples/captures
mkdir -p "$out"
port=${PORT:-19092}
tansu=${TANSU:-tansu}
log=$(mktemp)
"$tansu" broker \
  --kafka-listener-url "tcp://127.0.0.1:$port" \
  --kafka-advertised-listener-url "tcp://127.0.0.1:$port" \
  --storage-engine "memory://tansu/" >"$log" 2>&1 &
broker=$!
trap 'kill $broker 2>/dev/null || true' EXIT
for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.2; done

capture() { # name command...
  local name=$1; shift
  tcpdump -i lo -U -s 0 -w "$out/$name.pcap" "tcp port $port" >/dev/null 2>&1 &
  local dump=$!
  sleep 1
  "$@" || echo "$name: client exited $?"
  sleep 1
  kill "$dump"; wait "$dump" 2>/dev/null || true
  echo "$name: $(stat -c %s "$out/$name.pcap") bytes"
}

capture kcat bash -c "
  kcat -b 127.0.0.1:$port -L -J >/dev/null
  printf 'k1:one\nk2:two\nk3:three\n' | kcat -b 127.0.0.1:$port -P -t orders -K: -z gzip
  kcat -b 127.0.0.1:$port -C -t orders -o beginning -c 3 -e -f '%k %s\n'"
capture kafka-python python3 scripts/captures/kafka_python_client.py "$port"
