//! Malformed input: truncation at every offset and random byte flips never
//! panic, always end with a tree, and report an offset for any error.

mod common;

use bytes::Bytes;
use kwire::decode::{decode_frames, DecodeOptions, Direction, Frame};
use kwire::render::{json, text_tree};
use kwire::schema::Catalogue;
use std::path::Path;

fn samples() -> Vec<(String, Vec<u8>, DecodeOptions)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if !name.ends_with(".hex") {
            continue;
        }
        let bytes =
            kwire::input::hex_text::parse_hex_text(&std::fs::read_to_string(e.path()).unwrap())
                .unwrap();
        let cat = Catalogue::builtin();
        let opts = if name.contains("-response") {
            let api = name.split("-v").next().unwrap().replace('-', "");
            DecodeOptions {
                direction: Some(Direction::Response),
                api_key: cat.resolve_api(&api),
                api_version: Some(
                    name.split("-v")
                        .nth(1)
                        .unwrap()
                        .split('-')
                        .next()
                        .unwrap()
                        .parse()
                        .unwrap(),
                ),
                release: None,
                ..Default::default()
            }
        } else {
            DecodeOptions::default()
        };
        out.push((name, bytes, opts));
    }
    assert!(out.len() >= 4, "samples present");
    out
}

/// Decoding must yield frames whose nodes stay inside the frame and whose
/// error, if any, names an offset inside (or at the end of) the frame.
fn check(frames: &[Frame], input_len: usize) {
    assert!(!frames.is_empty() || input_len == 0);
    for f in frames {
        f.root.walk(&mut |n, _| {
            assert!(
                n.end() <= f.bytes.len().max(4),
                "node {} [{}, {}] beyond frame of {}",
                n.name,
                n.offset,
                n.len,
                f.bytes.len()
            );
        });
        if let Some(e) = &f.error {
            assert!(
                e.offset <= f.bytes.len(),
                "error offset {} beyond frame {}",
                e.offset,
                f.bytes.len()
            );
            assert!(!e.expected.is_empty());
        }
        // Every renderer copes with the partial tree.
        let _ = text_tree::render_frame(f, Default::default());
        let mut tree = Vec::new();
        kwire::render::tree_json::write_frame_tree_json(&mut tree, f).unwrap();
        serde_json::from_slice::<serde_json::Value>(&tree).expect("tree JSON of a partial tree");
    }
}

#[test]
fn truncation_at_every_offset_reports_where_it_stopped() {
    let cat = Catalogue::builtin();
    for (name, bytes, opts) in samples() {
        for cut in 0..bytes.len() {
            let input = Bytes::copy_from_slice(&bytes[..cut]);
            let frames = decode_frames(cat, &input, &opts);
            check(&frames, cut);
            same_json_values_only(cat, &input, &opts, &frames);
            if cut > 0 {
                let e = frames
                    .last()
                    .unwrap()
                    .error
                    .as_ref()
                    .unwrap_or_else(|| panic!("{name} cut at {cut}: no error"));
                assert!(
                    e.offset <= cut,
                    "{name} cut at {cut}: error at {}",
                    e.offset
                );
            }
        }
    }
}

#[test]
fn every_single_byte_change_is_survived() {
    let cat = Catalogue::builtin();
    for (_, bytes, opts) in samples() {
        for i in 0..bytes.len() {
            for v in [0x00, 0x01, 0x7f, 0x80, 0xff] {
                let mut b = bytes.clone();
                b[i] = v;
                let input = Bytes::from(b);
                let frames = decode_frames(cat, &input, &opts);
                check(&frames, bytes.len());
                same_json_values_only(cat, &input, &opts, &frames);
            }
        }
    }
}

#[test]
fn random_multi_byte_mutations_are_survived() {
    let cat = Catalogue::builtin();
    let mut seed: u64 = 0x9e3779b97f4a7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for (_, bytes, opts) in samples() {
        for _ in 0..2000 {
            let mut b = bytes.clone();
            for _ in 0..(1 + next() % 6) {
                let i = (next() as usize) % b.len();
                b[i] = next() as u8;
            }
            let input = Bytes::from(b);
            let frames = decode_frames(cat, &input, &opts);
            check(&frames, bytes.len());
            same_json_values_only(cat, &input, &opts, &frames);
        }
    }
}

/// The values-only decode (`--format json`) gives the same JSON, errors included,
/// as the full tree, whatever the bytes.
fn same_json_values_only(cat: &Catalogue, input: &Bytes, opts: &DecodeOptions, full: &[Frame]) {
    let lean = decode_frames(
        cat,
        input,
        &DecodeOptions {
            values_only: true,
            ..opts.clone()
        },
    );
    assert_eq!(lean.len(), full.len());
    for (l, f) in lean.iter().zip(full) {
        let mut written = Vec::new();
        json::write_contract(l, &mut written);
        assert_eq!(
            String::from_utf8(written).unwrap(),
            json::to_text(&common::contract::tree_contract(f)),
            "input {}",
            hex::encode(input)
        );
        // Decoded again from the tree (the explorer's export): the same, stopped or not.
        let mut again = Vec::new();
        json::write_contract_of(
            f,
            (cat, opts.release.as_deref()),
            Default::default(),
            &mut again,
        );
        assert_eq!(
            String::from_utf8(again).unwrap(),
            json::to_text(&common::contract::tree_contract(f)),
            "decoded again from the tree, input {}",
            hex::encode(input)
        );
    }
}

#[test]
fn huge_length_fields_do_not_allocate_or_loop() {
    let cat = Catalogue::builtin();
    // Metadata v12 request, flexible: Topics compact array with a count of 2^31.
    let mut body = vec![0x00, 0x03, 0x00, 0x0c, 0, 0, 0, 1, 0x00, 0x00, 0x00];
    body.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x07]);
    let mut frame = (body.len() as i32).to_be_bytes().to_vec();
    frame.extend_from_slice(&body);
    let frames = decode_frames(cat, &Bytes::from(frame), &DecodeOptions::default());
    let e = frames[0].error.as_ref().expect("error");
    assert_eq!(e.offset, 15, "{e}");
    assert!(e.expected.contains("elements"), "{e}");
    // A frame size far beyond the input.
    let frames = decode_frames(
        cat,
        &Bytes::from_static(&[0x7f, 0xff, 0xff, 0xff, 0x00, 0x12]),
        &DecodeOptions::default(),
    );
    assert!(frames[0].error.is_some());
    // Negative frame size.
    let frames = decode_frames(
        cat,
        &Bytes::from_static(&[0xff, 0xff, 0xff, 0xfe]),
        &DecodeOptions::default(),
    );
    assert_eq!(frames[0].error.as_ref().unwrap().offset, 0);
}

/// Where a frame holds lengths and counts: (offset, width) of each prefix.
fn length_sites(f: &Frame) -> Vec<(usize, usize)> {
    let mut sites = Vec::new();
    f.root.walk(&mut |n, _| {
        let lengthy = [
            "length",
            "size",
            "count",
            "Length",
            "batchLength",
            "recordsCount",
            "messageSize",
            "headers",
        ]
        .iter()
        .any(|k| n.name.text().contains(k));
        let fixed = match n.ty.as_str() {
            "int16" => Some(2),
            "int32" => Some(4),
            "uvarint" | "varint" => Some(1),
            _ => None,
        };
        if let (true, Some(w)) = (lengthy, fixed) {
            sites.push((n.offset, w));
        }
        // String, bytes and records values carry their length prefix at their start.
        match n.note.as_ref().map(|n| n.text()).as_deref() {
            Some(x) if x.starts_with("(int16 len") => sites.push((n.offset, 2)),
            Some(x) if x.starts_with("(int32 len") => sites.push((n.offset, 4)),
            Some(x) if x.starts_with("(compact") => sites.push((n.offset, 1)),
            _ => {}
        }
    });
    sites.sort_unstable();
    sites.dedup();
    sites
}

#[test]
fn length_fields_set_to_extremes_are_survived() {
    let cat = Catalogue::builtin();
    let mut tried = 0;
    for (name, bytes, opts) in samples() {
        let frames = decode_frames(cat, &Bytes::from(bytes.clone()), &opts);
        let sites = length_sites(&frames[0]);
        // Every sample has at least its frame size, the client id and one length of its own.
        assert!(sites.len() >= 3, "{name}: {sites:?}");
        for (at, width) in sites {
            let values: Vec<Vec<u8>> = match width {
                2 => [-1i16, 0, i16::MAX, i16::MIN, -2]
                    .iter()
                    .map(|v| v.to_be_bytes().to_vec())
                    .collect(),
                4 => [-1i32, 0, i32::MAX, i32::MIN, -2]
                    .iter()
                    .map(|v| v.to_be_bytes().to_vec())
                    .collect(),
                _ => vec![vec![0x00], vec![0x7f], vec![0x01], vec![0xff]],
            };
            for v in values {
                if at + v.len() > bytes.len() {
                    continue;
                }
                let mut b = bytes.clone();
                b[at..at + v.len()].copy_from_slice(&v);
                check(&decode_frames(cat, &Bytes::from(b), &opts), bytes.len());
                tried += 1;
            }
        }
    }
    assert!(tried > 400, "only {tried} mutations");
}
