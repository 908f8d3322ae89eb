//! Realistic inputs for benchmarks, made by kwire's encoder and the tests'
//! record-batch writer: shared by the criterion bench and `make_bench_inputs`.
#![allow(dead_code)]

#[path = "../tests/common/batches.rs"]
pub mod batches;

use batches::{batch, Rec};
use kwire::decode::Direction;
use kwire::encode::{encode_frame, FrameSpec};
use kwire::schema::Catalogue;
use serde_json::{json, Map, Value};

fn frame(direction: Direction, api: i16, version: i16, body: Value) -> Vec<u8> {
    let cat = Catalogue::builtin();
    let fs = FrameSpec { direction, api_key: api, version, release: None };
    let mut header = Map::new();
    header.insert("CorrelationId".into(), json!(7));
    if direction == Direction::Request {
        header.insert("ClientId".into(), json!("bench-client"));
    }
    encode_frame(cat, &fs, &header, body.as_object().unwrap()).unwrap()
}

fn small_records(n: usize, size: usize) -> Vec<Rec> {
    (0..n).map(|i| Rec { key: Some(format!("key-{i}").into_bytes()), value: Some(vec![b'v'; size]), headers: vec![], timestamp_delta: i as i64 }).collect()
}

/// Produce v9 with one batch of 1,000 small records.
pub fn produce_1000() -> Vec<u8> {
    let records = batch(0, 0, &small_records(1000, 40));
    frame(Direction::Request, 0, 9, json!({"TransactionalId": null, "Acks": -1, "TimeoutMs": 30000,
        "TopicData": [{"Name": "orders", "PartitionData": [{"Index": 0, "Records": hex::encode(records)}]}]}))
}

/// A Fetch v12 response of about 1 MB: batches of 100 records × 1 KB.
pub fn fetch_1mb() -> Vec<u8> {
    let mut records = Vec::new();
    let mut base = 0;
    while records.len() < 1 << 20 {
        records.extend(batch(base, 0, &small_records(100, 1000)));
        base += 100;
    }
    frame(Direction::Response, 1, 12, json!({"ThrottleTimeMs": 0, "ErrorCode": 0, "SessionId": 1,
        "Responses": [{"Topic": "orders", "Partitions": [{"PartitionIndex": 0, "ErrorCode": 0, "HighWatermark": base, "LastStableOffset": base,
            "LogStartOffset": 0, "AbortedTransactions": null, "PreferredReadReplica": -1, "Records": hex::encode(records)}]}]}))
}

/// A Metadata v12 response with 50 topics × 100 partitions.
pub fn metadata_5000() -> Vec<u8> {
    let topics: Vec<Value> = (0..50)
        .map(|t| {
            let parts: Vec<Value> = (0..100)
                .map(|p| json!({"ErrorCode": 0, "PartitionIndex": p, "LeaderId": p % 3, "LeaderEpoch": 5, "ReplicaNodes": [0, 1, 2], "IsrNodes": [0, 1, 2], "OfflineReplicas": []}))
                .collect();
            json!({"ErrorCode": 0, "Name": format!("topic-{t}"), "TopicId": "6ba7b810-9dad-11d1-80b4-00c04fd430c8", "IsInternal": false, "Partitions": parts, "TopicAuthorizedOperations": -2147483648})
        })
        .collect();
    frame(Direction::Response, 3, 12, json!({"ThrottleTimeMs": 0, "Brokers": [{"NodeId": 0, "Host": "broker-0", "Port": 9092, "Rack": null}],
        "ClusterId": "cluster", "ControllerId": 0, "Topics": topics}))
}

/// 100,000 Heartbeat v4 requests back to back.
pub fn heartbeats_100k() -> Vec<u8> {
    let one = frame(Direction::Request, 12, 4, json!({"GroupId": "billing", "GenerationId": 7, "MemberId": "member-1", "GroupInstanceId": null}));
    one.repeat(100_000)
}
