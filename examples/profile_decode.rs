//! Decode one benchmark input repeatedly, for profilers and instruction counts:
//! `cargo run --release --example profile_decode -- metadata 20 [kwire|annotated|values|values-decode|oracle|oracle-bare]`.
#![allow(clippy::disallowed_macros)] // test and tool output: a closed stderr may end the run
#[path = "../benches/inputs.rs"]
mod inputs;

use bytes::Bytes;
use kwire::decode::{for_each_frame, DecodeOptions, Direction};
use kwire::schema::Catalogue;

/// The allocator the kwire binary uses, so that figures match the command.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let which = args.get(1).map_or("metadata", String::as_str);
    let n: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(10);
    let resp = |k, v| DecodeOptions {
        direction: Some(Direction::Response),
        api_key: Some(k),
        api_version: Some(v),
        ..Default::default()
    };
    let (bytes, opts): (Bytes, DecodeOptions) = match which {
        "produce" => (inputs::produce_1000().into(), DecodeOptions::default()),
        "fetch" => (inputs::fetch_1mb().into(), resp(1, 12)),
        "heartbeats" => (
            inputs::heartbeats_100k()[..45 * 10_000].to_vec().into(),
            DecodeOptions::default(),
        ),
        "heartbeats100k" => (inputs::heartbeats_100k().into(), DecodeOptions::default()),
        _ => (inputs::metadata_5000().into(), resp(3, 12)),
    };
    let mode = args.get(3).map_or("kwire", String::as_str);
    let cat = Catalogue::builtin();
    // The catalogue parses a definition on first use: parse them all here, in
    // the setup that scripts/callgrind.sh measures with 0 iterations and subtracts.
    for e in &cat.entries {
        e.spec();
    }
    // Each frame is decoded and dropped before the next, as the kafka-protocol
    // reference decodes and drops each message (and as `kwire capture` streams).
    let t = std::time::Instant::now();
    let mut work = 0usize;
    for _ in 0..n {
        match mode {
            "oracle" => work += oracle(which, &bytes, true),
            "oracle-bare" => work += oracle(which, &bytes, false),
            "values-decode" => {
                // The values-only decode alone.
                let lean = DecodeOptions {
                    values_only: true,
                    ..opts.clone()
                };
                for_each_frame(cat, &bytes, &lean, |f| {
                    work += f.values.as_ref().map_or(0, |v| v.slots.len())
                });
            }
            "annotated" => {
                // The annotated decode alone: the tape the tree views are built from.
                let tape = DecodeOptions {
                    annotated_tape: true,
                    ..opts.clone()
                };
                for_each_frame(cat, &bytes, &tape, |f| {
                    work += f.values.as_ref().map_or(0, |v| v.slots.len())
                });
            }
            "values" => {
                let mut out = Vec::new();
                let lean = DecodeOptions {
                    values_only: true,
                    ..opts.clone()
                };
                for_each_frame(cat, &bytes, &lean, |f| {
                    kwire::render::json::write_contract(f, &mut out);
                    out.push(b'\n');
                });
                work += out.len();
            }
            _ => for_each_frame(cat, &bytes, &opts, |f| work += f.root.children.len()),
        }
    }
    eprintln!(
        "{which} {mode}: {} bytes × {n} in {:?} ({work})",
        bytes.len(),
        t.elapsed()
    );
}

/// kafka-protocol's typed decode of the same frames, records included unless
/// `records` is false (then record data stays a `Bytes` slice, as kwire's
/// values-only JSON keeps it).
fn oracle(which: &str, b: &Bytes, records: bool) -> usize {
    use bytes::Buf;
    use kafka_protocol::messages::{
        FetchResponse, HeartbeatRequest, MetadataResponse, ProduceRequest, RequestHeader,
        ResponseHeader,
    };
    use kafka_protocol::protocol::{Decodable, HeaderVersion};
    use kafka_protocol::records::RecordBatchDecoder;
    let mut buf = b.clone();
    let mut n = 0;
    while buf.has_remaining() {
        let size = buf.get_i32() as usize;
        let mut one = buf.split_to(size);
        match which {
            "produce" => {
                RequestHeader::decode(&mut one, ProduceRequest::header_version(9)).unwrap();
                let r = ProduceRequest::decode(&mut one, 9).unwrap();
                for t in r.topic_data.iter().filter(|_| records) {
                    for p in &t.partition_data {
                        n += RecordBatchDecoder::decode_all(&mut p.records.clone().unwrap())
                            .unwrap()
                            .len();
                    }
                }
            }
            "fetch" => {
                ResponseHeader::decode(&mut one, FetchResponse::header_version(12)).unwrap();
                let r = FetchResponse::decode(&mut one, 12).unwrap();
                for t in r.responses.iter().filter(|_| records) {
                    for p in &t.partitions {
                        n += RecordBatchDecoder::decode_all(&mut p.records.clone().unwrap())
                            .unwrap()
                            .len();
                    }
                }
            }
            "heartbeats" | "heartbeats100k" => {
                RequestHeader::decode(&mut one, HeartbeatRequest::header_version(4)).unwrap();
                HeartbeatRequest::decode(&mut one, 4).unwrap();
                n += 1;
            }
            _ => {
                ResponseHeader::decode(&mut one, MetadataResponse::header_version(12)).unwrap();
                n += MetadataResponse::decode(&mut one, 12).unwrap().topics.len();
            }
        }
    }
    n
}
