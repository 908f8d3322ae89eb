#!/usr/bin/env bash
# Record the conversations behind the diagnosis rules into
# samples/captures/diagnosis/*.pcap: real clients (librdkafka through
# confluent-kafka, kafka-python, a hand-written client) against a real broker
# (tansu 0.6.0) on 127.0.0.1. CI only replays the committed files
# (tests/diagnosis_captures.rs).
# Needs: tansu, tcpdump, python3 with kafka-python and confluent-kafka.
set -euo pipefail
cd "$(dirname "$0")/.."
out=samples/captures/diagnosis
mkdir -p "$out"
port=${PORT:-19192}
tansu=${TANSU:-tansu}
log=$(mktemp)

source scripts/tansu-broker.sh
trap stop_broker EXIT

for scenario in old-librdkafka churn unsupported; do
  start_broker
  tcpdump -i lo -U -s 0 -w "$out/$scenario.pcap" "tcp port $port" >/dev/null 2>&1 &
  dump=$!
  sleep 1
  python3 scripts/captures/diagnosis_clients.py "$scenario" "$port" || echo "$scenario: client exited $?"
  sleep 1
  kill "$dump"; wait "$dump" 2>/dev/null || true
  stop_broker
  echo "$scenario: $(stat -c %s "$out/$scenario.pcap") bytes"
done
