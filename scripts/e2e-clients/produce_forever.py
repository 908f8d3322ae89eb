#!/usr/bin/env python3
"""Produce small messages without end (librdkafka, acks=1), for the test in
tests/proxy_e2e.rs that kills the broker under a client.

usage: produce_forever.py BOOTSTRAP TOPIC SECONDS

Prints `acked N` once the first N messages are acknowledged (the caller
waits for the first), and `error: ...` for every error librdkafka reports
(a lost connection, a refused one). Stops after SECONDS and prints the totals.
"""
import sys
import time

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

bootstrap, topic, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])


def report(err):
    print(f"error: {err}", flush=True)


admin = AdminClient({"bootstrap.servers": bootstrap, "client.id": "e2e-admin"})
for f in admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)]).values():
    f.result(15)

acked = failed = 0


def delivered(err, _msg):
    global acked, failed
    if err is None:
        acked += 1
        if acked in (1, 100, 1000) or acked % 10000 == 0:
            print(f"acked {acked}", flush=True)
    else:
        failed += 1


producer = Producer({"bootstrap.servers": bootstrap, "client.id": "e2e-forever", "acks": 1, "linger.ms": 1,
                     "error_cb": report, "reconnect.backoff.ms": 200, "reconnect.backoff.max.ms": 1000,
                     "message.timeout.ms": 5000})
end = time.time() + seconds
i = 0
while time.time() < end:
    try:
        producer.produce(topic, key=f"k{i}".encode(), value=f"message {i}".encode(), on_delivery=delivered)
        i += 1
    except BufferError:
        pass
    producer.poll(0.001)
producer.flush(1)
print(f"produced {i}, acked {acked}, failed {failed}", flush=True)
