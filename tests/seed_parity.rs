//! Parity with the seed pages in ../shared/seeds: the messages shipped under
//! samples/ decode to object trees whose node names, types, values, offsets,
//! lengths and nesting equal the seeds' trees (notes may be worded by kwire),
//! and with the 4.0 definitions loaded the field descriptions equal theirs.

mod common;

use bytes::Bytes;
use common::seed::{as_shown, collapse, parse_collapsed, seed_page, seed_trees};
use kwire::decode::{decode_frames, DecodeOptions, Direction, Frame, Role};
use kwire::render::text_tree::{render_tree, TreeOptions};
use kwire::schema::{source::load_definitions, Catalogue};
use std::path::Path;

fn decode_sample(cat: &Catalogue, name: &str, direction: Direction, api: i16) -> Frame {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("samples")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let bytes = Bytes::from(kwire::input::hex_text::parse_hex_text(&text).unwrap());
    let opts = DecodeOptions {
        direction: Some(direction),
        api_key: Some(api),
        api_version: Some(0),
        release: None,
        ..Default::default()
    };
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
    SeedCase {
        page_prefix: "000_",
        api_name: "WriteShareGroupState",
        api_key: 85,
        sample: "write-share-group-state-v0",
        sizes: (78, 37),
    },
    SeedCase {
        page_prefix: "001_",
        api_name: "DeleteShareGroupState",
        api_key: 86,
        sample: "delete-share-group-state-v0",
        sizes: (41, 37),
    },
];

#[test]
fn sample_trees_equal_the_seed_trees() {
    let Some(seeds) = common::shared_dir("seeds") else {
        return;
    };
    let Some(defs) = common::shared_dir("kafka-defs/4.0") else {
        return;
    };
    let with_prose = Catalogue::builtin().with_loaded(load_definitions(&defs).unwrap());
    for case in CASES {
        let page = seed_page(&seeds, case.page_prefix);
        assert!(
            page.starts_with(case.api_name),
            "page {} is {}",
            case.page_prefix,
            case.api_name
        );
        let trees = seed_trees(&page);
        assert_eq!(
            trees.len(),
            2,
            "{}: request and response trees",
            case.api_name
        );
        for (i, (direction, dir_name, size)) in [
            (Direction::Request, "request", case.sizes.0),
            (Direction::Response, "response", case.sizes.1),
        ]
        .into_iter()
        .enumerate()
        {
            let sample = format!("{}-{dir_name}.hex", case.sample);
            for cat in [Catalogue::builtin(), &with_prose] {
                let frame = decode_sample(cat, &sample, direction, case.api_key);
                assert_eq!(frame.bytes.len(), size, "{sample}: size");
                let mine =
                    parse_collapsed(&collapse(&render_tree(&frame.root, TreeOptions::default())));
                let theirs = parse_collapsed(&trees[i]);
                assert_eq!(mine.len(), theirs.len(), "{sample}: node count");
                for (m, t) in mine.iter().zip(&theirs) {
                    assert_eq!(
                        (m.rails, &m.label, m.offset, m.len),
                        (t.rails, &t.label, t.offset, t.len),
                        "{sample}"
                    );
                }
            }
            // With the definitions loaded, each schema field carries the seed's description.
            let frame = decode_sample(&with_prose, &sample, direction, case.api_key);
            let theirs = parse_collapsed(&trees[i]);
            let mut nodes = Vec::new();
            frame.root.walk(&mut |n, _| nodes.push(n));
            let mut checked = 0;
            for (n, t) in nodes.iter().zip(&theirs) {
                if matches!(n.role, Role::Field { .. }) && n.key().is_none() {
                    let doc = n
                        .doc
                        .clone()
                        .unwrap_or_else(|| panic!("{sample}: {} has no about text", n.name));
                    assert_eq!(
                        as_shown(&doc),
                        t.desc,
                        "{sample}: description of {}",
                        n.name
                    );
                    checked += 1;
                }
            }
            assert!(
                checked >= 3,
                "{sample}: only {checked} descriptions compared"
            );
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
