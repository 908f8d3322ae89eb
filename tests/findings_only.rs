//! A frame read for its findings only (`DecodeOptions::findings_only`, what
//! `kwire check` does: the annotated tape walked for warnings, no nodes
//! built) finds exactly what its whole tree carries: the same error, the
//! same warnings and record damage, in the same order, for every message of
//! every version, every frame of the shipped captures, every kind of record
//! batch, and thousands of damaged copies of them.

mod common;

use bytes::Bytes;
use common::batches::{
    batch, damaged, fetch_v4, legacy_message, produce, rec, record_batch_cases, Damaged,
};
use common::random_body::{random_body, Rng};
use common::{all_messages, frame_spec};
use kwire::analysis::check::check_frames;
use kwire::capture::{for_each_captured, CaptureOptions, Captured, CapturedFrame};
use kwire::decode::{decode_frame, decode_frame_reusing, DecodeOptions, Direction, Frame};
use kwire::encode::example::smallest_struct;
use kwire::encode::frame::message_spec;
use kwire::encode::{encode_frame, example_header};
use kwire::schema::Catalogue;

/// How a frame is read: its direction, and a response's API and version.
type As = (Direction, Option<i16>, Option<i16>);

const REQUEST: As = (Direction::Request, None, None);
const FETCH_V4: As = (Direction::Response, Some(1), Some(4));

fn options((d, key, v): As, findings_only: bool) -> DecodeOptions {
    DecodeOptions {
        direction: Some(d),
        api_key: key,
        api_version: v,
        findings_only,
        ..Default::default()
    }
}

/// The error and the findings of `bytes` read `read`, whole or for findings only.
fn findings(cat: &Catalogue, bytes: &[u8], read: As, findings_only: bool) -> String {
    let frame = decode_frame(
        cat,
        Bytes::copy_from_slice(bytes),
        0,
        &options(read, findings_only),
    );
    said(&frame)
}

/// A decoded frame's error, API and findings, as `check` lists them.
fn said(frame: &Frame) -> String {
    let mut found = Vec::new();
    check_frames(std::slice::from_ref(frame), &mut found);
    let found: Vec<String> = found
        .iter()
        .map(|f| format!("{} @{:?} {}", f.rule.id(), f.offset, f.message))
        .collect();
    format!(
        "error {:?}; api {:?} v{:?}\n{}",
        frame.error,
        frame.api_key,
        frame.api_version,
        found.join("\n")
    )
}

/// Counts what was compared, so that a corpus that shrank is noticed.
#[derive(Default)]
struct Tally {
    frames: usize,
    with_findings: usize,
}

impl Tally {
    fn alike(&mut self, cat: &Catalogue, what: &str, bytes: &[u8], read: As) {
        let tree = findings(cat, bytes, read, false);
        let tape = findings(cat, bytes, read, true);
        assert_eq!(
            tape,
            tree,
            "{what}: the findings-only read differs from the tree's ({} bytes: {})",
            bytes.len(),
            hex::encode(&bytes[..bytes.len().min(96)])
        );
        self.frames += 1;
        if tree.lines().count() > 1 {
            self.with_findings += 1;
        }
    }

    /// `bytes` and `copies` copies of it with one byte after the size prefix changed.
    fn alike_damaged(
        &mut self,
        cat: &Catalogue,
        what: &str,
        bytes: &[u8],
        read: As,
        rng: &mut Rng,
        copies: usize,
    ) {
        self.alike(cat, what, bytes, read);
        if bytes.len() <= 4 {
            return;
        }
        for _ in 0..copies {
            let mut copy = bytes.to_vec();
            let at = 4 + rng.below(copy.len() as u64 - 4) as usize;
            copy[at] = rng.next() as u8;
            let what = format!("{what}, byte {at} set to {:#04x}", copy[at]);
            self.alike(cat, &what, &copy, read);
        }
    }
}

#[test]
fn every_message_of_every_version_and_damaged_copies() {
    let cat = Catalogue::builtin();
    let mut tally = Tally::default();
    let mut rng = Rng::new(11);
    for (d, key, v) in all_messages(cat) {
        let fs = frame_spec(d, key, v);
        let spec = message_spec(cat, &fs).unwrap();
        let read = match d {
            Direction::Request => REQUEST,
            Direction::Response => (d, Some(key), Some(v)),
        };
        for seed in 0..3u64 {
            let body = match seed {
                0 => smallest_struct(&spec.fields, v),
                // Random bodies: nulls, unknown tags, long lengths, bytes that are no batches.
                _ => random_body(spec, v, seed * 104_729 + key as u64),
            };
            let bytes = encode_frame(cat, &fs, &example_header(d), &body).unwrap();
            let what = format!("{} v{v} seed {seed}", spec.name);
            tally.alike_damaged(cat, &what, &bytes, read, &mut rng, 4);
        }
    }
    assert!(tally.frames > 10_000, "{} frames", tally.frames);
    assert!(
        tally.with_findings > 2_000,
        "{} with findings",
        tally.with_findings
    );
}

#[test]
fn every_frame_of_the_shipped_captures_and_damaged_copies() {
    let cat = Catalogue::builtin();
    let mut tally = Tally::default();
    let mut rng = Rng::new(13);
    let mut seen = std::collections::HashSet::new();
    for (path, f) in shipped_frames(cat) {
        let read = (f.direction, f.api_key, f.api_version);
        let what = format!("{} frame {}", path.display(), f.index);
        // Each kind of message once damaged: the captures repeat a few.
        let kind = (f.direction == Direction::Request, f.api_key, f.api_version);
        let copies = match seen.insert(kind) && f.api_key.is_some() {
            true => 40,
            false => 0,
        };
        tally.alike_damaged(cat, &what, &f.bytes, read, &mut rng, copies);
    }
    assert!(tally.frames > 3_000, "{} frames", tally.frames);
    assert!(
        tally.with_findings > 500,
        "{} with findings",
        tally.with_findings
    );
}

/// `check` reads a capture's frames one after another into one frame and
/// tape (`decode_frame_reusing`): nothing of a frame is left for the next,
/// damaged frames and frames cut before their size among them.
#[test]
fn frames_read_one_after_another_into_one_frame_find_what_each_alone_finds() {
    let cat = Catalogue::builtin();
    let mut rng = Rng::new(19);
    let mut kept: Option<Frame> = None;
    let mut compared = 0;
    for (path, f) in shipped_frames(cat) {
        let read = (f.direction, f.api_key, f.api_version);
        let mut bytes = f.bytes.to_vec();
        match rng.below(8) {
            0 if bytes.len() > 4 => {
                let at = 4 + rng.below(bytes.len() as u64 - 4) as usize;
                bytes[at] = rng.next() as u8;
            }
            1 => bytes.truncate(rng.below(4) as usize),
            _ => {}
        }
        let opts = options(read, true);
        let alone = findings(cat, &bytes, read, true);
        let reused = decode_frame_reusing(cat, Bytes::from(bytes), &opts, &mut kept);
        assert_eq!(said(reused), alone, "{} frame {}", path.display(), f.index);
        compared += 1;
    }
    assert!(compared > 900, "{compared} frames");
}

#[test]
fn every_kind_of_record_batch_and_damaged_copies() {
    let cat = Catalogue::builtin();
    let mut tally = Tally::default();
    let records = [
        rec(
            Some(b"user-1"),
            Some(b"{\"amount\":12}"),
            &[("trace", Some(b"abc"))],
            0,
        ),
        rec(None, Some(b"hello"), &[], 5),
        rec(Some(&[0xff; 200]), Some(&[7; 300]), &[], -3),
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
    let cut = [plain.clone(), batch(9, 0, &records)[..40].to_vec()].concat();
    let codecs = [
        batch(0, 1, &records),
        batch(4, 2, &records),
        batch(8, 3, &records),
        batch(12, 4, &records),
    ]
    .concat();
    let legacy = [
        legacy_message(0, 0, 0, Some(b"k0"), Some(b"v0")),
        legacy_message(1, 1, 0, None, Some(b"v1")),
    ]
    .concat();
    let mut cases: Vec<(String, Vec<u8>, As)> = vec![
        ("plain".into(), produce(cat, "orders", &plain), REQUEST),
        (
            "cut in a request".into(),
            produce(cat, "orders", &cut),
            REQUEST,
        ),
        (
            "cut in a fetch".into(),
            fetch_v4(cat, "orders", &cut),
            FETCH_V4,
        ),
        (
            "not a batch after one".into(),
            produce(
                cat,
                "orders",
                &[batch(0, 0, &records[..1]), vec![0; 30]].concat(),
            ),
            REQUEST,
        ),
        (
            "every codec".into(),
            produce(cat, "orders", &codecs),
            REQUEST,
        ),
        (
            "damage".into(),
            produce(
                cat,
                "orders",
                &[bad_crc, wrong_count, bad_gzip, unknown_codec].concat(),
            ),
            REQUEST,
        ),
        ("legacy".into(), produce(cat, "orders", &legacy), REQUEST),
        (
            "an internal topic".into(),
            produce(cat, "__consumer_offsets", &plain),
            REQUEST,
        ),
        ("a fetch".into(), fetch_v4(cat, "orders", &plain), FETCH_V4),
        (
            "a fetch out of order".into(),
            fetch_v4(
                cat,
                "orders",
                &[batch(9, 0, &records), batch(0, 0, &records)].concat(),
            ),
            FETCH_V4,
        ),
    ];
    for case in record_batch_cases() {
        cases.push((
            case.name.to_string(),
            produce(cat, case.topic, &case.records),
            REQUEST,
        ));
    }
    let mut rng = Rng::new(17);
    for (what, bytes, read) in &cases {
        tally.alike_damaged(cat, what, bytes, *read, &mut rng, 300);
    }
    assert!(
        tally.with_findings > 1_000,
        "{} with findings",
        tally.with_findings
    );
}

/// Every frame of every shipped capture (a capture that holds no Kafka, a
/// key log or an encrypted one, hands on none), with the file it is from.
fn shipped_frames(cat: &Catalogue) -> Vec<(std::path::PathBuf, CapturedFrame)> {
    let mut files = walk(std::path::Path::new("samples/captures"));
    files.sort();
    assert!(files.len() >= 20, "{} captures", files.len());
    let mut out = Vec::new();
    for path in files {
        let data = std::fs::read(&path).unwrap();
        let _ = for_each_captured(cat, &data[..], &CaptureOptions::default(), |c| {
            if let Captured::Frame(f) = c {
                out.push((path.clone(), f));
            }
            true
        });
    }
    out
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else if p
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.contains(".pcap"))
        {
            out.push(p);
        }
    }
    out
}

/// `kwire check` leaves a records field of more than 64 KiB off the frame's
/// tape and checks it a batch at a time (`DecodeOptions::defer_records_over`,
/// `decode::records::deferred::check_deferred`, so that a Fetch of 400,000
/// records is never one tape): it finds exactly
/// what the whole tree finds, in the same order. The field holds thousands
/// of batches with damaged ones among them (a checksum, a count, gzip that
/// does not decompress, an unknown codec), offsets that go back, a
/// producer's sequence that skips, and, in a fetch, a batch cut by the end.
#[test]
fn a_large_records_field_checked_a_batch_at_a_time_finds_what_the_tree_finds() {
    use common::batches::producer_batch_of;
    let cat = Catalogue::builtin();
    let records = [
        rec(Some(b"k"), Some(&[b'v'; 300]), &[("h", Some(b"1"))], 0),
        rec(None, Some(b"second"), &[], 3),
    ];
    let bad = damaged(&records);
    let mut stream = Vec::new();
    let mut offset = 0i64;
    for i in 0..3000 {
        let mut b = match i {
            700 => bad.bad_crc.clone(),
            1400 => bad.wrong_count.clone(),
            2100 => bad.bad_gzip.clone(),
            2800 => bad.unknown_codec.clone(),
            _ => batch(0, 0, &records),
        };
        // Offsets go on, but for one batch that goes back.
        let base = if i == 1000 { offset - 5 } else { offset };
        b[..8].copy_from_slice(&base.to_be_bytes());
        stream.extend(b);
        offset += 2;
    }
    // One producer's batches whose sequence skips from 2 to 7.
    let recs: Vec<u8> = common::batches::record_bytes(&records[1], 0);
    stream.extend(producer_batch_of(offset, 0, &recs, 1, (42, 0, 2)));
    stream.extend(producer_batch_of(offset + 1, 0, &recs, 1, (42, 0, 7)));
    assert!(stream.len() > kwire::decode::frame::DEFER_RECORDS_OVER);
    let deferred = |bytes: &[u8], read: As| {
        let opts = DecodeOptions {
            defer_records_over: Some(kwire::decode::frame::DEFER_RECORDS_OVER),
            ..options(read, true)
        };
        let mut frame = decode_frame(cat, Bytes::copy_from_slice(bytes), 0, &opts);
        // The records were left off the tape (a few slots, not thousands of
        // batches'), for `kwire check` to walk a batch at a time.
        let slots = frame.values.as_ref().map_or(0, |t| t.slots.len());
        assert!(slots < 64, "{slots} slots on the tape");
        assert_eq!(frame.deferred.len(), 1);
        kwire::decode::records::deferred::check_deferred(cat, &mut frame, &opts.budget);
        assert!(frame.deferred.is_empty());
        said(&frame)
    };
    let mut cut = stream.clone();
    cut.extend(&batch(offset + 2, 0, &records)[..40]);
    for (what, bytes, read) in [
        ("produce", produce(cat, "orders", &stream), REQUEST),
        ("fetch", fetch_v4(cat, "orders", &stream), FETCH_V4),
        ("fetch, cut", fetch_v4(cat, "orders", &cut), FETCH_V4),
    ] {
        let tree = findings(cat, &bytes, read, false);
        assert_eq!(deferred(&bytes, read), tree, "{what}");
        // A producer's batches carry no offsets yet, so only fetched ones go
        // back; a fetch may skip sequence numbers (compaction), a producer not.
        let order = match read == REQUEST {
            true => "sequence-gap",
            false => "offsets-backwards",
        };
        for rule in [
            "batch-crc",
            "records-count",
            "decompression",
            "unknown-codec",
            order,
        ] {
            assert!(tree.contains(rule), "{what}: no {rule} in\n{tree}");
        }
    }
}
