//! One budget per input: decompression bombs, many batches each under a
//! per-batch bound, nested legacy wrappers and runs of zeros cost a bounded
//! amount, and what was not decoded is said at its offset, never dropped.
//! A counting global allocator measures the peak.

mod common;

use bytes::Bytes;
use common::alloc::{one_at_a_time, peak_during};
use common::batches::{batch, batch_of, compress, legacy_message, produce, record_bytes, Rec};
use kwire::budget::{Budget, Limits, DEFAULT_MAX_DECOMPRESSED, DEFAULT_MAX_EXPANDED};
use kwire::decode::fields::Context;
use kwire::decode::records::BatchDecoder;
use kwire::decode::{decode_frames, DecodeOptions, Node};
use kwire::schema::Catalogue;

#[global_allocator]
static GLOBAL: common::alloc::Counting = common::alloc::Counting;

/// The smallest record: no key, no value, no headers (7 bytes).
fn tiny() -> Rec {
    Rec {
        key: None,
        value: None,
        headers: Vec::new(),
        timestamp_delta: 0,
    }
}

/// A RecordBatch v2 whose compressed payload is `count` tiny records (all
/// with offset delta 0, so that they compress to almost nothing).
fn bomb_batch(codec: i16, count: usize) -> Vec<u8> {
    let one = record_bytes(&tiny(), 0);
    assert_eq!(one.len(), 7);
    batch_of(0, codec, &one.repeat(count), count as i32)
}

fn count_nodes(n: &Node) -> usize {
    1 + n.children.iter().map(count_nodes).sum::<usize>()
}

fn has_error_containing(n: &Node, text: &str) -> bool {
    n.error().is_some_and(|e| e.contains(text))
        || n.children.iter().any(|c| has_error_containing(c, text))
}

#[test]
fn a_bomb_of_tiny_records_stays_within_the_expanded_budget() {
    let cat = Catalogue::builtin();
    // 8 MiB of 7-byte records in a few kilobytes of gzip.
    let frame = produce(cat, "t", &bomb_batch(1, (8 << 20) / 7));
    assert!(frame.len() < 64 << 10, "the bomb is {} bytes", frame.len());
    let input = Bytes::from(frame);
    drop(decode_frames(cat, &input, &DecodeOptions::default()));
    let _one = one_at_a_time();
    let (frames, peak) = peak_during(|| decode_frames(cat, &input, &DecodeOptions::default()));
    let f = &frames[0];
    assert!(f.error.is_none(), "{:?}", f.error);
    // Stopped with a note at its offset that names the option.
    assert!(
        f.record_damage
            .iter()
            .any(|d| d.expected.contains("--max-expanded")),
        "{:?}",
        f.record_damage
    );
    assert!(has_error_containing(&f.root, "--max-expanded"));
    // The expanded budget counts nodes at their size; vectors that grow by
    // doubling hold up to twice that (three times while one is copied).
    let bound = 3 * DEFAULT_MAX_EXPANDED as usize + (8 << 20) + 512 * input.len();
    assert!(peak < bound, "peak {peak} bytes, bound {bound}");
    // The frame holds its share until it is dropped; then the budget is whole again.
    let budget = Budget::default();
    let opts = DecodeOptions {
        budget: budget.clone(),
        ..Default::default()
    };
    let frames = decode_frames(cat, &input, &opts);
    assert!(budget.expanded() > DEFAULT_MAX_EXPANDED / 2);
    drop(frames);
    assert_eq!(budget.expanded(), 0);
    // With a larger budget, more of it is shown.
    let big = DecodeOptions {
        budget: Budget::new(Limits {
            decompressed: 1 << 30,
            expanded: 128 << 20,
        }),
        ..Default::default()
    };
    let more = decode_frames(cat, &input, &big);
    assert!(count_nodes(&more[0].root) > 3 * count_nodes(&f.root));
}

#[test]
fn many_batches_each_under_a_per_batch_bound_share_one_total() {
    let _one = one_at_a_time();
    let cat = Catalogue::builtin();
    // 32 batches of 4 MiB each (gzip of zeros-like records) in one frame.
    let one = {
        let value = vec![0u8; 4 << 20];
        batch(
            0,
            1,
            &[Rec {
                key: None,
                value: Some(value),
                headers: Vec::new(),
                timestamp_delta: 0,
            }],
        )
    };
    let records: Vec<u8> = (0..32).flat_map(|_| one.iter().copied()).collect();
    let input = Bytes::from(produce(cat, "t", &records));
    let budget = Budget::new(Limits {
        decompressed: 20 << 20,
        expanded: 1 << 30,
    });
    let opts = DecodeOptions {
        budget: budget.clone(),
        ..Default::default()
    };
    let frames = decode_frames(cat, &input, &opts);
    // Four batches fit the 20 MiB total; the fifth stops at the limit; the rest do not start.
    assert!(
        budget.decompressed() <= 20 << 20,
        "decompressed {}",
        budget.decompressed()
    );
    let over = frames[0]
        .record_damage
        .iter()
        .filter(|d| d.expected.contains("--max-decompressed"))
        .count();
    assert_eq!(over, 32 - 4, "{:?}", frames[0].record_damage);
}

#[test]
fn nested_legacy_wrappers_draw_on_the_same_total() {
    let _one = one_at_a_time();
    let cat = Catalogue::builtin();
    // A gzip wrapper whose message set holds 64 gzip wrappers of 1 MiB of zeros each.
    let inner_value = compress(1, &legacy_message(0, 1, 0, None, Some(&vec![0u8; 1 << 20])));
    let inner = legacy_message(0, 1, 1, None, Some(&inner_value));
    let set: Vec<u8> = (0..64).flat_map(|_| inner.iter().copied()).collect();
    let outer = legacy_message(0, 1, 1, None, Some(&compress(1, &set)));
    assert!(outer.len() < 200 << 10, "{} bytes", outer.len());
    let buf = Bytes::from(outer);
    let budget = Budget::new(Limits {
        decompressed: 4 << 20,
        expanded: 1 << 30,
    });
    let ctx = Context {
        budget: budget.clone(),
        ..Context::default()
    };
    let mut bd = BatchDecoder::new(&buf, cat, &ctx);
    let mut out = Vec::new();
    bd.decode_stream(0, buf.len(), &mut out);
    assert!(
        budget.decompressed() <= 4 << 20,
        "decompressed {}",
        budget.decompressed()
    );
    assert!(!bd.damage.is_empty());
    assert!(
        bd.damage.iter().all(|d| d.offset < buf.len()),
        "damage is placed in the outer buffer: {:?}",
        bd.damage
    );
    assert!(
        bd.damage
            .iter()
            .any(|d| d.expected.contains("d:0x") && d.expected.contains("--max-decompressed")),
        "{:?}",
        bd.damage
    );
}

#[test]
fn the_largest_decompression_budget_does_not_wrap_to_nothing() {
    let _one = one_at_a_time();
    let cat = Catalogue::builtin();
    let records = vec![Rec {
        key: Some(b"k".to_vec()),
        value: Some(b"v".to_vec()),
        headers: Vec::new(),
        timestamp_delta: 0,
    }];
    let input = Bytes::from(produce(cat, "t", &batch(0, 1, &records)));
    let budget = Budget::new(Limits {
        decompressed: u64::MAX,
        expanded: u64::MAX,
    });
    let frames = decode_frames(
        cat,
        &input,
        &DecodeOptions {
            budget,
            ..Default::default()
        },
    );
    assert!(
        frames[0].record_damage.is_empty(),
        "{:?}",
        frames[0].record_damage
    );
    let mut records_seen = 0;
    frames[0]
        .root
        .walk(&mut |n, _| records_seen += usize::from(n.ty == "Record"));
    assert_eq!(records_seen, 1);
}

#[test]
fn zeros_are_one_invalid_batch_not_a_message_per_12_bytes() {
    let _one = one_at_a_time();
    let cat = Catalogue::builtin();
    let buf = Bytes::from(vec![0u8; 12_000]);
    let ctx = Context::default();
    let mut bd = BatchDecoder::new(&buf, cat, &ctx);
    let mut out = Vec::new();
    bd.decode_stream(0, buf.len(), &mut out);
    assert_eq!(out.len(), 1, "{} nodes", out.len());
    assert!(
        out[0].error().is_some_and(|e| e.contains("at least 14")),
        "{:?}",
        out[0].error()
    );
    assert_eq!(bd.damage.len(), 1);
    assert_eq!(bd.damage[0].offset, 0);
}

#[test]
fn a_legacy_message_of_every_magic_needs_its_fixed_fields() {
    let _one = one_at_a_time();
    let cat = Catalogue::builtin();
    // Magic 1 with a size of 14 (enough for magic 0, not for the timestamp).
    let mut m = legacy_message(0, 1, 0, None, None);
    m[8..12].copy_from_slice(&14i32.to_be_bytes());
    m.truncate(26);
    let buf = Bytes::from(m);
    let ctx = Context::default();
    let mut bd = BatchDecoder::new(&buf, cat, &ctx);
    let mut out = Vec::new();
    bd.decode_stream(0, buf.len(), &mut out);
    assert!(
        out[0]
            .error()
            .is_some_and(|e| e.contains("at least 22 for magic 1")),
        "{:?}",
        out[0].error()
    );
}

#[test]
fn record_damage_is_kept_apart_from_warnings() {
    let _one = one_at_a_time();
    let cat = Catalogue::builtin();
    let records = vec![Rec {
        key: Some(b"k".to_vec()),
        value: Some(b"v".to_vec()),
        headers: Vec::new(),
        timestamp_delta: 0,
    }];
    let mut bad_crc = batch(0, 0, &records);
    bad_crc[30] ^= 1;
    let input = Bytes::from(produce(cat, "t", &bad_crc));
    let frames = decode_frames(cat, &input, &DecodeOptions::default());
    let f = &frames[0];
    assert!(f.error.is_none());
    assert_eq!(f.record_damage.len(), 1, "{:?}", f.record_damage);
    assert!(f.record_damage[0].expected.contains("CRC-32C"));
    // The offset is the crc field's, in the frame.
    let crc_at = f.record_damage[0].offset;
    assert_eq!(&input[crc_at..crc_at + 4], &bad_crc[17..21]);
}

#[test]
fn defaults_are_the_stated_ones() {
    let _one = one_at_a_time();
    assert_eq!(DEFAULT_MAX_DECOMPRESSED, 256 << 20);
    assert_eq!(DEFAULT_MAX_EXPANDED, 12 << 20);
    assert_eq!(
        Budget::default().limits(),
        Limits {
            decompressed: 256 << 20,
            expanded: 12 << 20
        }
    );
}

#[test]
fn tree_json_written_as_it_goes_is_the_tree_built_as_a_value() {
    let _one = one_at_a_time();
    let cat = Catalogue::builtin();
    let records = vec![Rec {
        key: Some(b"k".to_vec()),
        value: Some(b"\x1b[2Jv\xc2\x85".to_vec()),
        headers: vec![("h".into(), None)],
        timestamp_delta: 0,
    }];
    let mut inputs: Vec<Vec<u8>> = vec![
        produce(cat, "t", &batch(0, 1, &records)),
        produce(cat, "t", &batch(0, 0, &records)),
    ];
    for entry in std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/samples")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "hex")
            && !path.to_string_lossy().contains("response")
        {
            let text = std::fs::read_to_string(&path).unwrap();
            inputs.push(kwire::input::hex_text::parse_hex_text(&text).unwrap());
        }
    }
    assert!(inputs.len() > 5);
    for bytes in inputs {
        for f in decode_frames(cat, &Bytes::from(bytes), &DecodeOptions::default()) {
            let mut streamed = Vec::new();
            kwire::render::tree_json::write_frame_tree_json(&mut streamed, &f).unwrap();
            let value: serde_json::Value = serde_json::from_slice(&streamed).unwrap();
            let mut expected = frame_tree_value(&f);
            if !f.record_damage.is_empty() {
                expected
                    .as_object_mut()
                    .unwrap()
                    .insert("record_errors".into(), value["record_errors"].clone());
            }
            assert_eq!(value, expected);
        }
    }
}

/// A frame's tree JSON built as a `serde_json` value from its tree, member by
/// member: an implementation of the format apart from the writer's, which
/// must give the same value.
fn frame_tree_value(frame: &kwire::decode::Frame) -> serde_json::Value {
    use serde_json::json;
    let error = frame
        .error
        .as_ref()
        .map(|e| json!({"offset": e.offset, "expected": e.expected}));
    let api_name = frame.api_key.and_then(|k| Catalogue::builtin().api_name(k));
    json!({
        "kind": frame.direction.as_str(),
        "api_key": frame.api_key,
        "api_name": api_name,
        "api_version": frame.api_version,
        "header_version": frame.header_version,
        "input_offset": frame.input_offset,
        "error": error,
        "warnings": frame.warnings,
        "tree": tree_value(&frame.root),
    })
}

fn tree_value(node: &kwire::decode::Node) -> serde_json::Value {
    use kwire::decode::{Role, Value};
    use serde_json::{json, Map, Value as Json};
    let mut obj = Map::new();
    obj.insert("name".into(), json!(node.name));
    if let Some(k) = node.key() {
        obj.insert("field".into(), json!(k));
    }
    obj.insert("type".into(), json!(node.ty));
    obj.insert("offset".into(), json!(node.offset));
    obj.insert("length".into(), json!(node.len));
    let value = match &node.value {
        Value::Array(Some(n)) => json!(n),
        Value::Struct(true) | Value::None => Json::Null,
        _ => common::contract::value_json(node),
    };
    if !value.is_null()
        || matches!(
            node.value,
            Value::Str(None) | Value::Bytes(None) | Value::Array(None) | Value::Struct(false)
        )
    {
        obj.insert("value".into(), value);
    }
    if let Some(n) = kwire::render::notes::note(node) {
        obj.insert("note".into(), json!(n));
    }
    if let Some(d) = node.doc() {
        obj.insert("doc".into(), json!(d));
    }
    obj.insert("region".into(), json!(node.region));
    if node.role == Role::Decompressed {
        obj.insert("children_offsets".into(), json!("decompressed buffer"));
    }
    if let Some(e) = node.error() {
        obj.insert("error".into(), json!(e));
    }
    if !node.children.is_empty() {
        let children = node.children.iter().map(tree_value).collect();
        obj.insert("children".into(), Json::Array(children));
    }
    Json::Object(obj)
}
