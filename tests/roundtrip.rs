//! Round trips over every API × version × direction of every release:
//! the smallest instance decodes cleanly and re-encodes to its bytes, and random
//! bodies satisfy decode(encode(v)) == v and encode(decode(b)) == b.

mod common;

use bytes::Bytes;
use common::random_body::{random_body, random_struct, Rng};
use common::{all_messages, frame_spec};
use kwire::decode::{decode_frame, DecodeOptions, Direction, Frame};
use kwire::encode::example::smallest_struct;
use kwire::encode::frame::message_spec;
use kwire::encode::{encode_frame, example_header, FrameSpec};
use kwire::schema::{Catalogue, MessageKind};
use proptest::prelude::*;
use serde_json::{Map, Value};

fn decode(cat: &Catalogue, d: Direction, key: i16, v: i16, bytes: Vec<u8>) -> Frame {
    let opts = DecodeOptions {
        direction: Some(d),
        api_key: Some(key),
        api_version: Some(v),
        release: None,
        ..Default::default()
    };
    decode_frame(cat, Bytes::from(bytes), 0, &opts)
}

fn reencode(cat: &Catalogue, fs: &FrameSpec, json: &Value) -> Vec<u8> {
    encode_frame(
        cat,
        fs,
        json["header"].as_object().unwrap(),
        json["body"].as_object().unwrap(),
    )
    .unwrap()
}

#[test]
fn every_smallest_instance_decodes_and_re_encodes() {
    let cat = Catalogue::builtin();
    let all = all_messages(cat);
    assert!(all.len() > 700, "only {} messages", all.len());
    for (d, key, v) in all {
        let fs = frame_spec(d, key, v);
        let spec = message_spec(cat, &fs).unwrap();
        let body = smallest_struct(&spec.fields, v);
        let bytes = encode_frame(cat, &fs, &example_header(d), &body).unwrap();
        let frame = decode(cat, d, key, v, bytes.clone());
        assert!(
            frame.error.is_none() && frame.warnings.is_empty(),
            "{} v{v} {d:?}: {:?} {:?}",
            spec.name,
            frame.error,
            frame.warnings
        );
        let json = common::contract::tree_contract(&frame);
        assert_eq!(json["body"], Value::Object(body), "{} v{v}", spec.name);
        assert_eq!(reencode(cat, &fs, &json), bytes, "{} v{v} {d:?}", spec.name);
    }
}

fn check_random(cat: &Catalogue, d: Direction, key: i16, v: i16, seed: u64) -> Result<(), String> {
    let fs = frame_spec(d, key, v);
    let spec = message_spec(cat, &fs).unwrap();
    let body = random_body(spec, v, seed);
    let mut header = example_header(d);
    let mut rng = Rng::new(seed ^ 0xabcdef);
    header.insert("CorrelationId".into(), Value::from(rng.next() as i32));
    let mut body_with_unknown: Map<String, Value> = body.clone();
    if spec.is_flexible(v) && rng.chance(3) {
        // An unknown tag far above any known one survives byte for byte.
        let mut unknown = Map::new();
        unknown.insert("77".into(), Value::from("c0ffee"));
        body_with_unknown.insert("_unknown_tags".into(), Value::Object(unknown));
    }
    let bytes = encode_frame(cat, &fs, &header, &body_with_unknown)
        .map_err(|e| format!("{} v{v} seed {seed}: encode: {e}", spec.name))?;
    let frame = decode(cat, d, key, v, bytes.clone());
    if let Some(e) = &frame.error {
        return Err(format!("{} v{v} seed {seed}: decode: {e}", spec.name));
    }
    let json = common::contract::tree_contract(&frame);
    // `--format json` decodes values only, with its own fast paths (long
    // strings, large arrays, nulls, unknown tags): the same text, whatever the values.
    let opts = DecodeOptions {
        direction: Some(d),
        api_key: Some(key),
        api_version: Some(v),
        values_only: true,
        ..Default::default()
    };
    let lean = decode_frame(cat, Bytes::from(bytes.clone()), 0, &opts);
    let mut written = Vec::new();
    kwire::render::json::write_contract(&lean, &mut written);
    if written != json.to_string().into_bytes() {
        return Err(format!(
            "{} v{v} seed {seed}: values-only JSON differs:\n  tree   {json}\n  values {}",
            spec.name,
            String::from_utf8_lossy(&written)
        ));
    }
    if json["body"] != Value::Object(body_with_unknown.clone()) {
        return Err(format!(
            "{} v{v} seed {seed}:\n  wrote {}\n  read  {}",
            spec.name,
            Value::Object(body_with_unknown),
            json["body"]
        ));
    }
    if reencode(cat, &fs, &json) != bytes {
        return Err(format!(
            "{} v{v} seed {seed}: re-encoding differs",
            spec.name
        ));
    }
    Ok(())
}

#[test]
fn random_bodies_round_trip_for_every_message() {
    let cat = Catalogue::builtin();
    let mut failures = Vec::new();
    let mut count = 0;
    for (d, key, v) in all_messages(cat) {
        for seed in 0..4u64 {
            count += 1;
            if let Err(e) = check_random(
                cat,
                d,
                key,
                v,
                seed * 7919 + u64::from(key as u16) * 31 + v as u64,
            ) {
                failures.push(e);
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {count} round trips failed:\n{}",
        failures.len(),
        failures
            .iter()
            .take(5)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]
    #[test]
    fn random_message_round_trips(pick in any::<usize>(), seed in any::<u64>()) {
        let cat = Catalogue::builtin();
        let all = all_messages(cat);
        let (d, key, v) = all[pick % all.len()];
        prop_assert_eq!(check_random(cat, d, key, v, seed), Ok(()));
    }
}

#[test]
fn header_fields_round_trip() {
    let cat = Catalogue::builtin();
    let mut rng = Rng::new(5);
    for (d, key, v) in all_messages(cat).into_iter().step_by(7) {
        let fs = frame_spec(d, key, v);
        let spec = message_spec(cat, &fs).unwrap();
        let hname = if d == Direction::Request {
            "RequestHeader"
        } else {
            "ResponseHeader"
        };
        let hspec = cat.entries_named(hname).next().unwrap();
        let mut header = random_struct(&mut rng, &hspec.spec().fields, 1, 0);
        header.retain(|k, _| k == "CorrelationId" || (k == "ClientId" && d == Direction::Request));
        let bytes = encode_frame(cat, &fs, &header, &smallest_struct(&spec.fields, v)).unwrap();
        let frame = decode(cat, d, key, v, bytes);
        assert!(frame.error.is_none(), "{}: {:?}", spec.name, frame.error);
        let json = common::contract::tree_contract(&frame);
        for (k, val) in &header {
            if !(k == "ClientId" && frame.header_version == Some(0)) {
                assert_eq!(&json["header"][k], val, "{} header {k}", spec.name);
            }
        }
    }
}

/// Coordinator keys and values, metadata records and data types: the smallest
/// instance with its log prefix decodes cleanly at every version.
#[test]
fn every_record_type_example_decodes_with_its_prefix() {
    use kwire::decode::payload::read_payload;
    use kwire::encode::example::example_payload;
    let cat = Catalogue::builtin();
    let mut names: Vec<String> = cat
        .entries
        .iter()
        .filter(|e| {
            matches!(
                e.spec().kind,
                MessageKind::CoordinatorKey
                    | MessageKind::CoordinatorValue
                    | MessageKind::Metadata
                    | MessageKind::Data
            )
        })
        .map(|e| e.spec().name.clone())
        .collect();
    names.sort();
    names.dedup();
    assert!(names.len() > 60, "{} record types", names.len());
    let mut checked = 0;
    for name in names {
        let newest = cat.entries_named(&name).next().unwrap();
        for v in newest.spec().valid_versions.iter_capped(i16::MAX) {
            let (bytes, version) = example_payload(cat, &name, Some(v)).unwrap();
            let p = read_payload(
                cat,
                &name,
                &Bytes::from(bytes.clone()),
                if newest.spec().kind == MessageKind::Data {
                    Some(version)
                } else {
                    None
                },
            );
            assert!(
                p.error.is_none() && p.warnings.is_empty(),
                "{name} v{v}: {:?} {:?}",
                p.error,
                p.warnings
            );
            assert_eq!(
                p.root.children.last().unwrap().end(),
                bytes.len(),
                "{name} v{v}"
            );
            checked += 1;
        }
    }
    assert!(checked > 100, "{checked}");
}
