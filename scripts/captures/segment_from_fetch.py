#!/usr/bin/env python3
"""A log segment from `kwire capture --api Fetch --json`: the record batches
of every Fetch response, in order, back to back, as a broker keeps them in
00000000000000000000.log. Batches already written (the same base offset)
are not written again."""
import json
import sys

seen = set()
out = sys.stdout.buffer
for line in sys.stdin:
    frame = json.loads(line)
    if frame.get("kind") != "response":
        continue
    for topic in frame["body"].get("Responses", []):
        for partition in topic.get("Partitions", []):
            records = bytes.fromhex(partition.get("Records") or "")
            pos = 0
            while pos + 12 <= len(records):
                length = int.from_bytes(records[pos + 8:pos + 12], "big")
                batch = records[pos:pos + 12 + length]
                if len(batch) < 12 + length:
                    break  # a batch cut by the fetch size: not in the segment
                base = int.from_bytes(batch[:8], "big")
                if base not in seen:
                    seen.add(base)
                    out.write(batch)
                pos += 12 + length
