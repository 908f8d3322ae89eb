//! The frame decoder over every API and version, requests and responses: the
//! first two bytes pick a response's API and version, the rest is the input.
//! No panic; every node inside the frame; renderers cope with the partial tree;
//! the values-only decoder (`--format json`) prints what the contract built
//! from the tree (the tests' oracle) holds, credentials hidden or not;
//! `kwire check`'s walk finds the tree's error, warnings and record damage;
//! a frame's error is on a node that covers its offset.
#![no_main]
use bytes::Bytes;
use kwire::decode::{decode_frames, DecodeOptions, Direction};
use kwire::schema::{Catalogue, MessageKind};
use libfuzzer_sys::fuzz_target;

#[path = "../../tests/common/contract.rs"]
mod contract;

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    // Credentials hidden, as the command line hides them, unless the second
    // byte's high bit is set: the contract of a redacted frame is written
    // from its values tape with the tree's masks and marks.
    kwire::decode::secrets::hide(data[1] & 0x80 == 0);
    let cat = Catalogue::builtin();
    let keys = cat.api_keys();
    let opts = if data[0] & 1 == 0 {
        DecodeOptions::default()
    } else {
        let key = keys[usize::from(data[0] >> 1) % keys.len()];
        let versions = cat.versions(MessageKind::Response, key, None);
        if versions.is_empty() {
            return;
        }
        let v = versions[usize::from(data[1]) % versions.len()];
        DecodeOptions { direction: Some(Direction::Response), api_key: Some(key), api_version: Some(v), budget: kwire::budget::Budget::new(kwire::budget::Limits { decompressed: 1 << 20, expanded: 1 << 20 }), ..Default::default() }
    };
    let input = Bytes::copy_from_slice(&data[2..]);
    let full = decode_frames(cat, &input, &opts);
    let lean = decode_frames(cat, &input, &DecodeOptions { values_only: true, ..opts.clone() });
    assert_eq!(lean.len(), full.len());
    for (l, f) in lean.iter().zip(&full) {
        if f.bytes.len() <= 4096 {
            let mut written = Vec::new();
            kwire::render::json::write_contract(l, &mut written);
            let oracle = kwire::render::json::to_text(&contract::tree_contract(f));
            assert_eq!(String::from_utf8(written).expect("UTF-8 JSON"), oracle);
            // Decoded again from the tree, as the explorer's export does;
            // unless its bytes were masked from where it stopped, which leaves
            // nothing of the read that failed to read again.
            let masked_from_stop = f.error.as_ref().is_some_and(|e| {
                f.bytes.get(e.offset..).is_some_and(|r| !r.is_empty() && r.iter().all(|&b| b == b'*'))
            });
            if !masked_from_stop {
                let mut again = Vec::new();
                kwire::render::json::write_contract_of(f, (cat, None), opts.budget.limits(), &mut again);
                assert_eq!(String::from_utf8(again).expect("UTF-8 JSON"), oracle);
            }
        }
    }
    // `kwire check`'s walk over the annotated tape, without nodes, finds what the tree carries.
    let checked = decode_frames(cat, &input, &DecodeOptions { findings_only: true, ..opts.clone() });
    assert_eq!(checked.len(), full.len());
    let findings = |frames: &[kwire::decode::Frame]| {
        let mut found = Vec::new();
        kwire::analysis::check::check_frames(frames, &mut found);
        found.iter().map(|f| format!("{} @{:?} {}", f.rule.id(), f.offset, f.message)).collect::<Vec<_>>()
    };
    assert_eq!(findings(&checked), findings(&full));
    for f in &full {
        if let Some(e) = &f.error {
            // The node whose read failed holds the error and covers its offset.
            f.root.walk(&mut |n, _| assert!(n.error() != Some(e.expected.as_str()) || (n.offset..=n.end()).contains(&e.offset)));
        }
    }
    for f in full {
        f.root.walk(&mut |n, _| assert!(n.end() <= f.bytes.len().max(4) || n.role == kwire::decode::Role::Decompressed));
        if let Some(e) = &f.error {
            assert!(e.offset <= f.bytes.len());
        }
        // Rendering is linear in the frame; keep it to small frames so the fuzzer stays fast.
        if f.bytes.len() <= 4096 {
            let _ = kwire::render::text_tree::render_frame(&f, Default::default());
            let _ = kwire::render::grid::render_grid(&f, true);
        }
    }
});
