//! The records of a capture as a consumer would list them: every record of
//! every Produce request and Fetch or ShareFetch response, with where it
//! came from (frame, time, connection, direction), its topic and partition,
//! offset, timestamp, key, value and headers; and every place the record
//! data is damaged, so that none is passed over in silence.
//!
//! Frames are decoded onto their annotated tapes (`decode::decode_frame`
//! with `findings_only`: record batches decompressed within the input's
//! budget, the record damage a tree would show, no tree built); the topic
//! and partition of a records field come from the fields around it, picked
//! by their specs (a field slot's declaration index gives its spec: a topic
//! name or id by [`topic_field`], a partition index by
//! [`is_partition_index`]), and the records from the batch slots by
//! `crate::decode::records::each`. Topics named by id only (Fetch v13 and
//! later, ShareFetch, Produce v13) take the name the capture tied to the id
//! before (a Metadata response), learnt by the exchanges' own reading
//! ([`super::exchange::Names::id_name`]). An internal topic's keys and
//! values (and a control batch's) are decoded through their schemas onto
//! tapes of their own ([`StructValues`]), credentials masked there.
//!
//! Memory: one frame's tape at a time (dropped before the next frame, which
//! gives its share of the budget back), each record's row handed on as it
//! is read, and what [`super::Exchanges`] keeps. The explorer's records
//! pane ([`for_each_records_item`]) reads a frame's tree instead: it
//! selects records' nodes.

use super::exchange::{
    topic_field, Exchange, Exchanges, Needs, Observer, Outcome, Reading, Topic, TopicField,
};
use crate::budget::Budget;
use crate::capture::{for_each_captured, CaptureOptions, Captured, CapturedFrame};
use crate::decode::fields::TopicIds;
use crate::decode::payload::StructValues;
use crate::decode::records::deferred::{join_found, read_deferred, Hold};
use crate::decode::records::each::{for_each_record_on, BatchHeader, PayloadAt, RecordParts};
use crate::decode::records::payload::{key_value_layout, Embedded, KeyValue, PayloadKind};
use crate::decode::tape::{Id, Slot, Val};
use crate::decode::{
    decode_frame, DecodeError, DecodeOptions, DeferredRecords, Direction, Frame, Kind, Node,
    RecordPart, Role, Value,
};
use crate::schema::model::{FieldSpec, FieldType, Primitive};
use crate::schema::{Catalogue, MessageKind};
use bytes::Bytes;

/// The APIs whose messages carry records this view lists: Produce requests,
/// Fetch and ShareFetch responses.
pub(crate) const PRODUCE: i16 = 0;
pub const FETCH: i16 = 1;
pub(crate) const SHARE_FETCH: i16 = 78;

/// Which records to list; every criterion given must hold.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// The topic's name, or its id (hyphenated or Kafka's base64) when the
    /// capture never named it.
    pub topic: Option<String>,
    pub partition: Option<i32>,
    /// Bytes that the key, the value, or a header's key or value holds.
    pub grep: Option<Vec<u8>>,
    /// A display filter of records ([`super::filter::Filter::records_only`]).
    pub filter: Option<super::filter::Filter>,
}

impl Selection {
    pub fn is_empty(&self) -> bool {
        self.topic.is_none()
            && self.partition.is_none()
            && self.grep.is_none()
            && self.filter.is_none()
    }

    /// Whether records of this topic and partition may be selected.
    fn place(&self, topic: Option<&Topic>, partition: Option<i32>) -> bool {
        self.topic
            .as_deref()
            .is_none_or(|t| topic.is_some_and(|x| x.is(t)))
            && self.partition.is_none_or(|p| partition == Some(p))
    }

    fn record(&self, r: &RecordRow) -> bool {
        if let Some(f) = &self.filter {
            fn bytes(d: &Data) -> Option<&[u8]> {
                d.bytes.as_deref()
            }
            let parts = crate::decode::records::each::RecordParts {
                offset: Some(r.offset),
                timestamp: r.timestamp,
                key: bytes(&r.key),
                value: bytes(&r.value),
                headers: r
                    .headers
                    .iter()
                    .map(|h| (bytes(&h.key), bytes(&h.value)))
                    .collect(),
                ..Default::default()
            };
            let subject = super::filter::RecordSubject {
                api: r.origin.api_key,
                conn: r.origin.conn,
                frame: r.origin.frame,
                side: match r.origin.direction {
                    Direction::Request => super::filter::Side::Request,
                    Direction::Response => super::filter::Side::Response,
                },
                topic: r.topic.as_ref(),
                parts: &parts,
            };
            if !f.selects_record(&subject) {
                return false;
            }
        }
        let Some(needle) = self.grep.as_deref() else {
            return true;
        };
        let holds = |b: &Option<Bytes>| b.as_deref().is_some_and(|b| contains(b, needle));
        holds(&r.key.bytes)
            || holds(&r.value.bytes)
            || r.headers
                .iter()
                .any(|h| holds(&h.key.bytes) || holds(&h.value.bytes))
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(hay, needle).is_some()
}

/// Where a frame came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Origin {
    /// The frame's number, as `capture --list` shows it.
    pub frame: usize,
    /// The time of the packet that completed the frame, epoch seconds.
    pub time: f64,
    pub conn: usize,
    pub direction: Direction,
    pub api_key: i16,
}

/// A key, a value, or a header's key or value.
#[derive(Clone, Debug, Default)]
pub struct Data {
    /// `None` for null.
    pub bytes: Option<Bytes>,
    /// In Schema Registry framing: the schema id and the payload after it.
    pub schema: Option<(i32, Bytes)>,
    /// Decoded through a schema (internal topics, control records).
    pub decoded: Option<Decoded>,
}

/// What a key or value decoded to through its topic's schemas;
/// `render::records_table` shows their values as the JSON contract has them.
#[derive(Clone, Debug)]
pub enum Decoded {
    /// Read through a schema: its values, which name it (`"OffsetCommitKey v0"`).
    Struct(Box<StructValues>),
    /// No struct: the prefixes read (a control record's version and type), by name.
    Prefixes(Vec<(&'static str, i64)>),
}

/// A header's key and value.
#[derive(Clone, Debug)]
pub struct Header {
    pub key: Data,
    pub value: Data,
}

/// One record.
#[derive(Clone, Debug)]
pub struct RecordRow {
    pub origin: Origin,
    /// `None` when no field around the records names one.
    pub topic: Option<Topic>,
    pub partition: Option<i32>,
    /// The record's offset: in a fetched batch the broker's; in a produced
    /// one the broker's when its Produce response is in the capture
    /// (BaseOffset plus the record's place in its partition's records),
    /// else relative to its batch (`offset_assigned` false).
    pub offset: i64,
    /// Whether `offset` is the broker's (see `offset`).
    pub offset_assigned: bool,
    /// The record's place among its records field's records, from 0.
    pub position: usize,
    /// Milliseconds since the epoch (`None` for magic 0 messages).
    pub timestamp: Option<i64>,
    /// From a control batch.
    pub control: bool,
    pub key: Data,
    pub value: Data,
    pub headers: Vec<Header>,
    /// Its RecordBatch v2's header and its offset delta in it (`None` for legacy messages).
    pub batch: Option<BatchHeader>,
    pub offset_delta: Option<i64>,
}

/// What is wrong in a frame that carries records.
#[derive(Clone, Debug, PartialEq)]
pub struct DamageRow {
    pub origin: Origin,
    /// The records field it is in, when it is in one.
    pub topic: Option<Topic>,
    pub partition: Option<i32>,
    /// Record data: a checksum, a length, a count, a codec, data that does
    /// not decompress or passes a budget (offsets index the frame, or the
    /// decompressed data when the text says `d:`); or, for `frame`, the
    /// message itself did not decode there.
    pub error: DecodeError,
    pub frame: bool,
}

/// One line of the listing.
#[derive(Clone, Copy, Debug)]
pub enum Item<'a> {
    Record(&'a RecordRow),
    Damage(&'a DamageRow),
}

/// What a listing found besides what it handed on.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// The capture, its skip notes and the frames read for topic names that did not decode.
    pub reading: Reading,
    /// Produce requests and Fetch and ShareFetch responses decoded.
    pub frames: usize,
    pub records: usize,
    pub records_shown: usize,
    /// Places where record data is damaged, and those shown (the others are
    /// outside the topic and partition selected).
    pub damage: usize,
    pub damage_shown: usize,
    /// Frames carrying records that did not decode completely (always shown).
    pub malformed: usize,
    /// Responses whose request is not in the capture (not read: their API is not known).
    pub unmatched_responses: usize,
}

/// How a capture is read for its records.
#[derive(Clone, Debug, Default)]
pub struct Options {
    pub capture: CaptureOptions,
    /// Pin one release's definitions.
    pub release: Option<String>,
    /// The input's budget for decompression and the nodes made from it.
    pub budget: Budget,
    pub selection: Selection,
}

/// Counts the responses whose request is not in the capture: their API is
/// not known, so they are not read for records.
struct Unmatched(usize);

impl Observer for Unmatched {
    type Mark = ();
    fn request(&mut self, _: &Exchange<'_>) {}
    fn complete(&mut self, ex: &Exchange<'_>, _: Option<()>) {
        if ex.outcome == Outcome::Unmatched {
            self.0 += 1;
        }
    }
}

/// Read a capture and hand every selected record and every damaged place on
/// to `each`, in the order the frames complete; `each` returns false to stop.
pub fn read_capture_records<R: std::io::Read>(
    cat: &Catalogue,
    input: R,
    opts: &Options,
    mut each: impl FnMut(Item<'_>) -> bool,
) -> Result<Summary, String> {
    let mut exchanges: Exchanges<'_, ()> = Exchanges::new(
        cat,
        opts.release.as_deref(),
        Needs {
            topics: true,
            ..Needs::default()
        },
    );
    let mut summary = Summary::default();
    let (mut skips, mut skipped_bytes) = (0, 0);
    let mut stopped = false;
    let mut unmatched = Unmatched(0);
    let mut produced = Produced::default();
    let capture = for_each_captured(cat, input, &opts.capture, |c| {
        let f = match c {
            Captured::Frame(f) => f,
            Captured::Skipped(s) => {
                exchanges.saw(s.timestamp);
                skips += 1;
                skipped_bytes += s.bytes;
                return true;
            }
            Captured::Tls(n) => {
                // Counted in the capture's stats; said on stderr.
                exchanges.saw(n.timestamp);
                return true;
            }
            Captured::Conn(e) => {
                exchanges.conn_event(&e);
                return true;
            }
        };
        // Names first: the frame's own topic ids may be named in it.
        exchanges.push(&f, &mut unmatched);
        let names = exchanges.names();
        if let Some(answered) = produced.answered(cat, opts, &f, &|id| names.id_name(id)) {
            if !answered.iter().all(|item| each(item.as_item())) {
                stopped = true;
                return false;
            }
            return true;
        }
        if !carries_records(f.direction, f.api_key) {
            return true;
        }
        let mut frame = decode(cat, opts, &f);
        summary.frames += 1;
        // A Produce request's records wait for its response's offsets.
        let hold = produced.holds(&f);
        let mut items = Vec::new();
        let go = frame_items(
            cat,
            opts,
            &f,
            &mut frame,
            exchanges.names(),
            &mut summary,
            &mut |item| match hold {
                true => {
                    items.push(OwnedItem::of(item));
                    true
                }
                false => each(item),
            },
        );
        let go = match hold {
            true => produced
                .hold(&f, items)
                .iter()
                .all(|item| each(item.as_item())),
            false => go,
        };
        stopped = !go;
        go
    })?;
    if !stopped {
        for item in produced.rest() {
            if !each(item.as_item()) {
                break;
            }
        }
        exchanges.finish(&mut unmatched);
    }
    summary.unmatched_responses = unmatched.0;
    summary.reading = Reading {
        capture,
        undecoded: exchanges.undecoded(),
        first_undecoded: exchanges.first_undecoded(),
        skips,
        skipped_bytes,
    };
    Ok(summary)
}

/// Produce requests' rows awaiting their responses, to give each produced
/// record the offset the broker assigned. At most [`HELD_PRODUCE_REQUESTS`]
/// wait; the oldest then goes on with its batches' own offsets, as do those
/// never answered (acks=0, a capture that ends first).
#[derive(Default)]
struct Produced {
    waiting: Vec<((usize, i32), Vec<OwnedItem>)>,
    facts: super::diagnosis::facts::FactReader,
}

/// Produce requests held at once for their responses; their rows hold
/// slices of their frames, so this bounds the frames kept.
const HELD_PRODUCE_REQUESTS: usize = 64;

/// A row kept past its frame's turn.
enum OwnedItem {
    Record(Box<RecordRow>),
    Damage(DamageRow),
}

impl OwnedItem {
    fn of(item: Item<'_>) -> Self {
        match item {
            Item::Record(r) => OwnedItem::Record(Box::new(r.clone())),
            Item::Damage(d) => OwnedItem::Damage(d.clone()),
        }
    }

    fn as_item(&self) -> Item<'_> {
        match self {
            OwnedItem::Record(r) => Item::Record(r),
            OwnedItem::Damage(d) => Item::Damage(d),
        }
    }
}

impl Produced {
    /// Whether `f`'s rows wait for its response: a Produce request with a
    /// correlation id (acks=0 requests are answered by nothing, and go on
    /// when the capture ends or others push them out).
    fn holds(&self, f: &CapturedFrame) -> bool {
        f.direction == Direction::Request
            && f.api_key == Some(PRODUCE)
            && f.correlation_id.is_some()
    }

    /// Holds a request's rows; what has waited longest when over the bound.
    fn hold(&mut self, f: &CapturedFrame, items: Vec<OwnedItem>) -> Vec<OwnedItem> {
        let Some(corr) = f.correlation_id else {
            return items;
        };
        self.waiting.push(((f.conn, corr), items));
        if self.waiting.len() > HELD_PRODUCE_REQUESTS {
            return self.waiting.remove(0).1;
        }
        Vec::new()
    }

    /// For a Produce response whose request waits: the request's rows, each
    /// record with the offset its partition's BaseOffset gives it when the
    /// partition has no error.
    fn answered(
        &mut self,
        cat: &Catalogue,
        opts: &Options,
        f: &CapturedFrame,
        name_of: &NameOf<'_>,
    ) -> Option<Vec<OwnedItem>> {
        if f.direction != Direction::Response || f.api_key != Some(PRODUCE) {
            return None;
        }
        let key = (f.conn, f.correlation_id?);
        let at = self.waiting.iter().position(|(k, _)| *k == key)?;
        let (_, mut items) = self.waiting.remove(at);
        let offsets = ProducedOffsets::read(&mut self.facts, cat, opts.release.as_deref(), f);
        for item in &mut items {
            if let OwnedItem::Record(r) = item {
                let place = (r.topic.as_ref(), r.partition);
                if let Some(offset) = offsets.offset(place, r.position, name_of) {
                    r.offset = offset;
                    r.offset_assigned = true;
                }
            }
        }
        Some(items)
    }

    /// What still waits when the capture ends, oldest first.
    fn rest(&mut self) -> Vec<OwnedItem> {
        std::mem::take(&mut self.waiting)
            .into_iter()
            .flat_map(|(_, items)| items)
            .collect()
    }
}

/// What a Produce response says of where the broker put each partition's
/// records: its BaseOffset, when the partition has no error.
#[derive(Default)]
pub struct ProducedOffsets {
    partitions: Vec<super::diagnosis::facts::PartitionFacts>,
}

impl ProducedOffsets {
    /// The partitions of Produce response `f` (a frame whose request named
    /// its API and version); none when it does not decode.
    pub fn read(
        reader: &mut super::diagnosis::facts::FactReader,
        cat: &Catalogue,
        release: Option<&str>,
        f: &CapturedFrame,
    ) -> Self {
        let facts = f.api_version.and_then(|version| {
            let kind = crate::schema::MessageKind::Response;
            reader.read(cat, release, f, kind, (PRODUCE, version))
        });
        ProducedOffsets {
            partitions: facts.map(|f| f.partitions).unwrap_or_default(),
        }
    }

    /// The broker's offset of the record at `position` among its
    /// partition's records in the request; `None` when the response does
    /// not place that partition (an error, a base offset of -1, no answer).
    pub fn offset(
        &self,
        (topic, partition): (Option<&Topic>, Option<i32>),
        position: usize,
        name_of: &NameOf<'_>,
    ) -> Option<i64> {
        let (topic, partition) = (topic?, partition?);
        let base = self.partitions.iter().find_map(|p| {
            let same = p.partition == partition && same_topic(p.topic.as_ref()?, topic, name_of);
            (same && p.error == 0).then_some(p.base_offset?)
        })?;
        (base >= 0).then(|| base.saturating_add(position as i64))
    }
}

/// Whether a response's topic is the request's (a request's topic id may
/// have been given its name).
fn same_topic(
    response: &super::diagnosis::facts::TopicKey,
    request: &Topic,
    name_of: &NameOf<'_>,
) -> bool {
    use super::diagnosis::facts::TopicKey;
    match (response, request) {
        (TopicKey::Name(a), Topic::Name(b)) => **a == **b,
        (TopicKey::Id(a), Topic::Id(b)) => a == b,
        (TopicKey::Id(a), Topic::Name(b)) => name_of(a) == Some(&**b),
        (TopicKey::Name(_), Topic::Id(_)) => false,
    }
}

/// Whether a frame is one this view decodes for its records.
pub(crate) fn carries_records(direction: Direction, api_key: Option<i16>) -> bool {
    match (direction, api_key) {
        (Direction::Request, Some(k)) => k == PRODUCE,
        (Direction::Response, Some(k)) => k == FETCH || k == SHARE_FETCH,
        _ => false,
    }
}

/// The frame decoded as `capture` decodes it (a request by its header, a
/// response as the API and version of its request), onto its annotated tape
/// with the record damage its tree would show, and no tree: the records are
/// read from the tape. Credentials are not looked for in the frame: a
/// records table shows only records, whose keys and values are masked where
/// their schemas say they hold one ([`StructValues::read`]).
fn decode(cat: &Catalogue, opts: &Options, f: &CapturedFrame) -> Frame {
    let response = f.direction == Direction::Response;
    let o = DecodeOptions {
        direction: Some(f.direction),
        api_key: f.api_key.filter(|_| response),
        api_version: f.api_version.filter(|_| response),
        release: opts.release.clone(),
        budget: opts.budget.clone(),
        findings_only: true,
        // A records field over this is left off the tape: its rows are read,
        // and it is checked, a batch at a time.
        defer_records_over: Some(crate::decode::frame::DEFER_RECORDS_OVER),
        ..Default::default()
    };
    decode_frame(cat, f.bytes.clone(), 0, &o)
}

/// The rows of one decoded frame: its records, then its damage.
fn frame_items(
    cat: &Catalogue,
    opts: &Options,
    f: &CapturedFrame,
    frame: &mut Frame,
    names: &super::Names,
    summary: &mut Summary,
    each: &mut impl FnMut(Item<'_>) -> bool,
) -> bool {
    let origin = Origin {
        frame: f.index,
        time: f.timestamp,
        conn: f.conn,
        direction: f.direction,
        api_key: f.api_key.unwrap_or_default(),
    };
    let name_of = |id: &[u8; 16]| names.id_name(id);
    let fields = records_fields_on_tape(cat, opts.release.as_deref(), frame, &name_of);
    let Some(tape) = frame.values.as_deref() else {
        return true;
    };
    // What the walks of fields left off the tape found, joined to the frame's after.
    let mut found = Vec::new();
    for rf in &fields {
        let shown = opts.selection.place(rf.topic.as_ref(), rf.partition);
        // Rows go on as they are read (a frame may hold 400,000 records);
        // once `each` says stop, or for a place not selected, they are counted only.
        let (mut listed_here, mut go) = (0, true);
        let mut take = |reading: &FieldRows<'_>, r: &RecordParts<'_>| {
            if !listed(r) {
                return;
            }
            let position = listed_here;
            listed_here += 1;
            if go && shown {
                let row = reading.row(&origin, r, position);
                if opts.selection.record(&row) {
                    summary.records_shown += 1;
                    go = each(Item::Record(&row));
                }
            }
        };
        match rf.deferred.and_then(|k| frame.deferred.get(k)) {
            None => {
                let children = (rf.slot + 1, tape.slots[rf.slot as usize].end);
                let reading = FieldRows {
                    cat,
                    frame,
                    tape,
                    field: rf,
                };
                for_each_record_on(tape, children, &frame.bytes, &mut |r| {
                    take(&reading, r);
                    true
                });
            }
            // Checked and read in one walk, a batch at a time.
            Some(d) => {
                let walked = read_deferred(
                    cat,
                    &frame.bytes,
                    d,
                    (&opts.budget, Hold::ByItem),
                    |item, root| {
                        let reading = FieldRows {
                            cat,
                            frame,
                            tape: item,
                            field: rf,
                        };
                        let children = (root + 1, item.slots[root as usize].end);
                        for_each_record_on(item, children, &frame.bytes, &mut |r| {
                            take(&reading, r);
                            true
                        });
                    },
                );
                found.push((d.clone(), walked));
            }
        }
        summary.records += listed_here;
        if !go {
            return false;
        }
    }
    frame.deferred.clear();
    join_found(frame, found);
    let mut damage: Vec<DamageRow> = frame
        .record_damage
        .iter()
        .map(|e| {
            let within = fields
                .iter()
                .find(|rf| (rf.range.0..rf.range.1).contains(&e.offset));
            DamageRow {
                origin: origin.clone(),
                topic: within.and_then(|w| w.topic.clone()),
                partition: within.and_then(|w| w.partition),
                error: e.clone(),
                frame: false,
            }
        })
        .collect();
    if let Some(e) = &frame.error {
        damage.push(DamageRow {
            origin: origin.clone(),
            topic: None,
            partition: None,
            error: e.clone(),
            frame: true,
        });
    }
    for d in &damage {
        if d.frame {
            summary.malformed += 1;
        } else {
            summary.damage += 1;
        }
        // Damage outside the topic and partition selected is counted, not shown.
        let shown = d.frame || opts.selection.place(d.topic.as_ref(), d.partition);
        if shown {
            summary.damage_shown += usize::from(!d.frame);
            if !each(Item::Damage(d)) {
                return false;
            }
        }
    }
    true
}

/// What [`for_each_records_item`] hands each item to: its topic, partition,
/// path from the frame's root and node.
pub(crate) type EachItem<'f> = dyn FnMut(Option<&Topic>, Option<i32>, &[usize], &Node) + 'f;

/// Every record of a decoded frame (all its records fields), with the topic
/// and partition the fields around it name (a topic id named by the name
/// `topic_ids` ties to it), a top-level batch or message at a time, for a frame
/// whose big records fields are held as stubs
/// (`decode::records::deferred::stub_items`): `each` gets every item with
/// the topic and partition around it and its path from the frame's root; a
/// stub is handed over as `open` walks it, and dropped after (`open` giving
/// nothing hands over nothing).
/// A top-level batch or legacy message of a records field, or a stub of one.
fn is_batch_item(n: &Node) -> bool {
    matches!(
        n.kind,
        Kind::Record(RecordPart::Batch) | Kind::Record(RecordPart::Message)
    ) || n.deferred_records().is_some()
}

pub fn for_each_records_item(
    cat: &Catalogue,
    release: Option<&str>,
    frame: &Frame,
    topic_ids: &TopicIds,
    open: &dyn Fn(&Node) -> Option<Node>,
    each: &mut EachItem<'_>,
) {
    // A log segment (no API: its root holds the batches, or stubs of them)
    // is one records field, of a topic and partition its bytes do not name.
    if frame.api_key.is_none() && frame.root.children.iter().any(is_batch_item) {
        for (i, item) in frame.root.children.iter().enumerate() {
            let opened = item.deferred_records().and_then(|_| open(item));
            each(None, None, &[i], opened.as_ref().unwrap_or(item));
        }
        return;
    }
    let name_of = |id: &[u8; 16]| topic_ids.name(id).map(str::as_bytes);
    let fields = records_fields(cat, release, frame, &name_of);
    // Where each records field is in the tree (one walk for all of them).
    let mut paths: Vec<Option<Vec<usize>>> = vec![None; fields.len()];
    fn walk(
        n: &Node,
        path: &mut Vec<usize>,
        fields: &[RecordsField],
        out: &mut [Option<Vec<usize>>],
    ) {
        if let Some(i) = fields.iter().position(|f| std::ptr::eq(f.node, n)) {
            out[i] = Some(path.clone());
            return;
        }
        for (i, c) in n.children.iter().enumerate() {
            path.push(i);
            walk(c, path, fields, out);
            path.pop();
        }
    }
    walk(&frame.root, &mut Vec::new(), &fields, &mut paths);
    for (rf, path) in fields.iter().zip(paths) {
        let Some(mut path) = path else { continue };
        for (i, item) in rf.node.children.iter().enumerate() {
            path.push(i);
            match item.deferred_records() {
                Some(_) => {
                    if let Some(opened) = open(item) {
                        each(rf.topic.as_ref(), rf.partition, &path, &opened);
                    }
                }
                None => each(rf.topic.as_ref(), rf.partition, &path, item),
            }
            path.pop();
        }
    }
}

/// The name a topic id was given, as the caller knows names.
type NameOf<'a> = dyn Fn(&[u8; 16]) -> Option<&'a [u8]> + 'a;

/// A records field of a frame's tree, with the topic and partition the
/// fields around it name.
struct RecordsField<'n> {
    node: &'n Node,
    topic: Option<Topic>,
    partition: Option<i32>,
}

/// Every records field of the frame's body, found through the message's
/// spec: each field node's declaration index picks its spec.
fn records_fields<'n>(
    cat: &Catalogue,
    release: Option<&str>,
    frame: &'n Frame,
    name_of: &NameOf<'_>,
) -> Vec<RecordsField<'n>> {
    let mut out = Vec::new();
    let (Some(key), Some(version)) = (frame.api_key, frame.api_version) else {
        return out;
    };
    let kind = if frame.direction == Direction::Request {
        MessageKind::Request
    } else {
        MessageKind::Response
    };
    let Some(spec) = cat.message(kind, key, version, release) else {
        return out;
    };
    let body = frame.body();
    if let Some(body) = body {
        walk(body, &spec.fields, (None, None), name_of, &mut out);
    }
    out
}

/// The field nodes of a struct node with their specs, tagged ones included.
fn members<'n, 's>(node: &'n Node, fields: &'s [FieldSpec]) -> Vec<(&'s FieldSpec, &'n Node)> {
    let mut out = Vec::new();
    let mut take = |c: &'n Node| {
        if let Role::Field { decl } = c.role {
            if let Some(f) = fields.get(usize::from(decl)) {
                out.push((f, c));
            }
        }
    };
    for c in &node.children {
        match c.role {
            Role::TaggedSection => c
                .children
                .iter()
                .flat_map(|entry| &entry.children)
                .for_each(&mut take),
            _ => take(c),
        }
    }
    out
}

/// Whether a field holds the partition index of the struct it is in: an
/// int32 named as Kafka names it there (`Index` in Produce requests,
/// `PartitionIndex` in Fetch and ShareFetch responses). The definitions
/// give partitions no entity type, so the name is the protocol fact here.
pub fn is_partition_index(f: &FieldSpec) -> bool {
    matches!(f.ty, FieldType::Primitive(Primitive::Int32))
        && matches!(
            f.name.as_str(),
            "PartitionIndex" | "Index" | "Partition" | "PartitionId"
        )
}

fn walk<'n>(
    node: &'n Node,
    fields: &[FieldSpec],
    (mut topic, mut partition): (Option<Topic>, Option<i32>),
    name_of: &NameOf<'_>,
    out: &mut Vec<RecordsField<'n>>,
) {
    let members = members(node, fields);
    for (f, n) in &members {
        match (topic_field(f), &n.value) {
            (Some(TopicField::Name), Value::Str(Some(s))) if !s.is_empty() => {
                topic = Some(Topic::Name(s.as_bytes().into()))
            }
            (Some(TopicField::Name), Value::InvalidUtf8(b)) => {
                topic = Some(Topic::Name(b.to_vec().into()))
            }
            // The zero uuid is Kafka's "no id".
            (Some(TopicField::Id), Value::Uuid(u)) if *u != [0; 16] => {
                topic = Some(match name_of(u) {
                    Some(name) => Topic::Name(name.into()),
                    None => Topic::Id(*u),
                })
            }
            (None, Value::Int(v)) if is_partition_index(f) => partition = i32::try_from(*v).ok(),
            _ => {}
        }
    }
    for (f, n) in members {
        match &f.ty {
            FieldType::Primitive(Primitive::Records) => out.push(RecordsField {
                node: n,
                topic: topic.clone(),
                partition,
            }),
            FieldType::Struct(_) => walk(n, &f.fields, (topic.clone(), partition), name_of, out),
            FieldType::Array(inner) if matches!(**inner, FieldType::Struct(_)) => {
                for e in n.children.iter().filter(|e| e.role == Role::Element) {
                    walk(e, &f.fields, (topic.clone(), partition), name_of, out);
                }
            }
            _ => {}
        }
    }
}

/// Whether a record is listed: read whole, with an offset (the others'
/// damage is listed instead, where it is).
fn listed(r: &RecordParts<'_>) -> bool {
    r.whole && r.offset.is_some()
}

/// A records field on a frame's annotated tape, with the topic and
/// partition the fields around it name.
struct TapeRecordsField {
    /// Its slot, whose children are its batches.
    slot: u32,
    /// Its bytes in the frame, length prefix included.
    range: (usize, usize),
    topic: Option<Topic>,
    partition: Option<i32>,
    /// Its index in [`Frame::deferred`] when the decode left it off the tape.
    deferred: Option<usize>,
}

/// Every records field of the frame's body on its tape, found through the
/// message's spec: each field slot's declaration index picks its spec.
fn records_fields_on_tape(
    cat: &Catalogue,
    release: Option<&str>,
    frame: &Frame,
    name_of: &NameOf<'_>,
) -> Vec<TapeRecordsField> {
    let mut out = Vec::new();
    let (Some(key), Some(version), Some(tape)) =
        (frame.api_key, frame.api_version, frame.values.as_deref())
    else {
        return out;
    };
    let kind = if frame.direction == Direction::Request {
        MessageKind::Request
    } else {
        MessageKind::Response
    };
    let (Some(spec), Some(body)) = (cat.message(kind, key, version, release), tape.body) else {
        return out;
    };
    let walk = TapeWalk {
        tape,
        bytes: &frame.bytes,
        name_of,
        deferred: &frame.deferred,
    };
    walk.walk(body, &spec.fields, (None, None), &mut out);
    out
}

/// A walk over a frame's tape for its records fields.
struct TapeWalk<'a, 'n> {
    tape: &'a crate::decode::tape::Values,
    bytes: &'a [u8],
    name_of: &'a NameOf<'n>,
    /// The records fields the decode left off the tape.
    deferred: &'a [DeferredRecords],
}

impl TapeWalk<'_, '_> {
    /// The field slots of the struct at `slot` with their specs, tagged ones included.
    fn members<'s>(&self, slot: u32, fields: &'s [FieldSpec]) -> Vec<(&'s FieldSpec, u32)> {
        let mut out = Vec::new();
        let mut take = |(i, c): (u32, &Slot)| {
            if let Some(f) = c.decl().and_then(|d| fields.get(usize::from(d))) {
                out.push((f, i));
            }
        };
        for (i, c) in self.tape.children(slot) {
            match c.id {
                Id::TaggedSection => {
                    for (entry, _) in self.tape.children(i) {
                        self.tape.children(entry).for_each(&mut take);
                    }
                }
                _ => take((i, c)),
            }
        }
        out
    }

    fn walk(
        &self,
        slot: u32,
        fields: &[FieldSpec],
        (mut topic, mut partition): (Option<Topic>, Option<i32>),
        out: &mut Vec<TapeRecordsField>,
    ) {
        let members = self.members(slot, fields);
        for &(f, i) in &members {
            let value = self.tape.slots[i as usize].value;
            match (topic_field(f), value) {
                (Some(TopicField::Name), Val::Str(span)) if span.len > 0 => {
                    topic = Some(Topic::Name(span.of(self.bytes).into()))
                }
                // The zero uuid is Kafka's "no id".
                (Some(TopicField::Id), Val::Uuid(_)) => {
                    if let Some(u) = value.uuid_in(self.bytes).filter(|u| *u != [0; 16]) {
                        topic = Some(match (self.name_of)(&u) {
                            Some(name) => Topic::Name(name.into()),
                            None => Topic::Id(u),
                        })
                    }
                }
                (None, Val::Int(v)) if is_partition_index(f) => partition = i32::try_from(v).ok(),
                _ => {}
            }
        }
        for (f, i) in members {
            match &f.ty {
                FieldType::Primitive(Primitive::Records) => {
                    let s = &self.tape.slots[i as usize];
                    // Left off the tape: its bytes are the deferred field's.
                    let deferred = match (s.end == i + 1, s.value) {
                        (true, Val::Bytes(span)) => self.deferred.iter().position(|d| {
                            d.range == (span.at as usize, (span.at + span.len) as usize)
                        }),
                        _ => None,
                    };
                    out.push(TapeRecordsField {
                        slot: i,
                        range: (s.at as usize, (s.at + s.len) as usize),
                        topic: topic.clone(),
                        partition,
                        deferred,
                    })
                }
                FieldType::Struct(_) => self.walk(i, &f.fields, (topic.clone(), partition), out),
                FieldType::Array(inner) if matches!(**inner, FieldType::Struct(_)) => {
                    for (e, _) in self.tape.children(i).filter(|(_, e)| e.id == Id::Element) {
                        self.walk(e, &f.fields, (topic.clone(), partition), out);
                    }
                }
                _ => {}
            }
        }
    }
}

/// What a records field's rows are read from: the frame, its tape and the field.
struct FieldRows<'a> {
    cat: &'a Catalogue,
    frame: &'a Frame,
    tape: &'a crate::decode::tape::Values,
    field: &'a TapeRecordsField,
}

impl FieldRows<'_> {
    fn row(&self, origin: &Origin, r: &RecordParts<'_>, position: usize) -> RecordRow {
        let topic_name = self.field.topic.as_ref().and_then(payload_topic);
        // A control batch's keys and values are control records; a plain topic's may be framed.
        let kind = if r.control {
            PayloadKind::Control
        } else {
            PayloadKind::for_topic(topic_name)
        };
        let (mut key, mut value) = (self.data(r.key_at), self.data(r.value_at));
        if kind == PayloadKind::Plain {
            for (d, at) in [(&mut key, r.key_at), (&mut value, r.value_at)] {
                d.schema = framed(d, at);
            }
        } else {
            self.decode_payloads(kind, topic_name, r, (&mut key, &mut value));
        }
        RecordRow {
            origin: origin.clone(),
            topic: self.field.topic.clone(),
            partition: self.field.partition,
            offset: r.offset.unwrap_or_default(),
            // A request's offsets are its batch's own until its response says.
            offset_assigned: origin.direction == Direction::Response,
            position,
            timestamp: r.timestamp,
            control: r.control,
            batch: r.batch,
            offset_delta: r.offset_delta,
            key,
            value,
            headers: r
                .headers
                .iter()
                .map(|(k, v)| Header {
                    key: Data {
                        bytes: k.map(Bytes::copy_from_slice),
                        ..Data::default()
                    },
                    value: Data {
                        bytes: v.map(Bytes::copy_from_slice),
                        ..Data::default()
                    },
                })
                .collect(),
        }
    }

    /// The bytes a key or value lies in: the frame's, or a buffer of
    /// decompressed data on its tape.
    fn buffer(&self, at: PayloadAt) -> Option<&Bytes> {
        match at.buffer {
            None => Some(&self.frame.bytes),
            Some(b) => self.tape.buffers.get(b),
        }
    }

    /// A key or value as its bytes (shared with the frame or its buffer, not copied).
    fn data(&self, at: PayloadAt) -> Data {
        let bytes = at
            .range
            .zip(self.buffer(at))
            .and_then(|((s, e), buf)| (e <= buf.len()).then(|| buf.slice(s..e)));
        Data {
            bytes,
            ..Data::default()
        }
    }

    /// An internal topic's or a control batch's key and value decoded
    /// through their schemas; credentials in them masked (unless
    /// `--show-secrets`): a field a schema says is one, or a metadata log
    /// value its schema does not read whole (which is taken for one).
    fn decode_payloads(
        &self,
        kind: PayloadKind,
        topic: Option<&str>,
        r: &RecordParts<'_>,
        (key, value): (&mut Data, &mut Data),
    ) {
        // Key and value lie in the same bytes (a null one too): both are a record's.
        let Some(buf) = self.buffer(r.value_at) else {
            return;
        };
        let record = KeyValue {
            kind,
            topic,
            key: r.key_at.range,
            value: r.value_at.range,
        };
        let layout = key_value_layout(self.cat, buf, &record);
        let hiding = crate::decode::secrets::hiding();
        let mut value_read = false;
        for (d, part, at, is_value) in [
            (key, layout.key, r.key_at, false),
            (value, layout.value, r.value_at, true),
        ] {
            let Some(start) = at.range.map(|r| r.0) else {
                continue;
            };
            let within = |b: &Embedded<'_>| b.range.0 <= b.range.1 && b.range.1 <= buf.len();
            let read = part.body.filter(within).map(|body| {
                let (from, to) = body.range;
                let read = StructValues::read(body.spec, body.version, buf.slice(from..to));
                (from - start, read)
            });
            if let Some((from, read)) = &read {
                value_read |= is_value && read.whole;
                if let Some(b) = d.bytes.as_mut().filter(|_| !read.masked.is_empty()) {
                    let moved: Vec<(usize, usize)> =
                        read.masked.iter().map(|&(s, n)| (s + from, n)).collect();
                    *b = crate::decode::secrets::masked(b, &moved);
                }
            }
            d.decoded = match read {
                Some((_, read)) => Some(Decoded::Struct(Box::new(read))),
                None if !part.prefixes.is_empty() => Some(Decoded::Prefixes(
                    part.prefixes.iter().map(|p| (p.name, p.value)).collect(),
                )),
                None => None,
            };
        }
        if hiding && layout.value_secret_unless_read && !value_read {
            if let Some(b) = value.bytes.as_mut() {
                *b = crate::decode::secrets::masked(b, &[(0, b.len())]);
            }
            value.decoded = None;
        }
    }
}

/// A topic's name as its records' keys and values are decoded by: its
/// name, or for the metadata log's fixed id, the log's name.
fn payload_topic(topic: &Topic) -> Option<&str> {
    match topic {
        Topic::Name(name) => std::str::from_utf8(name).ok(),
        Topic::Id(id) if *id == crate::decode::secrets::METADATA_TOPIC_ID => {
            Some("__cluster_metadata")
        }
        Topic::Id(_) => None,
    }
}

/// The schema id and the payload after it, of a plain topic's key or value
/// the record walk found in Schema Registry framing.
fn framed(d: &Data, at: PayloadAt) -> Option<(i32, Bytes)> {
    let b = d.bytes.as_ref().filter(|_| at.framed)?;
    let id = crate::decode::records::payload::schema_registry_id(b)?;
    Some((id, b.slice(5..)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::CapturedFrame;
    use serde_json::json;

    fn produce(records: &[u8], topic: serde_json::Value) -> Bytes {
        let cat = Catalogue::builtin();
        let fs = crate::encode::FrameSpec {
            direction: Direction::Request,
            api_key: 0,
            version: 9,
            release: None,
        };
        let mut data = topic.as_object().cloned().unwrap_or_default();
        data.insert(
            "PartitionData".into(),
            json!([{"Index": 7, "Records": hex::encode(records)}]),
        );
        let body =
            json!({"TransactionalId": null, "Acks": -1, "TimeoutMs": 30000, "TopicData": [data]});
        Bytes::from(
            crate::encode::encode_frame(
                cat,
                &fs,
                &crate::encode::frame::example_header(Direction::Request),
                body.as_object().unwrap(),
            )
            .unwrap(),
        )
    }

    fn captured(bytes: Bytes) -> CapturedFrame {
        let addr: std::net::SocketAddr = "10.0.0.1:5000".parse().unwrap();
        CapturedFrame {
            index: 4,
            timestamp: 1.5,
            conn: 2,
            from: addr,
            to: addr,
            direction: Direction::Request,
            len: bytes.len(),
            bytes,
            correlation_id: Some(1),
            api_key: Some(0),
            api_version: Some(9),
            after_gap: false,
            comment: None,
            offset: 0,
            kind: crate::decode::FrameKind::Kafka,
            repeats: None,
        }
    }

    /// A record's key, value and headers.
    type TestRecord<'a> = (
        Option<&'a [u8]>,
        Option<&'a [u8]>,
        &'a [(&'a str, &'a [u8])],
    );

    /// A RecordBatch v2 of records, uncompressed, with a right checksum.
    fn batch(base_offset: i64, records: &[TestRecord<'_>]) -> Vec<u8> {
        fn varint(out: &mut Vec<u8>, v: i64) {
            let mut u = ((v << 1) ^ (v >> 63)) as u64;
            while u >= 0x80 {
                out.push((u as u8 & 0x7f) | 0x80);
                u >>= 7;
            }
            out.push(u as u8);
        }
        fn bytes(out: &mut Vec<u8>, b: Option<&[u8]>) {
            match b {
                None => varint(out, -1),
                Some(b) => {
                    varint(out, b.len() as i64);
                    out.extend_from_slice(b);
                }
            }
        }
        let mut recs = Vec::new();
        for (i, (k, v, hs)) in records.iter().enumerate() {
            let mut body = vec![0u8];
            varint(&mut body, i as i64 * 10);
            varint(&mut body, i as i64);
            bytes(&mut body, *k);
            bytes(&mut body, *v);
            varint(&mut body, hs.len() as i64);
            for (hk, hv) in hs.iter() {
                bytes(&mut body, Some(hk.as_bytes()));
                bytes(&mut body, Some(hv));
            }
            varint(&mut recs, body.len() as i64);
            recs.extend(body);
        }
        let mut after_crc = Vec::new();
        after_crc.extend_from_slice(&0i16.to_be_bytes());
        after_crc.extend_from_slice(&(records.len() as i32 - 1).to_be_bytes());
        after_crc.extend_from_slice(&1_700_000_000_000i64.to_be_bytes());
        after_crc.extend_from_slice(&1_700_000_000_000i64.to_be_bytes());
        after_crc.extend_from_slice(&(-1i64).to_be_bytes());
        after_crc.extend_from_slice(&(-1i16).to_be_bytes());
        after_crc.extend_from_slice(&(-1i32).to_be_bytes());
        after_crc.extend_from_slice(&(records.len() as i32).to_be_bytes());
        after_crc.extend(recs);
        let mut out = base_offset.to_be_bytes().to_vec();
        out.extend_from_slice(&((after_crc.len() + 9) as i32).to_be_bytes());
        out.extend_from_slice(&0i32.to_be_bytes());
        out.push(2);
        out.extend_from_slice(&crate::protocol::crc32c::crc32c(&after_crc).to_be_bytes());
        out.extend(after_crc);
        out
    }

    fn items(
        frame_bytes: Bytes,
        names: &super::super::Names,
        selection: Selection,
    ) -> (Vec<RecordRow>, Vec<DamageRow>) {
        let cat = Catalogue::builtin();
        let opts = Options {
            selection,
            ..Options::default()
        };
        let f = captured(frame_bytes);
        let mut frame = decode(cat, &opts, &f);
        let (mut rows, mut damage) = (Vec::new(), Vec::new());
        frame_items(
            cat,
            &opts,
            &f,
            &mut frame,
            names,
            &mut Summary::default(),
            &mut |i| {
                match i {
                    Item::Record(r) => rows.push(r.clone()),
                    Item::Damage(d) => damage.push(d.clone()),
                }
                true
            },
        );
        (rows, damage)
    }

    #[test]
    fn rows_come_from_the_batches_with_their_topic_and_partition() {
        let data = batch(
            40,
            &[
                (Some(b"k1"), Some(b"v1"), &[("h", b"x")]),
                (None, Some(b"\x00\x00\x00\x00\x11{\"a\":1}"), &[]),
            ],
        );
        let (rows, damage) = items(
            produce(&data, json!({"Name": "orders"})),
            &Default::default(),
            Selection::default(),
        );
        assert!(damage.is_empty(), "{damage:?}");
        let seen: Vec<_> = rows
            .iter()
            .map(|r| {
                (
                    r.topic.as_ref().map(Topic::text),
                    r.partition,
                    r.offset,
                    r.timestamp,
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                (Some("orders".into()), Some(7), 40, Some(1_700_000_000_000)),
                (Some("orders".into()), Some(7), 41, Some(1_700_000_000_010))
            ]
        );
        assert_eq!(rows[0].key.bytes.as_deref(), Some(&b"k1"[..]));
        let plain = |d: &Data| (d.bytes.clone(), d.schema.is_none() && d.decoded.is_none());
        let headers: Vec<_> = rows[0]
            .headers
            .iter()
            .map(|h| (plain(&h.key), plain(&h.value)))
            .collect();
        assert_eq!(
            headers,
            [(
                (Some(Bytes::from_static(b"h")), true),
                (Some(Bytes::from_static(b"x")), true)
            )]
        );
        assert_eq!(rows[1].key.bytes, None);
        assert_eq!(
            rows[1].value.schema,
            Some((17, Bytes::from_static(b"{\"a\":1}")))
        );
        assert_eq!(
            rows[0].origin,
            Origin {
                frame: 4,
                time: 1.5,
                conn: 2,
                direction: Direction::Request,
                api_key: 0
            }
        );
    }

    #[test]
    fn the_selection_picks_topic_partition_and_bytes() {
        let data = batch(
            0,
            &[
                (Some(b"alpha"), Some(b"one"), &[]),
                (Some(b"beta"), Some(b"two"), &[("trace", b"needle")]),
            ],
        );
        let frame = produce(&data, json!({"Name": "orders"}));
        let keys = |s: Selection| {
            items(frame.clone(), &Default::default(), s)
                .0
                .iter()
                .map(|r| r.offset)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            keys(Selection {
                topic: Some("orders".into()),
                ..Default::default()
            }),
            [0, 1]
        );
        assert_eq!(
            keys(Selection {
                topic: Some("billing".into()),
                ..Default::default()
            }),
            [0i64; 0]
        );
        assert_eq!(
            keys(Selection {
                partition: Some(7),
                ..Default::default()
            }),
            [0, 1]
        );
        assert_eq!(
            keys(Selection {
                partition: Some(0),
                ..Default::default()
            }),
            [0i64; 0]
        );
        assert_eq!(
            keys(Selection {
                grep: Some(b"needle".to_vec()),
                ..Default::default()
            }),
            [1]
        );
        assert_eq!(
            keys(Selection {
                grep: Some(b"lph".to_vec()),
                ..Default::default()
            }),
            [0]
        );
        assert_eq!(
            keys(Selection {
                grep: Some(b"two".to_vec()),
                ..Default::default()
            }),
            [1]
        );
    }

    #[test]
    fn damage_is_a_row_of_its_own_in_its_topic() {
        let mut data = batch(0, &[(Some(b"k"), Some(b"v"), &[])]);
        data[30] ^= 1; // inside the checksummed bytes
        let (rows, damage) = items(
            produce(&data, json!({"Name": "orders"})),
            &Default::default(),
            Selection::default(),
        );
        assert_eq!(rows.len(), 1, "the records still read");
        assert_eq!(damage.len(), 1);
        assert!(
            damage[0].error.expected.contains("CRC-32C"),
            "{:?}",
            damage[0]
        );
        assert_eq!(
            (
                damage[0].topic.as_ref().map(Topic::text),
                damage[0].partition,
                damage[0].frame
            ),
            (Some("orders".into()), Some(7), false)
        );
    }

    #[test]
    fn internal_topics_decode_through_their_schemas() {
        // An OffsetCommitKey v0 (type 1): group, topic, partition.
        let mut key = 1i16.to_be_bytes().to_vec();
        for s in ["billing", "orders"] {
            key.extend_from_slice(&(s.len() as i16).to_be_bytes());
            key.extend_from_slice(s.as_bytes());
        }
        key.extend_from_slice(&3i32.to_be_bytes());
        let data = batch(0, &[(Some(&key), None, &[])]);
        let (rows, _) = items(
            produce(&data, json!({"Name": "__consumer_offsets"})),
            &Default::default(),
            Selection::default(),
        );
        let Some(Decoded::Struct(values)) = rows[0].key.decoded.as_ref() else {
            panic!("decoded through a schema: {:?}", rows[0].key.decoded)
        };
        assert_eq!(values.schema, "OffsetCommitKey v0");
        assert!(values.whole);
        let fields: Vec<(&str, String)> = values
            .tape
            .children(values.slot)
            .map(|(_, s)| {
                let value = match s.value {
                    Val::Str(span) => String::from_utf8_lossy(span.of(&values.bytes)).into(),
                    Val::Int(v) => v.to_string(),
                    other => format!("{other:?}"),
                };
                (*s.key, value)
            })
            .collect();
        assert_eq!(
            fields,
            [
                ("\"group\":", "billing".to_string()),
                ("\"topic\":", "orders".to_string()),
                ("\"partition\":", "3".to_string())
            ]
        );
        assert!(
            rows[0].key.schema.is_none(),
            "no framing on internal topics"
        );
    }
}
