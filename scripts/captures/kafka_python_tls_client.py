#!/usr/bin/env python3
"""A short kafka-python session over TLS for the TLS captures: create a topic,
produce three records, read them back without a group. The client writes its
session keys to a key log (SSLContext.keylog_filename, NSS format).
Usage: kafka_python_tls_client.py PORT KEYLOG"""
import ssl
import sys
import time
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic

port, keylog = sys.argv[1], sys.argv[2]
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
ctx.keylog_filename = keylog
common = dict(bootstrap_servers=f"localhost:{port}", security_protocol="SSL", ssl_context=ctx)

admin = KafkaAdminClient(client_id="kwire-tls-admin", **common)
try:
    admin.create_topics([NewTopic("orders", num_partitions=1, replication_factor=1)])
except Exception as e:  # already there
    print("create_topics:", e)
admin.close()
producer = KafkaProducer(client_id="kwire-tls-producer", linger_ms=5, **common)
for i in range(3):
    producer.send("orders", key=f"k{i}".encode(), value=f"order {i} over TLS".encode(), headers=[("trace", b"tls")])
producer.flush()
time.sleep(0.5)
producer.close()
consumer = KafkaConsumer(client_id="kwire-tls-consumer", auto_offset_reset="earliest", consumer_timeout_ms=3000, **common)
consumer.assign([TopicPartition("orders", 0)])
consumer.seek_to_beginning()
seen = 0
for message in consumer:
    seen += 1
    if seen >= 3:
        break
# Let responses in flight (a metadata refresh) arrive before closing, so that
# both sides of stunnel carry the same frames.
time.sleep(1)
consumer.close()
print("consumed", seen)
