#!/usr/bin/env python3
"""A pcap of N Heartbeat v4 exchanges (2N frames) over 64 connections, one
frame per TCP segment: the explorer's many-small-frames case (BENCHMARKS.md,
"Explorer rows"). Usage: scripts/make-heartbeats-pcap.py OUT N"""
import struct
import sys

out_path, n = sys.argv[1], int(sys.argv[2])
# kwire example Heartbeat --version 4 --format hex (request, then response).
REQUEST = bytes.fromhex("00000013000c0004000000000000000100000000010100")
RESPONSE = bytes.fromhex("0000000c000000000000000000000000")
CLIENT, BROKER = bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])
seq = {}


def segment(t, src, dst, sport, dport, payload, key):
    s = seq.get(key, 1000)
    seq[key] = s + len(payload)
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 40 + len(payload), 0, 0, 64, 6, 0, src, dst)
    tcp = struct.pack(">HHIIBBHHH", sport, dport, s, 0, 0x50, 0x18, 65535, 0, 0)
    packet = b"\x00" * 12 + b"\x08\x00" + ip + tcp + payload
    sec = int(t)
    return struct.pack("<IIII", sec, int((t - sec) * 1e6), len(packet), len(packet)) + packet


with open(out_path, "wb") as out:
    out.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
    t, pending = 1700000000.0, []
    for i in range(n):
        conn = i % 64
        port = 30000 + conn
        corr = struct.pack(">i", i)
        pending.append(segment(t, CLIENT, BROKER, port, 9092, REQUEST[:8] + corr + REQUEST[12:], (conn, 0)))
        pending.append(segment(t + 0.0001, BROKER, CLIENT, 9092, port, RESPONSE[:4] + corr + RESPONSE[8:], (conn, 1)))
        t += 0.0002
        if len(pending) > 100_000:
            out.write(b"".join(pending))
            pending = []
    out.write(b"".join(pending))
