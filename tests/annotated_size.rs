//! The annotated form of a frame (its annotated tape) costs at most 64 bytes
//! per field of the tree built from it (issue #18's budget), measured on
//! every frame of the real client captures in `samples/captures`: the slots
//! in use. (A tape reserves room ahead from the frame's size and is reused
//! from frame to frame; that room is not the frame's.)
#![allow(clippy::disallowed_macros)] // test and tool output: a closed stderr may end the run

use kwire::capture::for_each_frame;
use kwire::decode::tape::Slot;
use kwire::decode::{decode_frame, DecodeOptions, Node};
use kwire::schema::Catalogue;

fn nodes(n: &Node) -> usize {
    1 + n.children.iter().map(nodes).sum::<usize>()
}

/// Bytes of the annotated tape's slots in use (their spare room is reserved ahead from the frame's size and not the frame's), and nodes of the tree, for one frame.
fn sizes(cat: &Catalogue, bytes: bytes::Bytes, opts: &DecodeOptions) -> (usize, usize) {
    let tape = decode_frame(
        cat,
        bytes.clone(),
        0,
        &DecodeOptions {
            annotated_tape: true,
            ..opts.clone()
        },
    );
    let tree = decode_frame(cat, bytes, 0, opts);
    let slots = tape.values.as_ref().map_or(0, |v| v.slots.len());
    (slots * std::mem::size_of::<Slot>(), nodes(&tree.root))
}

#[test]
fn the_annotated_tape_costs_at_most_64_bytes_per_field() {
    let cat = Catalogue::builtin();
    let (mut total_bytes, mut total_nodes, mut frames, mut worst) =
        (0usize, 0usize, 0usize, 0.0f64);
    for entry in std::fs::read_dir("samples/captures").unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("pcap")
            && path.extension().and_then(|e| e.to_str()) != Some("pcapng")
        {
            continue;
        }
        let capture = std::fs::read(&path).unwrap();
        let _ = for_each_frame(cat, &capture[..], None, |f| {
            let opts = DecodeOptions {
                direction: Some(f.direction),
                api_key: f.api_key,
                api_version: f.api_version,
                ..Default::default()
            };
            let (b, n) = sizes(cat, f.bytes.clone(), &opts);
            if b > 0 {
                total_bytes += b;
                total_nodes += n;
                frames += 1;
                worst = worst.max(b as f64 / n as f64);
            }
            true
        });
    }
    assert!(frames > 100, "{frames} frames with a tape");
    let mean = total_bytes as f64 / total_nodes as f64;
    eprintln!("annotated tape: {frames} frames, {total_nodes} fields, {mean:.1} bytes per field on average, {worst:.1} at most (Slot {} bytes)", std::mem::size_of::<Slot>());
    assert!(
        worst <= 64.0,
        "a frame's tape costs {worst:.1} bytes per field"
    );
}
