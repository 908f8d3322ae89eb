//! Memory stays proportional to the input: whatever its length fields claim, a
//! 40-byte frame cannot make the decoder allocate more than a small multiple of
//! the tree it yields. A counting global allocator measures the peak.
#![allow(clippy::disallowed_macros)] // test and tool output: a closed stderr may end the run

mod common;

use bytes::Bytes;
use common::alloc::peak_during;
use kwire::decode::{decode_frames, DecodeOptions, Direction};
use kwire::schema::Catalogue;

#[global_allocator]
static GLOBAL: common::alloc::Counting = common::alloc::Counting;

/// 40-byte frames whose length fields claim the most they can.
fn hostile_frames() -> Vec<(&'static str, Vec<u8>, DecodeOptions)> {
    let req = DecodeOptions::default();
    let resp = |k: i16, v: i16| DecodeOptions {
        direction: Some(Direction::Response),
        api_key: Some(k),
        api_version: Some(v),
        ..Default::default()
    };
    let pad = |mut v: Vec<u8>| {
        v.resize(40, 0xff);
        let size = (v.len() - 4) as i32;
        v[..4].copy_from_slice(&size.to_be_bytes());
        v
    };
    vec![
        // Metadata v12: a compact array count of 2^32-2 topics.
        (
            "compact array count",
            pad(vec![
                0, 0, 0, 0, 0, 3, 0, 12, 0, 0, 0, 1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f,
            ]),
            req.clone(),
        ),
        // Metadata v1: an int32 array count of 2^31-1.
        (
            "int32 array count",
            pad(vec![
                0, 0, 0, 0, 0, 3, 0, 1, 0, 0, 0, 1, 0, 0, 0x7f, 0xff, 0xff, 0xff,
            ]),
            req.clone(),
        ),
        // A string length of 32767 in the client id.
        (
            "int16 string length",
            pad(vec![0, 0, 0, 0, 0, 3, 0, 1, 0, 0, 0, 1, 0x7f, 0xff]),
            req.clone(),
        ),
        // Produce v3: records claiming 2^31-1 bytes.
        (
            "records length",
            pad(vec![
                0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
                0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0x7f, 0xff,
            ]),
            req.clone(),
        ),
        // ApiVersions v3 response: a tagged-field count of 2^32-1.
        (
            "tagged field count",
            pad(vec![
                0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff,
                0xff, 0x0f,
            ]),
            resp(18, 3),
        ),
        // A frame size of 2^31-1 over 36 bytes.
        (
            "frame size",
            {
                let mut v = pad(vec![]);
                v[..4].copy_from_slice(&i32::MAX.to_be_bytes());
                v
            },
            req.clone(),
        ),
    ]
}

#[test]
fn a_40_byte_input_allocates_a_bounded_amount() {
    let cat = Catalogue::builtin(); // built once, outside the measurement
    for (what, bytes, opts) in hostile_frames() {
        assert_eq!(bytes.len(), 40);
        let input = Bytes::from(bytes);
        // The catalogue's label caches (field names, element names, api-name
        // notes) are made on first use and kept, bounded by the catalogue's
        // size: fill them first, so that the peak measures what the input costs.
        drop(decode_frames(cat, &input, &opts));
        let ((), peak) = peak_during(|| {
            let frames = decode_frames(cat, &input, &opts);
            assert!(!frames.is_empty());
            drop(frames);
        });
        // At most 512 bytes of tree and bookkeeping per input byte (nodes carry names and notes).
        assert!(
            peak < 40 * 512,
            "{what}: peak {peak} bytes for a 40-byte input"
        );
        eprintln!("{what}: peak {peak} bytes");
    }
}
