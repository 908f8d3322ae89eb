//! Record batches inside frames and in log segments: CRC checks, every
//! compression codec, control records, internal-topic keys and values, legacy
//! message sets, and hostile lengths.

mod common;

use bytes::Bytes;
use common::batches::{batch, compress, legacy_message, legacy_message_at, rec, struct_bytes, Rec};
use kwire::decode::fields::Context;
use kwire::decode::records::BatchDecoder;
use kwire::decode::{Node, Role, Value};
use kwire::schema::Catalogue;
use serde_json::json;

fn decode(data: &[u8], ctx: &Context) -> (Vec<Node>, Vec<String>) {
    let buf = Bytes::copy_from_slice(data);
    let mut nodes = Vec::new();
    let mut bd = BatchDecoder::new(&buf, Catalogue::builtin(), ctx);
    bd.decode_stream(0, buf.len(), &mut nodes);
    (nodes, bd.warnings.into_iter().map(|w| w.text).collect())
}

/// The decoder's own note on `n`, as text.
fn note(n: &Node) -> Option<String> {
    n.note.as_ref().map(|t| t.text().to_string())
}

fn find<'a>(n: &'a Node, name: &str) -> Option<&'a Node> {
    let mut hit = None;
    n.walk(&mut |c, _| {
        if hit.is_none() && c.name == name {
            hit = Some(c);
        }
    });
    hit
}

fn records_of(n: &Node) -> Vec<&Node> {
    let mut v = Vec::new();
    n.walk(&mut |c, _| {
        if c.ty == "Record" {
            v.push(c);
        }
    });
    v
}

fn bytes_of(n: &Node, name: &str) -> Option<Vec<u8>> {
    match &n.children.iter().find(|c| c.name == name)?.value {
        Value::Bytes(b) => b.as_ref().map(|b| b.to_vec()),
        _ => None,
    }
}

fn sample_records() -> Vec<Rec> {
    vec![
        Rec {
            key: None,
            value: Some(b"hello".to_vec()),
            headers: vec![],
            timestamp_delta: 0,
        },
        Rec {
            key: Some(b"k1".to_vec()),
            value: None,
            headers: vec![
                ("trace".into(), Some(b"abc".to_vec())),
                ("empty".into(), None),
            ],
            timestamp_delta: 5,
        },
        Rec {
            key: Some(vec![0xff; 200]),
            value: Some(vec![7; 300]),
            headers: vec![],
            timestamp_delta: -3,
        },
    ]
}

#[test]
fn the_example_batch_has_a_valid_crc_and_a_corrupt_one_is_reported() {
    let empty = kwire::protocol::record_batch::empty_batch();
    let (nodes, warnings) = decode(&empty, &Context::default());
    assert!(warnings.is_empty(), "{warnings:?}");
    let crc = find(&nodes[0], "crc").unwrap();
    assert!(note(crc).unwrap().contains("ok"));
    let mut bad = empty.clone();
    bad[40] ^= 0x01; // inside baseTimestamp
    let (nodes, warnings) = decode(&bad, &Context::default());
    let crc = find(&nodes[0], "crc").unwrap();
    assert!(
        note(crc).unwrap().contains("mismatch: computed"),
        "{:?}",
        crc.note
    );
    assert!(warnings.iter().any(|w| w.contains("CRC mismatch")));
    assert_eq!(
        find(&nodes[0], "recordsCount").unwrap().value,
        Value::Int(0),
        "fields still shown"
    );
}

#[test]
fn every_codec_decodes_to_the_same_records() {
    for codec in 0..=4i16 {
        let data = batch(100, codec, &sample_records());
        let (nodes, warnings) = decode(&data, &Context::default());
        assert!(warnings.is_empty(), "codec {codec}: {warnings:?}");
        let recs = records_of(&nodes[0]);
        assert_eq!(recs.len(), 3, "codec {codec}");
        assert_eq!(bytes_of(recs[0], "key"), None);
        assert_eq!(bytes_of(recs[0], "value"), Some(b"hello".to_vec()));
        assert_eq!(bytes_of(recs[1], "key"), Some(b"k1".to_vec()));
        assert_eq!(bytes_of(recs[1], "value"), None);
        assert_eq!(bytes_of(recs[2], "value"), Some(vec![7; 300]));
        let headers = recs[1]
            .children
            .iter()
            .find(|c| c.name == "headers")
            .unwrap();
        assert_eq!(headers.children.len(), 2);
        assert_eq!(
            bytes_of(&headers.children[0], "headerValue"),
            Some(b"abc".to_vec())
        );
        assert_eq!(bytes_of(&headers.children[1], "headerValue"), None);
        let od = recs[2]
            .children
            .iter()
            .find(|c| c.name == "offsetDelta")
            .unwrap();
        assert_eq!(note(od).as_deref(), Some("(offset 102)"));
        if codec != 0 {
            let mut decompressed = None;
            nodes[0].walk(&mut |n, _| {
                if n.role == Role::Decompressed {
                    decompressed = Some(n)
                }
            });
            assert!(
                decompressed.is_some(),
                "codec {codec}: decompressed subtree"
            );
        } else {
            // Uncompressed records sit at their frame offsets.
            assert_eq!(recs[0].offset, 61);
        }
    }
}

#[test]
fn a_compression_bomb_and_an_overlong_batch_end_with_errors() {
    let zeros = vec![Rec {
        key: None,
        value: Some(vec![0; 8 << 20]),
        headers: vec![],
        timestamp_delta: 0,
    }];
    let data = batch(0, 1, &zeros);
    assert!(data.len() < 100_000, "the bomb is small: {}", data.len());
    let ctx = Context {
        budget: kwire::budget::Budget::new(kwire::budget::Limits {
            decompressed: 1 << 20,
            ..Default::default()
        }),
        ..Context::default()
    };
    let (nodes, warnings) = decode(&data, &ctx);
    assert!(
        warnings.iter().any(|w| w.contains("--max-decompressed")),
        "{warnings:?}"
    );
    assert!(find(&nodes[0], "records").unwrap().error().is_some());
    // A batch length far past the input is a truncated batch, nothing allocated.
    let mut long = kwire::protocol::record_batch::empty_batch();
    long[8..12].copy_from_slice(&i32::MAX.to_be_bytes());
    let (nodes, _) = decode(&long, &Context::default());
    assert_eq!(nodes[0].name, "truncated batch");
}

#[test]
fn control_records_show_their_type_and_marker() {
    // A COMMIT marker: key = version 0, type 1; value = version 0, coordinatorEpoch 7.
    let rec = Rec {
        key: Some(vec![0, 0, 0, 1]),
        value: Some(vec![0, 0, 0, 0, 0, 7]),
        headers: vec![],
        timestamp_delta: 0,
    };
    let data = batch(5, 0x30, &[rec]); // transactional + control
    let (nodes, warnings) = decode(&data, &Context::default());
    assert!(warnings.is_empty(), "{warnings:?}");
    let attrs = find(&nodes[0], "attributes").unwrap();
    assert!(note(attrs).unwrap().contains("transactional, control"));
    let ty = find(&nodes[0], "type").unwrap();
    assert_eq!(note(ty).as_deref(), Some("(COMMIT)"));
    assert_eq!(
        find(&nodes[0], "coordinatorEpoch").unwrap().value,
        Value::Int(7)
    );
}

#[test]
fn internal_topic_records_decode_through_their_schemas() {
    // __share_group_state: ShareSnapshotKey (type 0) / ShareSnapshotValue v0 with the
    // tagged DeliveryCompleteCount that Kafka 4.2 added, and without it.
    let key = struct_bytes(
        "ShareSnapshotKey",
        0,
        json!({"GroupId": "g", "TopicId": "00000000-0000-0000-0000-000000000001", "Partition": 3}),
        &[0, 0],
    );
    for with_count in [false, true] {
        let mut value = json!({"SnapshotEpoch": 1, "StateEpoch": 2, "LeaderEpoch": 3, "StartOffset": 10, "CreateTimestamp": 0, "WriteTimestamp": 0, "StateBatches": []});
        if with_count {
            value["DeliveryCompleteCount"] = json!(42);
        }
        let value = struct_bytes("ShareSnapshotValue", 0, value, &[0, 0]);
        let data = batch(
            0,
            0,
            &[Rec {
                key: Some(key.clone()),
                value: Some(value),
                headers: vec![],
                timestamp_delta: 0,
            }],
        );
        let ctx = Context {
            topic: Some("__share_group_state".into()),
            topic_forced: true,
            ..Context::default()
        };
        let (nodes, warnings) = decode(&data, &ctx);
        assert!(warnings.is_empty(), "{warnings:?}");
        let snap = find(&nodes[0], "ShareSnapshotValue").expect("value struct");
        assert_eq!(find(snap, "StartOffset").unwrap().value, Value::Int(10));
        let count = find(snap, "DeliveryCompleteCount");
        assert_eq!(
            count.map(|n| n.value.clone()),
            with_count.then_some(Value::Int(42))
        );
        let k = find(&nodes[0], "ShareSnapshotKey").expect("key struct");
        assert_eq!(find(k, "Partition").unwrap().value, Value::Int(3));
        assert!(
            find(k, "Partition").unwrap().offset > 61,
            "offsets within the batch"
        );
    }
    // __consumer_offsets: OffsetCommitKey (type 1) and OffsetCommitValue v3; a tombstone.
    let key = struct_bytes(
        "OffsetCommitKey",
        0,
        json!({"group": "g", "topic": "t", "partition": 0}),
        &[0, 1],
    );
    let value = struct_bytes(
        "OffsetCommitValue",
        3,
        json!({"offset": 99, "leaderEpoch": 1, "metadata": "", "commitTimestamp": 5}),
        &[0, 3],
    );
    let data = batch(
        0,
        0,
        &[
            Rec {
                key: Some(key.clone()),
                value: Some(value),
                headers: vec![],
                timestamp_delta: 0,
            },
            Rec {
                key: Some(key),
                value: None,
                headers: vec![],
                timestamp_delta: 0,
            },
        ],
    );
    let ctx = Context {
        topic: Some("__consumer_offsets".into()),
        topic_forced: true,
        ..Context::default()
    };
    let (nodes, warnings) = decode(&data, &ctx);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(
        find(find(&nodes[0], "OffsetCommitValue").unwrap(), "offset")
            .unwrap()
            .value,
        Value::Int(99)
    );
    let recs = records_of(&nodes[0]);
    let value = recs[1].children.iter().find(|c| c.name == "value");
    assert_eq!(note(value.unwrap()).as_deref(), Some("(tombstone)"));
    // __cluster_metadata: frame version 1, api key 2 (TopicRecord), version 0.
    let value = struct_bytes(
        "TopicRecord",
        0,
        json!({"Name": "orders", "TopicId": "00000000-0000-0000-0000-0000000000aa"}),
        &[1, 2, 0],
    );
    let data = batch(
        0,
        0,
        &[Rec {
            key: None,
            value: Some(value),
            headers: vec![],
            timestamp_delta: 0,
        }],
    );
    let ctx = Context {
        topic: Some("__cluster_metadata".into()),
        topic_forced: true,
        ..Context::default()
    };
    let (nodes, warnings) = decode(&data, &ctx);
    assert!(warnings.is_empty(), "{warnings:?}");
    let topic = find(&nodes[0], "TopicRecord").expect("TopicRecord");
    assert_eq!(
        find(topic, "Name").unwrap().value,
        Value::Str(Some("orders".into()))
    );
    // __transaction_state: TransactionLogKey (type 0, like ShareSnapshotKey) / TransactionLogValue v0.
    let key = struct_bytes(
        "TransactionLogKey",
        0,
        json!({"TransactionalId": "tx"}),
        &[0, 0],
    );
    let value = struct_bytes(
        "TransactionLogValue",
        0,
        json!({"ProducerId": 7, "ProducerEpoch": 1, "TransactionTimeoutMs": 60000, "TransactionStatus": 2, "TransactionPartitions": [], "TransactionLastUpdateTimestampMs": 0, "TransactionStartTimestampMs": 0}),
        &[0, 0],
    );
    let data = batch(
        0,
        0,
        &[Rec {
            key: Some(key),
            value: Some(value),
            headers: vec![],
            timestamp_delta: 0,
        }],
    );
    let ctx = Context {
        topic: Some("__transaction_state".into()),
        topic_forced: true,
        ..Context::default()
    };
    let (nodes, warnings) = decode(&data, &ctx);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(
        find(
            find(&nodes[0], "TransactionLogKey").unwrap(),
            "TransactionalId"
        )
        .unwrap()
        .value,
        Value::Str(Some("tx".into()))
    );
    assert_eq!(
        find(
            find(&nodes[0], "TransactionLogValue").unwrap(),
            "ProducerId"
        )
        .unwrap()
        .value,
        Value::Int(7)
    );
}

#[test]
fn legacy_message_sets_with_a_gzip_wrapper() {
    let inner = [
        legacy_message(0, 1, 0, None, Some(b"one")),
        legacy_message(1, 1, 0, Some(b"k"), Some(b"two")),
    ]
    .concat();
    let wrapper = legacy_message(1, 1, 1, None, Some(&compress(1, &inner)));
    let set = [legacy_message(0, 0, 0, None, Some(b"v0 message")), wrapper].concat();
    let (nodes, warnings) = decode(&set, &Context::default());
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(nodes.len(), 2);
    assert_eq!(note(&nodes[0]).as_deref(), Some("v0"));
    assert!(note(find(&nodes[0], "crc").unwrap())
        .unwrap()
        .contains("CRC-32 ok"));
    let mut inner_msgs = 0;
    nodes[1].walk(&mut |n, _| {
        if n.ty == "Message" {
            inner_msgs += 1
        }
    });
    assert_eq!(inner_msgs, 3, "the wrapper and its two inner messages");
}

/// A display filter's record parts (`decode::records::each`, read off the
/// tape) give each record the offset and timestamp the records view gives it
/// (read off the tree): LogAppendTime batches and legacy wrappers included.
#[test]
fn record_parts_have_the_records_views_offsets_and_timestamps() {
    let deltas = [
        rec(Some(b"a"), Some(b"1"), &[("h", Some(b"x"))], 0),
        rec(None, Some(b"2"), &[], 250),
        rec(Some(b"c"), None, &[], 900),
    ];
    // LogAppendTime (0x08): every record's timestamp is the batch's
    // maxTimestamp, whatever its delta; then the same gzipped with CreateTime.
    let mut log_append = batch(10, 0x08, &deltas);
    log_append[35..43].copy_from_slice(&1_800_000_000_000i64.to_be_bytes());
    let crc = kwire::protocol::crc32c::crc32c(&log_append[21..]);
    log_append[17..21].copy_from_slice(&crc.to_be_bytes());
    let create_time = batch(13, 1, &deltas);
    // A magic 1 wrapper at offset 21 numbers its messages from 0 (its own
    // offset is the last one's) and stamps them LogAppendTime (0x08) with its own.
    let inner = [
        legacy_message_at(0, 1, 0, 5, None, Some(b"one")),
        legacy_message_at(1, 1, 0, 6, Some(b"k"), Some(b"two")),
    ]
    .concat();
    let wrapper = legacy_message_at(21, 1, 1 | 0x08, 77, None, Some(&compress(1, &inner)));
    let set = [
        log_append,
        create_time,
        legacy_message(30, 0, 0, None, Some(b"v0 message")),
        wrapper,
    ]
    .concat();
    let (nodes, warnings) = decode(&set, &Context::default());
    assert!(warnings.is_empty(), "{warnings:?}");
    type Seen = (Option<i64>, Option<i64>, Option<Vec<u8>>, Option<Vec<u8>>);
    let mut viewed: Vec<Seen> = Vec::new();
    kwire::decode::records::view::records(&nodes, &mut |r| {
        let bytes = |p: kwire::decode::records::view::Payload<'_>| p.bytes().map(|b| b.to_vec());
        viewed.push((Some(r.offset), r.timestamp, bytes(r.key), bytes(r.value)))
    });
    let mut parts: Vec<Seen> = Vec::new();
    let budget = kwire::budget::Budget::new(Default::default());
    kwire::decode::records::each::for_each_record(&set, &budget, &mut |r| {
        parts.push((
            r.offset,
            r.timestamp,
            r.key.map(<[u8]>::to_vec),
            r.value.map(<[u8]>::to_vec),
        ));
        true
    });
    let at = |v: &[Seen]| v.iter().map(|r| (r.0, r.1)).collect::<Vec<_>>();
    let t = 1_700_000_000_000;
    assert_eq!(
        at(&viewed),
        [
            (Some(10), Some(1_800_000_000_000)),
            (Some(11), Some(1_800_000_000_000)),
            (Some(12), Some(1_800_000_000_000)),
            (Some(13), Some(t)),
            (Some(14), Some(t + 250)),
            (Some(15), Some(t + 900)),
            (Some(30), None),
            (Some(20), Some(77)),
            (Some(21), Some(77)),
        ]
    );
    assert_eq!(parts, viewed);
}

/// `kwire records SEG --format dump` of the segment `seg` (written to a
/// file named after `name`): its exit status and standard output.
fn dump_of(seg: &[u8], name: &str) -> (i32, String) {
    let path = std::env::temp_dir().join(format!("kwire-seg-{name}-{}.log", std::process::id()));
    std::fs::write(&path, seg).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(["records", path.to_str().unwrap(), "--format", "dump"])
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&path);
    let text = String::from_utf8(out.stdout).unwrap();
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn records_command_lists_a_segment_like_dump_log() {
    let seg = [
        batch(0, 0, &sample_records()),
        batch(3, 1, &sample_records()),
    ]
    .concat();
    let (status, text) = dump_of(&seg, "plain");
    assert_eq!(status, 0, "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 8, "{text}");
    assert!(
        lines[0].starts_with("baseOffset: 0 lastOffset: 2 count: 3"),
        "{}",
        lines[0]
    );
    assert!(lines[0].contains("crcValid: true") && lines[0].contains("compresscodec: none"));
    assert!(
        lines[1].starts_with("| offset: 0 ") && lines[1].contains("payload: hello"),
        "{}",
        lines[1]
    );
    assert!(
        lines[4].contains("position: ") && lines[4].contains("compresscodec: gzip"),
        "{}",
        lines[4]
    );
    assert!(
        lines[6].contains("headerKeys: [trace,empty]"),
        "{}",
        lines[6]
    );
}

/// Under LogAppendTime a record's timestamp is its batch's maxTimestamp,
/// whatever its delta says; a batch cut by the end of the file says so.
#[test]
fn the_dump_gives_log_append_time_and_names_a_cut_batch() {
    let mut late = sample_records();
    late[0].timestamp_delta = 5;
    let seg = [
        batch(0, 0x08, &late),
        batch(3, 0, &sample_records())[..40].to_vec(),
    ]
    .concat();
    let (status, text) = dump_of(&seg, "lat");
    assert_eq!(status, 2, "the file ends inside a batch: {text}");
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].contains(" LogAppendTime: 1700000000000 "),
        "{text}"
    );
    assert!(
        lines[1].starts_with("| offset: 0 LogAppendTime: 1700000000000 keySize:"),
        "{text}"
    );
    let cut = seg.len() - 40;
    assert_eq!(
        lines.last().unwrap(),
        &format!("| truncated batch at position {cut} (40 bytes): the input ends inside it"),
        "{text}"
    );
}

#[test]
fn kraft_control_records_decode_through_their_schemas() {
    let cat = Catalogue::builtin();
    for (ty, schema) in [
        (2i16, "LeaderChangeMessage"),
        (3, "SnapshotHeaderRecord"),
        (4, "SnapshotFooterRecord"),
        (5, "KRaftVersionRecord"),
        (6, "VotersRecord"),
    ] {
        let v = cat
            .entries_named(schema)
            .next()
            .unwrap()
            .spec()
            .valid_versions
            .lo;
        let (body, _) = kwire::encode::example::example_payload(cat, schema, Some(v)).unwrap();
        let value = [v.to_be_bytes().to_vec(), body].concat();
        let key = [0i16.to_be_bytes(), ty.to_be_bytes()].concat();
        let data = batch(
            0,
            0x20,
            &[Rec {
                key: Some(key),
                value: Some(value),
                headers: vec![],
                timestamp_delta: 0,
            }],
        );
        let (nodes, warnings) = decode(&data, &Context::default());
        assert!(warnings.is_empty(), "{schema}: {warnings:?}");
        assert!(find(&nodes[0], schema).is_some(), "{schema} decoded");
    }
}

#[test]
fn legacy_wrappers_nest_only_so_deep() {
    // Wrap a message in gzip wrapper messages six times: kwire unpacks four levels.
    let mut set = legacy_message(0, 1, 0, None, Some(b"innermost"));
    for _ in 0..6 {
        set = legacy_message(0, 1, 1, None, Some(&compress(1, &set)));
    }
    let (nodes, _) = decode(&set, &Context::default());
    let mut depth_errors = 0;
    let mut messages = 0;
    nodes[0].walk(&mut |n, _| {
        if n.ty == "Message" {
            messages += 1;
        }
        if n.error().is_some_and(|e| e.contains("nested deeper")) {
            depth_errors += 1;
        }
    });
    assert_eq!(depth_errors, 1, "the fifth wrapper is not unpacked");
    assert_eq!(
        messages,
        1 + kwire::decode::records::layout::MAX_NESTING,
        "outer wrapper plus four unpacked levels"
    );
}

#[test]
fn schema_registry_framing_is_shown_under_plain_keys_and_values() {
    use kwire::decode::{decode_frame, DecodeOptions};
    let cat = Catalogue::builtin();
    let key = vec![0u8, 0, 0, 0, 5, b'k'];
    let value = [&[0u8, 0, 0, 0, 17][..], b"{\"id\":7}"].concat();
    let records = [
        // A header value in the same shape stays bytes: headers are not serialized records.
        Rec {
            key: Some(key.clone()),
            value: Some(value.clone()),
            headers: vec![("h".into(), Some(value.clone()))],
            timestamp_delta: 0,
        },
        // Magic and id without a payload: not framing.
        Rec {
            key: None,
            value: Some(vec![0, 0, 0, 0, 9]),
            headers: vec![],
            timestamp_delta: 0,
        },
    ];
    let leaves = |n: &Node| -> Vec<(String, String, usize, usize, Value)> {
        n.children
            .iter()
            .map(|c| {
                (
                    c.name.to_string(),
                    c.ty.to_string(),
                    c.offset,
                    c.len,
                    c.value.clone(),
                )
            })
            .collect()
    };
    let framing = |at: usize, bytes: &[u8], id: i64| {
        vec![
            (
                "magic".to_string(),
                "int8".to_string(),
                at,
                1,
                Value::Int(0),
            ),
            (
                "schemaId".to_string(),
                "int32".to_string(),
                at + 1,
                4,
                Value::Int(id),
            ),
            (
                "payload".to_string(),
                "bytes".to_string(),
                at + 5,
                bytes.len() - 5,
                Value::Bytes(Some(Bytes::copy_from_slice(&bytes[5..]))),
            ),
        ]
    };
    let position =
        |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).position(|w| w == needle).unwrap();
    // The records as a frame's tree has them (from the frame's tape), or as
    // the record decoder builds them alone (a log segment's, from a tape of
    // their own): the tree and the bytes its offsets index.
    let tree = |data: &[u8], topic: &str, by_record_decoder: bool| -> (Node, Vec<u8>) {
        if by_record_decoder {
            let ctx = Context {
                topic: Some(topic.into()),
                ..Default::default()
            };
            let mut root = Node::new(
                "records",
                "records",
                0,
                kwire::decode::Region::RecordBatch,
                Role::Structure,
            );
            root.children = decode(data, &ctx).0;
            return (root, data.to_vec());
        }
        let bytes = common::batches::produce(cat, topic, data);
        let frame = decode_frame(
            cat,
            Bytes::from(bytes.clone()),
            0,
            &DecodeOptions::default(),
        );
        assert!(
            frame.error.is_none() && frame.warnings.is_empty(),
            "{:?} {:?}",
            frame.error,
            frame.warnings
        );
        (frame.root, bytes)
    };
    for by_record_decoder in [false, true] {
        // Uncompressed: offsets index the frame.
        let (root, bytes) = tree(&batch(0, 0, &records), "orders", by_record_decoder);
        let recs = records_of(&root);
        let (k, v) = (
            find(recs[0], "key").unwrap(),
            find(recs[0], "value").unwrap(),
        );
        let (key_at, value_at) = (position(&bytes, &key), position(&bytes, &value));
        assert_eq!((k.offset, v.offset), (key_at, value_at));
        assert_eq!(
            leaves(k),
            framing(key_at, &key, 5),
            "by the record decoder: {by_record_decoder}"
        );
        assert_eq!(
            leaves(v),
            framing(value_at, &value, 17),
            "by the record decoder: {by_record_decoder}"
        );
        assert_eq!(
            note(v).as_deref(),
            Some("(Schema Registry framing, schema 17)")
        );
        let payload = find(v, "payload").unwrap();
        // The preview is the views' note (`render::notes`), made when shown.
        assert_eq!(
            (
                note(payload).as_deref(),
                kwire::render::notes::note(payload).as_deref()
            ),
            (None, Some("(text \"{\"id\":7}\")"))
        );
        // Taught from its own bytes: the rest of the value, not a length before it.
        let taught =
            kwire::teach::explain::explain_node(payload, Some(v), &bytes).expect("explained");
        assert_eq!(taught.value, payload.value);
        assert!(
            taught.lines[0].ends_with("the rest of the value"),
            "{:?}",
            taught.lines
        );
        assert!(
            find(recs[0], "headerValue").unwrap().children.is_empty(),
            "header values are not framed"
        );
        assert!(
            find(recs[1], "value").unwrap().children.is_empty(),
            "five bytes are not framing"
        );
        // gzip: offsets index the decompressed data.
        let (root, _) = tree(&batch(0, 1, &records), "orders", by_record_decoder);
        let mut data = None;
        root.walk(&mut |n, _| {
            if let (Role::Decompressed, Value::Bytes(Some(b))) = (n.role, &n.value) {
                data = Some(b.clone());
            }
        });
        let data = data.expect("decompressed");
        let v = find(records_of(&root)[0], "value").unwrap();
        assert_eq!(leaves(v), framing(position(&data, &value), &value, 17));
        // An internal topic's keys start with a zero byte too: they decode through their schema instead.
        let mut commit = vec![0u8, 1, 0, 1, b'g', 0, 1, b't'];
        commit.extend_from_slice(&0i32.to_be_bytes());
        let (root, _) = tree(
            &batch(
                0,
                0,
                &[Rec {
                    key: Some(commit),
                    value: None,
                    headers: vec![],
                    timestamp_delta: 0,
                }],
            ),
            "__consumer_offsets",
            by_record_decoder,
        );
        let k = find(records_of(&root)[0], "key").unwrap();
        let names: Vec<String> = k.children.iter().map(|c| c.name.to_string()).collect();
        assert_eq!(names, ["type", "OffsetCommitKey"]);
    }
}

#[test]
fn the_view_reads_each_record_as_a_consumer_sees_it() {
    use kwire::decode::records::view;
    type Seen = (
        i64,
        Option<i64>,
        bool,
        Option<Vec<u8>>,
        Option<Vec<u8>>,
        Vec<(Vec<u8>, Option<Vec<u8>>)>,
    );
    let seen = |data: &[u8]| -> Vec<Seen> {
        let (nodes, _) = decode(data, &Context::default());
        let mut out = Vec::new();
        let bytes = |p: view::Payload<'_>| p.bytes().map(|b| b.to_vec());
        view::records(&nodes, &mut |r| {
            let headers = r
                .headers
                .iter()
                .map(|(k, v)| (bytes(*k).unwrap_or_default(), bytes(*v)))
                .collect();
            out.push((
                r.offset,
                r.timestamp,
                r.control,
                bytes(r.key),
                bytes(r.value),
                headers,
            ));
        });
        out
    };
    let t0 = 1_700_000_000_000i64;
    // v2 in every codec: base offset plus delta, base timestamp plus delta.
    for codec in 0..=4i16 {
        let got = seen(&batch(100, codec, &sample_records()));
        let brief: Vec<(i64, Option<i64>, bool)> = got.iter().map(|s| (s.0, s.1, s.2)).collect();
        assert_eq!(
            brief,
            [
                (100, Some(t0), false),
                (101, Some(t0 + 5), false),
                (102, Some(t0 - 3), false)
            ],
            "codec {codec}"
        );
        assert_eq!(
            got[1].5,
            [
                (b"trace".to_vec(), Some(b"abc".to_vec())),
                (b"empty".to_vec(), None)
            ]
        );
        assert_eq!(
            (got[0].3.clone(), got[0].4.clone()),
            (None, Some(b"hello".to_vec()))
        );
    }
    // LogAppendTime: every record has the batch's max timestamp. Control batches say so.
    let brief: Vec<(i64, Option<i64>, bool)> = seen(&batch(0, 0x08 | 0x01, &sample_records()))
        .iter()
        .map(|s| (s.0, s.1, s.2))
        .collect();
    assert_eq!(
        brief,
        [
            (0, Some(t0), false),
            (1, Some(t0), false),
            (2, Some(t0), false)
        ]
    );
    let commit = Rec {
        key: Some(vec![0, 0, 0, 1]),
        value: Some(vec![0, 0, 0, 0, 0, 5]),
        headers: vec![],
        timestamp_delta: 0,
    };
    assert!(seen(&batch(7, 0x20, &[commit]))[0].2, "a control record");
    // Legacy: magic 0 has no timestamp; a magic 1 wrapper numbers its messages
    // from 0 and carries the last one's offset.
    let inner = [
        legacy_message(0, 1, 0, None, Some(b"one")),
        legacy_message(1, 1, 0, Some(b"k"), Some(b"two")),
    ]
    .concat();
    let set = [
        legacy_message(9, 0, 0, None, Some(b"v0 message")),
        legacy_message(11, 1, 1, None, Some(&compress(1, &inner))),
    ]
    .concat();
    let got: Vec<(i64, Option<i64>, Option<Vec<u8>>)> =
        seen(&set).into_iter().map(|s| (s.0, s.1, s.4)).collect();
    assert_eq!(
        got,
        [
            (9, None, Some(b"v0 message".to_vec())),
            (10, Some(t0), Some(b"one".to_vec())),
            (11, Some(t0), Some(b"two".to_vec()))
        ]
    );
    // A record that did not read is left out (the damage says where).
    let mut cut = batch(0, 0, &sample_records());
    cut[61] = 0x7f; // the first record's length, past the batch
    let crc = kwire::protocol::crc32c::crc32c(&cut[21..]);
    cut[17..21].copy_from_slice(&crc.to_be_bytes());
    assert!(seen(&cut).is_empty());
}

/// FetchSnapshot's UnalignedRecords is a slice of a snapshot file, not whole
/// batches: its bytes are shown as they are, with no batch walked and no
/// warning that they are not batches, where a Fetch's records field holding
/// the same bytes is walked into its batch, in the tree and on the tape.
#[test]
fn unaligned_records_are_bytes_where_a_fetch_s_records_are_batches() {
    use kwire::decode::{decode_frame, DecodeOptions, Direction};
    let cat = Catalogue::builtin();
    let slice = batch(0, 0, &[rec(Some(b"k"), Some(b"v"), &[], 0)]);
    let partition = json!({"Index": 0, "ErrorCode": 0, "SnapshotId": {"EndOffset": 5, "Epoch": 1}, "Size": 100, "Position": 0, "UnalignedRecords": hex::encode(&slice)});
    let snapshot = common::batches::frame(
        cat,
        Direction::Response,
        59,
        0,
        json!({"ThrottleTimeMs": 0, "ErrorCode": 0, "Topics": [{"Name": "t", "Partitions": [partition]}]}),
    );
    let fetch = common::batches::fetch_v4(cat, "t", &slice);
    let decoded = |bytes: Vec<u8>, api_key, version, annotated_tape| {
        let opts = DecodeOptions {
            direction: Some(Direction::Response),
            api_key: Some(api_key),
            api_version: Some(version),
            annotated_tape,
            ..Default::default()
        };
        decode_frame(cat, Bytes::from(bytes), 0, &opts)
    };
    let tree = decoded(snapshot.clone(), 59, 0, false);
    assert!(
        tree.error.is_none() && tree.warnings.is_empty(),
        "{:?}",
        tree.warnings
    );
    let unaligned = find(&tree.root, "UnalignedRecords").expect("the field");
    assert!(unaligned.children.is_empty(), "no batch walked");
    assert_eq!(
        unaligned.value,
        Value::Bytes(Some(Bytes::from(slice.clone())))
    );
    let tree = decoded(fetch.clone(), 1, 4, false);
    assert!(
        find(&tree.root, "RecordBatch[0]").is_some(),
        "a Fetch's records are walked"
    );
    // On the annotated tape: a batch's slots under Fetch's Records only.
    let has_batch = |bytes, api_key, version| {
        let f = decoded(bytes, api_key, version, true);
        let tape = f.values.expect("a tape");
        tape.slots
            .iter()
            .any(|s| matches!(s.id, kwire::decode::tape::Id::Batch(_)))
    };
    assert!(!has_batch(snapshot, 59, 0));
    assert!(has_batch(fetch, 1, 4));
}
