//! A log segment (a partition's `*.log`), a snapshot (`*.checkpoint`) or a raw
//! record-batch blob: batches one after another, each read whole by its
//! declared length and decoded on its own, so that a segment of any size
//! streams through a batch at a time. Offsets are positions in the input
//! (decompressed data keeps its own, as everywhere).

use super::BatchDecoder;
use crate::decode::context::Context;
use crate::decode::problem::{DecodeError, Warning};
use crate::decode::{secrets, Node, Role};
use crate::protocol::record_batch::{header_field, BASE_OFFSET, LAST_OFFSET_DELTA};
use crate::schema::Catalogue;
use bytes::Bytes;
use std::io::Read;

/// Largest batch read whole; a longer declared length ends the reading (it is
/// reported, never allocated).
pub const MAX_BATCH: usize = 256 << 20;

/// One batch of the segment, decoded.
pub(crate) struct SegmentBatch {
    /// Where the batch starts in the input.
    pub position: usize,
    /// The batch's tree (offsets are input positions), or the nodes of what
    /// the bytes could be read as.
    pub nodes: Vec<Node>,
    pub warnings: Vec<Warning>,
    /// Record damage, at input positions.
    pub damage: Vec<DecodeError>,
    /// The offset its first eight bytes hold (a batch's baseOffset, a
    /// legacy message's offset), when it has them.
    pub first_offset: Option<i64>,
    /// The last offset it holds, by its header: a v2 batch's baseOffset
    /// plus lastOffsetDelta, a legacy message's offset (a wrapper's is its
    /// last inner message's).
    pub last_offset: Option<i64>,
}

/// How the reading ended.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum SegmentEnd {
    /// At the end of the input (or where `each` stopped it).
    Done,
    /// At a batch that declares more than [`MAX_BATCH`] bytes, with the first
    /// 12 bytes of what was read there.
    /// (A negative length is read as one.)
    TooLarge {
        position: usize,
        declared: i32,
        head: [u8; 12],
    },
}

/// Read `input` batch by batch, handing each one on; `each` returns false to
/// stop. What a batch held goes back to the context's budget once `each` has
/// it (and dropped it).
pub(crate) fn for_each_batch(
    cat: &Catalogue,
    ctx: &Context,
    mut input: impl Read,
    mut each: impl FnMut(SegmentBatch) -> std::io::Result<bool>,
) -> std::io::Result<SegmentEnd> {
    let mut position: usize = 0;
    let mut numbered = 0;
    // The batches' offsets and sequences, checked across the segment.
    let mut order = super::order::Batches::new(true);
    loop {
        let mut head = [0u8; 12];
        let got = read_up_to(&mut input, &mut head)?;
        if got == 0 {
            return Ok(SegmentEnd::Done);
        }
        // baseOffset int64, then batchLength int32: the bytes after it.
        let declared = i32::from_be_bytes([head[8], head[9], head[10], head[11]]);
        let mut buf = head[..got].to_vec();
        if got == 12 && declared as usize > MAX_BATCH {
            return Ok(SegmentEnd::TooLarge {
                position,
                declared,
                head,
            });
        }
        if got == 12 && declared > 0 {
            (&mut input).take(declared as u64).read_to_end(&mut buf)?;
        }
        let bytes = Bytes::from(buf);
        let held_before = ctx.budget.expanded();
        // Batches (and legacy messages) are numbered across the segment.
        let mut decoder = BatchDecoder::new(&bytes, cat, ctx)
            .numbered_from(numbered)
            .following(order);
        let mut nodes = Vec::new();
        decoder.decode_stream(0, bytes.len(), &mut nodes);
        numbered += nodes.iter().filter(|n| n.role == Role::Element).count();
        order = std::mem::replace(&mut decoder.order, super::order::Batches::new(true));
        if secrets::hiding() {
            let mut shown = bytes.clone();
            secrets::redact_tree(&mut nodes, &mut shown);
        }
        for node in &mut nodes {
            shift(node, position);
        }
        let damage = decoder
            .damage
            .iter()
            .map(|e| DecodeError {
                kind: e.kind,
                offset: e.offset + position,
                expected: e.expected.clone(),
            })
            .collect();
        let first_offset = header_field(&bytes, BASE_OFFSET);
        let last_offset = match bytes.get(crate::protocol::record_batch::MAGIC_AT) {
            Some(2) => {
                let delta = header_field(&bytes, LAST_OFFSET_DELTA);
                first_offset
                    .zip(delta)
                    .map(|(base, d)| base.saturating_add(d))
            }
            _ => first_offset,
        };
        let batch = SegmentBatch {
            position,
            nodes,
            warnings: std::mem::take(&mut decoder.warnings),
            damage,
            first_offset,
            last_offset,
        };
        let go_on = each(batch)?;
        // The batch's tree is dropped: what it held goes back to the budget.
        ctx.budget
            .release(ctx.budget.expanded().saturating_sub(held_before));
        position += bytes.len();
        // An input that ends inside a batch's head ends there.
        if !go_on || got < 12 {
            return Ok(SegmentEnd::Done);
        }
    }
}

/// A whole log segment (or file of batches) as one frame for the explorer,
/// read with `ctx` (its topic and budget): its root spans the file. A
/// segment up to `walked_up_to` bytes has its batches walked at once; a
/// bigger one holds them unwalked, and the
/// explorer makes a stub of each and walks one when it is opened
/// ([`super::deferred::stub_items`]), as a big Fetch response's. The file's
/// bytes are held whole, as the explorer holds any file's.
pub fn segment_frame(
    cat: &Catalogue,
    ctx: &Context,
    bytes: Bytes,
    walked_up_to: usize,
) -> crate::decode::Frame {
    use crate::decode::{DeferredRecords, Direction, Frame, FrameKind, Region};
    let mut root = Node::new(
        "LogSegment",
        "records",
        0,
        Region::RecordBatch,
        Role::Structure,
    );
    root.len = bytes.len();
    let mut frame = Frame {
        // Batches read back from a log, as a Fetch response carries them.
        direction: Direction::Response,
        kind: FrameKind::Kafka,
        api_key: None,
        api_version: None,
        header_version: None,
        input_offset: 0,
        bytes: bytes.clone(),
        root,
        values: None,
        error: None,
        warnings: Vec::new(),
        record_damage: Vec::new(),
        redacted: Vec::new(),
        held: Default::default(),
        deferred: Vec::new(),
    };
    if bytes.len() > walked_up_to {
        frame.root.set_deferred_records(DeferredRecords {
            range: (0, bytes.len()),
            topic: ctx.topic.clone(),
            // A segment may end inside a batch being written (as `records` reads it).
            cut_is_damage: false,
            warnings_at: 0,
            damage_at: 0,
            first_item: 0,
            budget_before: None,
        });
        return frame;
    }
    let mut decoder = BatchDecoder::new(&bytes, cat, ctx);
    decoder.decode_stream(0, bytes.len(), &mut frame.root.children);
    frame.warnings = std::mem::take(&mut decoder.warnings);
    frame.record_damage = std::mem::take(&mut decoder.damage);
    if secrets::hiding() {
        secrets::redact_tree(&mut frame.root.children, &mut frame.bytes);
    }
    frame
}

/// Fill `buf` from `input` as far as it goes: the count read (less at the end).
pub fn read_up_to(input: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match input.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Offsets within the batch buffer become input positions (decompressed subtrees keep theirs).
fn shift(node: &mut Node, by: usize) {
    node.offset += by;
    if node.role == Role::Decompressed {
        return;
    }
    for c in &mut node.children {
        shift(c, by);
    }
}

/// The base offset a log segment's file name gives: Kafka names a segment
/// after the first offset it may hold, in 20 digits
/// (`00000000000000000100.log`). `None` for any other name.
pub fn base_offset_of_log_name(path: &str) -> Option<i64> {
    let name = std::path::Path::new(path).file_name()?.to_str()?;
    let digits = name.strip_suffix(".log")?;
    (digits.len() == 20 && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

/// The topic a log file belongs to, from its directory's name: Kafka keeps a
/// partition's segments and snapshots in `<topic>-<partition>`
/// (`__cluster_metadata-0/00000000000000000000.log`). `None` for `-`, a file
/// without a parent, or a directory not named so.
pub fn topic_of_log_dir(path: &str) -> Option<String> {
    if path == "-" {
        return None;
    }
    topic_of_partition_dir(std::path::Path::new(path).parent()?)
}

/// The topic of a partition's directory, from its name, `<topic>-<partition>`.
pub fn topic_of_partition_dir(dir: &std::path::Path) -> Option<String> {
    let dir = dir.file_name()?.to_str()?;
    let (topic, partition) = dir.rsplit_once('-')?;
    let legal = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    (!topic.is_empty()
        && topic.len() <= 249
        && topic.chars().all(legal)
        && !partition.is_empty()
        && partition.bytes().all(|b| b.is_ascii_digit()))
    .then(|| topic.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batches(input: &[u8]) -> (Vec<(usize, usize, usize)>, SegmentEnd) {
        let ctx = Context::default();
        let mut seen = Vec::new();
        let end = for_each_batch(Catalogue::builtin(), &ctx, input, |b| {
            // Numbered across the segment, though each is decoded alone.
            assert_eq!(
                b.nodes.first().map(|n| n.name.to_string()),
                Some(format!("RecordBatch[{}]", seen.len()))
            );
            let first = b.nodes.first();
            seen.push((
                b.position,
                first.map_or(0, |n| n.len),
                first.map_or(0, |n| n.offset),
            ));
            Ok(true)
        })
        .unwrap();
        (seen, end)
    }

    #[test]
    fn batches_follow_one_another_at_their_positions() {
        let log = std::fs::read("samples/00000000000000000000.log").unwrap();
        let (seen, end) = batches(&log);
        assert_eq!(end, SegmentEnd::Done);
        assert!(seen.len() > 1, "{seen:?}");
        let mut at = 0;
        for (position, len, first_node) in &seen {
            assert_eq!(
                (*position, *first_node),
                (at, at),
                "each batch's tree starts at its position"
            );
            at += len;
        }
        assert_eq!(at, log.len());
    }

    /// An empty batch at `base_offset` from producer 7 at `sequence`.
    fn batch_at(base_offset: i64, sequence: i64) -> Vec<u8> {
        use crate::protocol::record_batch::{
            header, seal, BASE_OFFSET, BASE_SEQUENCE, MAGIC, PRODUCER_ID, V2_FIELDS,
        };
        let mut values = [0; V2_FIELDS.len()];
        (values[BASE_OFFSET], values[MAGIC]) = (base_offset, 2);
        (values[PRODUCER_ID], values[BASE_SEQUENCE]) = (7, sequence);
        let mut b = header(values);
        seal(&mut b);
        b
    }

    /// What each batch of `input` warns of.
    fn warnings(input: &[u8]) -> Vec<Vec<String>> {
        let mut seen = Vec::new();
        for_each_batch(Catalogue::builtin(), &Context::default(), input, |b| {
            seen.push(b.warnings.iter().map(|w| w.text.clone()).collect());
            Ok(true)
        })
        .unwrap();
        seen
    }

    #[test]
    fn batches_are_checked_against_the_batch_before_across_the_segment() {
        let mut log = batch_at(10, 0);
        log.extend(batch_at(11, 1));
        assert_eq!(
            warnings(&log),
            [Vec::<String>::new(), vec![]],
            "one after another"
        );
        log.extend(batch_at(5, 2));
        log.extend(batch_at(12, 0));
        let seen = warnings(&log);
        assert_eq!(seen[..2], [Vec::<String>::new(), vec![]]);
        assert_eq!(
            seen[2],
            ["0x0000: baseOffset 5 after a batch that ends at offset 11: offsets go backwards"]
        );
        assert_eq!(
            seen[3],
            ["0x0035: producer 7 epoch 0: baseSequence 0 goes backwards; the batch before ends at 2"]
        );
    }

    #[test]
    fn a_segment_file_name_is_its_base_offset() {
        let name = |p: &str| base_offset_of_log_name(p);
        assert_eq!(name("orders-0/00000000000000000100.log"), Some(100));
        assert_eq!(name("00000000000000000000.log"), Some(0));
        assert_eq!(name("00000000000000000100.index"), None);
        assert_eq!(name("0100.log"), None);
        assert_eq!(name("99999999999999999999.log"), None, "past i64");
        assert_eq!(name("-"), None);
    }

    #[test]
    fn a_length_past_the_limit_ends_the_reading_unread() {
        let mut input = vec![0u8; 8];
        input.extend_from_slice(&i32::MAX.to_be_bytes());
        let (seen, end) = batches(&input);
        assert!(seen.is_empty());
        assert!(
            matches!(
                end,
                SegmentEnd::TooLarge {
                    position: 0,
                    declared: i32::MAX,
                    ..
                }
            ),
            "{end:?}"
        );
    }
}
