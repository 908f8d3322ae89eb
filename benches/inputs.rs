//! Realistic inputs for benchmarks, made by kwire's encoder and the tests'
//! record-batch writer: shared by the criterion bench and `make_bench_inputs`.
#![allow(dead_code)]

#[path = "../tests/common/batches.rs"]
pub mod batches;
#[path = "../tests/common/pcap_writer.rs"]
pub mod pcap_writer;

use batches::{batch, Rec};
use kwire::decode::Direction;
use kwire::encode::{encode_frame, FrameSpec};
use kwire::schema::Catalogue;
use serde_json::{json, Map, Value};

fn frame(direction: Direction, api: i16, version: i16, body: Value) -> Vec<u8> {
    let cat = Catalogue::builtin();
    let fs = FrameSpec {
        direction,
        api_key: api,
        version,
        release: None,
    };
    let mut header = Map::new();
    header.insert("CorrelationId".into(), json!(7));
    if direction == Direction::Request {
        header.insert("ClientId".into(), json!("bench-client"));
    }
    encode_frame(cat, &fs, &header, body.as_object().unwrap()).unwrap()
}

fn small_records(n: usize, size: usize) -> Vec<Rec> {
    (0..n)
        .map(|i| Rec {
            key: Some(format!("key-{i}").into_bytes()),
            value: Some(vec![b'v'; size]),
            headers: vec![],
            timestamp_delta: i as i64,
        })
        .collect()
}

/// Produce v9 with one batch of 1,000 small records.
pub fn produce_1000() -> Vec<u8> {
    let records = batch(0, 0, &small_records(1000, 40));
    frame(
        Direction::Request,
        0,
        9,
        json!({"TransactionalId": null, "Acks": -1, "TimeoutMs": 30000,
        "TopicData": [{"Name": "orders", "PartitionData": [{"Index": 0, "Records": hex::encode(records)}]}]}),
    )
}

/// A Fetch v12 response of about 1 MB: batches of 100 records × 1 KB.
pub fn fetch_1mb() -> Vec<u8> {
    fetch_mb(1)
}

/// A Fetch v12 response of about `mb` MB: batches of 100 records × 1 KB.
pub fn fetch_mb(mb: usize) -> Vec<u8> {
    let mut records = Vec::new();
    let mut base = 0;
    while records.len() < mb << 20 {
        records.extend(batch(base, 0, &small_records(100, 1000)));
        base += 100;
    }
    fetch_v12(&records, base)
}

/// A Fetch v12 response of `n` small records (key `key-i`, a 40-byte value),
/// in batches of 100: 400,000 of them make the 22 MB frame whose text tree
/// and explorer view BENCHMARKS.md holds to a memory budget.
pub fn fetch_small_records(n: usize) -> Vec<u8> {
    let mut records = Vec::new();
    let mut base = 0;
    while base < n {
        let count = (n - base).min(100);
        records.extend(batch(base as i64, 0, &small_records(count, 40)));
        base += count;
    }
    fetch_v12(&records, base as i64)
}

/// A Fetch v12 response of one partition holding `records`, `base` its high watermark.
fn fetch_v12(records: &[u8], base: i64) -> Vec<u8> {
    frame(
        Direction::Response,
        1,
        12,
        json!({"ThrottleTimeMs": 0, "ErrorCode": 0, "SessionId": 1,
        "Responses": [{"Topic": "orders", "Partitions": [{"PartitionIndex": 0, "ErrorCode": 0, "HighWatermark": base, "LastStableOffset": base,
            "LogStartOffset": 0, "AbortedTransactions": null, "PreferredReadReplica": -1, "Records": hex::encode(records)}]}]}),
    )
}

/// A Metadata v12 response with 50 topics × 100 partitions.
pub fn metadata_5000() -> Vec<u8> {
    metadata(50, 100)
}

/// A Metadata v12 response with `topics` topics × `partitions` partitions.
pub fn metadata(topics: usize, partitions: usize) -> Vec<u8> {
    let topics: Vec<Value> = (0..topics)
        .map(|t| {
            let parts: Vec<Value> =
                (0..partitions).map(|p| json!({"ErrorCode": 0, "PartitionIndex": p, "LeaderId": p % 3, "LeaderEpoch": 5, "ReplicaNodes": [0, 1, 2], "IsrNodes": [0, 1, 2], "OfflineReplicas": []})).collect();
            json!({"ErrorCode": 0, "Name": format!("topic-{t}"), "TopicId": "6ba7b810-9dad-11d1-80b4-00c04fd430c8", "IsInternal": false, "Partitions": parts, "TopicAuthorizedOperations": -2147483648})
        })
        .collect();
    frame(
        Direction::Response,
        3,
        12,
        json!({"ThrottleTimeMs": 0, "Brokers": [{"NodeId": 0, "Host": "broker-0", "Port": 9092, "Rack": null}],
        "ClusterId": "cluster", "ControllerId": 0, "Topics": topics}),
    )
}

/// 100,000 Heartbeat v4 requests back to back.
pub fn heartbeats_100k() -> Vec<u8> {
    let one = frame(
        Direction::Request,
        12,
        4,
        json!({"GroupId": "billing", "GenerationId": 7, "MemberId": "member-1", "GroupInstanceId": null}),
    );
    one.repeat(100_000)
}

/// A pcap of about `pcap_mb` MB of mixed traffic, written to `f`: one
/// conversation (a Produce request, a Fetch request and its response, 200
/// heartbeats with their responses), repeated over new connections. Returns the
/// bytes written and the frames in one conversation.
pub fn write_mixed_pcap(
    f: &mut impl std::io::Write,
    pcap_mb: usize,
    produce: &[u8],
    fetch: &[u8],
    heartbeats: &[u8],
) -> std::io::Result<(usize, usize)> {
    let conversation = mixed_conversation(produce, fetch, heartbeats);
    let (written, _) = write_repeated(f, &conversation, RepeatUntil::Bytes(pcap_mb << 20))?;
    Ok((written, conversation.len()))
}

/// A pcap of one Metadata v12 request and its `response`, written to `f`.
pub fn write_metadata_pcap(f: &mut impl std::io::Write, response: &[u8]) -> std::io::Result<()> {
    let cat = kwire::schema::Catalogue::builtin();
    let spec = kwire::encode::FrameSpec {
        direction: kwire::decode::Direction::Request,
        api_key: 3,
        version: 12,
        release: None,
    };
    let mut request = kwire::encode::example::example_frame(cat, &spec).unwrap();
    // The response's correlation id, so that the two pair.
    request[8..12].copy_from_slice(&response[4..8]);
    let conversation = [(true, request), (false, response.to_vec())];
    write_repeated(f, &conversation, RepeatUntil::Times(1))?;
    Ok(())
}

/// One conversation: a Produce request, then the Fetch response paired with a Fetch
/// request, and a run of heartbeats with their responses.
pub fn mixed_conversation(produce: &[u8], fetch: &[u8], heartbeats: &[u8]) -> Vec<(bool, Vec<u8>)> {
    let cat = kwire::schema::Catalogue::builtin();
    let fetch_req = kwire::encode::example::example_frame(
        cat,
        &kwire::encode::FrameSpec {
            direction: kwire::decode::Direction::Request,
            api_key: 1,
            version: 12,
            release: None,
        },
    )
    .unwrap();
    let hb_resp = kwire::encode::example::example_frame(
        cat,
        &kwire::encode::FrameSpec {
            direction: kwire::decode::Direction::Response,
            api_key: 12,
            version: 4,
            release: None,
        },
    )
    .unwrap();
    let hb_req = &heartbeats[..heartbeats.len() / 100_000];
    let with_corr = |frame: &[u8], corr: i32, request: bool| {
        let mut f = frame.to_vec();
        let at = if request { 8 } else { 4 };
        f[at..at + 4].copy_from_slice(&corr.to_be_bytes());
        f
    };
    let mut conversation = Vec::new();
    let mut corr = 0;
    let mut push = |req: &[u8], resp: Option<&[u8]>, conv: &mut Vec<(bool, Vec<u8>)>| {
        corr += 1;
        conv.push((true, with_corr(req, corr, true)));
        if let Some(r) = resp {
            conv.push((false, with_corr(r, corr, false)));
        }
    };
    push(produce, None, &mut conversation);
    push(&fetch_req, Some(fetch), &mut conversation);
    for _ in 0..200 {
        push(hb_req, Some(&hb_resp), &mut conversation);
    }
    conversation
}

/// A Produce v8 request of about 900 bytes (one batch of 10 records × 60
/// bytes) and its response: the frames of the explorer's and the listing's
/// capture benchmark.
pub fn produce_v8_pair() -> (Vec<u8>, Vec<u8>) {
    let records = batch(0, 0, &small_records(10, 60));
    let request = frame(
        Direction::Request,
        0,
        8,
        json!({"TransactionalId": null, "Acks": -1, "TimeoutMs": 30000,
        "TopicData": [{"Name": "orders", "PartitionData": [{"Index": 0, "Records": hex::encode(&records)}]}]}),
    );
    let response = frame(
        Direction::Response,
        0,
        8,
        json!({"Responses": [{"Name": "orders", "PartitionResponses": [{"Index": 0, "ErrorCode": 0,
        "BaseOffset": 0, "LogAppendTimeMs": -1, "LogStartOffset": 0, "RecordErrors": [], "ErrorMessage": null}]}], "ThrottleTimeMs": 0}),
    );
    (request, response)
}

/// A pcap of `pairs` Produce v8 requests with their responses (`pairs` × 2
/// frames), 100 exchanges per connection: 20,000 pairs make about 23 MB.
pub fn write_produce_pcap(f: &mut impl std::io::Write, pairs: usize) -> std::io::Result<usize> {
    let (request, response) = produce_v8_pair();
    let mut conversation = Vec::new();
    for corr in 1..=100i32 {
        let mut q = request.clone();
        q[8..12].copy_from_slice(&corr.to_be_bytes());
        let mut r = response.clone();
        r[4..8].copy_from_slice(&corr.to_be_bytes());
        conversation.push((true, q));
        conversation.push((false, r));
    }
    let (written, _) = write_repeated(f, &conversation, RepeatUntil::Times(pairs.div_ceil(100)))?;
    Ok(written)
}

/// How many times `write_repeated` writes the conversation.
#[derive(Clone, Copy, Debug)]
pub enum RepeatUntil {
    /// Until the file has this many bytes.
    Bytes(usize),
    /// This many times.
    Times(usize),
}

/// A pcap of a conversation (its byte streams cut into 1448-byte segments)
/// repeated, each repeat a new connection (another client port, so nothing
/// looks retransmitted): the bytes written and the repeats.
pub fn write_repeated(
    f: &mut impl std::io::Write,
    conversation: &[(bool, Vec<u8>)],
    until: RepeatUntil,
) -> std::io::Result<(usize, usize)> {
    let segs = pcap_writer::conversation(conversation, 1448);
    let one = pcap_writer::pcap(pcap_writer::Link::EthernetV4, &segs);
    // Repeat the packet records (not the file header).
    let header = &one[..24];
    let packets = &one[24..];
    f.write_all(header)?;
    let mut written = 24;
    let mut repeats = 0usize;
    loop {
        match until {
            RepeatUntil::Bytes(b) if written >= b => break,
            RepeatUntil::Times(n) if repeats >= n => break,
            _ => {}
        }
        let mut copy = packets.to_vec();
        let port = (20000 + (repeats % 40000) as u16).to_be_bytes();
        let mut at = 0;
        while at + 16 <= copy.len() {
            let len = u32::from_le_bytes(copy[at + 8..at + 12].try_into().unwrap()) as usize;
            let tcp = at + 16 + 34; // record header, Ethernet, IPv4
            let side = if copy[tcp..tcp + 2] == 50000u16.to_be_bytes() {
                tcp
            } else {
                tcp + 2
            };
            copy[side..side + 2].copy_from_slice(&port);
            at += 16 + len;
        }
        f.write_all(&copy)?;
        written += copy.len();
        repeats += 1;
    }
    Ok((written, repeats))
}
