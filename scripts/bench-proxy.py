#!/usr/bin/env python3
"""The client side of scripts/bench-proxy.sh: throughput with librdkafka
(confluent-kafka) and round-trip latency over a plain socket, each run against
two bootstrap addresses (the broker directly, and kwire proxy in front of it)
in alternating rounds, so both see the same machine at the same time.

usage:
  bench-proxy.py throughput DIRECT THROUGH MESSAGES ROUNDS
  bench-proxy.py latency DIRECT THROUGH REQUESTS ROUNDS NAME=HEXFRAME...

throughput: each round produces MESSAGES messages (100-byte values, acks=1,
no compression) to a fresh topic directly and another through the proxy,
then consumes each back (assigned partition, from the start), timing each
phase from the first call to the last acknowledgement or message. latency: each round sends REQUESTS copies of each
frame one at a time on each of two connections (one direct, one through),
taking turns request by request, waiting for each response; frames are hex
(size prefix included, correlation id rewritten per request). Prints one
JSON object: throughput per round and the median of the rounds'
ratios; latency medians over all requests.
"""
import json
import socket
import statistics
import struct
import sys
import time


def produce(bootstrap, topic, n):
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)]).values():
        f.result(30)
    p = Producer({"bootstrap.servers": bootstrap, "acks": 1, "linger.ms": 5, "batch.num.messages": 10000,
                  "queue.buffering.max.messages": 200000})
    value = b"v" * 100
    # Connect and learn the partition's leader before the clock starts.
    p.produce(topic, key=b"warm-up", value=value, partition=0)
    p.flush(30)
    failed = []
    start = time.perf_counter()
    for i in range(n):
        while True:
            try:
                p.produce(topic, key=b"%d" % i, value=value, partition=0,
                          on_delivery=lambda err, _m: err and failed.append(err))
                break
            except BufferError:
                p.poll(0.001)
    left = p.flush(120)
    took = time.perf_counter() - start
    if left or failed:
        sys.exit(f"produce to {bootstrap}: {left} left, {len(failed)} failed: {failed[:3]}")
    return took


def consume(bootstrap, topic, n):
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-{topic}", "enable.auto.commit": False,
                  "fetch.max.bytes": 52428800, "max.partition.fetch.bytes": 1048576})
    c.assign([TopicPartition(topic, 0, 0)])
    got = 0
    start = time.perf_counter()
    deadline = time.time() + 120
    while got < n + 1 and time.time() < deadline:
        for m in c.consume(num_messages=10000, timeout=1):
            if not m.error():
                got += 1
    took = time.perf_counter() - start
    c.close()
    if got < n + 1:
        sys.exit(f"consume from {bootstrap}: {got} of {n + 1} messages")
    return took


def throughput(direct, through, n, rounds):
    out = {"messages": n, "rounds": rounds}
    runs = {"direct": [], "through": []}
    for r in range(rounds):
        # Each phase direct and through back to back, alternating which goes first.
        order = (("direct", direct), ("through", through)) if r % 2 == 0 else (("through", through), ("direct", direct))
        topics = {name: f"bench-{name}-{r}-{time.time_ns()}" for name, _ in order}
        produced = {name: produce(addr, topics[name], n) for name, addr in order}
        consumed = {name: consume(addr, topics[name], n) for name, addr in order}
        for name in runs:
            runs[name].append((produced[name], consumed[name]))
    for name, rs in runs.items():
        out[name] = {
            "produce_msgs_per_s": round(n / statistics.median(p for p, _ in rs)),
            "consume_msgs_per_s": round(n / statistics.median(c for _, c in rs)),
            "produce_s": [round(p, 3) for p, _ in rs],
            "consume_s": [round(c, 3) for _, c in rs],
        }
    # Each round's ratio (through / direct throughput = direct time / through time), then their median.
    for i, phase in enumerate(("produce", "consume")):
        ratios = [d[i] / t[i] for d, t in zip(runs["direct"], runs["through"])]
        out[f"{phase}_ratios"] = [round(x, 3) for x in ratios]
        out[f"{phase}_ratio"] = round(statistics.median(ratios), 3)
    return out


def read_exactly(s, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("closed")
        buf += chunk
    return bytes(buf)


class Conn:
    def __init__(self, addr):
        host, port = addr.rsplit(":", 1)
        self.s = socket.create_connection((host, int(port)))
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.corr = 0

    def round_trip(self, frame):
        """One request and its whole response; the time in microseconds."""
        self.corr += 1
        req = frame[:8] + struct.pack(">i", self.corr) + frame[12:]
        t = time.perf_counter_ns()
        self.s.sendall(req)
        size = struct.unpack(">i", read_exactly(self.s, 4))[0]
        body = read_exactly(self.s, size)
        took = time.perf_counter_ns() - t
        if struct.unpack(">i", body[:4])[0] != self.corr:
            sys.exit("a response with another correlation id")
        return took / 1000


def latency(direct, through, count, rounds, frames):
    """Round trips on two connections, one to each address, taking turns
    request by request (and which goes first), so both see the same load."""
    out = {"requests_per_round": count, "rounds": rounds}
    for name, frame in frames:
        t = {"direct": [], "through": []}
        for _ in range(rounds):
            conns = {"direct": Conn(direct), "through": Conn(through)}
            for i in range(count + 50):
                order = ("direct", "through") if i % 2 == 0 else ("through", "direct")
                for which in order:
                    took = conns[which].round_trip(frame)
                    if i >= 50:  # the first ones warm up both ends
                        t[which].append(took)
            for c in conns.values():
                c.s.close()
        d, p = statistics.median(t["direct"]), statistics.median(t["through"])
        q = lambda xs, k: sorted(xs)[int(len(xs) * k)]
        out[name] = {"direct_median_us": round(d, 1), "through_median_us": round(p, 1), "added_median_us": round(p - d, 1),
                     "direct_p90_us": round(q(t["direct"], 0.9), 1), "through_p90_us": round(q(t["through"], 0.9), 1)}
    return out


def main():
    mode, direct, through = sys.argv[1:4]
    if mode == "throughput":
        result = throughput(direct, through, int(sys.argv[4]), int(sys.argv[5]))
    elif mode == "latency":
        frames = [(a.split("=", 1)[0], bytes.fromhex(a.split("=", 1)[1])) for a in sys.argv[6:]]
        result = latency(direct, through, int(sys.argv[4]), int(sys.argv[5]), frames)
    else:
        sys.exit(__doc__)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
