#!/usr/bin/env python3
"""Cut a pcap so that it starts right after the first request of an API key
sent to PORT: the capture then begins mid-connection, and that request's
response arrives with no request before it (a lone response).
usage: start_after_request.py IN.pcap OUT.pcap PORT API_KEY"""
import struct
import sys

src, dst, port, api_key = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
data = open(src, "rb").read()
magic = struct.unpack("<I", data[:4])[0]
endian = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
linktype = struct.unpack(endian + "I", data[20:24])[0]
header, pos, packets = data[:24], 24, []
while pos + 16 <= len(data):
    incl = struct.unpack(endian + "I", data[pos + 8:pos + 12])[0]
    packets.append(data[pos:pos + 16 + incl])
    pos += 16 + incl


def tcp_payload(packet):
    """(destination port, payload) of an IPv4/IPv6 TCP packet on Ethernet or Linux cooked capture."""
    frame = packet[16:]
    ip = {1: 14, 113: 16, 276: 20}.get(linktype)
    if ip is None or len(frame) < ip + 20:
        return None, b""
    version = frame[ip] >> 4
    if version == 4:
        tcp = ip + (frame[ip] & 0x0F) * 4
    elif version == 6:
        tcp = ip + 40
    else:
        return None, b""
    dport = struct.unpack(">H", frame[tcp + 2:tcp + 4])[0]
    return dport, frame[tcp + (frame[tcp + 12] >> 4) * 4:]


cut = None
for i, p in enumerate(packets):
    dport, payload = tcp_payload(p)
    if dport == port and len(payload) >= 8 and struct.unpack(">h", payload[4:6])[0] == api_key:
        cut = i
        break
if cut is None:
    sys.exit(f"no request with api key {api_key} to port {port} in {src}")
open(dst, "wb").write(header + b"".join(packets[cut + 1:]))
