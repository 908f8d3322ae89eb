#!/usr/bin/env python3
"""A real librdkafka session (confluent-kafka) for the recorded captures:
produce keyed records with headers in every codec (none, gzip, snappy, lz4,
zstd), then consume them all in a consumer group and commit its offsets."""
import sys
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

bootstrap = f"127.0.0.1:{sys.argv[1] if len(sys.argv) > 1 else 9092}"
topic = "orders"
admin = AdminClient({"bootstrap.servers": bootstrap, "client.id": "kwire-admin"})
for future in admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)]).values():
    try:
        future.result(10)
    except Exception as e:  # already there
        print("create_topics:", e)

sent = 0
for codec in ("none", "gzip", "snappy", "lz4", "zstd"):
    producer = Producer({"bootstrap.servers": bootstrap, "client.id": f"kwire-producer-{codec}",
                         "compression.codec": codec, "linger.ms": 20, "acks": "all"})
    for i in range(4):
        producer.produce(topic, key=f"order-{codec}-{i}".encode(),
                         value=f'{{"order":{i},"codec":"{codec}","item":"widget"}}'.encode(),
                         headers=[("trace-id", f"t-{codec}-{i}".encode()), ("source", b"kwire")])
        sent += 1
    producer.flush(10)

consumer = Consumer({"bootstrap.servers": bootstrap, "client.id": "kwire-consumer", "group.id": "billing",
                     "auto.offset.reset": "earliest", "enable.auto.commit": False,
                     "session.timeout.ms": 10000})
consumer.subscribe([topic])
seen = 0
while seen < sent:
    message = consumer.poll(10)
    if message is None:
        break
    if message.error():
        print("consume:", message.error())
        continue
    seen += 1
consumer.commit(asynchronous=False)
consumer.close()
print(f"sent {sent}, consumed {seen}")
