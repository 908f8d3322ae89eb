#!/usr/bin/env python3
"""Produce the messages of a file and consume them back in a consumer group,
with librdkafka (confluent-kafka) or kafka-python, for tests/proxy_e2e.rs.

usage: produce_consume.py BOOTSTRAP TOPIC GROUP MESSAGES OUT [--lib confluent|kafka-python] [--compression gzip]
           [--only produce|consume] [--max-in-flight N] [--retries N] [--batch-bytes N] [--linger-ms MS] [--stay S]

MESSAGES holds one JSON object per line, {"key": HEX, "value": HEX}; they are
produced in order to partition 0 of TOPIC (created with one partition). Then a
consumer in GROUP reads TOPIC from the earliest offset until it has as many
messages as were produced (or 30 s pass), keeps polling a little longer so
that the group's heartbeats go out, commits and leaves. OUT gets one JSON
object per message consumed, {"key", "value", "partition", "offset"}, keys
and values hex (null for null). The exit status is 0 when every produce was
acknowledged; the caller compares OUT with MESSAGES.

The producer asks for acks=all and lingers 5 ms (librdkafka without
idempotence, kafka-python with its default, idempotent); the rest is the
library's default. These options change that, for the fault injection and
replay tests (tests/faults_e2e.rs, tests/replay_e2e.rs), which want many small
Produce requests retried one at a time, or a consumer on its own:
  --only produce     create TOPIC and produce, without consuming (OUT is empty)
  --only consume     consume MESSAGES' count from TOPIC (which must exist), without producing
  --max-in-flight N  requests in flight per connection (librdkafka
                     max.in.flight.requests.per.connection, kafka-python
                     max_in_flight_requests_per_connection)
  --retries N        times a failed produce is retried
  --batch-bytes N    the producer's batch size in bytes (batch.size, batch_size)
  --linger-ms MS     how long the producer waits to fill a batch (default 5)
  --stay S           seconds the consumer keeps polling once it has every message (default 1)
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
    if a.only != "consume":
        status = confluent_produce(a, messages)
        if status:
            return status, []
    if a.only == "produce":
        return 0, []
    return confluent_consume(a, messages)


def confluent_produce(a, messages):
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": a.bootstrap, "client.id": "e2e-admin"})
    for f in admin.create_topics([NewTopic(a.topic, num_partitions=1, replication_factor=1)]).values():
        f.result(15)
    failures = []

    def delivered(err, _msg):
        if err is not None:
            failures.append(str(err))

    config = {"bootstrap.servers": a.bootstrap, "client.id": "e2e-producer", "acks": "all",
              "compression.codec": a.compression, "linger.ms": a.linger_ms, "enable.idempotence": False}
    if a.max_in_flight is not None:
        config["max.in.flight.requests.per.connection"] = a.max_in_flight
    if a.retries is not None:
        config["retries"] = a.retries
    if a.batch_bytes is not None:
        config["batch.size"] = a.batch_bytes
    producer = Producer(config)
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
        return 1
    return 0


def confluent_consume(a, messages):
    from confluent_kafka import Consumer

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
    end = time.time() + a.stay
    while time.time() < end:
        consumer.poll(0.1)
    if got:
        consumer.commit(asynchronous=False)
    consumer.close()
    return 0, got


def with_kafka_python(a, messages):
    if a.only != "consume":
        kafka_python_produce(a, messages)
    if a.only == "produce":
        return 0, []
    return kafka_python_consume(a, messages)


def kafka_python_produce(a, messages):
    from kafka import KafkaAdminClient, KafkaProducer
    from kafka.admin import NewTopic

    admin = KafkaAdminClient(bootstrap_servers=a.bootstrap, client_id="e2e-admin")
    admin.create_topics([NewTopic(a.topic, num_partitions=1, replication_factor=1)])
    admin.close()
    config = {"bootstrap_servers": a.bootstrap, "client_id": "e2e-producer", "acks": "all",
              "compression_type": None if a.compression == "none" else a.compression, "linger_ms": a.linger_ms}
    if a.max_in_flight is not None:
        config["max_in_flight_requests_per_connection"] = a.max_in_flight
    if a.retries is not None:
        config["retries"] = a.retries
    if a.batch_bytes is not None:
        config["batch_size"] = a.batch_bytes
    producer = KafkaProducer(**config)
    futures = [producer.send(a.topic, key=k, value=v, partition=0) for k, v in messages]
    producer.flush(30)
    for f in futures:
        f.get(timeout=30)
    producer.close()


def kafka_python_consume(a, messages):
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(a.topic, bootstrap_servers=a.bootstrap, client_id="e2e-consumer", group_id=a.group,
                             auto_offset_reset="earliest", enable_auto_commit=False, heartbeat_interval_ms=100,
                             session_timeout_ms=10000)
    got = []
    deadline = time.time() + 30
    while len(got) < len(messages) and time.time() < deadline:
        for records in consumer.poll(timeout_ms=1000, max_records=1000).values():
            for m in records:
                got.append({"key": hexed(m.key), "value": hexed(m.value), "partition": m.partition, "offset": m.offset})
    end = time.time() + a.stay
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
    p.add_argument("--only", choices=("produce", "consume"))
    p.add_argument("--max-in-flight", type=int)
    p.add_argument("--retries", type=int)
    p.add_argument("--batch-bytes", type=int)
    p.add_argument("--linger-ms", type=int, default=5)
    p.add_argument("--stay", type=float, default=1.0)
    a = p.parse_args()
    messages = read_messages(a.messages)
    status, got = (with_confluent if a.lib == "confluent" else with_kafka_python)(a, messages)
    with open(a.out, "w") as f:
        for m in got:
            f.write(json.dumps(m) + "\n")
    print(f"produced {0 if a.only == 'consume' else len(messages)}, consumed {len(got)}")
    return status


if __name__ == "__main__":
    sys.exit(main())
