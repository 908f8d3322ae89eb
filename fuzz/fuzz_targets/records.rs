//! Record batches, legacy message sets and decompression, with internal-topic
//! payloads: the first byte picks the topic (and the width and colour the
//! tree is drawn in). Decompression is bounded. The bytes are also checked
//! as a log segment (`kwire check`).
#![no_main]
use bytes::Bytes;
use kwire::decode::fields::Context;
use kwire::decode::records::BatchDecoder;
use kwire::schema::Catalogue;
use libfuzzer_sys::fuzz_target;

const TOPICS: [Option<&str>; 5] = [None, Some("__consumer_offsets"), Some("__share_group_state"), Some("__transaction_state"), Some("__cluster_metadata")];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else { return };
    let ctx = Context { topic: TOPICS[usize::from(pick) % TOPICS.len()].map(str::to_string), topic_forced: true, protocol_type: None, budget: kwire::budget::Budget::new(kwire::budget::Limits { decompressed: 1 << 20, expanded: 1 << 20 }), topic_ids: Default::default(), ..Context::default() };
    let buf = Bytes::copy_from_slice(rest);
    let mut nodes = Vec::new();
    let mut bd = BatchDecoder::new(&buf, Catalogue::builtin(), &ctx);
    bd.decode_stream(0, buf.len(), &mut nodes);
    // Lines fitted to a width and coloured as a terminal's are (the first
    // byte picks them too): the cut of a long line reads the records' own bytes.
    let fitted = kwire::render::text_tree::TreeOptions {
        width: Some(40 + usize::from(pick) % 100),
        color: pick & 0x80 != 0,
        ..Default::default()
    };
    for n in &nodes {
        let _ = kwire::render::text_tree::render_tree(n, Default::default());
        let _ = kwire::render::text_tree::render_tree(n, fitted);
        let _ = kwire::render::tree_json::write_tree_json(&mut Vec::new(), n);
    }
    // The records read from the tape (the filters', `kwire records`') are
    // the records the nodes hold (the explorer's, `--format dump`'s). Each
    // reader has a budget of its own, one that only decompression can run out.
    let roomy = || kwire::budget::Budget::new(kwire::budget::Limits { decompressed: 1 << 20, expanded: 1 << 30 });
    let plain = Context { budget: roomy(), ..Context::default() };
    let mut plain_nodes = Vec::new();
    BatchDecoder::new(&buf, Catalogue::builtin(), &plain).decode_stream(0, buf.len(), &mut plain_nodes);
    let mut from_nodes = Vec::new();
    kwire::decode::records::view::records(&plain_nodes, &mut |r| {
        let headers: Vec<_> = r.headers.iter().map(|(k, v)| (k.bytes().cloned(), v.bytes().cloned())).collect();
        from_nodes.push((r.offset, r.timestamp, r.control, r.key.bytes().cloned(), r.value.bytes().cloned(), headers, r.batch, r.offset_delta));
    });
    let mut from_tape = Vec::new();
    kwire::decode::records::each::for_each_record(rest, &roomy(), &mut |r| {
        if let (true, Some(offset)) = (r.whole, r.offset) {
            let owned = |b: Option<&[u8]>| b.map(Bytes::copy_from_slice);
            let headers: Vec<_> = r.headers.iter().map(|(k, v)| (owned(*k), owned(*v))).collect();
            from_tape.push((offset, r.timestamp, r.control, owned(r.key), owned(r.value), headers, r.batch, r.offset_delta));
        }
        true
    });
    assert_eq!(from_tape, from_nodes);
    // The same bytes as a log segment, checked a batch at a time, each
    // batch against the one before.
    let _ = kwire::analysis::check::check_segment(Catalogue::builtin(), &ctx, Some(1), rest, &mut |found| {
        found.clear();
        Ok(())
    });
});
