//! kwire against tshark's Kafka dissector on the same capture: every PDU that
//! tshark decodes must agree with kwire (api, version, correlation id, client
//! id, topics, partitions, error codes). Ignored by a plain `cargo test`;
//! `cargo test -- --include-ignored` runs it and fails when tshark or python3
//! is missing.

mod common;

use common::pcap_writer::{conversation, pcap, Link};
use kwire::decode::Direction;
use kwire::encode::{encode_frame, FrameSpec};
use kwire::schema::Catalogue;
use serde_json::json;
use std::process::Command;

fn frame(
    direction: Direction,
    api: i16,
    version: i16,
    corr: i32,
    body: serde_json::Value,
) -> (bool, Vec<u8>) {
    let fs = FrameSpec {
        direction,
        api_key: api,
        version,
        release: None,
    };
    let header = if direction == Direction::Request {
        json!({"CorrelationId": corr, "ClientId": "tshark-check"})
    } else {
        json!({"CorrelationId": corr})
    };
    (
        direction == Direction::Request,
        encode_frame(
            Catalogue::builtin(),
            &fs,
            header.as_object().unwrap(),
            body.as_object().unwrap(),
        )
        .unwrap(),
    )
}

#[test]
#[ignore = "needs tshark; bash .ci/run installs it and runs ignored tests"]
fn kwire_agrees_with_tshark_on_what_tshark_decodes() {
    common::require_tools(
        "the comparison with tshark's Kafka dissector",
        &[common::TSHARK, common::PYTHON3],
    );
    // Versions old enough for tshark 4.0's dissector, with topics, partitions and errors.
    let traffic = vec![
        frame(
            Direction::Request,
            3,
            4,
            1,
            json!({"Topics": [{"Name": "orders"}, {"Name": "audit"}], "AllowAutoTopicCreation": false}),
        ),
        frame(
            Direction::Response,
            3,
            4,
            1,
            json!({"ThrottleTimeMs": 0, "Brokers": [{"NodeId": 1, "Host": "b1", "Port": 9092, "Rack": null}], "ClusterId": "c", "ControllerId": 1,
            "Topics": [{"ErrorCode": 0, "Name": "orders", "IsInternal": false, "Partitions": [{"ErrorCode": 0, "PartitionIndex": 0, "LeaderId": 1, "ReplicaNodes": [1], "IsrNodes": [1]}]},
                       {"ErrorCode": 3, "Name": "audit", "IsInternal": false, "Partitions": []}]}),
        ),
        frame(
            Direction::Request,
            2,
            1,
            2,
            json!({"ReplicaId": -1, "Topics": [{"Name": "orders", "Partitions": [{"PartitionIndex": 0, "Timestamp": -1}]}]}),
        ),
        frame(
            Direction::Response,
            2,
            1,
            2,
            json!({"Topics": [{"Name": "orders", "Partitions": [{"PartitionIndex": 0, "ErrorCode": 0, "Timestamp": -1, "Offset": 42}]}]}),
        ),
        frame(
            Direction::Request,
            12,
            1,
            3,
            json!({"GroupId": "billing", "GenerationId": 3, "MemberId": "m-1"}),
        ),
        frame(
            Direction::Response,
            12,
            1,
            3,
            json!({"ThrottleTimeMs": 0, "ErrorCode": 27}),
        ),
    ];
    let file = std::env::temp_dir().join(format!("kwire-tshark-{}.pcap", std::process::id()));
    std::fs::write(&file, pcap(Link::EthernetV4, &conversation(&traffic, 1460))).unwrap();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/tshark-compare.py");
    let out = Command::new("python3")
        .arg(script)
        .arg(&file)
        .arg("9092")
        .arg(env!("CARGO_BIN_EXE_kwire"))
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&file);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(text.contains("6 passed, 0 failed"), "{text}");
}
