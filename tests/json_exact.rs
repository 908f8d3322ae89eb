//! The JSON contract loses nothing silently: a string that is not UTF-8 and a
//! NaN with a payload are written as their nearest JSON values, with their
//! wire bytes under the frame's `"_raw": {"<path>": "<hex>"}`, and
//! `kwire decode --json | kwire encode` gives back the same bytes. An `_raw`
//! entry that disagrees with its value, or names no field, is refused.

mod common;

use bytes::Bytes;
use kwire::decode::{decode_frame, DecodeOptions, Direction, Frame};
use kwire::encode::{encode_frame, encode_frame_exact, FrameSpec, RawValues};
use kwire::render::json::{frame_contract, to_text, write_contract};
use kwire::schema::Catalogue;
use serde_json::{json, Value};

/// AlterClientQuotas v1 (flexible) carries a float64 per op.
const API: i16 = 49;
const VERSION: i16 = 1;
const TEXT_INVALID: [u8; 4] = [0xff, 0xfe, 0x1b, 0x80];
/// A signalling NaN with a payload, and a negative quiet NaN.
const NAN_PAYLOAD: u64 = 0x7ff4_0000_0000_0001;
const NAN_NEGATIVE: u64 = 0xfff8_0000_0000_0000;

fn spec() -> FrameSpec<'static> {
    FrameSpec {
        direction: Direction::Request,
        api_key: API,
        version: VERSION,
        release: None,
    }
}

/// A frame whose entity type and client id are not UTF-8 and whose two float
/// values are NaNs that `"NaN"` does not give back.
fn lossy_frame() -> Vec<u8> {
    let body = json!({"Entries": [{"Entity": [{"EntityType": "ABCD", "EntityName": null}],
        "Ops": [{"Key": "a", "Value": 1.5, "Remove": false}, {"Key": "b", "Value": 2.5, "Remove": false}]}], "ValidateOnly": false});
    let header = json!({"CorrelationId": 7, "ClientId": "WXYZ"});
    let mut bytes = encode_frame(
        Catalogue::builtin(),
        &spec(),
        header.as_object().unwrap(),
        body.as_object().unwrap(),
    )
    .unwrap();
    let mut patch = |from: &[u8], to: &[u8]| {
        let at = bytes
            .windows(from.len())
            .position(|w| w == from)
            .expect("bytes to patch");
        bytes[at..at + to.len()].copy_from_slice(to);
    };
    patch(b"ABCD", &TEXT_INVALID);
    patch(b"WXYZ", &[b'W', 0xc3, b'Y', b'Z']);
    patch(&1.5f64.to_be_bytes(), &NAN_PAYLOAD.to_be_bytes());
    patch(&2.5f64.to_be_bytes(), &NAN_NEGATIVE.to_be_bytes());
    bytes
}

fn decode(bytes: &[u8], values_only: bool) -> Frame {
    let opts = DecodeOptions {
        values_only,
        ..Default::default()
    };
    decode_frame(
        Catalogue::builtin(),
        Bytes::copy_from_slice(bytes),
        0,
        &opts,
    )
}

fn contract_text(frame: &Frame) -> String {
    let mut out = Vec::new();
    write_contract(frame, &mut out);
    String::from_utf8(out).unwrap()
}

#[test]
fn lossy_values_carry_their_bytes_in_raw() {
    let bytes = lossy_frame();
    let lean = decode(&bytes, true);
    assert!(lean.error.is_none(), "{:?}", lean.error);
    let text = contract_text(&lean);
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        v["_raw"],
        json!({
            "header.ClientId": "57c3595a",
            "body.Entries[0].Entity[0].EntityType": "fffe1b80",
            "body.Entries[0].Ops[0].Value": "7ff4000000000001",
            "body.Entries[0].Ops[1].Value": "fff8000000000000",
        }),
        "{text}"
    );
    // The value stays the nearest JSON value.
    assert_eq!(
        v["body"]["Entries"][0]["Entity"][0]["EntityType"],
        "\u{fffd}\u{fffd}\u{1b}\u{fffd}"
    );
    assert_eq!(v["body"]["Entries"][0]["Ops"][0]["Value"], "NaN");
    // The writer and the oracle built from the frame's tree give the same
    // text, and `frame_contract` is that text read back.
    assert_eq!(
        to_text(&common::contract::tree_contract(&decode(&bytes, false))),
        text
    );
    assert_eq!(to_text(&frame_contract(&lean)), text);
    assert!(
        text.find("\"body\":").unwrap() < text.find("\"_raw\":").unwrap(),
        "_raw comes after the body: {text}"
    );
}

#[test]
fn lossless_frames_have_no_raw_member() {
    let body = json!({"Entries": [{"Entity": [{"EntityType": "user", "EntityName": "日本"}], "Ops": [{"Key": "k", "Value": f64::MAX, "Remove": true}]}]});
    let bytes = encode_frame(
        Catalogue::builtin(),
        &spec(),
        json!({"ClientId": "c"}).as_object().unwrap(),
        body.as_object().unwrap(),
    )
    .unwrap();
    assert!(!contract_text(&decode(&bytes, true)).contains("_raw"));
    let tree = common::contract::tree_contract(&decode(&bytes, false));
    assert!(tree.get("_raw").is_none(), "{tree}");
    // A canonical NaN and infinities need no `_raw`: their text gives their bits back.
    for bits in [
        f64::NAN.to_bits(),
        f64::INFINITY.to_bits(),
        f64::NEG_INFINITY.to_bits(),
        (-0.0f64).to_bits(),
    ] {
        let mut b = bytes.clone();
        let at = b
            .windows(8)
            .position(|w| w == f64::MAX.to_be_bytes())
            .unwrap();
        b[at..at + 8].copy_from_slice(&bits.to_be_bytes());
        let text = contract_text(&decode(&b, true));
        assert!(!text.contains("_raw"), "{text}");
        let round = common::kwire_with_stdin(&["encode"], text.as_bytes());
        assert_eq!(
            String::from_utf8_lossy(&round.stdout).trim(),
            hex::encode(&b),
            "bits {bits:016x}"
        );
    }
}

#[test]
fn decode_json_then_encode_gives_the_same_bytes() {
    let bytes = lossy_frame();
    let decoded =
        common::kwire_with_stdin(&["decode", "--json", "-"], hex::encode(&bytes).as_bytes());
    assert!(
        decoded.status.success(),
        "{}",
        String::from_utf8_lossy(&decoded.stderr)
    );
    let encoded = common::kwire_with_stdin(&["encode"], &decoded.stdout);
    assert!(
        encoded.status.success(),
        "{}",
        String::from_utf8_lossy(&encoded.stderr)
    );
    assert_eq!(
        String::from_utf8(encoded.stdout).unwrap().trim(),
        hex::encode(&bytes)
    );
}

#[test]
fn raw_entries_that_disagree_or_name_nothing_are_refused() {
    let text = contract_text(&decode(&lossy_frame(), true));
    let contract: Value = serde_json::from_str(&text).unwrap();
    let refused = |edit: &dyn Fn(&mut Value), expected: &str| {
        let mut c = contract.clone();
        edit(&mut c);
        let out = common::kwire_with_stdin(&["encode"], c.to_string().as_bytes());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(out.stdout.is_empty());
        assert!(err.contains(expected), "expected {expected:?} in {err}");
    };
    refused(
        &|c| c["body"]["Entries"][0]["Entity"][0]["EntityType"] = json!("other"),
        "body.Entries[0].Entity[0].EntityType: the value disagrees with its _raw entry",
    );
    refused(
        &|c| c["body"]["Entries"][0]["Ops"][0]["Value"] = json!(1.5),
        "body.Entries[0].Ops[0].Value: the value 1.5 disagrees with its _raw entry",
    );
    refused(
        &|c| c["_raw"]["body.Entries[0].Ops[0].Value"] = json!("00"),
        "a float64 has 8",
    );
    refused(
        &|c| c["_raw"]["body.Nothing"] = json!("00"),
        "_raw.body.Nothing: names no string or float64 field",
    );
    refused(
        &|c| c["_raw"]["body.Entries[0].Ops[0].Key"] = json!("zz"),
        "_raw.body.Entries[0].Ops[0].Key: not hex",
    );
    refused(&|c| c["_raw"] = json!([]), "_raw: expected an object");
    // Without `_raw`, the nearest values encode (exit 0), as before.
    let mut c = contract.clone();
    c.as_object_mut().unwrap().remove("_raw");
    assert!(
        common::kwire_with_stdin(&["encode"], c.to_string().as_bytes())
            .status
            .success()
    );
}

#[test]
fn the_library_encoder_takes_raw_too() {
    let bytes = lossy_frame();
    let contract = frame_contract(&decode(&bytes, true));
    let raw = RawValues::from_json(&contract["_raw"]).unwrap();
    let again = encode_frame_exact(
        Catalogue::builtin(),
        &spec(),
        contract["header"].as_object().unwrap(),
        contract["body"].as_object().unwrap(),
        &raw,
    )
    .unwrap();
    assert_eq!(again, bytes);
}
