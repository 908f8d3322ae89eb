//! A lone response taken for the API and version it fits best
//! (`decode::guess::guess_response`) is ranked as decoding every candidate
//! whole and counting its tree ranks it, though each is decoded as a view
//! that draws as it goes decodes it (large arrays and records fields left,
//! then walked a piece at a time to count): the same order, warnings and
//! node counts on frames small and large, with and without damaged
//! records. And a large one is ranked without its whole tree held.

mod common;

#[global_allocator]
static GLOBAL: common::alloc::Counting = common::alloc::Counting;

use bytes::Bytes;
use common::alloc::{one_at_a_time, peak_during};
use common::batches::{batch, damaged, fetch_v4, rec, small_record_batches};
use kwire::decode::guess::guess_response;
use kwire::decode::{decode_frame, DecodeOptions, Direction};
use kwire::encode::example::smallest_struct;
use kwire::encode::frame::message_spec;
use kwire::encode::{encode_frame, example_header};
use kwire::schema::{Catalogue, MessageKind};

/// (api key, version, warnings, nodes), best first.
type Ranking = Vec<(i16, i16, usize, usize)>;

/// The ranking worked out the plain way: every candidate decoded whole,
/// every node of its tree counted.
fn ranked_whole(cat: &Catalogue, bytes: &Bytes) -> Ranking {
    let mut out = Vec::new();
    for key in cat.api_keys() {
        for version in cat.versions(MessageKind::Response, key, None) {
            let opts = DecodeOptions {
                direction: Some(Direction::Response),
                api_key: Some(key),
                api_version: Some(version),
                ..Default::default()
            };
            let f = decode_frame(cat, bytes.clone(), 0, &opts);
            if f.error.is_none() {
                let mut nodes = 0;
                f.root.walk(&mut |_, _| nodes += 1);
                let v = f.api_version.unwrap_or(version);
                out.push((key, v, f.warnings.len(), nodes));
            }
        }
    }
    out.sort_by_key(|&(key, v, warnings, nodes)| {
        (
            warnings,
            std::cmp::Reverse(nodes),
            std::cmp::Reverse(v),
            key,
        )
    });
    out.dedup_by_key(|g| (g.0, g.1));
    out
}

fn ranked(cat: &Catalogue, bytes: &Bytes) -> Ranking {
    guess_response(cat, bytes, None)
        .into_iter()
        .map(|g| (g.api_key, g.version, g.warnings, g.nodes))
        .collect()
}

#[test]
fn small_responses_rank_as_their_whole_trees_do() {
    let cat = Catalogue::builtin();
    // The smallest body of a few APIs' responses, at their oldest and newest versions.
    let mut checked = 0;
    for key in [0, 1, 3, 18, 19, 32, 60] {
        let versions = cat.versions(MessageKind::Response, key, None);
        for version in [versions[0], versions[versions.len() - 1]] {
            let fs = common::frame_spec(Direction::Response, key, version);
            let Ok(spec) = message_spec(cat, &fs) else {
                continue;
            };
            let body = smallest_struct(&spec.fields, version);
            let header = example_header(Direction::Response);
            let bytes = Bytes::from(encode_frame(cat, &fs, &header, &body).unwrap());
            let whole = ranked_whole(cat, &bytes);
            assert!(!whole.is_empty(), "api {key} v{version} fits none");
            assert_eq!(ranked(cat, &bytes), whole, "api {key} v{version}");
            checked += 1;
        }
    }
    assert!(checked >= 12, "{checked} frames checked");
}

/// A Metadata response whose arrays of partitions are left (over 64 KiB
/// each), and a Fetch response whose records field is left (over 64 KiB),
/// with damaged batches among its records: their warnings are counted.
#[test]
fn large_responses_rank_as_their_whole_trees_do() {
    let cat = Catalogue::builtin();
    let metadata = Bytes::from(common::metadata_response(2, 2_500));
    let whole = ranked_whole(cat, &metadata);
    assert_eq!(whole[0].0, 3, "{whole:?}");
    assert_eq!(ranked(cat, &metadata), whole);

    let recs = [rec(Some(b"k"), Some(b"v"), &[], 0)];
    let broken = damaged(&recs);
    let mut records = small_record_batches(200);
    records.extend_from_slice(&broken.bad_crc);
    records.extend_from_slice(&broken.wrong_count);
    assert!(records.len() > 1 << 20);
    let fetch = Bytes::from(fetch_v4(cat, "orders", &records));
    let whole = ranked_whole(cat, &fetch);
    assert!(
        whole.iter().any(|g| g.0 == 1 && g.2 > 0),
        "the damaged batches warn: {whole:?}"
    );
    assert_eq!(ranked(cat, &fetch), whole);
}

/// A records field left for later whose gzip batches expand past the
/// budget for what is held at once (12 MiB): the whole tree holds each
/// batch decompressed for the frame's life and leaves the last ones
/// unchecked, with a warning each; the count holds them so too, so the
/// ranking's warnings are the whole tree's.
#[test]
fn a_response_over_the_expanded_budget_ranks_as_its_whole_tree_does() {
    let cat = Catalogue::builtin();
    let big = vec![b'v'; 3 << 20];
    let mut records = small_record_batches(200);
    for b in 0..6 {
        records.extend_from_slice(&batch(
            20_000 + b,
            1,
            &[rec(Some(b"k"), Some(&big), &[], 0)],
        ));
    }
    let fetch = Bytes::from(fetch_v4(cat, "orders", &records));
    let whole = ranked_whole(cat, &fetch);
    assert!(
        whole.iter().any(|g| g.0 == 1 && g.2 >= 2),
        "batches past the budget warn: {whole:?}"
    );
    assert_eq!(ranked(cat, &fetch), whole);
}

/// A Metadata response of 100,000 partitions (4.2 MB) fits Metadata v11
/// and v12: each is counted holding one topic's nodes at a time, within
/// 32 MB where decoding either whole takes about 480 MB.
#[test]
fn a_large_response_is_ranked_without_its_whole_tree() {
    let _one = one_at_a_time();
    let cat = Catalogue::builtin();
    let bytes = Bytes::from(common::metadata_response(100, 1_000));
    let (ranked, peak) = peak_during(|| guess_response(cat, &bytes, None));
    let best: Vec<(i16, i16)> = ranked.iter().map(|g| (g.api_key, g.version)).collect();
    assert_eq!(best, [(3, 12), (3, 11)]);
    assert!(ranked[0].nodes > 1_800_000, "{} nodes", ranked[0].nodes);
    assert!(peak < 32 << 20, "peak {} MB", peak >> 20);
}
