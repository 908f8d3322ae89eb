//! The shipped samples with records and embedded formats are made here, by this
//! test: it rebuilds each one and checks the committed file is identical
//! (`KWIRE_UPDATE_SNAPSHOTS=1` rewrites them). The four seed messages are made
//! by `kwire example` (checked in tests/cli.rs).

mod common;

use common::batches::{batch, Rec};
use kwire::decode::Direction;
use kwire::encode::{encode_body, encode_frame, FrameSpec};
use kwire::schema::Catalogue;
use serde_json::{json, Value};
use std::path::Path;

fn hex_lines(bytes: &[u8]) -> String {
    bytes
        .chunks(16)
        .map(|c| {
            c.iter()
                .map(|b| format!("{b:02x}"))
                .collect::<Vec<_>>()
                .join(" ")
                + "\n"
        })
        .collect()
}

fn frame(direction: Direction, api: &str, version: i16, correlation: i32, body: Value) -> Vec<u8> {
    let cat = Catalogue::builtin();
    let fs = FrameSpec {
        direction,
        api_key: cat.resolve_api(api).unwrap(),
        version,
        release: None,
    };
    let mut header = serde_json::Map::new();
    header.insert("CorrelationId".into(), json!(correlation));
    if direction == Direction::Request {
        header.insert("ClientId".into(), json!("kwire-sample"));
    }
    encode_frame(cat, &fs, &header, body.as_object().unwrap()).unwrap()
}

fn struct_hex(name: &str, version: i16, body: Value, prefix: &[u8]) -> Vec<u8> {
    let spec = Catalogue::builtin().by_name(name, version, None).unwrap();
    [
        prefix.to_vec(),
        encode_body(spec, version, body.as_object().unwrap()).unwrap(),
    ]
    .concat()
}

fn rec(key: Option<&[u8]>, value: Option<&[u8]>) -> Rec {
    Rec {
        key: key.map(<[u8]>::to_vec),
        value: value.map(<[u8]>::to_vec),
        headers: vec![],
        timestamp_delta: 0,
    }
}

fn samples() -> Vec<(&'static str, Vec<u8>)> {
    let plain = batch(
        0,
        0,
        &[
            rec(None, Some(b"hello")),
            Rec {
                key: Some(b"user-1".to_vec()),
                value: Some(b"{\"clicks\":3}".to_vec()),
                headers: vec![("trace-id".into(), Some(b"abc123".to_vec()))],
                timestamp_delta: 7,
            },
        ],
    );
    let gzip = batch(
        2,
        1,
        &[
            rec(Some(b"k"), Some(b"compressed one")),
            rec(Some(b"k"), Some(b"compressed two")),
        ],
    );
    let produce = frame(
        Direction::Request,
        "Produce",
        9,
        4,
        json!({
            "TransactionalId": null, "Acks": -1, "TimeoutMs": 30000,
            "TopicData": [{"Name": "orders", "PartitionData": [{"Index": 0, "Records": hex::encode([plain.clone(), gzip].concat())}]}]
        }),
    );
    let offsets_key = struct_hex(
        "OffsetCommitKey",
        0,
        json!({"group": "billing", "topic": "orders", "partition": 0}),
        &[0, 1],
    );
    let offsets_value = struct_hex(
        "OffsetCommitValue",
        3,
        json!({"offset": 1234, "leaderEpoch": 5, "metadata": "", "commitTimestamp": 1_700_000_000_000i64}),
        &[0, 3],
    );
    let offsets = frame(
        Direction::Request,
        "Produce",
        9,
        5,
        json!({
            "TransactionalId": null, "Acks": -1, "TimeoutMs": 30000,
            "TopicData": [{"Name": "__consumer_offsets", "PartitionData": [{"Index": 12, "Records": hex::encode(batch(0, 0, &[rec(Some(&offsets_key), Some(&offsets_value))]))}]}]
        }),
    );
    // A fetch response whose data ends in a batch cut short by the size limit.
    let mut fetched = plain.clone();
    fetched.extend_from_slice(&plain[..30]);
    let fetch = frame(
        Direction::Response,
        "Fetch",
        12,
        6,
        json!({
            "ThrottleTimeMs": 0, "ErrorCode": 0, "SessionId": 0,
            "Responses": [{"Topic": "orders", "Partitions": [{"PartitionIndex": 0, "ErrorCode": 0, "HighWatermark": 2, "LastStableOffset": 2, "LogStartOffset": 0, "AbortedTransactions": null, "PreferredReadReplica": -1, "Records": hex::encode(fetched)}]}]
        }),
    );
    let subscription = struct_hex(
        "ConsumerProtocolSubscription",
        3,
        json!({"Topics": ["orders"], "UserData": null, "OwnedPartitions": [{"Topic": "orders", "Partitions": [0, 1]}], "GenerationId": 4, "RackId": "rack-a"}),
        &[0, 3],
    );
    let join = frame(
        Direction::Request,
        "JoinGroup",
        9,
        7,
        json!({
            "GroupId": "billing", "SessionTimeoutMs": 45000, "RebalanceTimeoutMs": 300000, "MemberId": "", "GroupInstanceId": null,
            "ProtocolType": "consumer", "Protocols": [{"Name": "cooperative-sticky", "Metadata": hex::encode(subscription)}], "Reason": null
        }),
    );
    vec![
        ("produce-v9-request", produce),
        ("produce-v9-consumer-offsets-request", offsets),
        ("fetch-v12-response", fetch),
        ("join-group-v9-request", join),
        // SASL PLAIN: the password is redacted unless --show-secrets.
        (
            "sasl-authenticate-v2-request",
            frame(
                Direction::Request,
                "SaslAuthenticate",
                2,
                8,
                json!({"AuthBytes": hex::encode(b"\0alice\0alice-secret")}),
            ),
        ),
    ]
}

#[test]
fn generated_samples_are_current() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    for (name, bytes) in samples() {
        let path = dir.join(format!("{name}.hex"));
        let text = hex_lines(&bytes);
        if std::env::var("KWIRE_UPDATE_SNAPSHOTS").is_ok_and(|v| v == "1") {
            std::fs::write(&path, &text).unwrap();
        } else {
            assert_eq!(
                std::fs::read_to_string(&path).unwrap_or_default(),
                text,
                "{name}: rerun with KWIRE_UPDATE_SNAPSHOTS=1"
            );
        }
    }
}
