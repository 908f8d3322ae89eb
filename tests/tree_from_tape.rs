//! The annotated tree from the one decoder (nodes built from an annotated tape):
//! record batches of every kind on a frame's tape, whatever they hold,
//! against the same batches walked on their own (as a log segment's are),
//! node for node (name, type, offset, length, value, note, doc, region, role,
//! key and error) with the same warnings and damage, which the values-only
//! tape of the JSON contract finds too; partial trees that show where a frame
//! stopped; topic ids named. The trees themselves are held to `snapshots/`
//! (`snapshots/records-*` for record batches of every kind, samples and
//! malformed frames), to the contract cases and to the kafka-protocol oracle.

mod common;

use bytes::Bytes;
use common::batches::{
    batch, batch_of, compress, damaged, fetch_v4, legacy_message, produce, producer_batch, rec,
    record_batch_cases, record_bytes, Damaged,
};
use common::random_body::{random_body, Rng};
use common::{all_messages, frame_spec};
use kwire::budget::{Budget, Limits};
use kwire::decode::fields::Context;
use kwire::decode::records::BatchDecoder;
use kwire::decode::tape::SlotKind;
use kwire::decode::{decode_frame, DecodeOptions, Direction, Frame, Node};
use kwire::encode::frame::message_spec;
use kwire::encode::{encode_frame, example_header, FrameSpec};
use kwire::schema::Catalogue;
use serde_json::{Map, Value};

/// The first difference between two trees, as a path of node names.
fn node_diff(a: &Node, b: &Node, path: &str) -> Option<String> {
    let here = format!("{path}/{}", a.name);
    let fields = [
        ("name", a.name == b.name),
        ("type", a.ty.as_str() == b.ty.as_str()),
        ("offset", a.offset == b.offset),
        ("len", a.len == b.len),
        ("value", a.value == b.value),
        ("note", a.note == b.note),
        (
            "doc",
            a.doc.as_ref().map(|t| t.as_str()) == b.doc.as_ref().map(|t| t.as_str()),
        ),
        ("region", a.region == b.region),
        ("role", a.role == b.role),
        ("kind", a.kind == b.kind),
        ("key", a.key() == b.key()),
        ("error", a.error() == b.error()),
        ("children", a.children.len() == b.children.len()),
    ];
    if let Some((what, _)) = fields.iter().find(|(_, same)| !same) {
        return Some(format!(
            "{here}: {what} differs\n  tape:    {a:?}\n  reading: {b:?}"
        ));
    }
    a.children
        .iter()
        .zip(&b.children)
        .find_map(|(x, y)| node_diff(x, y, &here))
}

fn opts(d: Direction, key: i16, v: i16) -> DecodeOptions {
    DecodeOptions {
        direction: Some(d),
        api_key: Some(key),
        api_version: Some(v),
        ..Default::default()
    }
}

/// The records field of a frame decoded through its tape against the same
/// bytes walked and built on their own, and the damage of the frame's
/// values-only tape: the first difference, if any. `None` too when the frame
/// stops before its records.
fn records_both_ways(
    cat: &Catalogue,
    bytes: &[u8],
    opts: &DecodeOptions,
    topic: &str,
) -> Option<String> {
    let data = Bytes::copy_from_slice(bytes);
    let tape: Frame = decode_frame(cat, data.clone(), 0, opts);
    let mut field = None;
    tape.root.walk(&mut |n, _| {
        if n.ty.as_str() == "records" && field.is_none() {
            field = Some(n.clone());
        }
    });
    let field = field?;
    // Bytes that do not start with a batch are kept as they are, by both.
    let kwire::decode::Value::Bytes(Some(value)) = &field.value else {
        return None;
    };
    if !kwire::decode::records::layout::plausible(value) {
        return None;
    }
    let (start, end) = (field.end() - value.len(), field.end());
    // A budget of its own, with the options' limits: the tape's has been drawn on.
    let ctx = Context {
        topic: Some(topic.into()),
        budget: Budget::new(opts.budget.limits()),
        ..Default::default()
    };
    // The records of a Produce request, read alone as the frame reads them.
    let mut reading = BatchDecoder::new(&data, cat, &ctx).as_request();
    let mut nodes = Vec::new();
    reading.decode_stream(start, end, &mut nodes);
    let in_records =
        |w: &&kwire::decode::Warning| w.offset.is_some_and(|at| (start..end).contains(&at));
    let tape_warnings: Vec<_> = tape.warnings.iter().filter(in_records).collect();
    let read_warnings: Vec<_> = reading.warnings.iter().filter(in_records).collect();
    if tape_warnings != read_warnings {
        return Some(format!(
            "warnings differ:\n  tape:    {tape_warnings:?}\n  reading: {read_warnings:?}"
        ));
    }
    if tape.record_damage != reading.damage {
        return Some(format!(
            "damage differs:\n  tape:    {:?}\n  reading: {:?}",
            tape.record_damage, reading.damage
        ));
    }
    let values_only = decode_again(
        cat,
        &data,
        DecodeOptions {
            values_only: true,
            ..opts.clone()
        },
    );
    if values_only.record_damage != tape.record_damage {
        return Some(format!(
            "damage differs:\n  tape:        {:?}\n  values only: {:?}",
            tape.record_damage, values_only.record_damage
        ));
    }
    if let Some(diff) = findings_alike(cat, &data, opts, &tape) {
        return Some(diff);
    }
    if field.children.len() != nodes.len() {
        return Some(format!(
            "{} batches from the tape, {} from reading",
            field.children.len(),
            nodes.len()
        ));
    }
    field
        .children
        .iter()
        .zip(&nodes)
        .find_map(|(a, b)| node_diff(a, b, "records"))
}

/// `data` decoded with `opts` on a budget of its own (with the same limits:
/// the first decoding's has been drawn on).
fn decode_again(cat: &Catalogue, data: &Bytes, opts: DecodeOptions) -> Frame {
    let budget = Budget::new(opts.budget.limits());
    decode_frame(cat, data.clone(), 0, &DecodeOptions { budget, ..opts })
}

/// The frame decoded for its findings only (`kwire check`: batches read from
/// the tape, never built) against its tree: the same warnings, the order
/// check's among them, and the same damage, in the same order.
fn findings_alike(
    cat: &Catalogue,
    data: &Bytes,
    opts: &DecodeOptions,
    tree: &Frame,
) -> Option<String> {
    let checked = decode_again(
        cat,
        data,
        DecodeOptions {
            findings_only: true,
            ..opts.clone()
        },
    );
    let (want, got) = (&tree.warnings, &checked.warnings);
    if want != got {
        return Some(format!(
            "warnings differ:\n  tree:          {want:?}\n  findings only: {got:?}"
        ));
    }
    if tree.record_damage != checked.record_damage || tree.error != checked.error {
        return Some(format!(
            "damage differs:\n  tree:          {:?} {:?}\n  findings only: {:?} {:?}",
            tree.error, tree.record_damage, checked.error, checked.record_damage
        ));
    }
    None
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

/// Random frames of every message cut short (their size prefix saying so):
/// the frame's error is on the node whose read failed, which covers its
/// offset, and every node lies within its parent.
#[test]
fn partial_trees_show_where_each_frame_stopped() {
    let cat = Catalogue::builtin();
    let (mut frames, mut stopped) = (0, 0);
    for (d, key, v) in all_messages(cat) {
        let fs = frame_spec(d, key, v);
        let o = opts(d, key, v);
        let mut rng = Rng::new(u64::from(key as u16) << 16 | u64::from(v as u16));
        for seed in 0..2 {
            let bytes = random_frame(cat, &fs, seed);
            for _ in 0..8 * usize::from(bytes.len() > 13) {
                // Past the request header's api key and version, which name the message.
                let cut = 12 + rng.below(bytes.len() as u64 - 12) as usize;
                let mut short = bytes[..cut].to_vec();
                short[..4].copy_from_slice(&((cut - 4) as i32).to_be_bytes());
                let frame = decode_frame(cat, Bytes::from(short), 0, &o);
                frames += 1;
                let Some(e) = &frame.error else { continue };
                let mut failing = Vec::new();
                within_parents(&frame.root, &mut |n| {
                    failing.extend(
                        (n.error() == Some(e.expected.as_str())).then(|| (n.offset, n.end())),
                    )
                });
                if e.kind == kwire::decode::ErrorKind::TrailingBytes {
                    continue;
                }
                stopped += 1;
                assert!(
                    !failing.is_empty(),
                    "{d:?} {key} v{v} cut at {cut}: no node has the error {e:?}"
                );
                assert!(
                    failing
                        .iter()
                        .all(|(at, end)| (*at..=*end).contains(&e.offset)),
                    "{d:?} {key} v{v} cut at {cut}: {e:?} at {failing:?}"
                );
            }
        }
    }
    assert!(
        stopped > frames / 2,
        "only {stopped} of {frames} frames stopped part-way"
    );
}

/// `each` on every node, after checking that it lies within its parent.
fn within_parents(n: &Node, each: &mut impl FnMut(&Node)) {
    each(n);
    for c in &n.children {
        assert!(
            c.offset >= n.offset && c.end() <= n.end(),
            "{} ({}..{}) is outside {} ({}..{})",
            c.name,
            c.offset,
            c.end(),
            n.name,
            n.offset,
            n.end()
        );
        within_parents(c, each);
    }
}

/// Every record slot says what it is by its identity, not by its place among
/// its siblings: a v2 batch's header fields (the checksum with the checksum
/// computed), a record's fields, bytes and headers, a legacy message's fields.
#[test]
fn record_slots_carry_typed_identities() {
    use kwire::decode::tape::{BytesOf, Id, RecordField, Val};
    let cat = Catalogue::builtin();
    let mut records = batch(0, 0, &[rec(Some(b"k"), None, &[("h", Some(b"v"))], 5)]);
    records.extend(legacy_message(7, 1, 0, None, Some(b"x")));
    let frame = decode_frame(
        cat,
        Bytes::from(produce(cat, "t", &records)),
        0,
        &DecodeOptions {
            annotated_tape: true,
            ..Default::default()
        },
    );
    assert!(frame.error.is_none(), "{:?}", frame.error);
    let tape = frame.values.expect("a tape");
    let first = tape
        .slots
        .iter()
        .position(|s| matches!(s.id, Id::Batch(_)))
        .expect("a batch slot");
    let slots = &tape.slots[first..];
    for s in slots {
        if let Id::Checksum { computed } = s.id {
            assert_eq!(s.value, Val::Uint(computed.into()), "an intact checksum");
        }
    }
    let ids: Vec<Id> = slots
        .iter()
        .map(|s| match s.id {
            Id::Checksum { .. } => Id::Checksum { computed: 0 },
            id => id,
        })
        .collect();
    let bytes = |of| Id::Bytes { of, framed: false };
    let mut want = vec![Id::Batch(0)];
    want.extend((0..4).map(Id::BatchField));
    want.push(Id::Checksum { computed: 0 });
    want.extend((5..13).map(Id::BatchField));
    want.extend([
        Id::Record(0),
        Id::RecordField(RecordField::Attributes),
        Id::RecordField(RecordField::TimestampDelta),
        Id::RecordField(RecordField::OffsetDelta),
        bytes(BytesOf::Key),
        bytes(BytesOf::Value),
        Id::Headers,
        Id::Header(0),
        bytes(BytesOf::HeaderKey),
        bytes(BytesOf::HeaderValue),
        Id::LegacyMessage(1),
        Id::MessageField(0),
        Id::MessageField(1),
        Id::Checksum { computed: 0 },
        Id::MessageField(3),
        Id::MessageField(4),
        Id::MessageField(5),
        bytes(BytesOf::Key),
        bytes(BytesOf::Value),
    ]);
    assert_eq!(ids[..want.len()], want[..]);
    // A null key or value keeps the length as written; bytes that are there are the value.
    let value_of = |k: usize| slots[k].value;
    assert!(
        matches!(value_of(18), Val::Bytes(s) if s.len == 1),
        "the record's key"
    );
    assert_eq!(value_of(19), Val::Int(-1), "its null value");
    assert_eq!(value_of(31), Val::Int(-1), "the message's null key");
    assert!(
        matches!(value_of(32), Val::Bytes(s) if s.len == 1),
        "its value"
    );
}

/// How many batches, legacy messages, partial batches and bytes that are not batches a frame's annotated tape holds.
fn batches_on_tape(cat: &Catalogue, bytes: &[u8]) -> usize {
    let frame = decode_frame(
        cat,
        Bytes::copy_from_slice(bytes),
        0,
        &DecodeOptions {
            annotated_tape: true,
            ..Default::default()
        },
    );
    assert!(frame.error.is_none(), "{:?}", frame.error);
    let tops = [
        SlotKind::Batch,
        SlotKind::LegacyMessage,
        SlotKind::PartialBatch,
        SlotKind::Invalid,
    ];
    frame
        .values
        .expect("a tape")
        .slots
        .iter()
        .filter(|s| tops.contains(&s.kind()))
        .count()
}

#[test]
fn record_batches_of_every_kind_are_on_the_tape_and_built_alike_in_a_frame_and_alone() {
    let cat = Catalogue::builtin();
    let records = [
        rec(None, Some(b"hello"), &[], 0),
        rec(
            Some(b"k1"),
            None,
            &[("trace", Some(b"abc")), ("empty", None)],
            5,
        ),
        rec(Some(&[0xff; 200]), Some(&[7; 300]), &[], -3),
        rec(
            Some(b"\x1b[31mred"),
            Some("é".repeat(50).as_bytes()),
            &[("h", Some(b""))],
            1 << 40,
        ),
        // Schema Registry framing on the key and the value (and a header value, which stays bytes).
        rec(
            Some(b"\x00\x00\x00\x00\x05k"),
            Some(b"\x00\x00\x00\x01\x00{\"id\":7}"),
            &[("h", Some(b"\x00\x00\x00\x00\x05k"))],
            2,
        ),
    ];
    let plain = [
        batch(0, 0, &records),
        batch(4, 0, &records[..1]),
        batch(1 << 40, 0x10, &records[1..]),
    ]
    .concat();
    let cut = [plain.clone(), batch(9, 0, &records)[..40].to_vec()].concat();
    let Damaged {
        bad_crc,
        wrong_count,
        bad_gzip,
        unknown_codec,
    } = damaged(&records);
    // Wrapper messages six deep around two messages: the top one and four nested are unpacked.
    let nested = (0..6).fold(
        [
            legacy_message(0, 1, 0, None, Some(b"one")),
            legacy_message(1, 0, 0, Some(b"k"), Some(b"two")),
        ]
        .concat(),
        |inner, i| legacy_message(i, 1, 1, None, Some(&compress(1, &inner))),
    );
    let cases: Vec<(&str, Vec<u8>, usize)> = vec![
        // (what, records, batches and messages on the tape)
        ("plain batches", plain.clone(), 3),
        ("a batch cut by the end", cut, 4),
        ("an empty batch", batch(0, 0, &[]), 1),
        (
            "a gzip batch after a plain one",
            [batch(0, 0, &records), batch(4, 1, &records)].concat(),
            2,
        ),
        (
            "snappy, lz4 and zstd batches",
            [
                batch(0, 2, &records),
                batch(4, 3, &records[1..]),
                batch(7, 4, &records[..2]),
            ]
            .concat(),
            3,
        ),
        (
            "a compressed batch whose data does not decompress",
            bad_gzip,
            1,
        ),
        ("an unknown codec", unknown_codec, 1),
        ("a control batch", batch(0, 0x20, &records[..1]), 1),
        ("a bad checksum", bad_crc, 1),
        ("a count that does not match", wrong_count, 1),
        (
            "a legacy message",
            legacy_message(0, 1, 0, Some(b"k"), Some(b"v")),
            1,
        ),
        (
            "bytes that are not a batch after one",
            [batch(0, 0, &records[..1]), vec![0; 30]].concat(),
            2,
        ),
        ("wrappers nested deeper than they are unpacked", nested, 5),
        ("a control batch in lz4", batch(0, 0x23, &records[..1]), 1),
        // What the order check finds, read from the tape by `kwire check`.
        ("offsets that do not rise", not_rising(0), 1),
        ("offsets that do not rise, in gzip", not_rising(1), 1),
        (
            "a producer's sequence that skips, then goes back",
            [
                producer_batch(0, 0, 2, (7, 0, 0)),
                producer_batch(2, 0, 1, (7, 0, 5)),
                producer_batch(3, 2, 1, (7, 0, 1)),
            ]
            .concat(),
            3,
        ),
    ];
    for (what, data, kept) in cases {
        let bytes = produce(cat, "orders", &data);
        assert_eq!(
            batches_on_tape(cat, &bytes),
            kept,
            "{what}: batches on the tape"
        );
        if let Some(diff) = records_both_ways(cat, &bytes, &DecodeOptions::default(), "orders") {
            panic!("{what}: {diff}");
        }
    }
    // The record batches held to snapshots by tests/cli.rs, each in a Produce
    // frame: all on the tape, and built from it as when walked alone.
    for case in record_batch_cases() {
        let bytes = produce(cat, case.topic, &case.records);
        assert!(
            batches_on_tape(cat, &bytes) > 0,
            "{}: nothing on the tape",
            case.name
        );
        if let Some(diff) = records_both_ways(cat, &bytes, &DecodeOptions::default(), case.topic) {
            panic!("{}: {diff}", case.name);
        }
    }
    // An internal topic's records are decoded through its schemas as they are built from the tape.
    let offsets = produce(cat, "__consumer_offsets", &plain);
    assert!(records_both_ways(
        cat,
        &offsets,
        &DecodeOptions::default(),
        "__consumer_offsets"
    )
    .is_none());
    // Damaged copies of the plain batches: checksums, lengths, counts, codecs
    // and data that does not decompress, found alike in a frame and alone.
    let gzip = [batch(0, 1, &records), batch(4, 4, &records)].concat();
    for data in [plain.clone(), gzip] {
        let bytes = produce(cat, "orders", &data);
        damaged_copies(cat, &bytes, 1000);
    }
    // A bound on decompressed data that the batch exceeds: the error shown alike.
    let bytes = produce(cat, "orders", &batch(0, 1, &records));
    let small = DecodeOptions {
        budget: Budget::new(Limits {
            decompressed: 100,
            ..Limits::default()
        }),
        ..Default::default()
    };
    assert!(records_both_ways(cat, &bytes, &small, "orders").is_none());
}

/// A batch of two records that both say offsetDelta 0, in codec `codec`.
fn not_rising(codec: i16) -> Vec<u8> {
    let one = rec(None, Some(b"v"), &[], 0);
    let recs = [record_bytes(&one, 0), record_bytes(&one, 0)].concat();
    batch_of(0, codec, &recs, 2)
}

/// Fetched batches (a Fetch response, whose offsets must go up across
/// batches and whose batches may end past their last record) checked from
/// the tape as from the tree.
#[test]
fn fetched_batches_give_the_same_findings_from_the_tape_as_from_the_tree() {
    let cat = Catalogue::builtin();
    let one = rec(None, Some(b"v"), &[], 0);
    // (what, records, warnings of the order check)
    let cases: Vec<(&str, Vec<u8>, usize)> = vec![
        (
            "offsets that go on",
            [
                batch(0, 0, std::slice::from_ref(&one)),
                batch(1, 0, std::slice::from_ref(&one)),
            ]
            .concat(),
            0,
        ),
        (
            "offsets that go back",
            [
                batch(5, 0, &[one.clone(), one.clone()]),
                batch(3, 1, std::slice::from_ref(&one)),
            ]
            .concat(),
            1,
        ),
        (
            "a compacted batch",
            patched_last_delta(batch(0, 0, std::slice::from_ref(&one)), 4),
            0,
        ),
        (
            "a batch that ends before its last record",
            patched_last_delta(batch(0, 0, &[one.clone(), one.clone()]), 0),
            1,
        ),
        ("offsets that do not rise, in zstd", not_rising(4), 1),
        (
            "__consumer_offsets",
            batch(0, 0, std::slice::from_ref(&one)),
            0,
        ),
    ];
    for (what, records, order) in cases {
        let topic = if what.starts_with("__") {
            what
        } else {
            "orders"
        };
        let bytes = Bytes::from(fetch_v4(cat, topic, &records));
        let opts = opts(Direction::Response, 1, 4);
        let tree = decode_frame(cat, bytes.clone(), 0, &opts);
        assert!(tree.error.is_none(), "{what}: {:?}", tree.error);
        let found: Vec<_> = tree
            .warnings
            .iter()
            .filter(|w| kwire::decode::records::order::KINDS.contains(&w.kind))
            .collect();
        assert_eq!(found.len(), order, "{what}: {found:?}");
        // The tree view says so too, as kwire check does.
        let shown = kwire::render::text_tree::render_frame(&tree, Default::default());
        for w in &found {
            let said = w.detail().to_string();
            assert!(shown.contains(&said), "{what}: {said} not in\n{shown}");
        }
        if let Some(diff) = findings_alike(cat, &bytes, &opts, &tree) {
            panic!("{what}: {diff}");
        }
    }
}

/// A batch whose lastOffsetDelta says `delta` (its checksum made again).
fn patched_last_delta(mut b: Vec<u8>, delta: i32) -> Vec<u8> {
    b[23..27].copy_from_slice(&delta.to_be_bytes());
    let crc = kwire::protocol::crc32c::crc32c(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
    b
}

/// `count` copies of a frame with one byte after its size prefix changed, their records decoded both ways.
fn damaged_copies(cat: &Catalogue, bytes: &[u8], count: usize) {
    let mut rng = Rng::new(41);
    for _ in 0..count {
        let mut damaged = bytes.to_vec();
        let at = 4 + rng.below(damaged.len() as u64 - 4) as usize;
        damaged[at] = rng.next() as u8;
        if let Some(diff) = records_both_ways(cat, &damaged, &DecodeOptions::default(), "orders") {
            panic!("byte {at} set to {:#04x}: {diff}", damaged[at]);
        }
    }
}

/// With topic names tied to the ids a frame holds (as `capture` hands them to
/// the decoder), TopicId fields get their notes: every message with a TopicId
/// field, each id named in turn as a plain and an internal topic.
#[test]
fn topic_ids_named_are_noted_on_their_fields() {
    let cat = Catalogue::builtin();
    let (mut frames, mut noted) = (0, 0);
    for (d, key, v) in all_messages(cat) {
        let fs = frame_spec(d, key, v);
        let o = opts(d, key, v);
        for seed in 0..2 {
            let bytes = random_frame(cat, &fs, seed);
            let plain = decode_frame(cat, Bytes::from(bytes.clone()), 0, &o);
            let mut ids = Vec::new();
            plain.root.walk(&mut |n, _| {
                if let (true, kwire::decode::Value::Uuid(u)) =
                    (n.name.text().eq_ignore_ascii_case("TopicId"), &n.value)
                {
                    ids.push(*u);
                }
            });
            if ids.is_empty() {
                continue;
            }
            let mut named = kwire::decode::fields::TopicIds::default();
            for (i, id) in ids.iter().enumerate() {
                named.insert(
                    *id,
                    if (i + seed as usize).is_multiple_of(2) {
                        b"__consumer_offsets"
                    } else {
                        b"orders"
                    },
                );
            }
            let o = DecodeOptions {
                topic_ids: named,
                ..o.clone()
            };
            frames += 1;
            let tree = decode_frame(cat, Bytes::from(bytes), 0, &o);
            tree.root.walk(&mut |n, _| {
                noted += usize::from(
                    n.note
                        .as_ref()
                        .is_some_and(|t| t.text().starts_with("(topic ")),
                )
            });
        }
    }
    assert!(
        frames > 50 && noted >= frames,
        "{frames} frames, {noted} notes"
    );
}
