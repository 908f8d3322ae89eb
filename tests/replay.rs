//! The annotated tree built from an annotated tape (the default) against the
//! tree built by reading the bytes into nodes (`read_into_nodes`): node for
//! node the same name, type, offset, length, value, note, doc, region, role,
//! key and error, and the same warnings and error, on every message of the
//! catalogue with random bodies (tagged fields, nullable structs, unknown
//! tags), on damaged copies of them (non-canonical encodings that still
//! decode), on the samples and on every contract case.

mod common;

use kwire::budget::{Budget, Limits};
use bytes::Bytes;
use common::batches::{batch, legacy_message, Rec};
use common::all_messages;
use common::random_body::{random_body, Rng};
use kwire::decode::values::SlotKind;
use kwire::decode::{decode_frame, DecodeOptions, Direction, Frame, Node};
use kwire::encode::frame::message_spec;
use kwire::encode::{encode_frame, example_header, FrameSpec};
use kwire::schema::Catalogue;
use serde_json::{Map, Value};

/// The first difference between two trees, as a path of node names.
fn node_diff(a: &Node, b: &Node, path: &str) -> Option<String> {
    let here = format!("{path}/{}", a.name.as_str());
    let fields = [
        ("name", a.name.as_str() == b.name.as_str()),
        ("type", a.ty.as_str() == b.ty.as_str()),
        ("offset", a.offset == b.offset),
        ("len", a.len == b.len),
        ("value", a.value == b.value),
        ("note", a.note.as_ref().map(|t| t.as_str()) == b.note.as_ref().map(|t| t.as_str())),
        ("doc", a.doc.as_ref().map(|t| t.as_str()) == b.doc.as_ref().map(|t| t.as_str())),
        ("region", a.region == b.region),
        ("role", a.role == b.role),
        ("kind", a.kind == b.kind),
        ("key", a.key() == b.key()),
        ("error", a.error() == b.error()),
        ("children", a.children.len() == b.children.len()),
    ];
    if let Some((what, _)) = fields.iter().find(|(_, same)| !same) {
        return Some(format!("{here}: {what} differs\n  tape:    {a:?}\n  reading: {b:?}"));
    }
    a.children.iter().zip(&b.children).find_map(|(x, y)| node_diff(x, y, &here))
}

fn opts(d: Direction, key: i16, v: i16) -> DecodeOptions {
    DecodeOptions { direction: Some(d), api_key: Some(key), api_version: Some(v), ..Default::default() }
}

/// Decode `bytes` both ways; the first difference, if any.
fn both_ways(cat: &Catalogue, bytes: &[u8], opts: &DecodeOptions) -> Option<String> {
    let data = Bytes::copy_from_slice(bytes);
    let tape: Frame = decode_frame(cat, data.clone(), 0, opts);
    let reading: Frame = decode_frame(cat, data, 0, &DecodeOptions { read_into_nodes: true, ..opts.clone() });
    if tape.warnings != reading.warnings {
        return Some(format!("warnings differ:\n  tape:    {:?}\n  reading: {:?}", tape.warnings, reading.warnings));
    }
    if tape.error != reading.error {
        return Some(format!("errors differ:\n  tape:    {:?}\n  reading: {:?}", tape.error, reading.error));
    }
    node_diff(&tape.root, &reading.root, "")
}

/// A random frame of the message, with an unknown tag in some flexible bodies.
fn random_frame(cat: &Catalogue, fs: &FrameSpec, seed: u64) -> Vec<u8> {
    let spec = message_spec(cat, fs).unwrap();
    let mut body = random_body(spec, fs.version, seed);
    if spec.is_flexible(fs.version) && seed.is_multiple_of(3) {
        let mut unknown = Map::new();
        unknown.insert("77".into(), Value::from("c0ffee"));
        body.insert("_unknown_tags".into(), Value::Object(unknown));
    }
    encode_frame(cat, fs, &example_header(fs.direction), &body).unwrap()
}

#[test]
fn trees_from_the_tape_are_the_trees_from_reading_on_random_bodies_and_damaged_copies() {
    let cat = Catalogue::builtin();
    let (mut frames, mut replayed_damaged) = (0, 0);
    let mut failures = Vec::new();
    for (d, key, v) in all_messages(cat) {
        let fs = FrameSpec { direction: d, api_key: key, version: v, release: None };
        let o = opts(d, key, v);
        let mut rng = Rng::new(u64::from(key as u16) << 16 | u64::from(v as u16));
        for seed in 0..3 {
            let bytes = random_frame(cat, &fs, seed);
            frames += 1;
            if let Some(diff) = both_ways(cat, &bytes, &o) {
                failures.push(format!("{d:?} {key} v{v} seed {seed}: {diff}"));
            }
            // A compact length written over-long (n+1 as two bytes), which Java accepts.
            if let Some(longer) = overlong_length(cat, &bytes, &o) {
                frames += 1;
                if let Some(diff) = both_ways(cat, &longer, &o) {
                    failures.push(format!("{d:?} {key} v{v} seed {seed}, over-long length: {diff}"));
                }
            }
            // Damaged copies: one byte after the size prefix set to a value that
            // often still decodes (a flag, a small length, an over-long varint's 0x80).
            for _ in 0..6 {
                let mut damaged = bytes.clone();
                let at = 4 + rng.below(damaged.len() as u64 - 4) as usize;
                damaged[at] = [0x00, 0x01, 0x02, 0x80, 0xff, rng.next() as u8][rng.below(6) as usize];
                frames += 1;
                let frame = decode_frame(cat, Bytes::from(damaged.clone()), 0, &o);
                replayed_damaged += usize::from(frame.error.is_none());
                if let Some(diff) = both_ways(cat, &damaged, &o) {
                    failures.push(format!("{d:?} {key} v{v} seed {seed}, byte {at} set: {diff}"));
                }
            }
        }
    }
    let shown: Vec<&str> = failures.iter().take(3).map(String::as_str).collect();
    assert!(failures.is_empty(), "{} of {frames} frames differ; first ones:\n{}", failures.len(), shown.join("\n"));
    // The damaged copies must exercise the tape, not only the fallback to reading.
    assert!(replayed_damaged > 1000, "only {replayed_damaged} damaged frames decoded cleanly");
    println!("{frames} frames: the same tree both ways ({replayed_damaged} damaged ones decoded cleanly)");
}

/// `bytes` with its first compact string or bytes length of one byte written
/// as two (`0x8n 0x00`), the frame's size prefix grown by one.
fn overlong_length(cat: &Catalogue, bytes: &[u8], o: &DecodeOptions) -> Option<Vec<u8>> {
    let frame = decode_frame(cat, Bytes::copy_from_slice(bytes), 0, o);
    let mut at = None;
    frame.root.walk(&mut |n, _| {
        let compact = n.kind == kwire::decode::Kind::CompactPrefixed && n.note.as_ref().is_some_and(|t| t.as_str().starts_with("(compact, len+1="));
        if at.is_none() && compact && n.region != kwire::decode::Region::RpcHeader {
            at = Some(n.offset);
        }
    });
    let at = at?;
    let mut out = bytes.to_vec();
    let b = *out.get(at).filter(|b| **b < 0x80)?;
    out.splice(at..at + 1, [b | 0x80, 0x00]);
    let size = i32::from_be_bytes(out[..4].try_into().unwrap()) + 1;
    out[..4].copy_from_slice(&size.to_be_bytes());
    Some(out)
}

#[test]
fn trees_from_the_tape_are_the_trees_from_reading_on_the_samples() {
    let cat = Catalogue::builtin();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let Some(stem) = name.strip_suffix(".hex") else { continue };
        let bytes = hex::decode(std::fs::read_to_string(&path).unwrap().split_whitespace().collect::<String>()).unwrap();
        let o = match stem {
            "fetch-v12-response" => opts(Direction::Response, 1, 12),
            "write-share-group-state-v0-response" => opts(Direction::Response, 85, 0),
            "delete-share-group-state-v0-response" => opts(Direction::Response, 86, 0),
            s if s.ends_with("-request") => DecodeOptions::default(),
            other => panic!("samples/{other}.hex: say how to decode it here"),
        };
        // The samples hold one frame each.
        if let Some(diff) = both_ways(cat, &bytes, &o) {
            panic!("samples/{name}: {diff}");
        }
        checked += 1;
    }
    assert!(checked >= 8, "only {checked} samples");
}

#[test]
fn trees_from_the_tape_are_the_trees_from_reading_on_every_contract_case() {
    let Some(archive) = common::shared_dir("test-cases/contract-cases.tar.gz") else { return };
    let files = common::read_tar_gz(&archive);
    let cat = Catalogue::builtin();
    let mut checked = 0;
    for (path, data) in &files {
        let Some(stem) = path.strip_suffix(".hex") else { continue };
        let json = &files.iter().find(|(p, _)| *p == format!("{stem}.json")).expect("the case's JSON").1;
        let expected: Value = serde_json::from_slice(json).unwrap();
        let bytes = hex::decode(String::from_utf8_lossy(data).trim()).unwrap();
        let o = if expected["kind"] == "response" {
            opts(Direction::Response, expected["api_key"].as_i64().unwrap() as i16, expected["api_version"].as_i64().unwrap() as i16)
        } else {
            DecodeOptions::default()
        };
        if let Some(diff) = both_ways(cat, &bytes, &o) {
            panic!("{stem}: {diff}");
        }
        checked += 1;
    }
    assert_eq!(checked, 3462);
}

fn rec(key: Option<&[u8]>, value: Option<&[u8]>, headers: &[(&str, Option<&[u8]>)], ts: i64) -> Rec {
    Rec {
        key: key.map(<[u8]>::to_vec),
        value: value.map(<[u8]>::to_vec),
        headers: headers.iter().map(|(k, v)| (k.to_string(), v.map(<[u8]>::to_vec))).collect(),
        timestamp_delta: ts,
    }
}

/// A Produce v9 request carrying `records` for topic `topic`.
fn produce(cat: &Catalogue, topic: &str, records: &[u8]) -> Vec<u8> {
    let fs = FrameSpec { direction: Direction::Request, api_key: 0, version: 9, release: None };
    let body = serde_json::json!({
        "TransactionalId": null, "Acks": -1, "TimeoutMs": 30000,
        "TopicData": [{"Name": topic, "PartitionData": [{"Index": 0, "Records": hex::encode(records)}]}]
    });
    encode_frame(cat, &fs, &example_header(Direction::Request), body.as_object().unwrap()).unwrap()
}

/// How many batches of a frame the annotated tape holds.
fn batches_on_tape(cat: &Catalogue, bytes: &[u8]) -> usize {
    let frame = decode_frame(cat, Bytes::copy_from_slice(bytes), 0, &DecodeOptions { annotated_tape: true, ..Default::default() });
    assert!(frame.error.is_none(), "{:?}", frame.error);
    frame.values.expect("a tape").slots.iter().filter(|s| s.kind == SlotKind::Batch).count()
}

#[test]
fn record_batches_from_the_tape_are_the_batches_from_reading() {
    let cat = Catalogue::builtin();
    let records = [
        rec(None, Some(b"hello"), &[], 0),
        rec(Some(b"k1"), None, &[("trace", Some(b"abc")), ("empty", None)], 5),
        rec(Some(&[0xff; 200]), Some(&[7; 300]), &[], -3),
        rec(Some(b"\x1b[31mred"), Some("é".repeat(50).as_bytes()), &[("h", Some(b""))], 1 << 40),
        // Schema Registry framing on the key and the value (and a header value, which stays bytes).
        rec(Some(b"\x00\x00\x00\x00\x05k"), Some(b"\x00\x00\x00\x01\x00{\"id\":7}"), &[("h", Some(b"\x00\x00\x00\x00\x05k"))], 2),
    ];
    let plain = [batch(0, 0, &records), batch(4, 0, &records[..1]), batch(1 << 40, 0x10, &records[1..])].concat();
    let cut = [plain.clone(), batch(9, 0, &records)[..40].to_vec()].concat();
    let mut bad_crc = batch(0, 0, &records);
    bad_crc[30] ^= 1;
    let mut short_count = batch(0, 0, &records);
    short_count[60] = 3;
    // Compressed data damaged after the checksum was made: the checksum is made again.
    let mut bad_gzip = batch(0, 1, &records);
    let len = bad_gzip.len();
    bad_gzip[len - 12] ^= 0xff;
    let crc = kwire::protocol::crc32c::crc32c(&bad_gzip[21..]);
    bad_gzip[17..21].copy_from_slice(&crc.to_be_bytes());
    let mut unknown_codec = batch(0, 0, &records);
    unknown_codec[22] |= 0x07;
    let crc = kwire::protocol::crc32c::crc32c(&unknown_codec[21..]);
    unknown_codec[17..21].copy_from_slice(&crc.to_be_bytes());
    let cases: Vec<(&str, Vec<u8>, usize)> = vec![
        // (what, records, batches the tape keeps)
        ("plain batches", plain.clone(), 3),
        ("a batch cut by the end", cut, 3),
        ("an empty batch", batch(0, 0, &[]), 1),
        ("a gzip batch after a plain one", [batch(0, 0, &records), batch(4, 1, &records)].concat(), 2),
        ("snappy, lz4 and zstd batches", [batch(0, 2, &records), batch(4, 3, &records[1..]), batch(7, 4, &records[..2])].concat(), 3),
        ("a compressed batch whose data does not decompress", bad_gzip, 0),
        ("an unknown codec", unknown_codec, 0),
        ("a control batch", batch(0, 0x20, &records[..1]), 0),
        ("a bad checksum", bad_crc, 0),
        ("a count that does not match", short_count, 0),
        ("a legacy message", legacy_message(0, 1, 0, Some(b"k"), Some(b"v")), 0),
    ];
    for (what, data, kept) in cases {
        let bytes = produce(cat, "orders", &data);
        assert_eq!(batches_on_tape(cat, &bytes), kept, "{what}: batches on the tape");
        if let Some(diff) = both_ways(cat, &bytes, &DecodeOptions::default()) {
            panic!("{what}: {diff}");
        }
    }
    // An internal topic's records are decoded through its schemas by reading.
    let offsets = produce(cat, "__consumer_offsets", &plain);
    assert!(both_ways(cat, &offsets, &DecodeOptions::default()).is_none());
    // Damaged copies of the plain batches: most fail their checksum and are
    // read; those in lengths and counts test the tape's checks.
    let gzip = [batch(0, 1, &records), batch(4, 4, &records)].concat();
    for data in [plain.clone(), gzip] {
        let bytes = produce(cat, "orders", &data);
        damaged_copies(cat, &bytes, 1000);
    }
    // A bound on decompressed data that the batch exceeds: read, and the error shown.
    let bytes = produce(cat, "orders", &batch(0, 1, &records));
    let small = DecodeOptions { budget: Budget::new(Limits { decompressed: 100, ..Limits::default() }), ..Default::default() };
    assert!(both_ways(cat, &bytes, &small).is_none());
}

/// `count` copies of a frame with one byte after its size prefix changed, decoded both ways.
fn damaged_copies(cat: &Catalogue, bytes: &[u8], count: usize) {
    let mut rng = Rng::new(41);
    for _ in 0..count {
        let mut damaged = bytes.to_vec();
        let at = 4 + rng.below(damaged.len() as u64 - 4) as usize;
        damaged[at] = rng.next() as u8;
        if let Some(diff) = both_ways(cat, &damaged, &DecodeOptions::default()) {
            panic!("byte {at} set to {:#04x}: {diff}", damaged[at]);
        }
    }
}

/// With topic names tied to the ids a frame holds (as `capture` hands them to
/// the decoder), TopicId fields get their notes and the records after them
/// the named topic, the same both ways: every message with a TopicId field,
/// each id named in turn as a plain and an internal topic.
#[test]
fn trees_from_the_tape_are_the_trees_from_reading_with_topic_ids_named() {
    let cat = Catalogue::builtin();
    let (mut frames, mut noted) = (0, 0);
    for (d, key, v) in all_messages(cat) {
        let fs = FrameSpec { direction: d, api_key: key, version: v, release: None };
        let o = opts(d, key, v);
        for seed in 0..2 {
            let bytes = random_frame(cat, &fs, seed);
            let plain = decode_frame(cat, Bytes::from(bytes.clone()), 0, &o);
            let mut ids = Vec::new();
            plain.root.walk(&mut |n, _| {
                if let (true, kwire::decode::Value::Uuid(u)) = (n.name.eq_ignore_ascii_case("TopicId"), &n.value) {
                    ids.push(*u);
                }
            });
            if ids.is_empty() {
                continue;
            }
            let mut named = kwire::decode::fields::TopicIds::default();
            for (i, id) in ids.iter().enumerate() {
                named.insert(*id, if (i + seed as usize).is_multiple_of(2) { b"__consumer_offsets" } else { b"orders" });
            }
            let o = DecodeOptions { topic_ids: named, ..o.clone() };
            frames += 1;
            if let Some(diff) = both_ways(cat, &bytes, &o) {
                panic!("{d:?} {key} v{v} seed {seed}, topic ids named: {diff}");
            }
            let tree = decode_frame(cat, Bytes::from(bytes), 0, &o);
            tree.root.walk(&mut |n, _| noted += usize::from(n.note.as_ref().is_some_and(|t| t.starts_with("(topic "))));
        }
    }
    assert!(frames > 50 && noted >= frames, "{frames} frames, {noted} notes");
}
