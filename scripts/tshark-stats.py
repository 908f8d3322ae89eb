#!/usr/bin/env python3
"""The figures of `kwire stats CAPTURE --format json` (by API and version),
computed from `tshark -T fields` output instead: the reference the benchmark in
BENCHMARKS.md times `kwire stats` against.

Usage: scripts/tshark-stats.py CAPTURE [PORT]   (PORT: the broker's, default 9092)

Pairs requests and responses per TCP stream by correlation id, as kwire does;
a request's API and version come from its header. A PDU's time is that of the
packet tshark reassembled it in (the packet completing it), its bytes are its
length field plus 4. Latency percentiles are nearest-rank. Error codes are
tshark's `kafka.error` fields of the response (only for APIs and versions its
dissector knows; with several PDUs in one packet they go to the last one),
named by kwire's table (src/protocol/error_codes.rs).
"""
import json
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

cap = sys.argv[1]
port = sys.argv[2] if len(sys.argv) > 2 else "9092"

names = dict(
    (int(code), name)
    for code, name in re.findall(r'\((-?\d+), "([A-Z_0-9]+)"\)', (Path(__file__).parent.parent / "src/protocol/error_codes.rs").read_text())
)

fields = ["frame.time_epoch", "tcp.stream", "tcp.dstport", "kafka.len", "kafka.correlation_id", "kafka.request_key", "kafka.api_version", "kafka.error"]
cmd = ["tshark", "-r", cap, "-d", f"tcp.port=={port},kafka", "-T", "fields", "-E", "separator=\t", "-E", "occurrence=a", "-E", "aggregator=,"]
for f in fields:
    cmd += ["-e", f]


def micros(epoch):
    secs, _, frac = epoch.partition(".")
    frac = (frac + "0000000")[:7]
    return int(secs) * 1_000_000 + int(frac[:6]) + (1 if frac[6] >= "5" else 0)


def split(text):
    return [x for x in text.split(",") if x != ""]


rows = defaultdict(lambda: {"requests": 0, "responses": 0, "errors": defaultdict(int), "request_bytes": 0, "response_bytes": 0, "latencies": []})
pending = {}  # (stream, correlation id) -> (api, version, time, bytes)
frames = pairs = unanswered = unmatched = 0

proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1 << 20)
for line in proc.stdout:
    cols = line.rstrip("\n").split("\t")
    if len(cols) < len(fields) or not cols[3]:
        continue
    time, stream, dstport, lens, corrs, keys, versions, errors = cols[: len(fields)]
    t = micros(time)
    lens, corrs = split(lens), split(corrs)
    if dstport == port:
        keys, versions = split(keys), split(versions)
        for i, (n, corr) in enumerate(zip(lens, corrs)):
            if i >= len(keys) or i >= len(versions):
                continue
            frames += 1
            key = (stream, corr)
            if key in pending:
                unanswered += 1  # its id was reused before it got an answer
            pending[key] = (int(keys[i]), int(versions[i]), t, int(n) + 4)
            row = rows[(int(keys[i]), int(versions[i]))]
            row["requests"] += 1
            row["request_bytes"] += int(n) + 4
    else:
        codes = sorted(set(int(e) for e in split(errors) if int(e) != 0))
        for i, (n, corr) in enumerate(zip(lens, corrs)):
            frames += 1
            req = pending.pop((stream, corr), None)
            if req is None:
                unmatched += 1
                continue
            pairs += 1
            row = rows[(req[0], req[1])]
            row["responses"] += 1
            row["response_bytes"] += int(n) + 4
            row["latencies"].append(max(0, t - req[2]))
            if i == len(lens) - 1:
                for c in codes:
                    row["errors"][names.get(c, str(c))] += 1
proc.wait()
unanswered += len(pending)


def rank(values, percent):
    return values[max(1, -(-len(values) * percent // 100)) - 1]


by_api = []
for (key, version), row in sorted(rows.items()):
    lat = sorted(row["latencies"])
    latency = (
        {"min": lat[0], "p50": rank(lat, 50), "p90": rank(lat, 90), "p99": rank(lat, 99), "max": lat[-1], "mean": sum(lat) / len(lat)}
        if lat
        else dict.fromkeys(["min", "p50", "p90", "p99", "max", "mean"])
    )
    by_api.append({"api_key": key, "api_version": version, "requests": row["requests"], "responses": row["responses"], "errors": dict(row["errors"]), "request_bytes": row["request_bytes"], "response_bytes": row["response_bytes"], "latency_us": latency})
print(json.dumps({"frames": frames, "pairs": pairs, "unanswered_requests": unanswered, "unmatched_responses": unmatched, "by_api": by_api}))
