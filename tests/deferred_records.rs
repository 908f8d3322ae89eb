//! A records field left for its view to walk a batch at a time
//! (`DecodeOptions::defer_records_over`, `kwire decode`'s text tree) draws
//! exactly the text the frame's whole tree draws, with the same warnings and
//! record damage in the same places: every kind of record batch, damaged
//! copies, batches cut short or followed by other bytes, internal topics,
//! fetch responses, budgets, and frames with records beside other fields.

mod common;

use bytes::Bytes;
use common::batches::{
    batch, damaged, fetch_v4, legacy_message, produce, rec, record_batch_cases, Damaged,
};
use common::random_body::Rng;
use kwire::budget::{Budget, Limits};
use kwire::decode::{decode_frame, DecodeOptions, Direction, Frame};
use kwire::render::text_tree::{write_frame, write_frame_drawing, TreeOptions};
use kwire::schema::Catalogue;

thread_local! {
    /// Frames are requests, or (set) Fetch v4 responses.
    static FETCH: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn fresh(limits: Option<Limits>) -> DecodeOptions {
    let fetch = FETCH.with(|f| f.get());
    DecodeOptions {
        budget: limits.map(Budget::new).unwrap_or_default(),
        direction: fetch.then_some(Direction::Response),
        api_key: fetch.then_some(1),
        api_version: fetch.then_some(4),
        ..Default::default()
    }
}

/// The frame's text tree, its warnings and its record damage, decoded whole
/// or with its records fields left for drawing.
fn drawn(
    cat: &Catalogue,
    bytes: &[u8],
    limits: Option<Limits>,
    defer: bool,
) -> (String, Vec<String>, Vec<String>) {
    let opts = DecodeOptions {
        defer_records_over: defer.then_some(0),
        ..fresh(limits)
    };
    let mut frame: Frame = decode_frame(cat, Bytes::copy_from_slice(bytes), 0, &opts);
    let mut out = Vec::new();
    let tree = TreeOptions::default();
    match defer {
        true => write_frame_drawing(&mut out, &mut frame, tree, (cat, &opts.budget)).unwrap(),
        false => write_frame(&mut out, &frame, tree).unwrap(),
    }
    (
        String::from_utf8(out).unwrap(),
        frame.warnings.iter().map(|w| w.text.clone()).collect(),
        frame.record_damage.iter().map(|e| e.to_string()).collect(),
    )
}

/// Whether the frame's records were left for drawing (the test tests something).
fn deferred(cat: &Catalogue, bytes: &[u8]) -> bool {
    let opts = DecodeOptions {
        defer_records_over: Some(0),
        ..fresh(None)
    };
    let frame = decode_frame(cat, Bytes::copy_from_slice(bytes), 0, &opts);
    fn any(n: &kwire::decode::Node) -> bool {
        n.deferred_records().is_some() || n.children.iter().any(any)
    }
    any(&frame.root)
}

fn alike(cat: &Catalogue, what: &str, bytes: &[u8], limits: Option<Limits>) {
    let whole = drawn(cat, bytes, limits, false);
    let later = drawn(cat, bytes, limits, true);
    if whole != later {
        let first = whole
            .0
            .lines()
            .zip(later.0.lines())
            .position(|(a, b)| a != b)
            .map(|i| {
                format!(
                    "line {i}:\n  whole: {}\n  later: {}",
                    whole.0.lines().nth(i).unwrap_or(""),
                    later.0.lines().nth(i).unwrap_or("")
                )
            })
            .unwrap_or_else(|| "same lines".into());
        panic!(
            "{what}: {first}\nwarnings whole {:?}\nwarnings later {:?}\ndamage whole {:?}\ndamage later {:?}",
            whole.1, later.1, whole.2, later.2
        );
    }
}

#[test]
fn records_drawn_a_batch_at_a_time_draw_what_the_whole_tree_draws() {
    let cat = Catalogue::builtin();
    let records = [
        rec(
            Some(b"user-1"),
            Some(b"{\"amount\":12}"),
            &[("trace", Some(b"abc"))],
            0,
        ),
        rec(None, Some(b"hello"), &[], 5),
        rec(Some(&[0xff; 200]), Some(&[7; 300]), &[], -3),
        rec(
            Some(b"\x00\x00\x00\x00\x05k"),
            Some(b"\x00\x00\x00\x01\x00{\"id\":7}"),
            &[],
            2,
        ),
    ];
    let plain = [
        batch(0, 0, &records),
        batch(4, 0, &records[..1]),
        batch(1 << 40, 0x10, &records[1..]),
    ]
    .concat();
    let Damaged {
        bad_crc,
        wrong_count,
        bad_gzip,
        unknown_codec,
    } = damaged(&records);
    let mut cases: Vec<(String, Vec<u8>)> = vec![
        ("plain batches".into(), produce(cat, "orders", &plain)),
        (
            "a batch cut by the end of a request".into(),
            produce(
                cat,
                "orders",
                &[plain.clone(), batch(9, 0, &records)[..40].to_vec()].concat(),
            ),
        ),
        (
            "a batch cut by the end of a fetch".into(),
            fetch_v4(
                cat,
                "orders",
                &[plain.clone(), batch(9, 0, &records)[..40].to_vec()].concat(),
            ),
        ),
        (
            "bytes that are not a batch after one".into(),
            produce(
                cat,
                "orders",
                &[batch(0, 0, &records[..1]), vec![0; 30]].concat(),
            ),
        ),
        (
            "every codec".into(),
            produce(
                cat,
                "orders",
                &[
                    batch(0, 1, &records),
                    batch(4, 2, &records),
                    batch(8, 3, &records),
                    batch(12, 4, &records),
                ]
                .concat(),
            ),
        ),
        (
            "damage".into(),
            produce(
                cat,
                "orders",
                &[bad_crc, wrong_count, bad_gzip, unknown_codec].concat(),
            ),
        ),
        (
            "legacy messages".into(),
            produce(
                cat,
                "orders",
                &[
                    legacy_message(0, 0, 0, Some(b"k0"), Some(b"v0")),
                    legacy_message(1, 1, 0, None, Some(b"v1")),
                ]
                .concat(),
            ),
        ),
        (
            "an internal topic".into(),
            produce(cat, "__consumer_offsets", &plain),
        ),
        ("a fetch response".into(), fetch_v4(cat, "orders", &plain)),
    ];
    for case in record_batch_cases() {
        cases.push((
            case.name.to_string(),
            produce(cat, case.topic, &case.records),
        ));
    }
    for (what, bytes) in &cases {
        FETCH.with(|f| f.set(what.ends_with("a fetch") || what == "a fetch response"));
        assert!(deferred(cat, bytes), "{what}: nothing was left for drawing");
        alike(cat, what, bytes, None);
    }
    FETCH.with(|f| f.set(false));
    // A bound on decompressed data that the batches exceed: cut alike.
    let gzip = produce(
        cat,
        "orders",
        &[batch(0, 1, &records), batch(4, 1, &records)].concat(),
    );
    let small = Limits {
        decompressed: 700,
        ..Limits::default()
    };
    alike(cat, "over the decompression budget", &gzip, Some(small));
    // Damaged copies: one byte after the size prefix changed.
    let mut rng = Rng::new(7);
    for base in [produce(cat, "orders", &plain), gzip] {
        for _ in 0..1000 {
            let mut copy = base.clone();
            let at = 4 + rng.below(copy.len() as u64 - 4) as usize;
            copy[at] = rng.next() as u8;
            alike(
                cat,
                &format!("byte {at} set to {:#04x}", copy[at]),
                &copy,
                None,
            );
        }
    }
}
