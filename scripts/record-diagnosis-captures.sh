#!/usr/bin/env bash
# Record the conversations behind the diagnosis rules into
# samples/captures/diagnosis/*.pcap: real clients (librdkafka through
# confluent-kafka, kafka-python, a hand-written client) against a real broker
# (tansu 0.6.0) on 127.0.0.1. CI only replays the committed files
# (tests/diagnosis_captures.rs).
# Needs: tansu, tcpdump (or Wireshark's dumpcap), python3 with kafka-python
# and confluent-kafka. Scenarios named as arguments are recorded again
# (all of them when none is named).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-samples/captures/diagnosis}
mkdir -p "$out"
port=${PORT:-19192}
tansu=${TANSU:-tansu}
log=$(mktemp)

source scripts/tansu-broker.sh
trap stop_broker EXIT

# Packets on loopback to and from the broker's port, written as they come.
record() {
  if command -v tcpdump >/dev/null; then
    tcpdump -i lo -U -s 0 -w "$1" "tcp port $port" >/dev/null 2>&1 &
  else
    dumpcap -q -i lo -P -f "tcp port $port" -w "$1" >/dev/null 2>&1 &
  fi
  dump=$!
}

scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] || scenarios=(old-librdkafka churn unsupported short-timeout short-timeout-no-group restarts-no-group behind-poll)
for scenario in "${scenarios[@]}"; do
  start_broker
  record "$out/$scenario.pcap"
  sleep 1
  python3 scripts/captures/diagnosis_clients.py "$scenario" "$port" || echo "$scenario: client exited $?"
  sleep 1
  kill "$dump"; wait "$dump" 2>/dev/null || true
  stop_broker
  echo "$scenario: $(stat -c %s "$out/$scenario.pcap") bytes"
done
