//! Keys and values whose bytes are themselves schema-defined: control records,
//! the coordinators' internal topics and KRaft's `__cluster_metadata`.

use crate::decode::context::EmbeddedDecoder;
use crate::decode::reader::Reader;
use crate::decode::tree::leaf;
use crate::decode::Wire;
use crate::decode::{Kind, Node, Region, Value};
use crate::decode::{Warning, WarningKind};
use crate::schema::Primitive;
use crate::schema::{Catalogue, MessageKind, MessageSpec};
use bytes::Bytes;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PayloadKind {
    Plain,
    /// Control batch: transaction markers and KRaft control records.
    Control,
    /// `__consumer_offsets`, `__share_group_state`, `__transaction_state`.
    Coordinator,
    /// KRaft `__cluster_metadata` and snapshots.
    ClusterMetadata,
}

/// Coordinator record types are numbered per coordinator: pick the family that
/// owns the topic (the share and transaction coordinators reuse 0 and 1).
fn in_family(topic: Option<&str>, name: &str) -> bool {
    let share = name.starts_with("ShareSnapshot") || name.starts_with("ShareUpdate");
    let txn = name.starts_with("TransactionLog");
    match topic {
        Some("__share_group_state") => share,
        Some("__transaction_state") => txn,
        _ => !share && !txn,
    }
}

fn coordinator_spec<'c>(
    cat: &'c Catalogue,
    topic: Option<&str>,
    kind: MessageKind,
    key: i16,
    version: i16,
) -> Option<&'c MessageSpec> {
    cat.entries_for(kind, key, None)
        .map(|e| e.spec())
        .find(|s| in_family(topic, &s.name) && s.valid_versions.contains(version))
}

impl PayloadKind {
    pub(crate) fn for_topic(topic: Option<&str>) -> PayloadKind {
        match topic {
            Some("__consumer_offsets" | "__share_group_state" | "__transaction_state") => {
                PayloadKind::Coordinator
            }
            Some("__cluster_metadata") => PayloadKind::ClusterMetadata,
            _ => PayloadKind::Plain,
        }
    }
}

/// Control record types (`ControlRecordType`) and the data schema of their values.
fn control_type(t: i16) -> (&'static str, Option<&'static str>) {
    match t {
        0 => ("ABORT", None),
        1 => ("COMMIT", None),
        2 => ("LEADER_CHANGE", Some("LeaderChangeMessage")),
        3 => ("SNAPSHOT_HEADER", Some("SnapshotHeaderRecord")),
        4 => ("SNAPSHOT_FOOTER", Some("SnapshotFooterRecord")),
        5 => ("KRAFT_VERSION", Some("KRaftVersionRecord")),
        6 => ("KRAFT_VOTERS", Some("VotersRecord")),
        _ => ("UNKNOWN", None),
    }
}

/// A record's key and value: where each lies in the buffer, and what the
/// batch and topic they came in say they hold.
#[derive(Clone, Copy)]
pub(crate) struct KeyValue<'t> {
    pub kind: PayloadKind,
    pub topic: Option<&'t str>,
    pub key: Option<(usize, usize)>,
    pub value: Option<(usize, usize)>,
}

/// A number the log format writes before a key's or value's struct (a
/// record type, a version, a control record's fields), where it lies.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Prefix {
    pub name: &'static str,
    pub wire: Wire,
    pub at: usize,
    pub len: usize,
    pub value: i64,
    /// What the number names (`(OffsetCommitKey)`, `(COMMIT)`), or what is odd about it.
    pub note: Option<String>,
}

impl Prefix {
    fn int16(name: &'static str, at: usize, value: i16, note: Option<String>) -> Prefix {
        Prefix {
            name,
            wire: Wire::Fixed(Primitive::Int16),
            at,
            len: 2,
            value: value.into(),
            note,
        }
    }
}

/// The struct a key's or value's prefixes name: its spec, the version read,
/// and the bytes it is read from.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Embedded<'c> {
    pub spec: &'c MessageSpec,
    pub version: i16,
    pub range: (usize, usize),
}

/// What a key or a value holds as the log format lays it out: its prefixes,
/// then the struct they name, if they name one; or why none was read.
#[derive(Debug, Default)]
pub(crate) struct Layout<'c> {
    pub prefixes: Vec<Prefix>,
    pub body: Option<Embedded<'c>>,
    /// The prefixes named no struct kwire knows.
    pub unknown: Option<Warning>,
}

/// A record's key and value as their topic's log format lays them out.
#[derive(Debug, Default)]
pub(crate) struct KeyValueLayout<'c> {
    pub key: Layout<'c>,
    pub value: Layout<'c>,
    /// The metadata log's value: unless its struct is read whole, it may be
    /// a SCRAM credential or a delegation token, and is taken for one.
    pub value_secret_unless_read: bool,
}

/// The layout of a record's key and value in `buf` (see [`KeyValue`]),
/// read from their bytes: what the tree's nodes show and what the records
/// table decodes, read once.
pub(crate) fn key_value_layout<'c>(
    cat: &'c Catalogue,
    buf: &[u8],
    record: &KeyValue,
) -> KeyValueLayout<'c> {
    let KeyValue {
        kind,
        topic,
        key,
        value,
    } = *record;
    let mut out = KeyValueLayout::default();
    match kind {
        PayloadKind::Plain => {}
        PayloadKind::Control => {
            let mut record_type = None;
            if let Some((s, e)) = key {
                let mut r = Reader::over(buf, (s, e));
                if let (Ok(v), Ok(t)) = (r.i16("control key version"), r.i16("control record type"))
                {
                    out.key.prefixes.push(Prefix::int16("version", s, v, None));
                    let note = Some(format!("({})", control_type(t).0));
                    out.key.prefixes.push(Prefix::int16("type", s + 2, t, note));
                    record_type = Some(t);
                }
            }
            if let (Some(t), Some((s, e))) = (record_type, value) {
                match control_type(t) {
                    (_, None) if t == 0 || t == 1 => {
                        // EndTransactionMarker: int16 version, int32 coordinatorEpoch.
                        let mut r = Reader::over(buf, (s, e));
                        if let (Ok(v), Ok(epoch)) =
                            (r.i16("marker version"), r.i32("coordinatorEpoch"))
                        {
                            out.value
                                .prefixes
                                .push(Prefix::int16("version", s, v, None));
                            out.value.prefixes.push(Prefix {
                                name: "coordinatorEpoch",
                                wire: Wire::Fixed(Primitive::Int32),
                                at: s + 2,
                                len: 4,
                                value: epoch.into(),
                                note: None,
                            });
                        }
                    }
                    (_, Some(schema)) => {
                        out.value = versioned(buf, (s, e), |v| cat.by_name(schema, v, None))
                    }
                    _ => {}
                }
            }
        }
        PayloadKind::Coordinator => {
            let mut record_type = None;
            if let Some((s, e)) = key {
                let mut r = Reader::over(buf, (s, e));
                if let Ok(t) = r.i16("record type") {
                    record_type = Some(t);
                    let spec = coordinator_spec(cat, topic, MessageKind::CoordinatorKey, t, 0);
                    let note = spec.map(|s| format!("({})", s.name));
                    out.key.prefixes.push(Prefix::int16("type", s, t, note));
                    match spec {
                        Some(spec) => {
                            out.key.body = Some(Embedded {
                                spec,
                                version: 0,
                                range: (s + 2, e),
                            })
                        }
                        None => {
                            out.key.unknown = Some(Warning::at(
                                WarningKind::UnknownPayload,
                                s,
                                format_args!("unknown coordinator record type {t}"),
                            ))
                        }
                    }
                }
            }
            if let (Some(t), Some(range)) = (record_type, value) {
                out.value = versioned(buf, range, |v| {
                    coordinator_spec(cat, topic, MessageKind::CoordinatorValue, t, v)
                });
            }
        }
        PayloadKind::ClusterMetadata => {
            out.value_secret_unless_read = value.is_some();
            if let Some((s, e)) = value {
                out.value = metadata_record(cat, buf, (s, e));
            }
        }
    }
    out
}

/// A metadata log record: frame version, api key and version (uvarints),
/// then the record of that type and version.
fn metadata_record<'c>(cat: &'c Catalogue, buf: &[u8], (s, e): (usize, usize)) -> Layout<'c> {
    let mut out = Layout::default();
    let mut r = Reader::over(buf, (s, e));
    let parts = (
        r.uvarint("frame version"),
        r.uvarint("api key"),
        r.uvarint("version"),
    );
    let (Ok(fv), Ok(k), Ok(v)) = parts else {
        return out;
    };
    let key = k.value as i16;
    let version = v.value as i16;
    let spec = cat.message(MessageKind::Metadata, key, version, None);
    let uvarint = |name, at, len, value: u64, note| Prefix {
        name,
        wire: Wire::Uvarint,
        at,
        len,
        value: value as i64,
        note,
    };
    let frame_note = (fv.value != 1).then(|| "(expected 1)".to_string());
    out.prefixes
        .push(uvarint("frameVersion", s, fv.len, fv.value, frame_note));
    let type_note = spec.map(|s| format!("({})", s.name));
    out.prefixes
        .push(uvarint("apiKey", s + fv.len, k.len, k.value, type_note));
    out.prefixes
        .push(uvarint("version", s + fv.len + k.len, v.len, v.value, None));
    match spec {
        Some(spec) => {
            out.body = Some(Embedded {
                spec,
                version,
                range: (r.pos(), e),
            })
        }
        None => {
            out.unknown = Some(Warning::at(
                WarningKind::UnknownPayload,
                s,
                format_args!("no metadata record type {key} v{version}"),
            ))
        }
    }
    out
}

/// An int16 version prefix, then the struct of that version.
fn versioned<'c>(
    buf: &[u8],
    (s, e): (usize, usize),
    find: impl Fn(i16) -> Option<&'c MessageSpec>,
) -> Layout<'c> {
    let mut out = Layout::default();
    let mut r = Reader::over(buf, (s, e));
    let Ok(v) = r.i16("version") else {
        return out;
    };
    let spec = find(v);
    let note = spec.map(|sp| format!("({} v{v})", sp.name));
    out.prefixes.push(Prefix::int16("version", s, v, note));
    match spec {
        Some(spec) => {
            out.body = Some(Embedded {
                spec,
                version: v,
                range: (s + 2, e),
            })
        }
        None => {
            out.unknown = Some(Warning::at(
                WarningKind::UnknownPayload,
                s,
                format_args!("no schema for version {v} of this record"),
            ))
        }
    }
    out
}

/// What a record's key and value decode to through their schemas (an
/// internal topic's, a control record's), to go under their nodes as those
/// are built; `None` for a plain topic's.
pub(crate) struct KeyValueNodes {
    pub key: Vec<Node>,
    pub value: Vec<Node>,
    /// The value is taken for a credential as a whole (a metadata log
    /// value whose struct did not read whole).
    pub value_secret: bool,
    /// A coordinator's record whose value is null: a tombstone.
    pub tombstone: bool,
}

/// The decoded key and value of `record`, read from `embedding`'s buffer;
/// what decoding them warns of goes to `warnings`.
pub(crate) fn key_value_nodes(
    embedding: Embedding,
    record: KeyValue,
    warnings: &mut Vec<Warning>,
) -> Option<KeyValueNodes> {
    if record.kind == PayloadKind::Plain {
        return None;
    }
    let layout = key_value_layout(embedding.cat, embedding.buf, &record);
    let (key, _) = embedding.nodes(layout.key, warnings);
    let (value, value_read) = embedding.nodes(layout.value, warnings);
    Some(KeyValueNodes {
        key,
        value,
        value_secret: layout.value_secret_unless_read && !value_read,
        tombstone: record.kind == PayloadKind::Coordinator && record.value.is_none(),
    })
}

/// What decodes the structs inside one record's bytes: the struct decoder
/// handed down, the catalogue and the buffer.
pub(crate) struct Embedding<'a, 'c> {
    pub decode: EmbeddedDecoder,
    pub cat: &'c Catalogue,
    pub buf: &'a Bytes,
}

impl Embedding<'_, '_> {
    /// A key's or value's nodes: its prefixes, then its struct; and whether
    /// the struct decoded whole.
    fn nodes(&self, layout: Layout<'_>, warnings: &mut Vec<Warning>) -> (Vec<Node>, bool) {
        let mut out: Vec<Node> = layout
            .prefixes
            .into_iter()
            .map(|p| {
                let mut n = leaf(
                    p.name,
                    p.wire,
                    p.at,
                    p.len,
                    Value::Int(p.value),
                    Region::Record,
                );
                n.note = p.note.map(Into::into);
                n
            })
            .collect();
        warnings.extend(layout.unknown);
        let read = match layout.body {
            Some(body) => self.embed(body, &mut out, warnings),
            None => false,
        };
        (out, read)
    }

    /// The struct `body` decoded into `out`; whether it decoded whole.
    fn embed(&self, body: Embedded<'_>, out: &mut Vec<Node>, warnings: &mut Vec<Warning>) -> bool {
        let Embedded {
            spec,
            version,
            range,
        } = body;
        match (self.decode)(self.cat, self.buf, spec, version, range, Region::Record) {
            Ok((node, mut w)) => {
                warnings.append(&mut w);
                out.push(node);
                true
            }
            Err(failed) => {
                let (node, e) = *failed;
                warnings.push(Warning::new(
                    WarningKind::EmbeddedInvalid,
                    Some(e.offset),
                    format!("{} v{version}: {e}", spec.name),
                ));
                out.push(node);
                false
            }
        }
    }
}

/// Names and kinds of the nodes under a key or value in Confluent Schema
/// Registry's wire format ([`schema_registry_framing`]); [`super::view`]
/// finds them by kind.
const SR_MAGIC: (&str, Kind) = ("magic", Kind::Plain);
const SR_SCHEMA_ID: (&str, Kind) = ("schemaId", Kind::SchemaRegistryId);
const SR_PAYLOAD: (&str, Kind) = ("payload", Kind::SchemaRegistryPayload);
/// What the framing's nodes cost against the expanded budget (data decompressed from the input).
pub(super) const FRAMING_COST: u64 = 3 * std::mem::size_of::<Node>() as u64;

/// The schema id of bytes in Confluent Schema Registry's wire format: magic
/// byte 0, a big-endian int32 schema id, then at least one byte of the
/// serialized data. Recognised by that shape alone (nothing else on the wire
/// says a value was written by a registry serializer), so a plain binary
/// value that happens to start with a zero byte reads as framed too.
///
/// Protobuf serializers put message indexes (a varint list) between the id
/// and the message; they are not told apart here, as their bytes read as well
/// as the start of an Avro or Protobuf payload: the payload keeps them.
pub fn schema_registry_id(b: &[u8]) -> Option<i32> {
    match b {
        [0, a, b, c, d, _, ..] => Some(i32::from_be_bytes([*a, *b, *c, *d])),
        _ => None,
    }
}

/// Under a record key or value node over `buf[node.offset..node.end()]` in
/// Schema Registry framing: `magic` (int8), `schemaId` (int32) and
/// `payload` (the rest), at their offsets; the node's note names the schema.
/// Every walk that builds a record's nodes calls this, so their trees agree.
/// Returns whether it added them.
pub(super) fn schema_registry_framing(buf: &Bytes, node: &mut Node) -> bool {
    let (start, end) = (node.offset, node.end());
    let Some(id) = buf.get(start..end).and_then(schema_registry_id) else {
        return false;
    };
    let region = node.region;
    let part = |(name, kind): (&'static str, Kind),
                ty: Wire,
                at: usize,
                len: usize,
                value: Value,
                doc: &'static str| {
        let mut n = leaf(name, ty, at, len, value, region);
        n.kind = kind;
        n.doc = Some(doc.into());
        n
    };
    // Its text preview is the views' (`render::notes`).
    let payload = part(
        SR_PAYLOAD,
        Wire::Bytes,
        start + 5,
        end - start - 5,
        Value::Bytes(Some(buf.slice(start + 5..end))),
        "the serialized data (Avro, Protobuf or JSON)",
    );
    node.children.reserve(3);
    node.children.push(part(
        SR_MAGIC,
        Wire::Fixed(Primitive::Int8),
        start,
        1,
        Value::Int(0),
        "Schema Registry framing: magic byte 0",
    ));
    node.children.push(part(
        SR_SCHEMA_ID,
        Wire::Fixed(Primitive::Int32),
        start + 1,
        4,
        Value::Int(id.into()),
        "the writer's schema id in the registry",
    ));
    node.children.push(payload);
    node.set_note(crate::text::Text::format(format_args!(
        "(Schema Registry framing, schema {id})"
    )));
    true
}
