//! JSON for `kwire encode`: any text as a whole contract object, no panic;
//! what encodes decodes back, and its values-only JSON encodes to the same
//! bytes (the round trip `decode --json | encode` promises).
#![no_main]
use kwire::decode::{decode_frames, DecodeOptions, Direction};
use kwire::encode::{encode_frame_exact, FrameSpec, RawValues};
use kwire::schema::Catalogue;
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value};

fuzz_target!(|data: &[u8]| {
    let Ok(Value::Object(obj)) = serde_json::from_slice::<Value>(data) else { return };
    let cat = Catalogue::builtin();
    let int16 = |k: &str| obj.get(k).and_then(Value::as_i64).and_then(|v| i16::try_from(v).ok());
    let (Some(api_key), Some(version)) = (int16("api_key"), int16("api_version")) else { return };
    let direction = if obj.get("kind") == Some(&Value::from("response")) { Direction::Response } else { Direction::Request };
    let empty = Map::new();
    let header = obj.get("header").and_then(Value::as_object).unwrap_or(&empty);
    let Some(body) = obj.get("body").and_then(Value::as_object) else { return };
    let raw = match obj.get(kwire::render::json::RAW_KEY) {
        Some(r) => match RawValues::from_json(r) {
            Ok(r) => r,
            Err(_) => return,
        },
        None => RawValues::default(),
    };
    let fs = FrameSpec { direction, api_key, version, release: None };
    let Ok(bytes) = encode_frame_exact(cat, &fs, header, body, &raw) else { return };
    let opts = DecodeOptions { direction: Some(direction), api_key: Some(api_key), api_version: Some(version), values_only: true, ..Default::default() };
    let frames = decode_frames(cat, &bytes::Bytes::from(bytes.clone()), &opts);
    assert_eq!(frames.len(), 1, "one frame encoded, one decoded");
    if frames[0].error.is_some() {
        return;
    }
    let mut line = Vec::new();
    kwire::render::json::write_contract(&frames[0], &mut line);
    let Ok(Value::Object(again)) = serde_json::from_slice::<Value>(&line) else { panic!("the contract is JSON") };
    let raw = again.get(kwire::render::json::RAW_KEY).map(|r| RawValues::from_json(r).expect("kwire's own _raw parses")).unwrap_or_default();
    let header = again.get("header").and_then(Value::as_object).cloned().unwrap_or_default();
    let body = again.get("body").and_then(Value::as_object).cloned().unwrap_or_default();
    let back = encode_frame_exact(cat, &fs, &header, &body, &raw).expect("kwire's own JSON encodes");
    assert_eq!(back, bytes, "decode --json | encode gives the same bytes");
});
