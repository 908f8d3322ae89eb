"""The compressed benchmark's client (scripts/record-lz4-bench.sh): 100,000
records produced in lz4 batches of 100, then consumed back from the start.
Usage: lz4_producer.py PORT"""

import sys
import time

from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

port = sys.argv[1]
bootstrap = f"127.0.0.1:{port}"
RECORDS = 100_000

# tansu does not create a topic on first use: the producer would retry its
# Metadata request until the message timeout.
admin = AdminClient({"bootstrap.servers": bootstrap})
for future in admin.create_topics([NewTopic("orders", num_partitions=1, replication_factor=1)]).values():
    future.result()

producer = Producer(
    {
        "bootstrap.servers": bootstrap,
        "compression.type": "lz4",
        "linger.ms": 5,
        "batch.num.messages": 100,
        "acks": "all",
    }
)
for i in range(RECORDS):
    value = f'{{"order":{i},"item":"widget-{i % 97}","qty":{i % 13}}}'
    producer.produce(
        "orders",
        key=f"key-{i}".encode(),
        value=value.encode(),
        headers=[("trace-id", f"t-{i}".encode())],
    )
    if i % 1000 == 0:
        producer.poll(0)
producer.flush(30)

consumer = Consumer(
    {"bootstrap.servers": bootstrap, "group.id": "g1", "auto.offset.reset": "earliest"}
)
consumer.subscribe(["orders"])
consumed, start = 0, time.time()
while consumed < RECORDS and time.time() - start < 60:
    m = consumer.poll(1.0)
    if m is not None and not m.error():
        consumed += 1
consumer.close()
print("consumed", consumed)
