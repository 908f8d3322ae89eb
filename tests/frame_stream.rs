//! A stream of frames decoded by `for_each_frame`, which fills one frame in
//! place for every frame, and by `decode_frames`, a fresh frame each; both
//! remember the catalogue lookups of the last frame. Both against the same
//! frames decoded alone (`decode_frame`, fresh lookups each): every request
//! message and version, each twice in a row and then after a different one,
//! onto each kind of tape and into the tree.

mod common;

use bytes::Bytes;
use common::random_body::random_body;
use common::{all_messages, frame_spec};
use kwire::decode::{decode_frame, decode_frames, for_each_frame, DecodeOptions, Direction};
use kwire::encode::frame::message_spec;
use kwire::encode::{encode_frame, example_header, FrameSpec};
use kwire::schema::Catalogue;

#[test]
fn a_stream_decoded_in_place_equals_its_frames_decoded_one_by_one() {
    let cat = Catalogue::builtin();
    let mut input = Vec::new();
    let mut frames = 0;
    for (d, key, v) in all_messages(cat)
        .into_iter()
        .filter(|(d, _, _)| *d == Direction::Request)
    {
        let fs = frame_spec(d, key, v);
        let body = random_body(
            message_spec(cat, &fs).unwrap(),
            v,
            key as u64 * 131 + v as u64,
        );
        let frame = encode_frame(cat, &fs, &example_header(d), &body).unwrap();
        // Twice in a row (the lookups remembered), then the next message (looked up afresh).
        input.extend_from_slice(&frame);
        input.extend_from_slice(&frame);
        frames += 2;
    }
    // A frame cut short ends the stream: its error, and nothing after it.
    let last = input.len() - 3;
    input.truncate(last);
    let input = Bytes::from(input);
    for opts in [
        DecodeOptions {
            values_only: true,
            ..Default::default()
        },
        DecodeOptions {
            annotated_tape: true,
            ..Default::default()
        },
        DecodeOptions::default(),
    ] {
        let one_by_one = decode_frames(cat, &input, &opts);
        assert_eq!(one_by_one.len(), frames, "every frame decoded");
        assert!(
            one_by_one.last().is_some_and(|f| f.error.is_some()),
            "the cut frame says so"
        );
        let mut streamed = Vec::new();
        for_each_frame(cat, &input, &opts, |f| streamed.push(format!("{f:?}")));
        assert_eq!(streamed.len(), one_by_one.len());
        for (k, (s, f)) in streamed.iter().zip(&one_by_one).enumerate() {
            let alone = format!(
                "{:?}",
                decode_frame(cat, input.slice(f.input_offset..), f.input_offset, &opts)
            );
            assert_eq!(
                &format!("{f:?}"),
                &alone,
                "frame {k} in decode_frames (values only: {}, annotated: {})",
                opts.values_only,
                opts.annotated_tape
            );
            assert_eq!(
                s, &alone,
                "frame {k} in for_each_frame (values only: {}, annotated: {})",
                opts.values_only, opts.annotated_tape
            );
        }
    }
}

/// Bytes after the last frame too few to hold a size prefix: a frame of its
/// own whose error says so, holding nothing of the frame before it (a tape
/// filled in place is not kept), its contract written without a panic.
#[test]
fn stray_bytes_after_a_stream_hold_nothing_of_the_frame_before() {
    let cat = Catalogue::builtin();
    let fs = FrameSpec {
        direction: Direction::Request,
        api_key: 3,
        version: 12,
        release: None,
    };
    let body = serde_json::json!({"Topics": [{"TopicId": "0f6c2d3e-4b5a-4c69-8d7e-1f2a3b4c5d6e", "Name": null}], "AllowAutoTopicCreation": false, "IncludeTopicAuthorizedOperations": false});
    let mut input = encode_frame(
        cat,
        &fs,
        &example_header(Direction::Request),
        body.as_object().unwrap(),
    )
    .unwrap();
    input.extend_from_slice(&[0, 0]);
    let input = Bytes::from(input);
    let opts = DecodeOptions {
        values_only: true,
        ..Default::default()
    };
    let mut contracts = Vec::new();
    for_each_frame(cat, &input, &opts, |f| {
        let mut out = Vec::new();
        kwire::render::json::write_contract(f, &mut out);
        contracts.push(String::from_utf8(out).unwrap());
    });
    assert_eq!(contracts.len(), 2, "{contracts:?}");
    assert!(contracts[0].contains("0f6c2d3e-4b5a-4c69-8d7e-1f2a3b4c5d6e"));
    assert!(
        contracts[1].contains(r#""header":null,"body":null"#)
            && contracts[1].contains(r#""error""#),
        "{}",
        contracts[1]
    );
}
