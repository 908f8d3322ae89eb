//! What the conversation rules read of one frame: its error codes, the
//! top-level fields that name a session, member, producer or throttle, and
//! per partition its error, offsets and the producer of each record batch.
//!
//! Read from the values-only tape (`decode::values`) by the definitions:
//! a slot's declaration index picks its field spec, and the spec's name and
//! meaning say what it holds. Record data is never decoded: a batch's
//! fixed-place header is peeked (`decode::records::peek`).

use crate::capture::CapturedFrame;
use crate::decode::records::peek::{self, BatchPeek};
use crate::decode::tape::{Slot, Val, Values};
use crate::decode::values::{self};
use crate::protocol::headers::{request_header_version, response_header_version};
use crate::schema::model::{FieldMeaning, FieldSpec};
use crate::schema::{Catalogue, MessageKind};

/// Top-level integer fields the rules read, by their names in the definitions.
pub(crate) const INTS: &[&str] = &[
    "ErrorCode",
    "ThrottleTimeMs",
    "SessionId",
    "SessionEpoch",
    "GenerationId",
    "MemberEpoch",
    "ProducerId",
    "ProducerEpoch",
    "MaxWaitMs",
    "Acks",
    "Committed",
];

/// Top-level string fields the rules read.
pub(crate) const STRS: &[&str] = &["MemberId", "GroupId", "TransactionalId", "GroupInstanceId"];

/// Batches peeked per partition at most (a Fetch response can hold thousands).
const MAX_BATCHES: usize = 4096;

/// Partitions read per frame at most: a broker's own fetches hold thousands;
/// a hostile 100 MiB frame could name twelve million, and their facts would
/// take gigabytes. Those past it are counted ([`Facts::partitions_unread`]).
pub const MAX_PARTITIONS: usize = 100_000;

/// A name a frame holds, shared: one topic or group names every partition
/// under it, and a copy per partition would multiply a long name.
pub type Name = std::sync::Arc<[u8]>;

/// A topic as a frame names it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TopicKey {
    Name(Name),
    Id([u8; 16]),
}

/// One partition of a message.
#[derive(Clone, Debug, Default)]
pub struct PartitionFacts {
    pub topic: Option<TopicKey>,
    /// The group whose offsets these are (OffsetCommit, OffsetFetch).
    pub group: Option<Name>,
    pub partition: i32,
    pub error: i16,
    pub high_watermark: Option<i64>,
    pub last_stable_offset: Option<i64>,
    pub log_start_offset: Option<i64>,
    pub base_offset: Option<i64>,
    /// Fetch requests: where the fetch starts.
    pub fetch_offset: Option<i64>,
    /// OffsetCommit requests and OffsetFetch responses: the group's offset.
    pub committed_offset: Option<i64>,
    /// ListOffsets: the offset answered (responses), the time asked for (requests).
    pub offset: Option<i64>,
    pub timestamp: Option<i64>,
    pub batches: Vec<BatchPeek>,
    /// The records field's size and what its batch headers count (every
    /// batch, past the peeked ones too).
    pub records: Option<(usize, peek::Counted)>,
}

/// What the rules read of one frame.
#[derive(Clone, Debug, Default)]
pub struct Facts {
    /// The request header's client id (requests only; `None` when null or absent).
    pub client_id: Option<Box<[u8]>>,
    /// Non-zero error codes anywhere in the body, ascending, each once.
    pub errors: Vec<i16>,
    pub ints: Vec<(&'static str, i64)>,
    pub strs: Vec<(&'static str, Box<[u8]>)>,
    pub partitions: Vec<PartitionFacts>,
    /// Partitions past [`MAX_PARTITIONS`], not read.
    pub partitions_unread: u64,
    /// Topic ids the frame tied to names (a struct holding both).
    pub ties: Vec<([u8; 16], Name)>,
    /// The header and body decoded to their end.
    pub decoded: bool,
}

impl Facts {
    pub fn int(&self, name: &str) -> Option<i64> {
        self.ints.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
    }

    pub fn str(&self, name: &str) -> Option<&[u8]> {
        self.strs
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| &**v)
    }

    /// The error set of an answer, as a rule compares answers: its non-zero codes.
    pub(crate) fn error_set(&self) -> &[i16] {
        &self.errors
    }
}

/// Reads facts, reusing one tape.
#[derive(Default)]
pub struct FactReader {
    tape: Values,
}

impl FactReader {
    /// The facts of frame `f`, a message of `kind` at `api`; `None` when the
    /// definitions do not have it or its header does not decode.
    pub fn read(
        &mut self,
        cat: &Catalogue,
        pin: Option<&str>,
        f: &CapturedFrame,
        kind: MessageKind,
        (key, version): (i16, i16),
    ) -> Option<Facts> {
        let spec = cat.message(kind, key, version, pin)?;
        let request = kind == MessageKind::Request;
        let hv = if request {
            request_header_version(spec, version)
        } else {
            response_header_version(spec, version)
        };
        let header = cat.header(kind, hv)?;
        let bytes: &[u8] = &f.bytes;
        self.tape.slots.clear();
        let (head, end, res) = values::decode_message(bytes, 4, &header.plan(hv), &mut self.tape);
        res.ok()?;
        let mut facts = Facts::default();
        if request {
            for (_, s) in self.tape.children(head) {
                let Some(decl) = s.decl() else { continue };
                if let (Some(h), Val::Str(span)) = (header.fields.get(usize::from(decl)), s.value) {
                    if FieldMeaning::of(h) == FieldMeaning::ClientId {
                        facts.client_id = Some(span.of(bytes).into());
                    }
                }
            }
        }
        if f.is_cut() {
            return Some(facts);
        }
        let (body, stop, res) =
            values::decode_message(bytes, end, &spec.plan(version), &mut self.tape);
        facts.decoded = res.is_ok() && stop == bytes.len();
        walk(
            &self.tape,
            bytes,
            body,
            &spec.fields,
            0,
            (None, None),
            &mut facts,
        );
        facts.errors.sort_unstable();
        facts.errors.dedup();
        Some(facts)
    }
}

/// The field a slot holds, when it is a field of `fields`.
fn field_of<'s>(fields: &'s [FieldSpec], s: &Slot) -> Option<&'s FieldSpec> {
    fields.get(usize::from(s.decl()?))
}

/// A field's name without a `V3AndBelow` prefix: where a message changed
/// shape, the definitions keep its older fields under such names
/// (AddPartitionsToTxn's `V3AndBelowTransactionalId`), and they mean the same.
fn base_name(name: &str) -> &str {
    let Some(rest) = name.strip_prefix('V') else {
        return name;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    match rest[digits..].strip_prefix("AndBelow") {
        Some(base) if digits > 0 && !base.is_empty() => base,
        _ => name,
    }
}

fn is_partition_index(name: &str) -> bool {
    matches!(name, "PartitionIndex" | "Partition" | "Index")
}

/// The struct at `slot`, whose fields are `fields`, `depth` structs below
/// the body; `outer` is the topic and group of the structs around it.
fn walk(
    tape: &Values,
    frame: &[u8],
    slot: u32,
    fields: &[FieldSpec],
    depth: u32,
    outer: (Option<&TopicKey>, Option<&Name>),
    out: &mut Facts,
) {
    // First the struct's own topic and partition, which its other fields belong to.
    let (mut name, mut id, mut partition, mut group) = (None, None, None, None);
    for (_, s) in tape.children(slot) {
        let Some(f) = field_of(fields, s) else {
            continue;
        };
        match (FieldMeaning::of(f), s.value) {
            (FieldMeaning::TopicName, Val::Str(span)) if span.len > 0 => {
                name = Some(Name::from(span.of(frame)));
            }
            (FieldMeaning::TopicId, v @ Val::Uuid(_)) => {
                id = v.uuid_in(frame).filter(|u| *u != [0; 16]);
            }
            (_, Val::Str(span)) if base_name(&f.name) == "GroupId" => {
                group = Some(Name::from(span.of(frame)));
            }
            (_, Val::Int(p)) if depth > 0 && is_partition_index(&f.name) => {
                partition = i32::try_from(p).ok();
            }
            _ => {}
        }
    }
    if let (Some(n), Some(i)) = (&name, id) {
        out.ties.push((i, n.clone()));
    }
    let own = name.map(TopicKey::Name).or(id.map(TopicKey::Id));
    let topic = own.as_ref().or(outer.0);
    let group = group.as_ref().or(outer.1);
    let mut part = partition.map(|p| PartitionFacts {
        topic: topic.cloned(),
        group: group.cloned(),
        partition: p,
        ..PartitionFacts::default()
    });
    for (i, s) in tape.children(slot) {
        let Some(f) = field_of(fields, s) else {
            continue;
        };
        let name = base_name(&f.name);
        if FieldMeaning::of(f) == FieldMeaning::ErrorCode {
            let mut each = |v: Val| {
                if let Val::Int(c) = v {
                    if c != 0 {
                        out.errors.push(c as i16);
                    }
                }
            };
            match s.value {
                Val::Array(_) => tape.children(i).for_each(|(_, e)| each(e.value)),
                Val::Packed(p) => p.values(frame).for_each(each),
                v => each(v),
            }
            if let (Some(p), "ErrorCode", Val::Int(c)) = (&mut part, name, s.value) {
                p.error = c as i16;
            }
        }
        if depth == 0 {
            match s.value {
                Val::Int(v) => {
                    if let Some(n) = INTS.iter().find(|n| **n == name) {
                        out.ints.push((n, v));
                    }
                }
                Val::Bool(b) => {
                    if let Some(n) = INTS.iter().find(|n| **n == name) {
                        out.ints.push((n, i64::from(b)));
                    }
                }
                Val::Str(span) => {
                    if let Some(n) = STRS.iter().find(|n| **n == name) {
                        out.strs.push((n, span.of(frame).into()));
                    }
                }
                _ => {}
            }
        }
        if let Some(p) = &mut part {
            match (name, s.value) {
                ("HighWatermark", Val::Int(v)) => p.high_watermark = Some(v),
                ("LastStableOffset", Val::Int(v)) => p.last_stable_offset = Some(v),
                ("LogStartOffset", Val::Int(v)) => p.log_start_offset = Some(v),
                ("BaseOffset", Val::Int(v)) => p.base_offset = Some(v),
                ("FetchOffset", Val::Int(v)) => p.fetch_offset = Some(v),
                ("CommittedOffset", Val::Int(v)) => p.committed_offset = Some(v),
                ("Offset", Val::Int(v)) => p.offset = Some(v),
                ("Timestamp", Val::Int(v)) => p.timestamp = Some(v),
                ("Records", Val::Bytes(span)) => {
                    let records = span.of(frame);
                    p.batches = peek::batches(records, MAX_BATCHES);
                    p.records = Some((records.len(), peek::count(records)));
                }
                _ => {}
            }
        }
        match s.value {
            Val::Struct => walk(tape, frame, i, &f.fields, depth + 1, (topic, group), out),
            Val::Array(_) => {
                for (e, es) in tape.children(i) {
                    if es.value == Val::Struct {
                        walk(tape, frame, e, &f.fields, depth + 1, (topic, group), out);
                    }
                }
            }
            _ => {}
        }
    }
    if let Some(p) = part {
        if out.partitions.len() < MAX_PARTITIONS {
            out.partitions.push(p);
        } else {
            out.partitions_unread += 1;
        }
    }
}
