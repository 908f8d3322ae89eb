//! Decode throughput: kwire's annotated tree, annotated decode (the tape the
//! tree is built from), values-only decode and JSON against the
//! kafka-protocol crate's typed decode (with its record-batch decoder for
//! Produce and Fetch, so records are parsed on both sides).

mod inputs;

use bytes::{Buf, Bytes};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use kafka_protocol::messages::{
    FetchResponse, HeartbeatRequest, MetadataResponse, ProduceRequest, RequestHeader,
    ResponseHeader,
};
use kafka_protocol::protocol::{Decodable, HeaderVersion};
use kafka_protocol::records::RecordBatchDecoder;
use kwire::decode::{for_each_frame, DecodeOptions, Direction};
use kwire::render::json::write_contract;
use kwire::schema::Catalogue;

/// The allocator the kwire binary uses, so that figures match the command.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

struct Case {
    name: &'static str,
    bytes: Bytes,
    opts: DecodeOptions,
    oracle: fn(&Bytes),
}

fn resp(key: i16, v: i16) -> DecodeOptions {
    DecodeOptions {
        direction: Some(Direction::Response),
        api_key: Some(key),
        api_version: Some(v),
        ..Default::default()
    }
}

fn oracle_produce(b: &Bytes) {
    let mut buf = b.slice(4..);
    let _h = RequestHeader::decode(&mut buf, ProduceRequest::header_version(9)).unwrap();
    let req = ProduceRequest::decode(&mut buf, 9).unwrap();
    for t in &req.topic_data {
        for p in &t.partition_data {
            if let Some(r) = &p.records {
                let mut r = r.clone();
                std::hint::black_box(RecordBatchDecoder::decode_all(&mut r).unwrap());
            }
        }
    }
}

fn oracle_fetch(b: &Bytes) {
    let mut buf = b.slice(4..);
    let _h = ResponseHeader::decode(&mut buf, FetchResponse::header_version(12)).unwrap();
    let resp = FetchResponse::decode(&mut buf, 12).unwrap();
    for t in &resp.responses {
        for p in &t.partitions {
            if let Some(r) = &p.records {
                let mut r = r.clone();
                std::hint::black_box(RecordBatchDecoder::decode_all(&mut r).unwrap());
            }
        }
    }
}

fn oracle_metadata(b: &Bytes) {
    let mut buf = b.slice(4..);
    let _h = ResponseHeader::decode(&mut buf, MetadataResponse::header_version(12)).unwrap();
    std::hint::black_box(MetadataResponse::decode(&mut buf, 12).unwrap());
}

fn oracle_heartbeats(b: &Bytes) {
    let mut buf = b.clone();
    while buf.has_remaining() {
        let size = buf.get_i32() as usize;
        let mut one = buf.split_to(size);
        let _h = RequestHeader::decode(&mut one, HeartbeatRequest::header_version(4)).unwrap();
        std::hint::black_box(HeartbeatRequest::decode(&mut one, 4).unwrap());
    }
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "produce_1000_records",
            bytes: inputs::produce_1000().into(),
            opts: DecodeOptions::default(),
            oracle: oracle_produce,
        },
        Case {
            name: "fetch_1mb",
            bytes: inputs::fetch_1mb().into(),
            opts: resp(1, 12),
            oracle: oracle_fetch,
        },
        Case {
            name: "metadata_5000_partitions",
            bytes: inputs::metadata_5000().into(),
            opts: resp(3, 12),
            oracle: oracle_metadata,
        },
        Case {
            name: "heartbeats_100k",
            bytes: inputs::heartbeats_100k().into(),
            opts: DecodeOptions::default(),
            oracle: oracle_heartbeats,
        },
    ]
}

/// Decode every frame of `bytes`, each dropped before the next; returns the
/// tree nodes or tape slots made (so that nothing is optimised away).
fn decode_all(cat: &Catalogue, bytes: &Bytes, opts: &DecodeOptions) -> usize {
    let mut made = 0;
    for_each_frame(cat, bytes, opts, |f| {
        made += f
            .values
            .as_ref()
            .map_or(f.root.children.len(), |v| v.slots.len())
    });
    made
}

fn bench(c: &mut Criterion) {
    let cat = Catalogue::builtin();
    for case in cases() {
        let mut g = c.benchmark_group(case.name);
        g.throughput(Throughput::Bytes(case.bytes.len() as u64));
        g.sample_size(10);
        // Each frame is decoded and dropped before the next, as the kafka-protocol
        // reference decodes and drops each message.
        g.bench_function("kwire_tree", |b| {
            b.iter(|| decode_all(cat, &case.bytes, &case.opts))
        });
        // The annotated decode alone: the tape (every field's value, bytes and
        // encoding widths, record batches included) that the tree is built from.
        let tape = DecodeOptions {
            annotated_tape: true,
            ..case.opts.clone()
        };
        g.bench_function("kwire_annotated", |b| {
            b.iter(|| decode_all(cat, &case.bytes, &tape))
        });
        let lean = DecodeOptions {
            values_only: true,
            ..case.opts.clone()
        };
        g.bench_function("kwire_values", |b| {
            b.iter(|| decode_all(cat, &case.bytes, &lean))
        });
        g.bench_function("kwire_values_json", |b| {
            b.iter(|| {
                let mut out = Vec::new();
                for_each_frame(cat, &case.bytes, &lean, |f| {
                    write_contract(f, &mut out);
                    out.push(b'\n');
                });
                out.len()
            })
        });
        g.bench_function("kafka_protocol_typed", |b| {
            b.iter(|| (case.oracle)(&case.bytes))
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
