#!/usr/bin/env bash
# Record the compressed benchmark capture (BENCHMARKS.md): confluent-kafka
# produces 100,000 records in lz4 batches of 100 to a fresh tansu broker
# and a consumer reads them back, captured on loopback.
# Usage: scripts/record-lz4-bench.sh OUT.pcap   (needs tansu, tcpdump or
# Wireshark's dumpcap, confluent-kafka)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: $0 OUT.pcap}
port=${PORT:-19556}
tansu=${TANSU:-tansu}
log=$(mktemp)
source scripts/tansu-broker.sh
trap stop_broker EXIT
start_broker
if command -v tcpdump >/dev/null; then
  tcpdump -i lo -U -s 0 -w "$out" "tcp port $port" >/dev/null 2>&1 &
else
  dumpcap -q -i lo -P -f "tcp port $port" -w "$out" >/dev/null 2>&1 &
fi
dump=$!
sleep 1
python3 scripts/captures/lz4_producer.py "$port"
sleep 1
kill "$dump"; wait "$dump" 2>/dev/null || true
echo "$out: $(stat -c %s "$out") bytes"
