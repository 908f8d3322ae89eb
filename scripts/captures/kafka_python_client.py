#!/usr/bin/env python3
"""A real client session for the recorded captures: create a topic, produce
with and without compression, consume it in a group with offset commits."""
import sys
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
from kafka.admin import NewTopic

bootstrap = f"127.0.0.1:{sys.argv[1] if len(sys.argv) > 1 else 9092}"
admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="kwire-admin")
try:
    admin.create_topics([NewTopic("payments", num_partitions=1, replication_factor=1)])
except Exception as e:  # already there
    print("create_topics:", e)
admin.close()
for compression in (None, "gzip"):
    producer = KafkaProducer(bootstrap_servers=bootstrap, client_id="kwire-producer", compression_type=compression, linger_ms=5)
    for i in range(5):
        producer.send("payments", key=f"k{i}".encode(), value=f"payment {i} ({compression})".encode(), headers=[("trace", b"abc")])
    producer.flush()
    producer.close()
consumer = KafkaConsumer("payments", bootstrap_servers=bootstrap, client_id="kwire-consumer", group_id="billing",
                         auto_offset_reset="earliest", enable_auto_commit=False, consumer_timeout_ms=5000)
seen = 0
for message in consumer:
    seen += 1
    if seen >= 10:
        break
consumer.commit()
consumer.close()
print("consumed", seen)
