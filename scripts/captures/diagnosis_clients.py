#!/usr/bin/env python3
"""Real clients misbehaving, or meeting a broker that misbehaves, for the
diagnosis captures (scripts/record-diagnosis-captures.sh). One scenario per
call: python3 diagnosis_clients.py SCENARIO PORT."""
import socket
import struct
import sys
import time

scenario, port = sys.argv[1], int(sys.argv[2])
bootstrap = f"127.0.0.1:{port}"


def topic(name):
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="kwire-admin")
    try:
        admin.create_topics([NewTopic(name, num_partitions=1, replication_factor=1)])
    except Exception as e:  # already there
        print("create_topics:", e)
    admin.close()


def poll_then_close(consumer, seconds, timeout):
    """Poll for `seconds` (each poll waiting up to `timeout`), then close."""
    end = time.time() + seconds
    while time.time() < end:
        consumer.poll(timeout)
    consumer.close()


if scenario == "old-librdkafka":
    # librdkafka told the broker is 0.9.0: JoinGroup v0 and ListOffsets v0.
    from confluent_kafka import Consumer
    topic("ledger")
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "ledger-readers", "client.id": "old-librdkafka",
                  "api.version.request": False, "broker.version.fallback": "0.9.0",
                  "auto.offset.reset": "earliest", "log_level": 0})
    c.subscribe(["ledger"])
    poll_then_close(c, 6, 0.5)
elif scenario == "churn":
    # A producer made for every message: connections opened and dropped.
    from kafka import KafkaProducer
    topic("clicks")
    for i in range(12):
        p = KafkaProducer(bootstrap_servers=bootstrap, client_id="per-message-producer")
        p.send("clicks", value=f"click {i}".encode())
        p.flush()
        p.close()
elif scenario == "unsupported":
    # A hand-written client asking for an API the broker does not serve,
    # without asking ApiVersions first; then a retry on a new connection.
    for corr in (1, 2):
        s = socket.create_connection(("127.0.0.1", port))
        client = b"handmade-admin"
        body = struct.pack(">i", -1)  # DescribeLogDirs v1: all topics (null array)
        msg = struct.pack(">hhih", 35, 1, corr, len(client)) + client + body
        s.sendall(struct.pack(">i", len(msg)) + msg)
        s.settimeout(5)
        try:
            print("answer:", len(s.recv(65536)), "bytes")
        except socket.timeout:
            print("no answer")
        s.close()
        time.sleep(0.2)
elif scenario == "short-timeout":
    # A consumer whose request timeout (0.7 s) is shorter than the wait it
    # asks the broker for (3 s): kafka-python refuses that when it is
    # configured, so the fetcher's wait is raised after. Each empty poll
    # times out, closes the connection and reconnects.
    from kafka import KafkaConsumer
    topic("quiet")
    c = KafkaConsumer("quiet", bootstrap_servers=bootstrap, group_id="quiet-readers", client_id="short-timeout",
                      fetch_max_wait_ms=500, request_timeout_ms=700)
    c._fetcher.config["fetch_max_wait_ms"] = 3000
    poll_then_close(c, 6, 500)
elif scenario == "short-timeout-no-group":
    # The same short request timeout in a consumer without a group: no
    # coordinator, and kafka-python asks Metadata on each new connection
    # before it polls again.
    from kafka import KafkaConsumer
    topic("quiet")
    c = KafkaConsumer("quiet", bootstrap_servers=bootstrap, group_id=None, client_id="short-timeout",
                      fetch_max_wait_ms=500, request_timeout_ms=700)
    c._fetcher.config["fetch_max_wait_ms"] = 3000
    poll_then_close(c, 6, 500)
elif scenario == "restarts-no-group":
    # Not a short timeout: an application that closes its consumer (no
    # group, default timeouts) after 1.3 s of polling and starts a new one
    # at once, six times. Its closes come inside a poll's wait too, but its
    # polls before them were answered after their full wait (500 ms).
    from kafka import KafkaConsumer
    topic("quiet")
    for _ in range(6):
        c = KafkaConsumer("quiet", bootstrap_servers=bootstrap, group_id=None, client_id="restarter")
        poll_then_close(c, 1.3, 100)
elif scenario == "behind-poll":
    # librdkafka with a socket timeout (1 s) shorter than its fetch wait
    # (3 s), which it warns of: a request queued behind a Fetch that waits
    # times out, and the client closes the connection and reconnects.
    from confluent_kafka import Consumer
    topic("quiet")
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "quiet-readers", "client.id": "behind-poll",
                  "fetch.wait.max.ms": 3000, "socket.timeout.ms": 1000, "auto.offset.reset": "earliest",
                  "log_level": 0})
    c.subscribe(["quiet"])
    poll_then_close(c, 10, 0.5)
else:
    sys.exit(f"unknown scenario {scenario}")
