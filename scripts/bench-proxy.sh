#!/usr/bin/env bash
# kwire proxy against the broker directly, in the same run (BENCHMARKS.md,
# "Proxy"): a tansu 0.6.0 broker in memory, kwire proxy in front of it
# printing its --list lines to /dev/null, and scripts/bench-proxy.py as the
# client, alternating between the two addresses round by round.
#   throughput: 100,000 messages produced (librdkafka, acks=1) and consumed back
#   latency: sequential round trips on one connection (Metadata v12, which the
#            proxy rewrites; ApiVersions v3 and Produce v9 acks=1, which it
#            passes as they come), median through minus median direct
# Needs tansu and python3 with confluent-kafka (.ci/run installs them).
# Usage: scripts/bench-proxy.sh [MESSAGES [ROUNDS [REQUESTS]]]
set -euo pipefail
cd "$(dirname "$0")/.."
messages=${1:-100000}
rounds=${2:-5}
requests=${3:-2000}
tansu=${TANSU:-tansu}
kwire=${KWIRE:-target/release/kwire}
[ -n "${KWIRE:-}" ] || cargo build --release --quiet
work=$(mktemp -d)
source scripts/bench-lib.sh
start_broker_and_proxy "$work"
direct="127.0.0.1:$broker_port"
through="127.0.0.1:$proxy_port"

# The latency frames, encoded by kwire (Produce: the sample's records, to a topic made here, acks=1).
"$kwire" send --broker "$direct" CreateTopics --version 4 --format json -i <(echo '{"Topics":[{"Name":"bench-rtt","NumPartitions":1,"ReplicationFactor":1,"Assignments":[],"Configs":[]}],"timeoutMs":5000,"validateOnly":false}') >/dev/null 2>&1
metadata=$(echo '{"Topics":[{"Name":"bench-rtt"}],"AllowAutoTopicCreation":false,"IncludeTopicAuthorizedOperations":false}' | "$kwire" encode Metadata --version 12 --client-id bench)
api_versions=$(echo '{"ClientSoftwareName":"bench","ClientSoftwareVersion":"1"}' | "$kwire" encode ApiVersions --version 3 --client-id bench)
produce=$("$kwire" decode --json samples/produce-v9-request.hex | python3 -c '
import json, sys
f = json.load(sys.stdin)
f["body"]["Acks"] = 1
f["body"]["TopicData"][0]["Name"] = "bench-rtt"
print(json.dumps(f))' | "$kwire" encode)
strip() { tr -d ' \n'; }

echo "$kwire (checkout $(git rev-parse --short HEAD 2>/dev/null || echo "?")), $("$tansu" --version), librdkafka $(python3 -c 'import confluent_kafka; print(confluent_kafka.libversion()[0])'), $(nproc) cores"
# CPU seconds a process has used (user + system).
cpu() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$1/stat"; }
echo "throughput ($messages messages, $rounds rounds):"
proxy_cpu=$(cpu "$proxy"); broker_cpu=$(cpu "$broker")
python3 scripts/bench-proxy.py throughput "$direct" "$through" "$messages" "$rounds" | tee "$work/throughput.json"
since() { awk -v now="$(cpu "$1")" -v then="$2" 'BEGIN { printf "%.2f", now - then }'; }
echo "CPU during the throughput rounds: proxy $(since "$proxy" "$proxy_cpu") s (the through half), broker $(since "$broker" "$broker_cpu") s (both halves)"
echo "latency ($requests sequential requests of each kind, $rounds rounds):"
python3 scripts/bench-proxy.py latency "$direct" "$through" "$requests" "$rounds" \
  "Metadata=$(echo "$metadata" | strip)" "ApiVersions=$(echo "$api_versions" | strip)" "Produce=$(echo "$produce" | strip)" | tee "$work/latency.json"
python3 - "$work/throughput.json" "$work/latency.json" <<'PY'
import json, sys
t, l = (json.load(open(p)) for p in sys.argv[1:3])
print(f"produce ratio {t['produce_ratio']:.2f}, consume ratio {t['consume_ratio']:.2f} (goal >= 0.80)")
for name in ("Metadata", "ApiVersions", "Produce"):
    print(f"{name:<12} median {l[name]['direct_median_us']:>7.1f} us direct, {l[name]['through_median_us']:>7.1f} us through: +{l[name]['added_median_us']:.1f} us (goal <= 100)")
PY
if grep -v "forwards to" "$work/proxy.err" | grep -q .; then echo "the proxy said:"; grep -v "forwards to" "$work/proxy.err" | head -20; fi
