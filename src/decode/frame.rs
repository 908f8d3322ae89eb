//! Frames: the int32 size prefix, the request or response header, the body.

use super::fields::{body_doc, Context, FieldDecoder, Naming};
use super::note::Note;
use super::problem::{ErrorKind, Warning, WarningKind};
use super::reader::Reader;
use super::tree::{
    framing_node, leaf, push_with, DecodeError, Direction, Frame, FrameKind, Kind, Node, Region,
    Role, Value,
};
use super::values;
use crate::budget::{Budget, Held};
use crate::protocol::headers::{header_for, API_VERSIONS_KEY};
use crate::schema::{Catalogue, MessageKind, MessageSpec};
use bytes::Bytes;

/// What the caller knows about the frames to decode.
#[derive(Clone, Debug, Default)]
pub struct DecodeOptions {
    /// `Some(Response)` needs `api_key` and `api_version`; `None` means request.
    pub direction: Option<Direction>,
    pub api_key: Option<i16>,
    pub api_version: Option<i16>,
    /// Pin one release's definitions (`--kafka-release`).
    pub release: Option<String>,
    /// The topic of the records (`--topic`), for internal topics' keys and values.
    pub topic: Option<String>,
    /// What the input may cost in decompressed data and what it expands
    /// into, shared by every frame decoded with these options (and their clones).
    pub budget: Budget,
    /// Stop after the header (listings of large captures need no more).
    pub header_only: bool,
    /// Decode values only, for the JSON contract (see [`super::values`]).
    pub values_only: bool,
    /// Decode into the annotated tape only ([`Frame::values`] filled by
    /// [`values::decode_annotated`]: every field's value, bytes and encoding
    /// widths), without building the tree.
    pub annotated_tape: bool,
    /// Topic names by topic id, learned across a capture: TopicId fields are
    /// noted with their topic's name (the values decoded are the same).
    pub topic_ids: super::fields::TopicIds,
    /// Decoding for what is wrong with the frame only (`kwire check`): onto
    /// the annotated tape, whose slots are then walked for the warnings and
    /// record damage the tree would carry ([`super::fields`]' checks), with
    /// no node built; credentials are not looked for (nothing of the frame is
    /// shown). [`Frame::values`] holds the tape.
    pub findings_only: bool,
    /// Tree decoding for a view that draws as it goes (`kwire decode`'s text
    /// tree): a records field of more than this many bytes is not walked into
    /// nodes with the frame but marked ([`super::Node::deferred_records`]) and
    /// walked a batch at a time when drawn
    /// ([`super::records::deferred::for_each_item`]), so a frame of 400,000
    /// records never holds them all as nodes.
    pub defer_records_over: Option<usize>,
    /// Tree decoding for a view that draws as it goes, with a drawer for
    /// what is left (the text tree, tree JSON and grid of `kwire decode`,
    /// and of a capture's large frames): an array of primitives, or of
    /// structs that hold no records and no credential, whose elements take
    /// more than this many
    /// bytes, is not walked into nodes with the frame but marked
    /// ([`super::Node::walked_later`]) and walked an element at a time when
    /// drawn (`decode::fields::for_each_element`), so a Metadata response of
    /// 200,000 partitions never holds them all as nodes. Its elements'
    /// warnings are found with the frame's.
    pub defer_elements_over: Option<usize>,
    /// With `defer_elements_over`, arrays of structs that hold records (a
    /// Fetch response's partitions) are left too, and every records field in
    /// their elements is left for drawing whatever its size: a Fetch
    /// response of thousands of partitions, each with a batch or two, never
    /// holds them all as nodes. For views that walk records fields within
    /// left elements as they draw them (the text tree, tree JSON, grid and
    /// `--explain`, `kwire check` of a file, guessing, and the explorer,
    /// which makes stubs of the records fields of an element it opens,
    /// `decode::records::deferred::stub_records`).
    pub defer_record_arrays: bool,
    /// Records fields and arrays whose elements hold records are left only
    /// in frames over this many bytes (`defer_records_over`,
    /// `defer_record_arrays`): the explorer holds a smaller frame whole, as
    /// its other views show it (its records list, its grid's errors, what its
    /// batches decompress held for the frame's life). 0: in every frame.
    pub leave_in_frames_over: usize,
    /// Decoding only to learn whether the frame fits (a guess's
    /// candidates): a frame that fails is never shown, so a left array
    /// (`defer_elements_over`) whose element fails is not read again whole
    /// to show where it stopped; the error stands at the array. A wrong
    /// guess that fails at the end of a large array then costs no more
    /// than a right one.
    pub fits_only: bool,
}

/// What `kwire decode`'s text tree defers: records fields over 64 KiB. A
/// records field's nodes take about fifty times its bytes: a Fetch response
/// of twenty partitions of a megabyte each (a consumer's default fetch
/// sizes) took a gigabyte when each field under 1 MiB was built whole.
pub const DEFER_RECORDS_OVER: usize = 1 << 16;
/// And arrays whose elements take over 64 KiB: what a tape holds of one such
/// array at once (a slot of 48 bytes for every few bytes of the frame), and
/// about a megabyte of its nodes.
pub const DEFER_ELEMENTS_OVER: usize = 1 << 16;
/// Frames over this are drawn in their turn, what their records decompress
/// given back a batch at a time as it is drawn; smaller ones hold it until
/// the frame is dropped, as their whole trees hold it (a capture draws them
/// on its workers, in parallel).
pub(crate) const DRAWN_IN_TURN_OVER: usize = 1 << 20;

impl DecodeOptions {
    /// Whether frames are decoded onto a tape ([`Frame::values`]) instead of into a tree.
    fn onto_tape(&self) -> bool {
        self.values_only || self.annotated_tape || self.findings_only
    }

    fn context(&self) -> Context {
        Context {
            topic: self.topic.clone(),
            topic_forced: self.topic.is_some(),
            protocol_type: None,
            budget: self.budget.clone(),
            topic_ids: self.topic_ids.clone(),
            embedded: super::fields::decode_embedded,
            defer_records_over: self.defer_records_over,
            defer_elements_over: self.defer_elements_over,
            defer_record_arrays: self.defer_record_arrays,
            placed_records: std::sync::Arc::new([]),
            fits_only: self.fits_only,
        }
    }
}

/// Split `input` into size-prefixed frames and decode each. Decoding stops after
/// the first frame whose size prefix cannot be trusted.
pub fn decode_frames(cat: &Catalogue, input: &Bytes, opts: &DecodeOptions) -> Vec<Frame> {
    decode_frames_then(cat, input, opts, &mut |_| {})
}

/// [`decode_frames`], each frame handed to `then` as soon as it is decoded,
/// before the next is: `kwire check` walks a frame's left records fields
/// there, so that what they decompress is spent in the frames' order.
pub fn decode_frames_then(
    cat: &Catalogue,
    input: &Bytes,
    opts: &DecodeOptions,
    then: &mut dyn FnMut(&mut Frame),
) -> Vec<Frame> {
    let (mut frames, mut specs, mut pos) = (Vec::new(), Specs::new(cat), 0);
    while pos < input.len() {
        let mut frame = decode_frame_at(&mut specs, input, pos, pos, opts);
        then(&mut frame);
        if frames.is_empty() && !frame.bytes.is_empty() {
            // Frames on one connection tend to be alike: reserve for as many as
            // the first one's size suggests (bounded), not by repeated doubling.
            frames.reserve(
                (input.len() / frame.bytes.len())
                    .min(input.len() / 64 + 1)
                    .min(MAX_FRAMES_RESERVED),
            );
        }
        let next = after(&frame, pos);
        frames.push(frame);
        let Some(next) = next else { break };
        pos = next;
    }
    frames
}

/// [`decode_frames`] one frame at a time, each shown to `each` as it is
/// decoded and then dropped: memory stays that of one frame however many the
/// input holds, and values-only decoding reuses one tape for all of them.
pub fn for_each_frame(
    cat: &Catalogue,
    input: &Bytes,
    opts: &DecodeOptions,
    mut each: impl FnMut(&Frame),
) {
    // One frame filled in place for every frame and handed on by reference,
    // never moved (a frame is a few hundred bytes, and small frames come by the million).
    let mut frame = empty_frame(opts, 0);
    let mut specs = Specs::new(cat);
    let mut pos = 0;
    while pos < input.len() {
        refill(&mut frame, opts, pos);
        decode_into(&mut frame, &mut specs, (input, pos), pos, opts);
        each(&frame);
        match after(&frame, pos) {
            Some(next) => pos = next,
            None => break,
        }
    }
}

/// Make a frame that [`for_each_frame`] handed on ready for the next, as
/// [`empty_frame`] would make it, its tape kept for the next to fill. A tape
/// frame's root is only an outline: it is kept, its length reset, since
/// building and dropping a node cost about as much as the rest of a small
/// frame's envelope. (Only a header-only decode names the root, and a size
/// prefix that could not be read gives it a child; after that no frame follows.)
#[inline(always)]
fn refill(frame: &mut Frame, opts: &DecodeOptions, input_offset: usize) {
    if frame.values.is_none() || opts.header_only {
        let tape = frame.values.take();
        *frame = Frame {
            values: tape,
            ..empty_frame(opts, input_offset)
        };
        return;
    }
    (
        frame.kind,
        frame.api_key,
        frame.api_version,
        frame.header_version,
        frame.input_offset,
    ) = (
        FrameKind::Kafka,
        opts.api_key,
        opts.api_version,
        None,
        input_offset,
    );
    frame.root.len = 0;
    frame.error = None;
    frame.warnings.clear();
    frame.record_damage.clear();
    frame.deferred.clear();
    frame.redacted.clear();
    if frame.held.bytes() > 0 {
        frame.held = Held::default();
    }
}

/// Where the frame after `frame` (at `pos`) starts, unless decoding stops here:
/// a size prefix that cannot be trusted, or nothing read.
#[inline]
fn after(frame: &Frame, pos: usize) -> Option<usize> {
    // A declared size below the smallest header (a response's correlation id)
    // is no frame: runs of zeros would otherwise become one empty frame per 4 bytes.
    let declared = || {
        frame
            .bytes
            .first_chunk::<4>()
            .map(|b| i32::from_be_bytes(*b))
    };
    let stop = frame.error.as_ref().is_some_and(|e| {
        e.offset < 4 || declared().is_some_and(|d| d < 4 || d as usize + 4 > frame.bytes.len())
    });
    let used = frame.bytes.len();
    (!stop && used > 0).then_some(pos + used)
}

/// Frames reserved ahead at most by [`decode_frames`].
const MAX_FRAMES_RESERVED: usize = 1 << 16;

/// Decode one frame from the start of `data` (which may hold more frames after it).
pub fn decode_frame(
    cat: &Catalogue,
    data: Bytes,
    input_offset: usize,
    opts: &DecodeOptions,
) -> Frame {
    decode_frame_at(&mut Specs::new(cat), &data, 0, input_offset, opts)
}

/// [`decode_frame`] into `frame`, which an earlier call filled (or `None`
/// the first time): the tape it holds is kept for this frame to fill, so that
/// a reader of frames one by one (`kwire check`) allocates none per frame.
/// A tape grown past `KEEP_SLOTS` by a large frame is dropped, not kept.
pub fn decode_frame_reusing<'f>(
    cat: &Catalogue,
    data: Bytes,
    opts: &DecodeOptions,
    frame: &'f mut Option<Frame>,
) -> &'f mut Frame {
    // A frame whose size prefix could not be read put a node on its root
    // and left the tape unfilled: it is not kept.
    let keep = frame.as_ref().is_some_and(|f| {
        f.root.children.is_empty()
            && f.values
                .as_ref()
                .is_some_and(|v| v.slots.capacity() <= KEEP_SLOTS)
    });
    if !keep {
        *frame = None;
    }
    let frame = match frame {
        Some(f) => {
            refill(f, opts, 0);
            f.direction = opts.direction.unwrap_or(Direction::Request);
            f
        }
        None => frame.insert(empty_frame(opts, 0)),
    };
    decode_into(frame, &mut Specs::new(cat), (&data, 0), 0, opts);
    frame
}

/// Slots of a tape that [`decode_frame_reusing`] keeps for the next frame (12 MiB).
const KEEP_SLOTS: usize = 1 << 18;

/// [`decode_frame`] of the frame at `input[start..]`.
fn decode_frame_at(
    specs: &mut Specs<'_>,
    input: &Bytes,
    start: usize,
    input_offset: usize,
    opts: &DecodeOptions,
) -> Frame {
    // Built here and filled in place: a frame is a few hundred bytes, and
    // small frames come by the million (returning it from the filling function
    // moved it twice).
    let mut frame = empty_frame(opts, input_offset);
    decode_into(&mut frame, specs, (input, start), input_offset, opts);
    frame
}

/// `opts` without records left for drawing, for a frame at `start` of
/// `input` no larger than [`DecodeOptions::leave_in_frames_over`]; `None`
/// when `opts` stand.
fn whole_below(input: &Bytes, start: usize, opts: &DecodeOptions) -> Option<DecodeOptions> {
    if opts.leave_in_frames_over == 0 {
        return None;
    }
    let rest = input.len().saturating_sub(start);
    let size = input
        .get(start..start + 4)
        .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    let len = size.map_or(rest, |s| (s.max(0) as usize).saturating_add(4).min(rest));
    (len <= opts.leave_in_frames_over).then(|| DecodeOptions {
        defer_records_over: None,
        defer_record_arrays: false,
        ..opts.clone()
    })
}

/// [`decode_frame_at`] into `frame` (as [`empty_frame`] made it, or
/// [`refill`] with the tape it holds to fill again); its credentials
/// redacted when [`crate::decode::secrets::hiding`] unless the frame is read
/// for its findings only. Credentials are found in the tree: a values-only
/// frame that may hold one is decoded into its tree too, and keeps its tape
/// with the tree's masked bytes, redactions and marks; an annotated one
/// (whose buffers would hold decompressed credentials) becomes its tree.
#[inline(always)]
fn decode_into(
    frame: &mut Frame,
    specs: &mut Specs<'_>,
    (input, start): (&Bytes, usize),
    input_offset: usize,
    opts: &DecodeOptions,
) {
    let held_whole;
    let opts = match whole_below(input, start, opts) {
        Some(whole) => {
            held_whole = whole;
            &held_whole
        }
        None => opts,
    };
    fill_frame(frame, specs, (input, start), opts);
    // The message is the one just decoded: its lookup is remembered.
    let message = |kind, key, version| {
        specs
            .message(kind, key, version, opts.release.as_deref())
            .map(|(spec, _)| spec)
    };
    if crate::decode::secrets::hiding()
        && !opts.header_only
        && !opts.findings_only
        && (crate::decode::secrets::may_hold(frame, message)
            || crate::decode::secrets::names_metadata_log(opts.topic.as_deref()))
    {
        if frame.values.is_none() {
            if frame.root.deferred_count() > 0 {
                // Credentials are found in nodes, and bytes masked from them:
                // records left for drawing would show theirs. Such a frame (of
                // the metadata log) is decoded with its records whole.
                let whole = DecodeOptions {
                    defer_records_over: None,
                    defer_record_arrays: false,
                    ..opts.clone()
                };
                *frame = empty_frame(&whole, input_offset);
                fill_frame(frame, specs, (input, start), &whole);
            }
            crate::decode::secrets::redact(frame);
            return;
        }
        let tree = DecodeOptions {
            values_only: false,
            annotated_tape: false,
            ..opts.clone()
        };
        if opts.annotated_tape {
            *frame = empty_frame(&tree, input_offset);
            fill_frame(frame, specs, (input, start), &tree);
            crate::decode::secrets::redact(frame);
            return;
        }
        // The tape's spans read the tree's masked bytes.
        let mut found = empty_frame(&tree, input_offset);
        fill_frame(&mut found, specs, (input, start), &tree);
        crate::decode::secrets::redact(&mut found);
        if let Some(values) = frame.values.as_deref_mut() {
            crate::decode::secrets::mark_redacted(&found, values);
        }
        frame.bytes = found.bytes;
        frame.redacted = found.redacted;
    }
}

/// A frame decoded into its tree, decoded again onto a values-only tape for
/// its JSON contract, within a budget of `limits`: from its bytes as they
/// are (masked where it held credentials), never redacted a second time (a
/// masked length would read as another), and only up to where it stopped
/// when its bytes were masked from there on (what the read that failed had
/// read is then gone: the field is null where the first decode may have kept
/// part of it, an array's elements or a tagged section's entries read before
/// the bytes ran out). Its error, redactions and
/// record damage are the tree's (unless records were left unwalked for
/// drawing: then the walk over every batch finds it), and the slots the tree
/// shows as redacted are marked.
pub(crate) fn values_of_tree(
    cat: &Catalogue,
    tree: &Frame,
    release: Option<&str>,
    limits: crate::budget::Limits,
) -> Frame {
    let opts = DecodeOptions {
        direction: Some(tree.direction),
        api_key: tree.api_key,
        api_version: tree.api_version,
        release: release.map(str::to_string),
        budget: crate::budget::Budget::new(limits),
        values_only: true,
        ..Default::default()
    };
    // A frame that may hold a credential and stopped had its bytes masked
    // from where it stopped on: what the read that failed saw is gone.
    let masked_from = tree.error.as_ref().map(|e| e.offset).filter(|&at| {
        tree.bytes.get(at..).is_some_and(|rest| {
            !rest.is_empty() && rest.iter().all(|&b| b == crate::decode::secrets::MASK)
        }) && crate::decode::secrets::may_hold(tree, |kind, key, version| {
            cat.message(kind, key, version, release)
        })
    });
    let read = match masked_from {
        Some(at) => tree.bytes.slice(..at),
        None => tree.bytes.clone(),
    };
    let mut values = empty_frame(&opts, tree.input_offset);
    fill_frame(&mut values, &mut Specs::new(cat), (&read, 0), &opts);
    values.bytes = tree.bytes.clone();
    values.error = tree.error.clone();
    values.redacted = tree.redacted.clone();
    if tree.root.deferred_count() == 0 {
        values.record_damage = tree.record_damage.clone();
    }
    if let Some(tape) = values.values.as_deref_mut() {
        crate::decode::secrets::mark_redacted(tree, tape);
    }
    values
}

/// A frame of the options' direction, nothing decoded yet.
#[inline(always)]
fn empty_frame(opts: &DecodeOptions, input_offset: usize) -> Frame {
    let direction = opts.direction.unwrap_or(Direction::Request);
    Frame {
        direction,
        kind: FrameKind::Kafka,
        api_key: opts.api_key,
        api_version: opts.api_version,
        header_version: None,
        input_offset,
        bytes: Bytes::new(),
        root: Node::new(
            direction_label(direction),
            "message",
            0,
            Region::Frame,
            Role::Structure,
        ),
        values: None,
        error: None,
        warnings: Vec::new(),
        record_damage: Vec::new(),
        redacted: Vec::new(),
        held: Held::default(),
        deferred: Vec::new(),
    }
}

/// Decode the frame at `input[start..]` into `frame` (as [`empty_frame`] made it).
#[inline(always)]
fn fill_frame(
    frame: &mut Frame,
    specs: &mut Specs<'_>,
    (input, start): (&Bytes, usize),
    opts: &DecodeOptions,
) {
    let data = input.get(start..).unwrap_or_default();
    // The size prefix decides how many bytes belong to this frame.
    let mut r = Reader::new(data);
    let size = match r.i32("frame size") {
        Ok(s) => s,
        Err(e) => {
            // No frame: a tape kept from the frame before (`refill`) is not this one's.
            frame.values = None;
            let mut framing = framing_node(None, data.len());
            framing.set_error(e.expected.clone());
            frame.root.children.push(framing);
            frame.root.len = data.len();
            frame.bytes = input.slice(start..);
            frame.error = Some(e);
            return;
        }
    };
    if !opts.onto_tape() {
        // The framing is shown in the annotated views only; the header and the body follow.
        frame.root.children.reserve_exact(3);
        frame.root.children.push(framing_node(Some(size), 4));
    }
    let mut truncated = None;
    let frame_len = if size < 0 {
        frame.error = Some(DecodeError {
            kind: ErrorKind::Invalid,
            offset: 0,
            expected: format!("a frame size >= 0, found {size}"),
        });
        frame.bytes = input.slice(start..start + 4);
        frame.root.len = 4;
        return;
    } else if 4 + size as usize > data.len() {
        truncated = Some(DecodeError {
            kind: ErrorKind::Truncated,
            offset: data.len(),
            expected: format!(
                "{} more bytes: the frame declares {size} after its size field",
                4 + size as usize - data.len()
            ),
        });
        data.len()
    } else {
        4 + size as usize
    };
    let bytes = input.slice(start..start + frame_len);
    if opts.onto_tape() {
        frame
            .values
            .get_or_insert_with(Box::default)
            .reuse_for(frame_len);
    }
    // A values-only decode gives back what its record check held.
    let held_before = (opts.annotated_tape || !opts.values_only).then(|| opts.budget.expanded());
    let body = match frame.direction {
        Direction::Request => decode_request(specs, &bytes, opts, frame),
        Direction::Response => decode_response(specs, &bytes, opts, frame),
    };
    if let Some(held) = held_before
        .map(|before| Held::since(&opts.budget, before))
        .filter(|h| h.bytes() > 0)
    {
        frame.held = held;
    }
    frame.bytes = bytes;
    if let Err(e) = body {
        frame.error = Some(e);
    }
    if truncated.is_some() && frame.error.is_none() {
        frame.error = truncated;
    }
    frame.root.len = frame_len;
}

fn direction_label(d: Direction) -> &'static str {
    match d {
        Direction::Request => "Request",
        Direction::Response => "Response",
    }
}

/// A message's direction, api key and version.
type MessageAt = (MessageKind, i16, i16);

/// The catalogue a stream's frames are decoded with, and the lookups of its
/// last frame, by entry index, so that the next frame of the same API and
/// version skips them (a connection's frames mostly repeat a few messages).
/// The lookups hold for one pin (`--kafka-release`), as a stream has.
struct Specs<'c> {
    cat: &'c Catalogue,
    /// Direction, api key, version; the entry and its header version.
    message: Option<(MessageAt, (usize, i16))>,
    /// Direction and header version; the entry.
    header: Option<((MessageKind, i16), usize)>,
}

impl<'c> Specs<'c> {
    fn new(cat: &'c Catalogue) -> Self {
        Specs {
            cat,
            message: None,
            header: None,
        }
    }

    /// [`Catalogue::message`] and the header version it is framed with.
    #[inline]
    fn message(
        &mut self,
        kind: MessageKind,
        key: i16,
        version: i16,
        pin: Option<&str>,
    ) -> Option<(&'c MessageSpec, i16)> {
        let cat = self.cat;
        let (entry, hv) = match self.message {
            Some((seen, found)) if seen == (kind, key, version) => found,
            _ => {
                let entry = cat.message_index(kind, key, version, pin)?;
                let hv = header_for(kind, cat.entry_spec(entry)?, version).0;
                self.message = Some(((kind, key, version), (entry, hv)));
                (entry, hv)
            }
        };
        Some((cat.entry_spec(entry)?, hv))
    }

    /// [`Catalogue::header`].
    #[inline]
    fn header(&mut self, kind: MessageKind, hv: i16) -> Result<&'c MessageSpec, DecodeError> {
        let cat = self.cat;
        let entry = match self.header {
            Some((seen, entry)) if seen == (kind, hv) => Some(entry),
            _ => cat.header_index(kind, hv),
        };
        self.header = entry.map(|e| ((kind, hv), e));
        entry
            .and_then(|e| cat.entry_spec(e))
            .ok_or_else(|| header_missing(kind, hv))
    }
}

/// A request: its header names its API and version.
#[inline(always)]
fn decode_request(
    specs: &mut Specs<'_>,
    bytes: &Bytes,
    opts: &DecodeOptions,
    frame: &mut Frame,
) -> Result<(), DecodeError> {
    let cat = specs.cat;
    let pin = opts.release.as_deref();
    // Every request header version starts with the api key and version.
    let mut peek = Reader::new(bytes);
    peek.seek(4);
    let key = peek.i16("request api key").ok();
    let ver = peek.i16("request api version").ok();
    let spec = match (key, ver) {
        (Some(k), Some(v)) => specs.message(MessageKind::Request, k, v, pin),
        _ => None,
    };
    frame.api_key = key;
    frame.api_version = ver;
    if opts.api_key.is_some() || opts.api_version.is_some() {
        override_warnings(opts, (key, ver), frame);
    }
    let Some((spec, hv)) = spec else {
        // Unknown API or version: show the header fields every version shares.
        let end = decode_header(cat, bytes, MessageKind::Request, 0, frame, opts)?;
        return Err(unknown_message(
            cat,
            MessageKind::Request,
            key,
            ver,
            pin,
            end,
        ));
    };
    decode_known(
        specs,
        bytes,
        (MessageKind::Request, hv),
        (spec, ver.unwrap_or_default()),
        frame,
        opts,
    )
}

/// A known message's header and body: onto the tape in one decode, or into
/// the tree (the header alone when `header_only`).
#[inline(always)]
fn decode_known(
    specs: &mut Specs<'_>,
    bytes: &Bytes,
    (kind, hv): (MessageKind, i16),
    (spec, v): (&MessageSpec, i16),
    frame: &mut Frame,
    opts: &DecodeOptions,
) -> Result<(), DecodeError> {
    let cat = specs.cat;
    if frame.values.is_some() && !opts.header_only {
        return onto_tape(specs, bytes, (kind, hv), Some((spec, v)), frame, opts).map(drop);
    }
    let end = decode_header(cat, bytes, kind, hv, frame, opts)?;
    if opts.header_only {
        return header_only_done(spec, v, frame);
    }
    decode_body(cat, bytes, spec, v, end, frame, opts)
}

/// `--api` or `--version` given for a request whose header says otherwise.
#[cold]
#[inline(never)]
fn override_warnings(
    opts: &DecodeOptions,
    (key, ver): (Option<i16>, Option<i16>),
    frame: &mut Frame,
) {
    if let (Some(k), Some(v)) = (opts.api_key, key) {
        if k != v {
            frame.warnings.push(Warning::new(
                WarningKind::Override,
                Some(4),
                format!("--api {k} given, but the header says api key {v}"),
            ));
        }
    }
    if let (Some(want), Some(got)) = (opts.api_version, ver) {
        if want != got {
            frame.warnings.push(Warning::new(
                WarningKind::Override,
                Some(6),
                format!("--version {want} given, but the header says version {got}"),
            ));
        }
    }
}

/// A response: its API and version come from the options (its request).
#[inline(never)]
fn decode_response(
    specs: &mut Specs<'_>,
    bytes: &Bytes,
    opts: &DecodeOptions,
    frame: &mut Frame,
) -> Result<(), DecodeError> {
    let cat = specs.cat;
    let pin = opts.release.as_deref();
    let (Some(k), Some(v)) = (opts.api_key, opts.api_version) else {
        decode_header(cat, bytes, MessageKind::Response, 0, frame, opts)?;
        return Err(DecodeError {
            kind: ErrorKind::Invalid, offset: 8,
            expected: "the API and version of this response (--api NAME --version N): a response does not name them".into(),
        });
    };
    let Some((spec, hv)) = specs.message(MessageKind::Response, k, v, pin) else {
        decode_header(cat, bytes, MessageKind::Response, 0, frame, opts)?;
        return Err(unknown_message(
            cat,
            MessageKind::Response,
            Some(k),
            Some(v),
            pin,
            8,
        ));
    };
    let snapshot = (k == API_VERSIONS_KEY && v > 0).then(|| frame.root.clone());
    let res = decode_known(
        specs,
        bytes,
        (MessageKind::Response, hv),
        (spec, v),
        frame,
        opts,
    );
    if res.is_err() && k == API_VERSIONS_KEY && v > 0 && !opts.header_only {
        if let (Some(v0), Some(snapshot)) =
            (cat.message(MessageKind::Response, k, 0, pin), snapshot)
        {
            if retried_as_v0(cat, bytes, (v0, v), snapshot, frame, opts) {
                return Ok(());
            }
        }
    }
    res
}

/// A broker that does not support the requested ApiVersions version answers
/// with a v0 body: `frame` decoded so, when its v`v` body did not parse.
#[cold]
#[inline(never)]
fn retried_as_v0(
    cat: &Catalogue,
    bytes: &Bytes,
    (v0, v): (&MessageSpec, i16),
    snapshot: Node,
    frame: &mut Frame,
    opts: &DecodeOptions,
) -> bool {
    let mut retry = frame.clone();
    retry.root = snapshot;
    retry.values = retry.values.map(|_| Box::default());
    retry.warnings.clear();
    if decode_known(
        &mut Specs::new(cat),
        bytes,
        (MessageKind::Response, 0),
        (v0, 0),
        &mut retry,
        opts,
    )
    .is_err()
    {
        return false;
    }
    retry.api_version = Some(0);
    retry.warnings.push(Warning::new(
        WarningKind::ApiVersionsV0,
        None,
        format!("decoded as ApiVersions v0: the v{v} body did not parse; brokers answer an unsupported version with a v0 body"),
    ));
    *frame = retry;
    true
}

/// Identify the message without decoding its body.
fn header_only_done(
    spec: &MessageSpec,
    version: i16,
    frame: &mut Frame,
) -> Result<(), DecodeError> {
    frame.root.name = spec.shared_name.get(&spec.name).into();
    frame.root.set_note(Note::version(version));
    frame.api_key = spec.api_key;
    frame.api_version = Some(version);
    Ok(())
}

fn unknown_message(
    cat: &Catalogue,
    kind: MessageKind,
    key: Option<i16>,
    ver: Option<i16>,
    pin: Option<&str>,
    offset: usize,
) -> DecodeError {
    let expected = match (key, ver) {
        (Some(k), Some(v)) => {
            match cat.api_name(k) {
                None => format!("a known API key, found {k}"),
                Some(name) => {
                    let versions = cat.versions(kind, k, pin);
                    if versions.is_empty() {
                        format!("a decodable version of {name}: the API is retired (no versions defined)")
                    } else {
                        format!(
                            "a version of {name} {} in {}, found {v}",
                            kind.as_str(),
                            compress_versions(&versions)
                        )
                    }
                }
            }
        }
        _ => "a request header (api key and version)".into(),
    };
    DecodeError {
        kind: ErrorKind::UnknownMessage,
        offset,
        expected,
    }
}

/// `[0,1,2,5,6]` → `0-2, 5-6`.
pub fn compress_versions(v: &[i16]) -> String {
    let runs = v.chunk_by(|a, b| a.checked_add(1) == Some(*b));
    runs.map(|r| match r {
        [first, .., last] => format!("{first}-{last}"),
        _ => r.iter().map(i16::to_string).collect(),
    })
    .collect::<Vec<_>>()
    .join(", ")
}

#[cold]
fn header_missing(kind: MessageKind, hv: i16) -> DecodeError {
    let name = if kind == MessageKind::Request {
        "RequestHeader"
    } else {
        "ResponseHeader"
    };
    DecodeError {
        kind: ErrorKind::UnknownMessage,
        offset: 4,
        expected: format!("{name} v{hv} in the catalogue"),
    }
}

/// The header at offset 4 and, given a `body` and when the header decoded
/// whole, the body after it, onto the frame's tape in one decode. Returns
/// where decoding ended.
fn onto_tape(
    specs: &mut Specs<'_>,
    bytes: &Bytes,
    (kind, hv): (MessageKind, i16),
    body: Option<(&MessageSpec, i16)>,
    frame: &mut Frame,
    opts: &DecodeOptions,
) -> Result<usize, DecodeError> {
    let cat = specs.cat;
    let header = specs.header(kind, hv)?;
    frame.header_version = Some(hv);
    let Some(values) = frame.values.as_deref_mut() else {
        return Ok(4);
    };
    // The plans kept with their specs (every defined version) are borrowed; others are made.
    let (mut made_head, mut made_body) = (None, None);
    let head_plan = match header.kept_plan(hv) {
        Some(plan) => plan,
        None => &**made_head.insert(header.plan(hv)),
    };
    let body_plan = match body {
        Some((spec, version)) => Some(match spec.kept_plan(version) {
            Some(plan) => plan,
            None => &**made_body.insert(spec.plan(version)),
        }),
        None => None,
    };
    let (end, res) = values::decode_header_and_body(
        bytes,
        4,
        (head_plan, body_plan),
        values,
        (opts.annotated_tape || opts.findings_only)
            .then(|| opts.defer_records_over.unwrap_or(usize::MAX)),
        &opts.budget,
    );
    if opts.findings_only {
        let body = body.filter(|_| values.body.is_some());
        let (w, d, deferred) = findings_on_tape(
            cat,
            bytes,
            values,
            (header, hv),
            body,
            frame.direction,
            opts,
        );
        frame.warnings.extend(w);
        frame.record_damage.extend(d);
        frame.deferred = deferred;
    }
    let Some(values) = frame.values.as_deref_mut() else {
        return res.map(|_| end);
    };
    let Some((spec, version)) = body.filter(|_| values.body.is_some()) else {
        return res.map(|_| end);
    };
    frame.api_key = spec.api_key;
    frame.api_version = Some(version);
    if !values.record_damage.is_empty() {
        frame.record_damage.append(&mut values.record_damage);
    }
    res?;
    match end < bytes.len() {
        true => Err(trailing_bytes(bytes.len() - end, end, spec, version)),
        false => Ok(end),
    }
}

/// The warnings and record damage of a frame's header and body on an
/// annotated tape, read from its slots without building nodes
/// ([`DecodeOptions::findings_only`]): what the tree's decoders would find.
fn findings_on_tape(
    cat: &Catalogue,
    bytes: &Bytes,
    tape: &super::tape::Values,
    (header, hv): (&MessageSpec, i16),
    body: Option<(&MessageSpec, i16)>,
    direction: Direction,
    opts: &DecodeOptions,
) -> (
    Vec<Warning>,
    Vec<DecodeError>,
    Vec<super::tree::DeferredRecords>,
) {
    let (mut warnings, mut damage) = (Vec::new(), Vec::new());
    let len = bytes.len();
    if let Some(slot) = tape.header {
        let mut d = FieldDecoder::over(
            cat,
            bytes,
            (4, len),
            header,
            hv,
            Region::RpcHeader,
            Context::default(),
        )
        .named(Naming::Header);
        d.check_struct(tape, slot, &header.fields);
        warnings.append(&mut d.warnings);
    }
    if let (Some((spec, version)), Some(slot)) = (body, tape.body) {
        let region = match direction {
            Direction::Request => Region::RequestBody,
            Direction::Response => Region::ResponseBody,
        };
        let start = tape.slots.get(slot as usize).map_or(len, |s| s.at as usize);
        let mut d = FieldDecoder::over(
            cat,
            bytes,
            (start.min(len), len),
            spec,
            version,
            region,
            opts.context(),
        );
        d.check_struct(tape, slot, &spec.fields);
        warnings.append(&mut d.warnings);
        damage.append(&mut d.record_damage);
        return (warnings, damage, d.deferred);
    }
    (warnings, damage, Vec::new())
}

/// Decode the header at offset 4; returns where the body starts.
fn decode_header(
    cat: &Catalogue,
    bytes: &Bytes,
    kind: MessageKind,
    hv: i16,
    frame: &mut Frame,
    opts: &DecodeOptions,
) -> Result<usize, DecodeError> {
    let name = if kind == MessageKind::Request {
        "RequestHeader"
    } else {
        "ResponseHeader"
    };
    if frame.values.is_some() {
        return onto_tape(&mut Specs::new(cat), bytes, (kind, hv), None, frame, opts);
    }
    let spec = cat
        .header(kind, hv)
        .ok_or_else(|| header_missing(kind, hv))?;
    frame.header_version = Some(hv);
    let doc = if kind == MessageKind::Request {
        "common request header"
    } else {
        "common response header"
    };
    let node = push_with(&mut frame.root.children, || {
        let mut n = Node::new(name, "", 4, Region::RpcHeader, Role::Structure);
        n.kind = Kind::Header;
        n.set_note(Note::version(hv));
        n.doc = Some(doc.into());
        n
    });
    let mut d = FieldDecoder::over(
        cat,
        bytes,
        (4, bytes.len()),
        spec,
        hv,
        Region::RpcHeader,
        Context::default(),
    )
    .named(Naming::Header);
    // Room for a header's few fields, not for the whole frame's (the tape grows if a header needs more).
    let res = d.decode_struct(
        (bytes.len() - 4).min(HEADER_ROOM),
        &spec.plan(hv),
        &spec.fields,
        &mut node.children,
    );
    let end = d.r.pos();
    node.len = end.max(node.children.last().map_or(4, |c| c.end())) - 4;
    frame.warnings.append(&mut d.warnings);
    res.map(|_| end)
}

fn decode_body(
    cat: &Catalogue,
    bytes: &Bytes,
    spec: &MessageSpec,
    version: i16,
    start: usize,
    frame: &mut Frame,
    opts: &DecodeOptions,
) -> Result<(), DecodeError> {
    let region = match frame.direction {
        Direction::Request => Region::RequestBody,
        Direction::Response => Region::ResponseBody,
    };
    frame.api_key = spec.api_key;
    frame.api_version = Some(version);
    frame.root.name = spec.shared_name.get(&spec.name).into();
    frame.root.set_note(Note::version(version));
    let node = push_with(&mut frame.root.children, || {
        let mut n = Node::new(
            spec.shared_name.get(&spec.name),
            "struct",
            start,
            region,
            Role::Structure,
        );
        n.kind = Kind::Body;
        n.doc = Some(body_doc(version));
        n
    });
    let mut d = FieldDecoder::over(
        cat,
        bytes,
        (start, bytes.len()),
        spec,
        version,
        region,
        opts.context(),
    );
    let mut res = d.decode_struct(
        bytes.len() - start,
        &spec.plan(version),
        &spec.fields,
        &mut node.children,
    );
    let end = d.r.pos();
    if opts.defer_records_over.is_some() {
        // Records left for drawing count their places from the frame's lists.
        let bases = (frame.warnings.len(), frame.record_damage.len());
        super::tree::shift_deferred(node, bases);
    }
    frame.warnings.append(&mut d.warnings);
    frame.record_damage.append(&mut d.record_damage);
    if res.is_ok() && end < bytes.len() {
        let mut t = leaf(
            "trailing_bytes",
            crate::decode::Wire::Bytes,
            end,
            bytes.len() - end,
            Value::Bytes(Some(bytes.slice(end..))),
            region,
        );
        t.set_error("bytes left over after the body");
        node.children.push(t);
        res = Err(trailing_bytes(bytes.len() - end, end, spec, version));
    }
    node.len = bytes
        .len()
        .min(end.max(node.children.last().map_or(start, |c| c.end())))
        - start;
    res
}

/// Bytes of a header whose slots its tape starts with room for.
const HEADER_ROOM: usize = 256;

fn trailing_bytes(count: usize, offset: usize, spec: &MessageSpec, version: i16) -> DecodeError {
    DecodeError {
        kind: ErrorKind::TrailingBytes,
        offset,
        expected: format!(
            "the end of the frame: {count} bytes follow the {} v{version} body",
            spec.name
        ),
    }
}
