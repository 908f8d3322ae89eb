//! Record batches written by an independent implementation, the kafka-protocol
//! crate's RecordBatchEncoder, with every compression type, decode in kwire to
//! the same records: keys and values null and not, headers, offsets, timestamps.

use bytes::{Bytes, BytesMut};
use indexmap_shim::IndexMap;
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::records::{
    Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};
use kwire::decode::fields::Context;
use kwire::decode::records::BatchDecoder;
use kwire::decode::{Node, Value};
use kwire::schema::Catalogue;

mod indexmap_shim {
    pub type IndexMap<K, V> = kafka_protocol::indexmap::IndexMap<K, V>;
}

fn records(n: usize) -> Vec<Record> {
    (0..n)
        .map(|i| {
            let mut headers = IndexMap::new();
            if i % 2 == 0 {
                headers.insert(
                    StrBytes::from_static_str("trace"),
                    Some(Bytes::from(format!("t-{i}"))),
                );
                headers.insert(StrBytes::from_static_str("none"), None);
            }
            Record {
                transactional: false,
                control: false,
                delete_horizon: false,
                partition_leader_epoch: 3,
                producer_id: 42,
                producer_epoch: 1,
                timestamp_type: TimestampType::Creation,
                offset: 1000 + i as i64,
                sequence: 10 + i as i32,
                timestamp: 1_700_000_000_000 + (i as i64) * 17,
                key: (i % 3 != 0).then(|| Bytes::from(format!("key-{i}"))),
                value: (i % 4 != 1).then(|| Bytes::from(format!("value {i} ").repeat(1 + i % 5))),
                headers,
            }
        })
        .collect()
}

fn child<'a>(n: &'a Node, name: &str) -> &'a Node {
    n.children
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("{} has no {name}", n.name))
}

fn int(n: &Node, name: &str) -> i64 {
    match child(n, name).value {
        Value::Int(v) => v,
        ref other => panic!("{name}: {other:?}"),
    }
}

fn bytes(n: &Node, name: &str) -> Option<Bytes> {
    match &child(n, name).value {
        Value::Bytes(b) => b.clone(),
        other => panic!("{name}: {other:?}"),
    }
}

#[test]
fn kafka_protocol_batches_decode_to_the_same_records_with_every_codec() {
    for compression in [
        Compression::None,
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ] {
        let recs = records(9);
        let mut buf = BytesMut::new();
        RecordBatchEncoder::encode(
            &mut buf,
            &recs,
            &RecordEncodeOptions {
                version: 2,
                compression,
            },
        )
        .unwrap();
        let buf = buf.freeze();
        let ctx = Context::default();
        let mut nodes = Vec::new();
        let mut bd = BatchDecoder::new(&buf, Catalogue::builtin(), &ctx);
        bd.decode_stream(0, buf.len(), &mut nodes);
        assert!(bd.warnings.is_empty(), "{compression:?}: {:?}", bd.warnings);
        assert_eq!(nodes.len(), 1, "{compression:?}: one batch");
        let batch = &nodes[0];
        assert!(
            child(batch, "crc")
                .note
                .as_ref()
                .map(|n| n.text())
                .as_deref()
                .unwrap()
                .contains("ok"),
            "{compression:?}"
        );
        assert_eq!(
            int(batch, "attributes") & 7,
            compression as i64,
            "{compression:?}"
        );
        assert_eq!(int(batch, "producerId"), 42);
        assert_eq!(int(batch, "producerEpoch"), 1);
        assert_eq!(int(batch, "partitionLeaderEpoch"), 3);
        assert_eq!(int(batch, "baseSequence"), 10);
        let base_offset = int(batch, "baseOffset");
        let base_ts = int(batch, "baseTimestamp");
        let mut decoded = Vec::new();
        batch.walk(&mut |n, _| {
            if n.ty == "Record" {
                decoded.push(n);
            }
        });
        assert_eq!(decoded.len(), recs.len(), "{compression:?}");
        for (r, n) in recs.iter().zip(decoded) {
            assert_eq!(
                base_offset + int(n, "offsetDelta"),
                r.offset,
                "{compression:?}"
            );
            assert_eq!(base_ts + int(n, "timestampDelta"), r.timestamp);
            assert_eq!(
                bytes(n, "key"),
                r.key,
                "{compression:?} key of {}",
                r.offset
            );
            assert_eq!(
                bytes(n, "value"),
                r.value,
                "{compression:?} value of {}",
                r.offset
            );
            let headers = child(n, "headers");
            assert_eq!(headers.children.len(), r.headers.len());
            for (h, (k, v)) in headers.children.iter().zip(&r.headers) {
                assert_eq!(bytes(h, "headerKey").as_deref(), Some(k.as_bytes()));
                assert_eq!(&bytes(h, "headerValue"), v);
            }
        }
    }
}
