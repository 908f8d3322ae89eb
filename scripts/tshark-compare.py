#!/usr/bin/env python3
"""Compare kwire's decoding of a capture with tshark's Kafka dissector.

For every Kafka PDU that tshark dissects, the frame with the same correlation id
and direction in `kwire capture --json` must agree on: api key, api version,
correlation id, client id, and the sets of topic names, partition indexes and
error codes the message carries. Usage: scripts/tshark-compare.py CAPTURE [PORT]
Exit status 0 when everything compared agrees; prints a summary per API.
"""
import json
import subprocess
import sys
from collections import Counter, defaultdict

cap = sys.argv[1]
port = sys.argv[2] if len(sys.argv) > 2 else "9092"
kwire = sys.argv[3] if len(sys.argv) > 3 else "target/release/kwire"

TOPIC_KEYS = {"Name", "Topic", "TopicName"}
PARTITION_KEYS = {"Index", "PartitionIndex", "Partition"}


def walk(value, path=""):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from walk(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from walk(v, path)
    else:
        yield path, value


def kwire_facts(frame):
    topics, parts, errors = set(), set(), set()
    for key, v in walk(frame.get("body") or {}):
        if key in TOPIC_KEYS and isinstance(v, str):
            topics.add(v)
        elif key in PARTITION_KEYS and isinstance(v, int):
            parts.add(v)
        elif key.endswith("ErrorCode") and isinstance(v, int):
            errors.add(v)
    return topics, parts, errors


def tshark_facts(layer):
    """Flatten tshark's kafka layer into (field name -> list of values)."""
    out = defaultdict(list)

    def rec(node):
        if isinstance(node, dict):
            for k, v in node.items():
                if isinstance(v, (dict, list)):
                    rec(v)
                    if isinstance(v, list) and all(isinstance(x, str) for x in v):
                        out[k].extend(v)
                else:
                    out[k].append(v)
        elif isinstance(node, list):
            for x in node:
                rec(x)

    rec(layer)
    return out


ts = json.loads(subprocess.run(["tshark", "-r", cap, "-d", f"tcp.port=={port},kafka", "-T", "json"], capture_output=True, text=True, check=True).stdout or "[]")
kw = [json.loads(l) for l in subprocess.run([kwire, "capture", cap, "--json", "--port", port], capture_output=True, text=True).stdout.splitlines() if l.startswith("{")]
# Notes of skipped bytes are no frames (tshark has no counterpart for them).
kw = [f for f in kw if f.get("kind") != "skipped"]

by_key = {}
for f in kw:
    corr = f["header"].get("CorrelationId") if f.get("header") else None
    by_key.setdefault((f["kind"], corr), []).append(f)

compared, mismatches, per_api, skipped, skipped_requests = 0, [], Counter(), Counter(), set()
for pkt in ts:
    layers = pkt["_source"]["layers"]
    ks = layers.get("kafka")
    if ks is None:
        continue
    for layer in ks if isinstance(ks, list) else [ks]:
        t = tshark_facts(layer)
        if "kafka.correlation_id" not in t:
            continue
        corr = int(t["kafka.correlation_id"][0])
        # The dissector marks requests with request_key, responses with response_key
        # (or, when it missed the request, with neither and no api key).
        kind = "request" if "kafka.request_key" in t else "response"
        unsupported = "kafka.unsupported_api_version" in t
        cands = by_key.get((kind, corr), [])
        if not cands:
            mismatches.append(f"{kind} corr={corr}: not found in kwire's output")
            continue
        f = cands.pop(0)
        if kind == "request" and unsupported:
            skipped_requests.add(corr)
        if unsupported or (kind == "response" and corr in skipped_requests):
            # The dissector does not know this version (it says so): nothing to compare.
            skipped[f["api_key"], f["api_version"]] += 1
            continue
        compared += 1
        per_api[f["api_key"]] += 1
        problems = []
        if "kafka.api_key" in t and int(t["kafka.api_key"][0]) != f["api_key"]:
            problems.append(f"api key {t['kafka.api_key'][0]} vs {f['api_key']}")
        version = t.get("kafka.api_version") or t.get("kafka.response.version")
        if version and int(version[0]) != f["api_version"]:
            problems.append(f"api version {version[0]} vs {f['api_version']}")
        if kind == "request" and "kafka.client_id" in t:
            want = t["kafka.client_id"][0]
            got = f["header"].get("ClientId")
            if want not in ("", "Null") and want != got:
                problems.append(f"client id {want!r} vs {got!r}")
        topics, parts, errors = kwire_facts(f)
        if "kafka.topic_name" in t and not set(t["kafka.topic_name"]) <= topics:
            problems.append(f"topics {sorted(set(t['kafka.topic_name']))} vs {sorted(topics)}")
        if "kafka.partition_id" in t and not {int(p) for p in t["kafka.partition_id"]} <= parts:
            problems.append(f"partitions {sorted({int(p) for p in t['kafka.partition_id']})} vs {sorted(parts)}")
        if "kafka.error" in t and not {int(e) for e in t["kafka.error"]} <= errors | {0}:
            problems.append(f"errors {sorted({int(e) for e in t['kafka.error']})} vs {sorted(errors)}")
        if problems:
            mismatches.append(f"{kind} api={f['api_key']} v{f['api_version']} corr={corr}: " + "; ".join(problems))

print(f"tshark PDUs compared with kwire: {compared} ({len(kw)} kwire frames); by api key: {dict(sorted(per_api.items()))}")
if skipped:
    print("skipped (versions the dissector does not support): " + ", ".join(f"api {k} v{v} x{n}" for (k, v), n in sorted(skipped.items())))
for m in mismatches[:20]:
    print("MISMATCH", m)
print(f"{compared - len([m for m in mismatches if 'not found' not in m])} passed, {len(mismatches)} failed")
sys.exit(1 if mismatches or compared == 0 else 0)
