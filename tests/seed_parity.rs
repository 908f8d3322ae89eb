//! Parity with the seed pages in ../shared/seeds: the messages shipped under
//! samples/ decode to object trees whose node names, types, values, offsets,
//! lengths and nesting equal the seeds' trees (notes may be worded by kwire),
//! and with the 4.0 definitions loaded the field descriptions equal theirs.

mod common;

use bytes::Bytes;
use kwire::decode::{decode_frames, DecodeOptions, Direction, Frame, Role};
use kwire::render::text_tree::{render_tree, TreeOptions, DOC_WIDTH};
use kwire::schema::{source::load_definitions, Catalogue};
use std::path::Path;

/// One node of a tree as text: rails, label without its note, range, description.
#[derive(Debug, PartialEq)]
struct Line {
    rails: usize,
    label: String,
    offset: usize,
    len: usize,
    desc: String,
}

/// Split a whitespace-collapsed tree (as the seed pages hold it) into lines.
fn parse_collapsed(text: &str) -> Vec<Line> {
    let mut out = Vec::new();
    let mut rest = text.trim();
    let mut rails = 0;
    loop {
        // The next node starts at the next " +-- " preceded by "| " rails.
        let next = rest.find(" +-- ");
        let (seg, after) = match next {
            Some(i) => (&rest[..i], Some(&rest[i + 5..])),
            None => (rest, None),
        };
        // Trailing "| | " tokens of this segment are the next node's rails.
        let mut seg = seg.trim_end();
        let mut next_rails = 0;
        while let Some(s) = seg.strip_suffix(" |").or_else(|| if seg == "|" { Some("") } else { None }) {
            next_rails += 1;
            seg = s.trim_end();
        }
        out.push(parse_line(seg, rails));
        rails = next_rails;
        match after {
            Some(a) => rest = a,
            None => break,
        }
    }
    out
}

fn parse_line(seg: &str, rails: usize) -> Line {
    let open = seg.find(" [0x").unwrap_or_else(|| panic!("no range in {seg:?}"));
    let close = seg[open..].find(']').unwrap() + open;
    let (off, len) = seg[open + 4..close].split_once(", ").unwrap();
    Line {
        rails,
        label: strip_note(&seg[..open]),
        offset: usize::from_str_radix(off, 16).unwrap(),
        len: len.trim_end_matches('B').parse().unwrap(),
        desc: seg[close + 1..].trim().to_string(),
    }
}

/// Notes are kwire's own wording: drop trailing parenthesised groups.
fn strip_note(label: &str) -> String {
    let mut s = label.trim().to_string();
    while s.ends_with(')') {
        match s.rfind(" (") {
            Some(i) => s.truncate(i),
            None => break,
        }
    }
    s
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The object trees of a seed page, in order (request, response).
fn seed_trees(page: &str) -> Vec<String> {
    page.split("object tree\n")
        .skip(1)
        .map(|s| s.split("kafka message schema").next().unwrap().trim().to_string())
        .collect()
}

fn decode_sample(cat: &Catalogue, name: &str, direction: Direction, api: i16) -> Frame {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples").join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let bytes = Bytes::from(kwire::input::hex_text::parse_hex_text(&text).unwrap());
    let opts = DecodeOptions { direction: Some(direction), api_key: Some(api), api_version: Some(0), release: None, ..Default::default() };
    let mut frames = decode_frames(cat, &bytes, &opts);
    assert_eq!(frames.len(), 1);
    let f = frames.remove(0);
    assert!(f.error.is_none(), "{name}: {:?}", f.error);
    f
}

struct SeedCase {
    page_prefix: &'static str,
    api_name: &'static str,
    api_key: i16,
    sample: &'static str,
    sizes: (usize, usize),
}

const CASES: &[SeedCase] = &[
    SeedCase { page_prefix: "000_", api_name: "WriteShareGroupState", api_key: 85, sample: "write-share-group-state-v0", sizes: (78, 37) },
    SeedCase { page_prefix: "001_", api_name: "DeleteShareGroupState", api_key: 86, sample: "delete-share-group-state-v0", sizes: (41, 37) },
];

fn seed_page(dir: &Path, prefix: &str) -> String {
    let entry = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with(prefix))
        .unwrap_or_else(|| panic!("no seed page {prefix}*"));
    std::fs::read_to_string(entry.path()).unwrap()
}

#[test]
fn sample_trees_equal_the_seed_trees() {
    let Some(seeds) = common::shared_dir("seeds") else { return };
    let Some(defs) = common::shared_dir("kafka-defs/4.0") else { return };
    let with_prose = Catalogue::builtin().with_loaded(load_definitions(&defs).unwrap());
    for case in CASES {
        let page = seed_page(&seeds, case.page_prefix);
        assert!(page.starts_with(case.api_name), "page {} is {}", case.page_prefix, case.api_name);
        let trees = seed_trees(&page);
        assert_eq!(trees.len(), 2, "{}: request and response trees", case.api_name);
        for (i, (direction, dir_name, size)) in
            [(Direction::Request, "request", case.sizes.0), (Direction::Response, "response", case.sizes.1)].into_iter().enumerate()
        {
            let sample = format!("{}-{dir_name}.hex", case.sample);
            for cat in [Catalogue::builtin(), &with_prose] {
                let frame = decode_sample(cat, &sample, direction, case.api_key);
                assert_eq!(frame.bytes.len(), size, "{sample}: size");
                let mine = parse_collapsed(&collapse(&render_tree(&frame.root, TreeOptions::default())));
                let theirs = parse_collapsed(&trees[i]);
                assert_eq!(mine.len(), theirs.len(), "{sample}: node count");
                for (m, t) in mine.iter().zip(&theirs) {
                    assert_eq!((m.rails, &m.label, m.offset, m.len), (t.rails, &t.label, t.offset, t.len), "{sample}");
                }
            }
            // With the definitions loaded, each schema field carries the seed's description.
            let frame = decode_sample(&with_prose, &sample, direction, case.api_key);
            let theirs = parse_collapsed(&trees[i]);
            let mut nodes = Vec::new();
            frame.root.walk(&mut |n, _| nodes.push(n));
            let mut checked = 0;
            for (n, t) in nodes.iter().zip(&theirs) {
                if matches!(n.role, Role::Field { .. }) && n.key.is_none() {
                    let doc = n.doc.clone().unwrap_or_else(|| panic!("{sample}: {} has no about text", n.name));
                    let cut = if doc.chars().count() > DOC_WIDTH + 3 { format!("{}...", doc.chars().take(DOC_WIDTH).collect::<String>()) } else { doc };
                    assert_eq!(cut, t.desc, "{sample}: description of {}", n.name);
                    checked += 1;
                }
            }
            assert!(checked >= 3, "{sample}: only {checked} descriptions compared");
        }
    }
}

#[test]
fn collapsed_tree_parser_reads_rails() {
    let lines = parse_collapsed("R m [0x0000, 3B] +-- A [0x0000, 1B] x | +-- B t = 1 (n) [0x0000, 1B] +-- C [0x0001, 2B] +-- D [0x0001, 2B]");
    let rails: Vec<usize> = lines.iter().map(|l| l.rails).collect();
    assert_eq!(rails, vec![0, 0, 1, 0, 0]);
    assert_eq!(lines[2].label, "B t = 1");
    assert_eq!(lines[1].desc, "x");
}
