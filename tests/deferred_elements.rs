//! An array of primitives or plain structs left for its view to walk an element at a time
//! (`DecodeOptions::defer_elements_over`: `kwire decode`'s text tree, tree
//! JSON, grid and `--explain`, and a capture's large frames) draws exactly
//! what the frame's whole tree draws, with the same warnings and error:
//! every message of every version, random bodies, the shipped captures'
//! frames, and damaged copies of them (an element that does not decode
//! keeps its array whole). Left at 0 bytes, every array of structs with
//! elements is left, arrays within left elements included.

mod common;

#[global_allocator]
static GLOBAL: common::alloc::Counting = common::alloc::Counting;

use bytes::Bytes;
use common::alloc::{one_at_a_time, peak_during};
use common::random_body::{random_body, Rng};
use common::{all_messages, frame_spec};
use kwire::capture::{for_each_captured, CaptureOptions, Captured};
use kwire::decode::fields::{open_element_stub, stub_elements};
use kwire::decode::{decode_frame, DecodeOptions, Direction, Frame, Node, Role};
use kwire::encode::example::smallest_struct;
use kwire::encode::frame::message_spec;
use kwire::encode::{encode_frame, example_header};
use kwire::render::grid::{render_grid, write_grid_drawing};
use kwire::render::text_tree::{render_tree, write_frame, write_frame_drawing, TreeOptions};
use kwire::render::tree_json::{write_frame_tree_json, write_frame_tree_json_drawing};
use kwire::schema::Catalogue;
use kwire::teach::explain::write_explained_drawing;

/// How a frame is read: its direction, and a response's API and version.
type As = (Direction, Option<i16>, Option<i16>);

fn options((d, key, v): As, left_over: Option<usize>) -> DecodeOptions {
    DecodeOptions {
        direction: Some(d),
        api_key: key,
        api_version: v,
        defer_elements_over: left_over,
        ..Default::default()
    }
}

/// [`options`] as `kwire decode` leaves arrays: those whose elements hold
/// records too, every records field within them left for drawing.
fn drawing_options(read: As, left_over: Option<usize>) -> DecodeOptions {
    DecodeOptions {
        defer_record_arrays: left_over.is_some(),
        ..options(read, left_over)
    }
}

/// Every view of the frame that can draw what is left, and what the frame
/// says after its tree: whole, or with arrays left over `left_over` bytes.
fn views(cat: &Catalogue, bytes: &[u8], read: As, left_over: Option<usize>) -> [String; 6] {
    let opts = drawing_options(read, left_over);
    let walking = (cat, &opts.budget);
    let decoded = || decode_frame(cat, Bytes::copy_from_slice(bytes), 0, &opts);
    let text = |out: Vec<u8>| String::from_utf8(out).unwrap();
    let fitted = TreeOptions {
        color: true,
        width: Some(100),
        ..TreeOptions::default()
    };
    let (mut tree, mut coloured, mut tree_json, mut grid, mut explained) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut frame = decoded();
    let said = match left_over {
        None => {
            write_frame(&mut tree, &frame, TreeOptions::default()).unwrap();
            write_frame(&mut coloured, &frame, fitted).unwrap();
            write_frame_tree_json(&mut tree_json, &frame).unwrap();
            grid.extend_from_slice(render_grid(&frame, true).as_bytes());
            said(&frame)
        }
        Some(_) => {
            // What the walks of records fields within left elements find
            // joins the frame's warnings as the tree is drawn.
            write_frame_drawing(&mut tree, &mut frame, TreeOptions::default(), walking).unwrap();
            write_frame_drawing(&mut coloured, &mut decoded(), fitted, walking).unwrap();
            write_frame_tree_json_drawing(&mut tree_json, &mut decoded(), walking).unwrap();
            write_grid_drawing(&mut grid, &mut decoded(), true, walking).unwrap();
            said(&frame)
        }
    };
    // Explained as `kwire decode --explain` does, whole or not.
    let plain = TreeOptions::default();
    write_explained_drawing(
        &mut explained,
        (cat, None),
        &mut decoded(),
        plain,
        &opts.budget,
    )
    .unwrap();
    [
        text(tree),
        text(coloured),
        text(tree_json),
        text(grid),
        text(explained),
        said,
    ]
}

/// The explorer's way: every left array as a stub per element
/// (`stub_elements`), then every stub opened (`open_element_stub`), the
/// stubs it makes of arrays within in turn: the frame's text tree, and what
/// each element showed when it was seen whole before it became a stub (its
/// line and its children's, without theirs).
fn stubbed_then_opened(cat: &Catalogue, bytes: &[u8], read: As) -> (String, Vec<(usize, String)>) {
    let opts = options(read, Some(0));
    let mut frame = decode_frame(cat, Bytes::copy_from_slice(bytes), 0, &opts);
    let frame_bytes = frame.bytes.clone();
    let mut seen = Vec::new();
    let mut see = |n: &Node| seen.push((n.offset, shallow(n)));
    stub_elements(cat, &frame_bytes, &mut frame.root, &mut see);
    fn open_all(cat: &Catalogue, bytes: &Bytes, n: &mut Node, see: &mut dyn FnMut(&Node)) {
        if n.walked_later() {
            *n = open_element_stub(cat, bytes, n, see).expect("a stub opens into one node");
        }
        for c in &mut n.children {
            open_all(cat, bytes, c, see);
        }
    }
    open_all(cat, &frame_bytes, &mut frame.root, &mut see);
    let mut out = Vec::new();
    write_frame(&mut out, &frame, TreeOptions::default()).unwrap();
    (String::from_utf8(out).unwrap(), seen)
}

/// A node's line and its children's, without theirs.
fn shallow(n: &Node) -> String {
    let mut top = n.clone();
    for c in &mut top.children {
        c.children.clear();
    }
    render_tree(&top, TreeOptions::default())
}

/// Each element node of `n`'s tree, shallow, by offset.
fn elements_by_offset(n: &Node, out: &mut std::collections::HashMap<usize, String>) {
    if n.role == Role::Element && !n.children.is_empty() {
        out.insert(n.offset, shallow(n));
    }
    for c in &n.children {
        elements_by_offset(c, out);
    }
}

/// The frame's error and warnings.
fn said(frame: &Frame) -> String {
    let mut out = format!("{:?}\n", frame.error.as_ref().map(|e| e.to_string()));
    for w in &frame.warnings {
        out.push_str(&w.text);
        out.push('\n');
    }
    out
}

/// Whether any node of `n` is an array whose elements are left for drawing.
fn leaves_any(n: &Node) -> bool {
    (n.walked_later() && n.deferred_records().is_none()) || n.children.iter().any(leaves_any)
}

#[derive(Default)]
struct Tally {
    frames: usize,
    /// Frames with an array whose elements were left.
    left: usize,
}

impl Tally {
    fn alike(&mut self, cat: &Catalogue, what: &str, bytes: &[u8], read: As) {
        self.frames += 1;
        let left = decode_frame(
            cat,
            Bytes::copy_from_slice(bytes),
            0,
            &drawing_options(read, Some(0)),
        );
        if !leaves_any(&left.root) {
            return;
        }
        self.left += 1;
        let whole = views(cat, bytes, read, None);
        let later = views(cat, bytes, read, Some(0));
        let names = [
            "text tree",
            "coloured and fitted",
            "tree JSON",
            "grid",
            "explained",
            "findings",
        ];
        let (opened, seen) = stubbed_then_opened(cat, bytes, read);
        let views = names.iter().zip(&whole).zip(&later);
        for ((name, w), l) in views.chain([((&"stubbed, then opened", &whole[0]), &opened)]) {
            if w != l {
                let line = w.lines().zip(l.lines()).position(|(a, b)| a != b);
                panic!(
                    "{what}: the {name} differs with arrays left for drawing, at line {line:?}\n\
                     --- whole\n{w}\n--- left\n{l}"
                );
            }
        }
        let whole_frame = decode_frame(cat, Bytes::copy_from_slice(bytes), 0, &options(read, None));
        let mut elements = std::collections::HashMap::new();
        elements_by_offset(&whole_frame.root, &mut elements);
        for (at, shown) in seen {
            assert_eq!(
                elements.get(&at),
                Some(&shown),
                "{what}: the element at {at} was seen otherwise before it became a stub"
            );
        }
    }

    /// `bytes`, then `copies` copies each with one byte changed, and the
    /// frame cut short (its size prefix kept: a partial tree).
    fn alike_damaged(
        &mut self,
        cat: &Catalogue,
        what: &str,
        bytes: &[u8],
        read: As,
        (rng, copies): (&mut Rng, usize),
    ) {
        self.alike(cat, what, bytes, read);
        if bytes.len() <= 8 {
            return;
        }
        for _ in 0..copies {
            let mut copy = bytes.to_vec();
            let at = 4 + rng.below(copy.len() as u64 - 4) as usize;
            copy[at] = rng.next() as u8;
            let what = format!("{what}, byte {at} set to {:#04x}", copy[at]);
            self.alike(cat, &what, &copy, read);
            let cut = 4 + rng.below(bytes.len() as u64 - 4) as usize;
            let what = format!("{what}, cut at {cut}");
            self.alike(cat, &what, &bytes[..cut], read);
        }
    }
}

#[test]
fn every_message_of_every_version_random_bodies_and_damaged_copies() {
    let _one = one_at_a_time();
    let cat = Catalogue::builtin();
    let mut tally = Tally::default();
    let mut rng = Rng::new(17);
    for (d, key, v) in all_messages(cat) {
        let fs = frame_spec(d, key, v);
        let spec = message_spec(cat, &fs).unwrap();
        let read = match d {
            Direction::Request => (d, None, None),
            Direction::Response => (d, Some(key), Some(v)),
        };
        for seed in 0..3u64 {
            let body = match seed {
                0 => smallest_struct(&spec.fields, v),
                _ => random_body(spec, v, seed * 7_919 + key as u64),
            };
            let bytes = encode_frame(cat, &fs, &example_header(d), &body).unwrap();
            let what = format!("{} v{v} seed {seed}", spec.name);
            tally.alike_damaged(cat, &what, &bytes, read, (&mut rng, 2));
        }
    }
    println!("{} frames, {} left arrays", tally.frames, tally.left);
    assert!(tally.frames > 5_000, "{} frames", tally.frames);
    assert!(tally.left > 2_000, "{} frames left arrays", tally.left);
}

#[test]
fn every_frame_of_the_shipped_captures_and_damaged_copies() {
    let _one = one_at_a_time();
    let cat = Catalogue::builtin();
    let mut tally = Tally::default();
    let mut rng = Rng::new(19);
    let mut seen = std::collections::HashSet::new();
    let mut files: Vec<_> = walk(std::path::Path::new("samples/captures"));
    files.sort();
    for path in files {
        let data = std::fs::read(&path).unwrap();
        let _ = for_each_captured(cat, &data[..], &CaptureOptions::default(), |c| {
            if let Captured::Frame(f) = c {
                let read = (f.direction, f.api_key, f.api_version);
                let what = format!("{} frame {}", path.display(), f.index);
                let kind = (f.direction == Direction::Request, f.api_key, f.api_version);
                let copies = if seen.insert(kind) { 10 } else { 0 };
                tally.alike_damaged(cat, &what, &f.bytes, read, (&mut rng, copies));
            }
            true
        });
    }
    println!("{} frames, {} left arrays", tally.frames, tally.left);
    assert!(tally.frames > 2_500, "{} frames", tally.frames);
    assert!(tally.left > 500, "{} frames left arrays", tally.left);
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else if p.to_string_lossy().contains(".pcap") {
            out.push(p);
        }
    }
    out
}

const METADATA_V12: As = (Direction::Response, Some(3), Some(12));

/// At `kwire decode`'s threshold: the Topics array is left, and within each
/// topic its partitions (84 KB of them) are left too.
#[test]
fn a_large_metadata_response_at_the_threshold_draws_as_its_whole_tree() {
    let _one = one_at_a_time();
    let cat = Catalogue::builtin();
    let bytes = common::metadata_response(6, 2_000);
    let over = Some(kwire::decode::frame::DEFER_ELEMENTS_OVER);
    let left = decode_frame(
        cat,
        Bytes::copy_from_slice(&bytes),
        0,
        &options(METADATA_V12, over),
    );
    assert!(leaves_any(&left.root));
    assert_eq!(
        views(cat, &bytes, METADATA_V12, None),
        views(cat, &bytes, METADATA_V12, over)
    );
}

/// The text tree of a Metadata response of 100,000 partitions (4.2 MB) is
/// drawn holding one topic's nodes at a time: within 16 MB (4.7 MB
/// measured), where `kwire decode` drawing its whole tree peaked at 482 MB
/// (BENCHMARKS.md).
#[test]
fn a_metadata_response_of_100000_partitions_is_drawn_in_little_memory() {
    let _one = one_at_a_time();
    let cat = Catalogue::builtin();
    let bytes = Bytes::from(common::metadata_response(100, 1_000));
    let over = Some(kwire::decode::frame::DEFER_ELEMENTS_OVER);
    let opts = options(METADATA_V12, over);
    let (lines, peak) = drawn_counting(cat, &bytes, &opts);
    // A line a partition and each of its fields, elements and lengths: 18.
    assert!(lines > 1_800_000, "{lines} lines");
    assert!(peak < 16 << 20, "peak {} MB", peak >> 20);
}

/// An array of primitives is left too, in flexible versions and in the
/// others (whose fixed-width arrays the decoder reads in one piece): the
/// text tree of a Metadata response whose one partition lists 500,000
/// replica ids (2 MB) is drawn within 16 MB at v5 and v12, where its whole
/// tree takes 210 MB.
#[test]
fn a_list_of_500000_replica_ids_is_drawn_in_little_memory() {
    let _one = one_at_a_time();
    let cat = Catalogue::builtin();
    let ids: Vec<i32> = (0..500_000).collect();
    for version in [5, 12] {
        let mut partition = serde_json::json!({"ErrorCode": 0, "PartitionIndex": 0,
            "LeaderId": 0, "ReplicaNodes": ids, "IsrNodes": [1], "OfflineReplicas": []});
        let mut topic = serde_json::json!({"ErrorCode": 0, "Name": "t", "IsInternal": false,
            "Partitions": []});
        if version >= 10 {
            partition["LeaderEpoch"] = 0.into();
            topic["TopicId"] = "5b3c1f0e-0000-4000-8000-000000000001".into();
            topic["TopicAuthorizedOperations"] = 0.into();
        }
        topic["Partitions"] = serde_json::json!([partition]);
        let serde_json::Value::Object(body) = serde_json::json!({"ThrottleTimeMs": 0,
            "Brokers": [], "ClusterId": "abc", "ControllerId": 1, "Topics": [topic]})
        else {
            unreachable!()
        };
        let fs = common::frame_spec(Direction::Response, 3, version);
        let header = example_header(Direction::Response);
        let bytes = Bytes::from(encode_frame(cat, &fs, &header, &body).unwrap());
        let read = (Direction::Response, Some(3), Some(version));
        let opts = options(read, Some(kwire::decode::frame::DEFER_ELEMENTS_OVER));
        let (lines, peak) = drawn_counting(cat, &bytes, &opts);
        assert!(lines > 500_000, "v{version}: {lines} lines");
        assert!(peak < 16 << 20, "v{version}: peak {} MB", peak >> 20);
    }
}

/// The lines of `bytes`' text tree drawn as `kwire decode` draws it, and
/// the peak allocated meanwhile.
fn drawn_counting(cat: &Catalogue, bytes: &Bytes, opts: &DecodeOptions) -> (usize, usize) {
    peak_during(|| {
        let mut frame = decode_frame(cat, bytes.clone(), 0, opts);
        let mut counted = Counted(0);
        let walking = (cat, &opts.budget);
        write_frame_drawing(&mut counted, &mut frame, TreeOptions::default(), walking).unwrap();
        counted.0
    })
}

/// Counts lines written.
struct Counted(usize);

impl std::io::Write for Counted {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.iter().filter(|&&b| b == b'\n').count();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
