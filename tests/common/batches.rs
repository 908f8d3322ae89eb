//! A small RecordBatch v2 / legacy message writer for tests, independent of
//! kwire's decoder (kwire has no record writer of its own).

use std::io::Write;

#[derive(Clone)]
pub struct Rec {
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub headers: Vec<(String, Option<Vec<u8>>)>,
    pub timestamp_delta: i64,
}

fn varint(out: &mut Vec<u8>, v: i64) {
    let mut u = ((v << 1) ^ (v >> 63)) as u64;
    while u >= 0x80 {
        out.push((u as u8 & 0x7f) | 0x80);
        u >>= 7;
    }
    out.push(u as u8);
}

fn varint_bytes(out: &mut Vec<u8>, b: &Option<Vec<u8>>) {
    match b {
        None => varint(out, -1),
        Some(b) => {
            varint(out, b.len() as i64);
            out.extend_from_slice(b);
        }
    }
}

pub fn record_bytes(r: &Rec, offset_delta: i32) -> Vec<u8> {
    let mut body = vec![0u8]; // attributes
    varint(&mut body, r.timestamp_delta);
    varint(&mut body, offset_delta.into());
    varint_bytes(&mut body, &r.key);
    varint_bytes(&mut body, &r.value);
    varint(&mut body, r.headers.len() as i64);
    for (k, v) in &r.headers {
        varint_bytes(&mut body, &Some(k.clone().into_bytes()));
        varint_bytes(&mut body, v);
    }
    let mut out = Vec::new();
    varint(&mut out, body.len() as i64);
    out.extend_from_slice(&body);
    out
}

pub fn compress(codec: u16, data: &[u8]) -> Vec<u8> {
    match codec {
        0 => data.to_vec(),
        1 => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        2 => {
            // xerial framing, as Java clients write it
            let mut x = vec![
                0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1,
            ];
            for chunk in data.chunks(32 * 1024) {
                let c = snap::raw::Encoder::new().compress_vec(chunk).unwrap();
                x.extend_from_slice(&(c.len() as i32).to_be_bytes());
                x.extend_from_slice(&c);
            }
            x
        }
        3 => {
            let mut e = lz4_flex::frame::FrameEncoder::new(Vec::new());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        4 => ruzstd::encoding::compress_to_vec(data, ruzstd::encoding::CompressionLevel::Fastest),
        _ => panic!("codec {codec}"),
    }
}

/// A RecordBatch v2 with these records; `attributes` low bits pick the codec.
pub fn batch(base_offset: i64, attributes: i16, records: &[Rec]) -> Vec<u8> {
    let mut recs = Vec::new();
    for (i, r) in records.iter().enumerate() {
        recs.extend(record_bytes(r, i as i32));
    }
    batch_of(base_offset, attributes, &recs, records.len() as i32)
}

/// A RecordBatch v2 around `count` records already written as `recs`.
pub fn batch_of(base_offset: i64, attributes: i16, recs: &[u8], count: i32) -> Vec<u8> {
    producer_batch_of(base_offset, attributes, recs, count, (-1, -1, -1))
}

/// A RecordBatch v2 of `count` small records written by producer id,
/// epoch and base sequence `producer`.
pub fn producer_batch(
    base_offset: i64,
    attributes: i16,
    count: i32,
    producer: (i64, i16, i32),
) -> Vec<u8> {
    let mut recs = Vec::new();
    for i in 0..count {
        recs.extend(record_bytes(&rec(None, Some(b"v"), &[], 0), i));
    }
    producer_batch_of(base_offset, attributes, &recs, count, producer)
}

/// [`batch_of`] with its producer id, epoch and base sequence.
pub fn producer_batch_of(
    base_offset: i64,
    attributes: i16,
    recs: &[u8],
    count: i32,
    (producer_id, epoch, sequence): (i64, i16, i32),
) -> Vec<u8> {
    let payload = compress((attributes & 7) as u16, recs);
    let mut after_crc = Vec::new();
    after_crc.extend_from_slice(&attributes.to_be_bytes());
    after_crc.extend_from_slice(&(count - 1).max(0).to_be_bytes());
    after_crc.extend_from_slice(&1_700_000_000_000i64.to_be_bytes());
    after_crc.extend_from_slice(&1_700_000_000_000i64.to_be_bytes());
    after_crc.extend_from_slice(&producer_id.to_be_bytes());
    after_crc.extend_from_slice(&epoch.to_be_bytes());
    after_crc.extend_from_slice(&sequence.to_be_bytes());
    after_crc.extend_from_slice(&count.to_be_bytes());
    after_crc.extend_from_slice(&payload);
    let crc = kwire::protocol::crc32c::crc32c(&after_crc);
    let mut out = Vec::new();
    out.extend_from_slice(&base_offset.to_be_bytes());
    out.extend_from_slice(&((after_crc.len() + 9) as i32).to_be_bytes());
    out.extend_from_slice(&0i32.to_be_bytes());
    out.push(2);
    out.extend_from_slice(&crc.to_be_bytes());
    out.extend_from_slice(&after_crc);
    out
}

/// A legacy message (magic 0 or 1).
pub fn legacy_message(
    offset: i64,
    magic: u8,
    attributes: u8,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> Vec<u8> {
    legacy_message_at(offset, magic, attributes, 1_700_000_000_000, key, value)
}

/// [`legacy_message`] with its timestamp (magic 1 only).
pub fn legacy_message_at(
    offset: i64,
    magic: u8,
    attributes: u8,
    timestamp: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> Vec<u8> {
    let mut m = vec![magic, attributes];
    if magic == 1 {
        m.extend_from_slice(&timestamp.to_be_bytes());
    }
    for b in [key, value] {
        match b {
            None => m.extend_from_slice(&(-1i32).to_be_bytes()),
            Some(b) => {
                m.extend_from_slice(&(b.len() as i32).to_be_bytes());
                m.extend_from_slice(b);
            }
        }
    }
    let mut crc = flate2::Crc::new();
    crc.update(&m);
    let mut out = Vec::new();
    out.extend_from_slice(&offset.to_be_bytes());
    out.extend_from_slice(&((m.len() + 4) as i32).to_be_bytes());
    out.extend_from_slice(&crc.sum().to_be_bytes());
    out.extend_from_slice(&m);
    out
}

/// A frame of the message `api_key` v`version` with this body and the example header.
pub fn frame(
    cat: &kwire::schema::Catalogue,
    direction: kwire::decode::Direction,
    api_key: i16,
    version: i16,
    body: serde_json::Value,
) -> Vec<u8> {
    use kwire::encode::frame::{encode_frame, example_header, FrameSpec};
    let fs = FrameSpec {
        direction,
        api_key,
        version,
        release: None,
    };
    encode_frame(
        cat,
        &fs,
        &example_header(direction),
        body.as_object().unwrap(),
    )
    .unwrap()
}

/// A Produce v9 request carrying `records` for partition 0 of `topic`.
pub fn produce(cat: &kwire::schema::Catalogue, topic: &str, records: &[u8]) -> Vec<u8> {
    produce_topics(cat, &[(topic, &[records])])
}

/// A Produce v9 request carrying, for each topic, `partitions[i]` as partition i.
pub fn produce_topics(cat: &kwire::schema::Catalogue, topics: &[(&str, &[&[u8]])]) -> Vec<u8> {
    let topics = topics_json(
        topics,
        ("Name", "PartitionData"),
        |i, records| serde_json::json!({"Index": i, "Records": hex::encode(records)}),
    );
    let body = serde_json::json!({
        "TransactionalId": null, "Acks": -1, "TimeoutMs": 30000, "TopicData": topics
    });
    frame(cat, kwire::decode::Direction::Request, 0, 9, body)
}

/// Each topic's JSON (its name and partitions under `keys`), each partition
/// made by `partition` from its index and records.
fn topics_json(
    topics: &[(&str, &[&[u8]])],
    (name, partitions): (&str, &str),
    partition: impl Fn(usize, &[u8]) -> serde_json::Value,
) -> Vec<serde_json::Value> {
    topics
        .iter()
        .map(|(topic, records)| {
            let parts: Vec<_> = records
                .iter()
                .enumerate()
                .map(|(i, r)| partition(i, r))
                .collect();
            serde_json::json!({name: topic, partitions: parts})
        })
        .collect()
}

/// A record of these parts.
pub fn rec(
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    headers: &[(&str, Option<&[u8]>)],
    ts: i64,
) -> Rec {
    Rec {
        key: key.map(<[u8]>::to_vec),
        value: value.map(<[u8]>::to_vec),
        headers: headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.map(<[u8]>::to_vec)))
            .collect(),
        timestamp_delta: ts,
    }
}

/// A struct of the catalogue (a coordinator or metadata record's key or
/// value) encoded after `prefix` (its record type, or frame version, api key and version).
pub fn struct_bytes(name: &str, version: i16, body: serde_json::Value, prefix: &[u8]) -> Vec<u8> {
    let cat = kwire::schema::Catalogue::builtin();
    let spec = cat.by_name(name, version, None).unwrap();
    let mut out = prefix.to_vec();
    out.extend(kwire::encode::encode_body(spec, version, body.as_object().unwrap()).unwrap());
    out
}

/// Where a case's records go: a Produce v9 request or a Fetch v4 response to `kwire decode`, or a log segment to `kwire records`.
pub enum Entry {
    Produce,
    FetchV4,
    Segment,
}

/// Records that show one way a batch is decoded.
pub struct BatchCase {
    /// Its snapshot's name.
    pub name: &'static str,
    pub entry: Entry,
    pub topic: &'static str,
    pub records: Vec<u8>,
    /// Arguments to kwire beyond those the entry takes.
    pub args: &'static [&'static str],
}

/// A Fetch v4 response carrying `records` for partition 0 of `topic`.
pub fn fetch_v4(cat: &kwire::schema::Catalogue, topic: &str, records: &[u8]) -> Vec<u8> {
    fetch_v4_partitions(cat, topic, &[records])
}

/// A Fetch v4 response carrying `partitions[i]` as partition i of `topic`.
pub fn fetch_v4_partitions(
    cat: &kwire::schema::Catalogue,
    topic: &str,
    partitions: &[&[u8]],
) -> Vec<u8> {
    fetch_v4_topics(cat, &[(topic, partitions)])
}

/// A Fetch v4 response carrying, for each topic, `partitions[i]` as partition i.
pub fn fetch_v4_topics(cat: &kwire::schema::Catalogue, topics: &[(&str, &[&[u8]])]) -> Vec<u8> {
    let topics = topics_json(
        topics,
        ("Topic", "Partitions"),
        |i, records| serde_json::json!({"PartitionIndex": i, "ErrorCode": 0, "HighWatermark": 4, "LastStableOffset": 4, "AbortedTransactions": [], "Records": hex::encode(records)}),
    );
    frame(
        cat,
        kwire::decode::Direction::Response,
        1,
        4,
        serde_json::json!({"ThrottleTimeMs": 0, "Responses": topics}),
    )
}

/// The batch's checksum made again after a change behind it.
fn checksum_again(batch: &mut [u8]) {
    let crc = kwire::protocol::crc32c::crc32c(&batch[21..]);
    batch[17..21].copy_from_slice(&crc.to_be_bytes());
}

/// Batches of these records damaged one way each.
pub struct Damaged {
    /// A timestamp changed after the checksum was made.
    pub bad_crc: Vec<u8>,
    /// A records count of 3 (the others have their checksum made again, so that only the damage named is wrong).
    pub wrong_count: Vec<u8>,
    /// Compressed data damaged: gzip that does not decompress.
    pub bad_gzip: Vec<u8>,
    /// Compression codec 7.
    pub unknown_codec: Vec<u8>,
}

pub fn damaged(records: &[Rec]) -> Damaged {
    let mut bad_crc = batch(0, 0, records);
    bad_crc[30] ^= 1;
    let mut wrong_count = batch(0, 0, records);
    wrong_count[60] = 3;
    checksum_again(&mut wrong_count);
    let mut bad_gzip = batch(0, 1, records);
    let len = bad_gzip.len();
    bad_gzip[len - 12] ^= 0xff;
    checksum_again(&mut bad_gzip);
    let mut unknown_codec = batch(0, 0, records);
    unknown_codec[22] |= 0x07;
    checksum_again(&mut unknown_codec);
    Damaged {
        bad_crc,
        wrong_count,
        bad_gzip,
        unknown_codec,
    }
}

/// Record batches of every kind the walk onto the tape finds (legacy,
/// wrappers, control, damaged, over budget, internal topics): each case named
/// for what its tree shows.
pub fn record_batch_cases() -> Vec<BatchCase> {
    let records = [
        rec(
            Some(b"user-1"),
            Some(b"{\"amount\":12}"),
            &[("trace", Some(b"abc"))],
            0,
        ),
        rec(None, Some(b"hello"), &[], 5),
    ];
    let legacy = [
        legacy_message(0, 0, 0, Some(b"k0"), Some(b"v0 message")),
        legacy_message(1, 1, 0, None, Some(b"v1 message")),
    ]
    .concat();
    let inner = [
        legacy_message(0, 1, 0, None, Some(b"one")),
        legacy_message(1, 1, 0, Some(b"k"), Some(b"two")),
    ]
    .concat();
    let wrapper = legacy_message(1, 1, 1, None, Some(&compress(1, &inner)));
    // A transaction's commit marker: key version 0, type 1 (commit); value version 0, coordinator epoch 7.
    let control = batch(
        5,
        0x30,
        &[rec(Some(&[0, 0, 0, 1]), Some(&[0, 0, 0, 0, 0, 7]), &[], 0)],
    );
    let Damaged {
        bad_crc,
        wrong_count,
        bad_gzip,
        unknown_codec,
    } = damaged(&records);
    let big = batch(0, 1, &[rec(Some(b"k"), Some(&[b'x'; 300]), &[], 0)]);
    let cut = [batch(0, 0, &records), batch(2, 0, &records)[..40].to_vec()].concat();
    // A fetch from an old broker cut by its size limit part-way through a legacy message.
    let partial_legacy = [
        legacy_message(0, 1, 0, Some(b"k0"), Some(b"first")),
        legacy_message(1, 1, 0, Some(b"k1"), Some(b"second"))[..20].to_vec(),
    ]
    .concat();
    let commit_key = struct_bytes(
        "OffsetCommitKey",
        0,
        serde_json::json!({"group": "billing", "topic": "orders", "partition": 3}),
        &[0, 1],
    );
    let commit = struct_bytes(
        "OffsetCommitValue",
        3,
        serde_json::json!({"offset": 99, "leaderEpoch": 1, "metadata": "", "commitTimestamp": 5}),
        &[0, 3],
    );
    let offsets = batch(
        0,
        0,
        &[
            rec(Some(&commit_key), Some(&commit), &[], 0),
            rec(Some(&commit_key), None, &[], 1),
        ],
    );
    let tx_key = struct_bytes(
        "TransactionLogKey",
        0,
        serde_json::json!({"TransactionalId": "tx-1"}),
        &[0, 0],
    );
    let tx = serde_json::json!({"ProducerId": 7, "ProducerEpoch": 1, "TransactionTimeoutMs": 60000, "TransactionStatus": 2, "TransactionPartitions": [{"Topic": "orders", "PartitionIds": [0, 1]}], "TransactionLastUpdateTimestampMs": 0, "TransactionStartTimestampMs": 0});
    let tx = batch(
        0,
        0,
        &[rec(
            Some(&tx_key),
            Some(&struct_bytes("TransactionLogValue", 0, tx, &[0, 0])),
            &[],
            0,
        )],
    );
    // KRaft's frame version 1, api key 2 (TopicRecord), version 0.
    let topic = struct_bytes(
        "TopicRecord",
        0,
        serde_json::json!({"Name": "orders", "TopicId": "00000000-0000-0000-0000-0000000000aa"}),
        &[1, 2, 0],
    );
    let registry = [rec(
        Some(b"\x00\x00\x00\x00\x05k"),
        Some(b"\x00\x00\x00\x01\x00{\"id\":7}"),
        &[("h", Some(b"\x00\x00\x00\x00\x05k"))],
        0,
    )];
    let case = |name, entry, topic, records, args| BatchCase {
        name,
        entry,
        topic,
        records,
        args,
    };
    vec![
        case(
            "records-legacy-message-set",
            Entry::Segment,
            "orders",
            legacy,
            &[],
        ),
        case(
            "records-legacy-gzip-wrapper",
            Entry::Produce,
            "orders",
            wrapper,
            &[],
        ),
        case(
            "records-control-commit",
            Entry::Produce,
            "orders",
            control,
            &[],
        ),
        case(
            "records-crc-mismatch",
            Entry::Produce,
            "orders",
            bad_crc,
            &[],
        ),
        case(
            "records-count-mismatch",
            Entry::Segment,
            "orders",
            wrong_count,
            &[],
        ),
        case(
            "records-gzip-does-not-decompress",
            Entry::Produce,
            "orders",
            bad_gzip,
            &[],
        ),
        case(
            "records-unknown-codec",
            Entry::Segment,
            "orders",
            unknown_codec,
            &[],
        ),
        case(
            "records-over-max-decompressed",
            Entry::Produce,
            "orders",
            big,
            &["--max-decompressed", "100"],
        ),
        case(
            "records-fetch-v4-partial-legacy-message",
            Entry::FetchV4,
            "orders",
            partial_legacy,
            &[],
        ),
        case(
            "records-segment-truncated",
            Entry::Segment,
            "orders",
            cut,
            &[],
        ),
        case(
            "records-consumer-offsets",
            Entry::Segment,
            "__consumer_offsets",
            offsets,
            &[],
        ),
        case(
            "records-transaction-state",
            Entry::Segment,
            "__transaction_state",
            tx,
            &[],
        ),
        case(
            "records-cluster-metadata",
            Entry::Segment,
            "__cluster_metadata",
            batch(0, 0, &[rec(None, Some(&topic), &[], 0)]),
            &[],
        ),
        case(
            "records-schema-registry-zstd",
            Entry::Segment,
            "orders",
            batch(0, 4, &registry),
            &[],
        ),
    ]
}

/// `batches` uncompressed batches of 100 small records each (key `key-i`, a
/// 40-byte value): the shape of a big Fetch that tests of memory bounds use.
pub fn small_record_batches(batches: i64) -> Vec<u8> {
    (0..batches)
        .flat_map(|b| {
            let recs: Vec<_> = (0..100)
                .map(|i| {
                    rec(
                        Some(format!("key-{i}").as_bytes()),
                        Some(&[b'v'; 40]),
                        &[],
                        i,
                    )
                })
                .collect();
            batch(b * 100, 0, &recs)
        })
        .collect()
}
