//! The JSON contract: 3,462 frames of every Kafka 4.1 request and response
//! version, each with the exact `kwire decode --json` value expected.

mod common;

use bytes::Bytes;
use kwire::decode::{decode_frames, DecodeOptions, Direction};
use kwire::render::json::write_contract;
use kwire::schema::Catalogue;
use serde_json::Value;
use std::collections::BTreeMap;

struct Case {
    name: String,
    hex: String,
    expected: Value,
}

fn load_cases() -> Option<Vec<Case>> {
    let archive = common::shared_dir("test-cases/contract-cases.tar.gz")?;
    let files: BTreeMap<String, Vec<u8>> = common::read_tar_gz(&archive).into_iter().collect();
    let mut cases = Vec::new();
    for (path, data) in &files {
        let Some(stem) = path.strip_suffix(".hex") else {
            continue;
        };
        let json = files
            .get(&format!("{stem}.json"))
            .unwrap_or_else(|| panic!("{stem}.json missing"));
        cases.push(Case {
            name: stem.to_string(),
            hex: String::from_utf8(data.clone()).unwrap().trim().to_string(),
            expected: serde_json::from_slice(json).unwrap(),
        });
    }
    Some(cases)
}

fn decode_case(cat: &Catalogue, case: &Case, release: Option<&str>) -> Value {
    let bytes = Bytes::from(hex::decode(&case.hex).expect("case hex"));
    let response = case.expected["kind"] == "response";
    let opts = DecodeOptions {
        direction: Some(if response {
            Direction::Response
        } else {
            Direction::Request
        }),
        api_key: response.then(|| case.expected["api_key"].as_i64().unwrap() as i16),
        api_version: response.then(|| case.expected["api_version"].as_i64().unwrap() as i16),
        release: release.map(str::to_string),
        ..Default::default()
    };
    let frames = decode_frames(cat, &bytes, &opts);
    assert_eq!(frames.len(), 1, "{}: one frame expected", case.name);
    let value = common::contract::tree_contract(&frames[0]);
    // What `--format json` prints: the values-only decode, written directly. It
    // must be the full tree's contract text exactly.
    let lean = decode_frames(
        cat,
        &bytes,
        &DecodeOptions {
            values_only: true,
            ..opts
        },
    );
    let mut written = Vec::new();
    write_contract(&lean[0], &mut written);
    assert_eq!(
        String::from_utf8(written).unwrap(),
        value.to_string(),
        "{}: values-only JSON differs from the full tree's",
        case.name
    );
    // kwire's own addition to the contract, the API's name beside its key:
    // checked against the catalogue, then set aside (the cases predate it).
    let mut value = value;
    let name = value
        .as_object_mut()
        .and_then(|o| o.shift_remove("api_name"));
    let key = value["api_key"].as_i64().unwrap() as i16;
    assert_eq!(
        name.as_ref().and_then(Value::as_str),
        cat.api_name(key),
        "{}: api_name",
        case.name
    );
    value
}

fn check_all(release: Option<&str>) {
    let Some(cases) = load_cases() else { return };
    assert_eq!(cases.len(), 3462, "the archive holds 3,462 cases");
    let cat = Catalogue::builtin();
    let mut failures = Vec::new();
    for case in &cases {
        let got = decode_case(cat, case, release);
        if got != case.expected {
            failures.push(format!(
                "{}\n  expected {}\n  got      {}",
                case.name, case.expected, got
            ));
        }
    }
    let shown: Vec<&String> = failures.iter().take(5).collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases differ; first ones:\n{}",
        failures.len(),
        cases.len(),
        shown
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    println!("{} contract cases decode to the expected JSON", cases.len());
}

#[test]
fn every_contract_case_decodes_to_the_expected_json_by_default() {
    check_all(None);
}

#[test]
fn every_contract_case_decodes_to_the_expected_json_pinned_to_4_1() {
    check_all(Some("4.1"));
}

/// encode(decode(b)) == b for every case: the encoder writes back exactly the
/// bytes the decoder read, from the JSON contract alone.
#[test]
fn every_contract_case_re_encodes_to_its_bytes() {
    use kwire::encode::{encode_frame, FrameSpec};
    let Some(cases) = load_cases() else { return };
    let cat = Catalogue::builtin();
    let mut failures = Vec::new();
    for case in &cases {
        let json = decode_case(cat, case, None);
        let fs = FrameSpec {
            direction: if json["kind"] == "response" {
                Direction::Response
            } else {
                Direction::Request
            },
            api_key: json["api_key"].as_i64().unwrap() as i16,
            version: json["api_version"].as_i64().unwrap() as i16,
            release: None,
        };
        match encode_frame(
            cat,
            &fs,
            json["header"].as_object().unwrap(),
            json["body"].as_object().unwrap(),
        ) {
            Ok(bytes) if hex::encode(&bytes) == case.hex => {}
            Ok(bytes) => failures.push(format!(
                "{}: bytes differ\n  expected {}\n  got      {}",
                case.name,
                case.hex,
                hex::encode(bytes)
            )),
            Err(e) => failures.push(format!("{}: {e}", case.name)),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases do not re-encode:\n{}",
        failures.len(),
        cases.len(),
        failures
            .iter()
            .take(5)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// `--format json` decodes values only, with its own decoder: on damaged
/// frames of every API and version it must still print what the full tree's
/// contract prints, partial values and error included. Each case is cut short
/// (its size prefix made to match, so that decoding stops inside the body) and
/// has single bytes changed, at places spread over the frame.
#[test]
fn values_only_json_matches_the_tree_on_damaged_cases() {
    let Some(cases) = load_cases() else { return };
    let cat = Catalogue::builtin();
    let mut compared = 0usize;
    for case in &cases {
        let bytes = hex::decode(&case.hex).expect("case hex");
        let response = case.expected["kind"] == "response";
        let opts = DecodeOptions {
            direction: Some(if response {
                Direction::Response
            } else {
                Direction::Request
            }),
            api_key: response.then(|| case.expected["api_key"].as_i64().unwrap() as i16),
            api_version: response.then(|| case.expected["api_version"].as_i64().unwrap() as i16),
            ..Default::default()
        };
        let mut damaged = Vec::new();
        for k in 1..=6 {
            let cut = 4 + (bytes.len() - 4) * k / 7;
            let mut b = bytes[..cut].to_vec();
            b[..4].copy_from_slice(&((cut - 4) as i32).to_be_bytes());
            damaged.push(b);
        }
        for (k, v) in [0x00u8, 0xff, 0x80, 0x7f, 0x01, 0xfe]
            .into_iter()
            .enumerate()
        {
            let mut b = bytes.clone();
            let at = 4 + (bytes.len() - 4) * (2 * k + 1) / 12;
            b[at] = v;
            damaged.push(b);
        }
        for b in damaged {
            let input = Bytes::from(b);
            let full = decode_frames(cat, &input, &opts);
            let lean = decode_frames(
                cat,
                &input,
                &DecodeOptions {
                    values_only: true,
                    ..opts.clone()
                },
            );
            assert_eq!(lean.len(), full.len(), "{}: frame count", case.name);
            for (l, f) in lean.iter().zip(&full) {
                let mut written = Vec::new();
                write_contract(l, &mut written);
                assert_eq!(
                    String::from_utf8(written).unwrap(),
                    kwire::render::json::to_text(&common::contract::tree_contract(f)),
                    "{}: input {}",
                    case.name,
                    hex::encode(&input)
                );
                compared += 1;
            }
        }
    }
    println!("{compared} damaged frames give the same JSON from both decoders");
}
