//! Records read back from the nodes [`super::batch`] and `super::nodes`
//! make: each record as a consumer sees it (offset, timestamp, key, value,
//! headers), for views that list records instead of drawing their trees.
//!
//! The record format is not in the definitions, so its nodes carry no
//! declaration index to look them up by: the decoder marks each part with
//! its kind (`Kind::Record(RecordPart)`, `Kind::RecordKey`, …), and this
//! module finds them by it, never by name.

use crate::decode::{Kind, Node, RecordPart, Role, Value};

/// One record of a records field, as a consumer sees it.
#[derive(Clone, Debug)]
pub struct RecordRef<'n> {
    /// Its offset in the partition: the batch's base offset plus its delta,
    /// or a legacy message's own (inner messages of a magic 1 wrapper counted
    /// back from the wrapper's offset, which is the last one's).
    pub offset: i64,
    /// Milliseconds since the epoch: its CreateTime, or the batch's
    /// LogAppendTime when the batch says so; `None` for magic 0 messages.
    pub timestamp: Option<i64>,
    /// From a control batch (transaction markers, KRaft control records).
    pub control: bool,
    pub key: Payload<'n>,
    pub value: Payload<'n>,
    /// Each header's key and value.
    pub headers: Vec<(Payload<'n>, Payload<'n>)>,
    /// The record's (or legacy message's) own node.
    pub node: &'n Node,
    /// A RecordBatch v2 record's offsetDelta and timestampDelta, as written;
    /// `None` for legacy messages.
    pub offset_delta: Option<i64>,
    pub timestamp_delta: Option<i64>,
    /// Its RecordBatch v2's header (`None` for legacy messages).
    pub batch: Option<BatchHeader>,
}

/// A RecordBatch v2's header, as the tape's reader reads it too.
pub use super::each::BatchHeader;

/// The header of `b` when it is a RecordBatch v2 with at least its base
/// offset: its first children are the fields of [`V2_FIELDS`], in order
/// (both decoder paths build them so), and the checksum's validity is its
/// node's kind.
pub(crate) fn batch_header(b: &Node) -> Option<BatchHeader> {
    if b.kind != Kind::Record(RecordPart::Batch) || b.children.is_empty() {
        return None;
    }
    use super::layout::{
        ATTRIBUTES, BASE_OFFSET, BASE_SEQUENCE, BASE_TIMESTAMP, CRC, LAST_OFFSET_DELTA, MAGIC,
        MAX_TIMESTAMP, PARTITION_LEADER_EPOCH, PRODUCER_EPOCH, PRODUCER_ID, RECORDS_COUNT,
    };
    let field = |k: usize| b.children.get(k).and_then(int);
    Some(BatchHeader {
        base_offset: field(BASE_OFFSET),
        partition_leader_epoch: field(PARTITION_LEADER_EPOCH),
        magic: field(MAGIC),
        attributes: field(ATTRIBUTES),
        last_offset_delta: field(LAST_OFFSET_DELTA),
        base_timestamp: field(BASE_TIMESTAMP),
        max_timestamp: field(MAX_TIMESTAMP),
        producer_id: field(PRODUCER_ID),
        producer_epoch: field(PRODUCER_EPOCH),
        base_sequence: field(BASE_SEQUENCE),
        records_count: field(RECORDS_COUNT),
        crc_valid: b
            .children
            .get(CRC)
            .is_some_and(|c| c.kind == Kind::CrcValid),
    })
}

/// A key, a value, or a header's key or value: its node, whose value is the bytes.
#[derive(Clone, Copy, Debug)]
pub struct Payload<'n> {
    pub node: &'n Node,
}

impl<'n> Payload<'n> {
    /// The bytes; `None` for null.
    pub fn bytes(&self) -> Option<&'n bytes::Bytes> {
        if let Value::Bytes(b) = &self.node.value {
            b.as_ref()
        } else {
            None
        }
    }

    /// The schema id and the payload's node, when the bytes are in Schema
    /// Registry framing (shown for plain topics' keys and values:
    /// [`super::payload::schema_registry_id`]).
    pub(crate) fn schema_registry(&self) -> Option<(i32, &'n Node)> {
        let mut id = None;
        let mut payload = None;
        for c in &self.node.children {
            match c.kind {
                Kind::SchemaRegistryId => id = int(c).and_then(|v| i32::try_from(v).ok()),
                Kind::SchemaRegistryPayload => payload = Some(c),
                _ => {}
            }
        }
        id.zip(payload)
    }

    /// What the bytes decoded to through a schema (internal topics' keys and
    /// values, control records): the prefixes read before the struct
    /// (record type, version, …; `Role::Encoding` leaves) and the struct
    /// (`Role::Structure`). Empty for plain bytes and for framing.
    pub fn decoded(&self) -> &'n [Node] {
        if self.schema_registry().is_some() {
            return &[];
        }
        &self.node.children
    }
}

/// Every record of the batches `stream` holds (a records field's children,
/// or the batches of a log segment), in order. Records whose reading
/// stopped at an error are left out: the frame's record damage says what
/// and where, and views show that instead.
pub fn records<'n>(stream: &'n [Node], each: &mut dyn FnMut(RecordRef<'n>)) {
    for n in stream {
        match n.kind {
            Kind::Record(RecordPart::Batch) => batch(n, each),
            Kind::Record(RecordPart::Message) => message(n, None, each),
            _ => {}
        }
    }
}

/// A legacy wrapper message whose value holds inner messages.
#[derive(Clone, Copy)]
struct Wrapper {
    magic: i64,
    offset: i64,
    log_append_time: Option<i64>,
}

fn batch<'n>(b: &'n Node, each: &mut dyn FnMut(RecordRef<'n>)) {
    let (mut base_offset, mut attributes, mut base_timestamp, mut max_timestamp) =
        (None, None, None, None);
    for c in &b.children {
        match c.kind {
            Kind::Record(RecordPart::BaseOffset) => base_offset = int(c),
            Kind::Record(RecordPart::Attributes) => attributes = int(c),
            Kind::Record(RecordPart::BaseTimestamp) => base_timestamp = int(c),
            Kind::Record(RecordPart::MaxTimestamp) => max_timestamp = int(c),
            _ => {}
        }
    }
    let (Some(base_offset), Some(attributes)) = (base_offset, attributes) else {
        return;
    };
    let log_append_time = attributes & 0x08 != 0;
    let control = attributes & 0x20 != 0;
    let header = batch_header(b);
    let mut one = |r: &'n Node| {
        if r.error().is_some() {
            return;
        }
        let (mut ts_delta, mut offset_delta, mut key, mut value, mut headers) =
            (None, None, None, None, Vec::new());
        for f in &r.children {
            match f.kind {
                Kind::Record(RecordPart::TimestampDelta) => ts_delta = int(f),
                Kind::Record(RecordPart::OffsetDelta) => offset_delta = int(f),
                Kind::RecordKey => key = Some(Payload { node: f }),
                Kind::RecordValue => value = Some(Payload { node: f }),
                Kind::Record(RecordPart::Headers) => {
                    for h in &f.children {
                        let (mut hk, mut hv) = (None, None);
                        for p in &h.children {
                            match p.kind {
                                Kind::Record(RecordPart::HeaderKey) => {
                                    hk = Some(Payload { node: p })
                                }
                                Kind::Record(RecordPart::HeaderValue) => {
                                    hv = Some(Payload { node: p })
                                }
                                _ => {}
                            }
                        }
                        if let (Some(k), Some(v)) = (hk, hv) {
                            headers.push((k, v));
                        }
                    }
                }
                _ => {}
            }
        }
        let (Some(offset_delta), Some(key), Some(value)) = (offset_delta, key, value) else {
            return;
        };
        let timestamp = if log_append_time {
            max_timestamp
        } else {
            base_timestamp.zip(ts_delta).map(|(b, d)| b.wrapping_add(d))
        };
        each(RecordRef {
            offset: base_offset.wrapping_add(offset_delta),
            timestamp,
            control,
            key,
            value,
            headers,
            node: r,
            offset_delta: Some(offset_delta),
            timestamp_delta: ts_delta,
            batch: header,
        });
    };
    for c in &b.children {
        match c.kind {
            Kind::Record(RecordPart::Record) => one(c),
            // A compressed batch: its records are under the decompressed data.
            _ => {
                for d in c.children.iter().filter(|d| d.role == Role::Decompressed) {
                    d.children
                        .iter()
                        .filter(|r| r.kind == Kind::Record(RecordPart::Record))
                        .for_each(&mut one);
                }
            }
        }
    }
}

/// A legacy message, or the messages inside a compressed wrapper (`within`).
fn message<'n>(m: &'n Node, within: Option<Wrapper>, each: &mut dyn FnMut(RecordRef<'n>)) {
    if m.error().is_some() {
        return;
    }
    let (mut offset, mut magic, mut attributes, mut timestamp, mut key, mut value) =
        (None, None, None, None, None, None);
    for c in &m.children {
        match c.kind {
            Kind::Record(RecordPart::Offset) => offset = int(c),
            Kind::Record(RecordPart::Magic) => magic = int(c),
            Kind::Record(RecordPart::Attributes) => attributes = int(c),
            Kind::Record(RecordPart::Timestamp) => timestamp = int(c),
            Kind::RecordKey => key = Some(Payload { node: c }),
            Kind::RecordValue => value = Some(Payload { node: c }),
            _ => {}
        }
    }
    let (Some(offset), Some(magic), Some(attributes), Some(key), Some(value)) =
        (offset, magic, attributes, key, value)
    else {
        return;
    };
    let inner: Vec<&'n Node> = value
        .node
        .children
        .iter()
        .filter(|d| d.role == Role::Decompressed)
        .flat_map(|d| d.children.iter())
        .filter(|n| n.kind == Kind::Record(RecordPart::Message))
        .collect();
    // A wrapper (its codec set) holds messages, not a record of its own:
    // when its data does not decompress, it lists none (its damage says why).
    if attributes & 0x07 != 0 {
        let wrapper = Wrapper {
            magic,
            offset,
            log_append_time: (magic == 1 && attributes & 0x08 != 0)
                .then_some(timestamp)
                .flatten(),
        };
        // Magic 1 wrappers number their messages from 0; the wrapper has the last one's offset.
        let last = inner
            .last()
            .and_then(|n| {
                n.children
                    .iter()
                    .find(|c| c.kind == Kind::Record(RecordPart::Offset))
            })
            .and_then(int)
            .unwrap_or(0);
        for n in inner {
            message(
                n,
                Some(Wrapper {
                    offset: wrapper.offset.wrapping_sub(last),
                    ..wrapper
                }),
                each,
            );
        }
        return;
    }
    let (offset, timestamp) = match within {
        Some(w) if w.magic == 1 => (
            w.offset.wrapping_add(offset),
            w.log_append_time.or(timestamp),
        ),
        _ => (offset, timestamp),
    };
    each(RecordRef {
        offset,
        timestamp,
        control: false,
        key,
        value,
        headers: Vec::new(),
        node: m,
        offset_delta: None,
        timestamp_delta: None,
        batch: None,
    });
}

/// A node's integer value (a uint only when it fits).
pub(super) fn int(n: &Node) -> Option<i64> {
    match n.value {
        Value::Int(v) => Some(v),
        Value::Uint(v) => i64::try_from(v).ok(),
        _ => None,
    }
}
