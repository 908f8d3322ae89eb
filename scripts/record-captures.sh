#!/usr/bin/env bash
# Record real clients talking to a real Kafka-compatible broker on 127.0.0.1
# into samples/captures/*.pcap, and derive the other samples from them (CI
# only replays the committed files).
# Needs: tansu (cargo install tansu --version 0.6.0 --no-default-features
# --features dynostore), tcpdump, tshark (editcap is not needed), python3 with
# kafka-python and confluent-kafka (pip install kafka-python confluent-kafka).
# Debian's kcat 1.7.1 (librdkafka 2.0.2) cannot parse tansu 0.6.0's
# ApiVersions v3 response and retries, so it is not used.
set -euo pipefail
cd "$(dirname "$0")/.."
out=samples/captures
mkdir -p "$out"
port=${PORT:-19092}
tansu=${TANSU:-tansu}
kwire=${KWIRE:-target/release/kwire}
log=$(mktemp)

source scripts/tansu-broker.sh
trap stop_broker EXIT

capture() { # name command...: a fresh broker per capture, so each starts empty
  local name=$1; shift
  start_broker
  tcpdump -i lo -U -s 0 -w "$out/$name.pcap" "tcp port $port" >/dev/null 2>&1 &
  local dump=$!
  sleep 1
  "$@" || echo "$name: client exited $?"
  sleep 1
  kill "$dump"; wait "$dump" 2>/dev/null || true
  stop_broker
  echo "$name: $(stat -c %s "$out/$name.pcap") bytes"
}

capture kafka-python python3 scripts/captures/kafka_python_client.py "$port"
capture confluent-kafka python3 scripts/captures/confluent_kafka_client.py "$port"

# A capture that starts mid-connection: everything up to and including the
# first Produce request is cut, so its response arrives with no request.
python3 scripts/captures/start_after_request.py "$out/confluent-kafka.pcap" "$out/lone-response.pcap" "$port" 0
echo "lone-response: $(stat -c %s "$out/lone-response.pcap") bytes"

# A log segment: the record batches of the Fetch responses, back to back, as
# a broker keeps them in 00000000000000000000.log.
"$kwire" capture "$out/confluent-kafka.pcap" --api Fetch --json 2>/dev/null | python3 scripts/captures/segment_from_fetch.py > samples/00000000000000000000.log
echo "segment: $(stat -c %s samples/00000000000000000000.log) bytes"
