//! A small RecordBatch v2 / legacy message writer for tests, independent of
//! kwire's decoder (kwire has no record writer of its own).

use std::io::Write;

pub struct Rec {
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub headers: Vec<(String, Option<Vec<u8>>)>,
    pub timestamp_delta: i64,
}

fn varint(out: &mut Vec<u8>, v: i64) {
    let mut u = ((v << 1) ^ (v >> 63)) as u64;
    while u >= 0x80 {
        out.push((u as u8 & 0x7f) | 0x80);
        u >>= 7;
    }
    out.push(u as u8);
}

fn varint_bytes(out: &mut Vec<u8>, b: &Option<Vec<u8>>) {
    match b {
        None => varint(out, -1),
        Some(b) => {
            varint(out, b.len() as i64);
            out.extend_from_slice(b);
        }
    }
}

pub fn record_bytes(r: &Rec, offset_delta: i32) -> Vec<u8> {
    let mut body = vec![0u8]; // attributes
    varint(&mut body, r.timestamp_delta);
    varint(&mut body, offset_delta.into());
    varint_bytes(&mut body, &r.key);
    varint_bytes(&mut body, &r.value);
    varint(&mut body, r.headers.len() as i64);
    for (k, v) in &r.headers {
        varint_bytes(&mut body, &Some(k.clone().into_bytes()));
        varint_bytes(&mut body, v);
    }
    let mut out = Vec::new();
    varint(&mut out, body.len() as i64);
    out.extend_from_slice(&body);
    out
}

pub fn compress(codec: u16, data: &[u8]) -> Vec<u8> {
    match codec {
        0 => data.to_vec(),
        1 => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        2 => {
            // xerial framing, as Java clients write it
            let mut x = vec![0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1];
            for chunk in data.chunks(32 * 1024) {
                let c = snap::raw::Encoder::new().compress_vec(chunk).unwrap();
                x.extend_from_slice(&(c.len() as i32).to_be_bytes());
                x.extend_from_slice(&c);
            }
            x
        }
        3 => {
            let mut e = lz4_flex::frame::FrameEncoder::new(Vec::new());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        4 => ruzstd::encoding::compress_to_vec(data, ruzstd::encoding::CompressionLevel::Fastest),
        _ => panic!("codec {codec}"),
    }
}

/// A RecordBatch v2 with these records; `attributes` low bits pick the codec.
pub fn batch(base_offset: i64, attributes: i16, records: &[Rec]) -> Vec<u8> {
    let mut recs = Vec::new();
    for (i, r) in records.iter().enumerate() {
        recs.extend(record_bytes(r, i as i32));
    }
    batch_of(base_offset, attributes, &recs, records.len() as i32)
}

/// A RecordBatch v2 around `count` records already written as `recs`.
pub fn batch_of(base_offset: i64, attributes: i16, recs: &[u8], count: i32) -> Vec<u8> {
    let payload = compress((attributes & 7) as u16, recs);
    let mut after_crc = Vec::new();
    after_crc.extend_from_slice(&attributes.to_be_bytes());
    after_crc.extend_from_slice(&(count - 1).max(0).to_be_bytes());
    after_crc.extend_from_slice(&1_700_000_000_000i64.to_be_bytes());
    after_crc.extend_from_slice(&1_700_000_000_000i64.to_be_bytes());
    after_crc.extend_from_slice(&(-1i64).to_be_bytes());
    after_crc.extend_from_slice(&(-1i16).to_be_bytes());
    after_crc.extend_from_slice(&(-1i32).to_be_bytes());
    after_crc.extend_from_slice(&count.to_be_bytes());
    after_crc.extend_from_slice(&payload);
    let crc = kwire::protocol::crc32c::crc32c(&after_crc);
    let mut out = Vec::new();
    out.extend_from_slice(&base_offset.to_be_bytes());
    out.extend_from_slice(&((after_crc.len() + 9) as i32).to_be_bytes());
    out.extend_from_slice(&0i32.to_be_bytes());
    out.push(2);
    out.extend_from_slice(&crc.to_be_bytes());
    out.extend_from_slice(&after_crc);
    out
}

/// A legacy message (magic 0 or 1).
pub fn legacy_message(offset: i64, magic: u8, attributes: u8, key: Option<&[u8]>, value: Option<&[u8]>) -> Vec<u8> {
    let mut m = vec![magic, attributes];
    if magic == 1 {
        m.extend_from_slice(&1_700_000_000_000i64.to_be_bytes());
    }
    for b in [key, value] {
        match b {
            None => m.extend_from_slice(&(-1i32).to_be_bytes()),
            Some(b) => {
                m.extend_from_slice(&(b.len() as i32).to_be_bytes());
                m.extend_from_slice(b);
            }
        }
    }
    let mut crc = flate2::Crc::new();
    crc.update(&m);
    let mut out = Vec::new();
    out.extend_from_slice(&offset.to_be_bytes());
    out.extend_from_slice(&((m.len() + 4) as i32).to_be_bytes());
    out.extend_from_slice(&crc.sum().to_be_bytes());
    out.extend_from_slice(&m);
    out
}

/// A Produce v9 request carrying `records` for partition 0 of `topic`.
pub fn produce(cat: &kwire::schema::Catalogue, topic: &str, records: &[u8]) -> Vec<u8> {
    use kwire::encode::frame::{encode_frame, example_header, FrameSpec};
    let fs = FrameSpec { direction: kwire::decode::Direction::Request, api_key: 0, version: 9, release: None };
    let body = serde_json::json!({
        "TransactionalId": null, "Acks": -1, "TimeoutMs": 30000,
        "TopicData": [{"Name": topic, "PartitionData": [{"Index": 0, "Records": hex::encode(records)}]}]
    });
    encode_frame(cat, &fs, &example_header(kwire::decode::Direction::Request), body.as_object().unwrap()).unwrap()
}
