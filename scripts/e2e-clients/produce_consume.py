#!/usr/bin/env python3
"""Produce the messages of a file and consume them back in a consumer group,
with librdkafka (confluent-kafka) or kafka-python, for tests/proxy_e2e.rs.

usage: produce_consume.py BOOTSTRAP TOPIC GROUP MESSAGES OUT [--lib confluent|kafka-python] [--compression gzip]

MESSAGES holds one JSON object per line, {"key": HEX, "value": HEX}; they are
produced in order to partition 0 of TOPIC (created with one partition). Then a
consumer in GROUP reads TOPIC from the earliest offset until it has as many
messages as were produced (or 30 s pass), keeps polling a little longer so
that the group's heartbeats go out, commits and leaves. OUT gets one JSON
object per message consumed, {"key", "value", "partition", "offset"}, keys
and values hex (null for null). The exit status is 0 when every produce was
acknowledged; the caller compares OUT with MESSAGES.
"""
import argparse
import json
import sys
import time


def read_messages(path):
    with open(path) as f:
        out = []
        for line in f:
            m = json.loads(line)
            out.append((None if m["key"] is None else bytes.fromhex(m["key"]),
                        None if m["value"] is None else bytes.fromhex(m["value"])))
        return out


def hexed(b):
    return None if b is None else b.hex()


def with_confluent(a, messages):
    from confluent_kafka import Consumer, Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": a.bootstrap, "client.id": "e2e-admin"})
    for f in admin.create_topics([NewTopic(a.topic, num_partitions=1, replication_factor=1)]).values():
        f.result(15)
    failures = []

    def delivered(err, _msg):
        if err is not None:
            failures.append(str(err))

    producer = Producer({"bootstrap.servers": a.bootstrap, "client.id": "e2e-producer", "acks": "all",
                         "compression.codec": a.compression, "linger.ms": 5, "enable.idempotence": False})
    for key, value in messages:
        while True:
            try:
                producer.produce(a.topic, key=key, value=value, partition=0, on_delivery=delivered)
                break
            except BufferError:
                producer.poll(0.1)
        producer.poll(0)
    left = producer.flush(30)
    if left or failures:
        print(f"produce: {left} not delivered, failures {failures[:5]}", file=sys.stderr)
        return 1, []
    consumer = Consumer({"bootstrap.servers": a.bootstrap, "client.id": "e2e-consumer", "group.id": a.group,
                         "auto.offset.reset": "earliest", "enable.auto.commit": False,
                         "session.timeout.ms": 10000, "heartbeat.interval.ms": 100})
    consumer.subscribe([a.topic])
    got = []
    deadline = time.time() + 30
    while len(got) < len(messages) and time.time() < deadline:
        for m in consumer.consume(num_messages=1000, timeout=1):
            if m.error():
                print("consume:", m.error(), file=sys.stderr)
                continue
            got.append({"key": hexed(m.key()), "value": hexed(m.value()), "partition": m.partition(), "offset": m.offset()})
    # Stay in the group for a few heartbeats.
    end = time.time() + 1
    while time.time() < end:
        consumer.poll(0.1)
    if got:
        consumer.commit(asynchronous=False)
    consumer.close()
    return 0, got


def with_kafka_python(a, messages):
    from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
    from kafka.admin import NewTopic

    admin = KafkaAdminClient(bootstrap_servers=a.bootstrap, client_id="e2e-admin")
    admin.create_topics([NewTopic(a.topic, num_partitions=1, replication_factor=1)])
    admin.close()
    producer = KafkaProducer(bootstrap_servers=a.bootstrap, client_id="e2e-producer", acks="all",
                             compression_type=None if a.compression == "none" else a.compression, linger_ms=5)
    futures = [producer.send(a.topic, key=k, value=v, partition=0) for k, v in messages]
    producer.flush(30)
    for f in futures:
        f.get(timeout=30)
    producer.close()
    consumer = KafkaConsumer(a.topic, bootstrap_servers=a.bootstrap, client_id="e2e-consumer", group_id=a.group,
                             auto_offset_reset="earliest", enable_auto_commit=False, heartbeat_interval_ms=100,
                             session_timeout_ms=10000)
    got = []
    deadline = time.time() + 30
    while len(got) < len(messages) and time.time() < deadline:
        for records in consumer.poll(timeout_ms=1000, max_records=1000).values():
            for m in records:
                got.append({"key": hexed(m.key), "value": hexed(m.value), "partition": m.partition, "offset": m.offset})
    end = time.time() + 1
    while time.time() < end:
        consumer.poll(timeout_ms=100)
    if got:
        consumer.commit()
    consumer.close()
    return 0, got


def main():
    p = argparse.ArgumentParser()
    for name in ("bootstrap", "topic", "group", "messages", "out"):
        p.add_argument(name)
    p.add_argument("--lib", choices=("confluent", "kafka-python"), default="confluent")
    p.add_argument("--compression", default="gzip")
    a = p.parse_args()
    messages = read_messages(a.messages)
    status, got = (with_confluent if a.lib == "confluent" else with_kafka_python)(a, messages)
    with open(a.out, "w") as f:
        for m in got:
            f.write(json.dumps(m) + "\n")
    print(f"produced {len(messages)}, consumed {len(got)}")
    return status


if __name__ == "__main__":
    sys.exit(main())
