//! A lone response names neither its API nor its version: try every one and
//! rank those under which the bytes parse cleanly to the end.

use super::frame::{decode_frame, DecodeOptions};
use super::tree::{Direction, Frame};
use crate::schema::{Catalogue, MessageKind};
use bytes::Bytes;

#[derive(Clone, Debug)]
pub struct Guess {
    pub api_key: i16,
    pub version: i16,
    pub warnings: usize,
    /// Nodes decoded: more structure explained ranks higher.
    pub nodes: usize,
}

/// Every (api, version) under which `frame` decodes as a response without error,
/// best first: fewest warnings, then most structure, then newest version.
pub fn guess_response(cat: &Catalogue, frame: &Bytes, release: Option<&str>) -> Vec<Guess> {
    let mut out = Vec::new();
    for key in cat.api_keys() {
        for version in cat.versions(MessageKind::Response, key, release) {
            let opts = DecodeOptions {
                direction: Some(Direction::Response),
                api_key: Some(key),
                api_version: Some(version),
                release: release.map(str::to_string),
                ..Default::default()
            };
            let f = decode_frame(cat, frame.clone(), 0, &opts);
            if f.error.is_none() {
                out.push(Guess {
                    api_key: key,
                    version: f.api_version.unwrap_or(version),
                    warnings: f.warnings.len(),
                    nodes: count_nodes(&f),
                });
            }
        }
    }
    out.sort_by_key(|g| {
        (
            g.warnings,
            std::cmp::Reverse(g.nodes),
            std::cmp::Reverse(g.version),
            g.api_key,
        )
    });
    out.dedup_by_key(|g| (g.api_key, g.version));
    out
}

fn count_nodes(f: &Frame) -> usize {
    let mut n = 0;
    f.root.walk(&mut |_, _| n += 1);
    n
}
