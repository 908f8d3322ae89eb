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

fn prefix_node(
    name: &'static str,
    ty: Wire,
    at: usize,
    len: usize,
    v: i64,
    note: Option<String>,
) -> Node {
    let mut n = leaf(name, ty, at, len, Value::Int(v), Region::Record);
    n.note = note.map(Into::into);
    n
}

/// A record's key and value: where each lies in the buffer, and what the
/// batch and topic they came in say they hold.
pub(crate) struct KeyValue<'t> {
    pub kind: PayloadKind,
    pub topic: Option<&'t str>,
    pub key: Option<(usize, usize)>,
    pub value: Option<(usize, usize)>,
}

/// Attach the decoded key and value under the record's `key` and `value`
/// nodes (`out`, the record's children), read from `embedding`'s buffer.
pub(crate) fn decode_key_value(
    embedding: Embedding,
    record: KeyValue,
    out: &mut [Node],
    warnings: &mut Vec<Warning>,
) {
    let KeyValue {
        kind,
        topic,
        key,
        value,
    } = record;
    if kind == PayloadKind::Plain {
        return;
    }
    let (cat, buf) = (embedding.cat, embedding.buf);
    let mut key_nodes = Vec::new();
    let mut value_nodes = Vec::new();
    let mut record_type = None;
    // The metadata log's value read whole through its schema.
    let mut value_read = false;
    match kind {
        PayloadKind::Plain => {}
        PayloadKind::Control => {
            if let Some((s, e)) = key {
                let mut r = Reader::over(buf, (s, e));
                if let (Ok(v), Ok(t)) = (r.i16("control key version"), r.i16("control record type"))
                {
                    key_nodes.push(prefix_node(
                        "version",
                        Wire::Fixed(Primitive::Int16),
                        s,
                        2,
                        v.into(),
                        None,
                    ));
                    key_nodes.push(prefix_node(
                        "type",
                        Wire::Fixed(Primitive::Int16),
                        s + 2,
                        2,
                        t.into(),
                        Some(format!("({})", control_type(t).0)),
                    ));
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
                            value_nodes.push(prefix_node(
                                "version",
                                Wire::Fixed(Primitive::Int16),
                                s,
                                2,
                                v.into(),
                                None,
                            ));
                            value_nodes.push(prefix_node(
                                "coordinatorEpoch",
                                Wire::Fixed(Primitive::Int32),
                                s + 2,
                                4,
                                epoch.into(),
                                None,
                            ));
                        }
                    }
                    (_, Some(schema)) => embedding.versioned(
                        (s, e),
                        |v| cat.by_name(schema, v, None),
                        &mut value_nodes,
                        warnings,
                    ),
                    _ => {}
                }
            }
        }
        PayloadKind::Coordinator => {
            if let Some((s, e)) = key {
                let mut r = Reader::over(buf, (s, e));
                if let Ok(t) = r.i16("record type") {
                    record_type = Some(t);
                    let spec = coordinator_spec(cat, topic, MessageKind::CoordinatorKey, t, 0);
                    key_nodes.push(prefix_node(
                        "type",
                        Wire::Fixed(Primitive::Int16),
                        s,
                        2,
                        t.into(),
                        spec.map(|s| format!("({})", s.name)),
                    ));
                    match spec {
                        Some(spec) => {
                            embedding.embed(spec, 0, (s + 2, e), &mut key_nodes, warnings);
                        }
                        None => warnings.push(Warning::at(
                            WarningKind::UnknownPayload,
                            s,
                            format_args!("unknown coordinator record type {t}"),
                        )),
                    }
                }
            }
            if let (Some(t), Some(range)) = (record_type, value) {
                embedding.versioned(
                    range,
                    |v| coordinator_spec(cat, topic, MessageKind::CoordinatorValue, t, v),
                    &mut value_nodes,
                    warnings,
                );
            }
        }
        PayloadKind::ClusterMetadata => {
            if let Some((s, e)) = value {
                let mut r = Reader::over(buf, (s, e));
                let parts = (
                    r.uvarint("frame version"),
                    r.uvarint("api key"),
                    r.uvarint("version"),
                );
                if let (Ok(fv), Ok(k), Ok(v)) = parts {
                    let key = k.value as i16;
                    let version = v.value as i16;
                    let spec = cat.message(MessageKind::Metadata, key, version, None);
                    value_nodes.push(prefix_node(
                        "frameVersion",
                        Wire::Uvarint,
                        s,
                        fv.len,
                        fv.value as i64,
                        if fv.value == 1 {
                            None
                        } else {
                            Some("(expected 1)".into())
                        },
                    ));
                    value_nodes.push(prefix_node(
                        "apiKey",
                        Wire::Uvarint,
                        s + fv.len,
                        k.len,
                        k.value as i64,
                        spec.map(|s| format!("({})", s.name)),
                    ));
                    value_nodes.push(prefix_node(
                        "version",
                        Wire::Uvarint,
                        s + fv.len + k.len,
                        v.len,
                        v.value as i64,
                        None,
                    ));
                    match spec {
                        Some(spec) => {
                            value_read = embedding.embed(
                                spec,
                                version,
                                (r.pos(), e),
                                &mut value_nodes,
                                warnings,
                            )
                        }
                        None => warnings.push(Warning::at(
                            WarningKind::UnknownPayload,
                            s,
                            format_args!("no metadata record type {key} v{version}"),
                        )),
                    }
                }
            }
        }
    }
    // A metadata log value its schema did not read whole may be a SCRAM
    // credential or a delegation token: it is taken for one (masked whole
    // unless --show-secrets).
    if kind == PayloadKind::ClusterMetadata && value.is_some() && !value_read {
        mark_value_secret(out);
    }
    for n in out.iter_mut() {
        match n.kind {
            Kind::RecordKey if !key_nodes.is_empty() => n.children.append(&mut key_nodes),
            Kind::RecordValue if !value_nodes.is_empty() => n.children.append(&mut value_nodes),
            Kind::RecordValue
                if kind == PayloadKind::Coordinator && n.value == Value::Bytes(None) =>
            {
                n.set_note("(tombstone)")
            }
            _ => {}
        }
    }
}

/// What decodes the structs inside one record's bytes: the struct decoder
/// handed down, the catalogue and the buffer.
pub(crate) struct Embedding<'a, 'c> {
    pub decode: EmbeddedDecoder,
    pub cat: &'c Catalogue,
    pub buf: &'a Bytes,
}

impl<'c> Embedding<'_, 'c> {
    /// An int16 version prefix, then the struct of that version.
    fn versioned(
        &self,
        (s, e): (usize, usize),
        find: impl Fn(i16) -> Option<&'c MessageSpec>,
        out: &mut Vec<Node>,
        warnings: &mut Vec<Warning>,
    ) {
        let mut r = Reader::over(self.buf, (s, e));
        let Ok(v) = r.i16("version") else { return };
        let spec = find(v);
        out.push(prefix_node(
            "version",
            Wire::Fixed(Primitive::Int16),
            s,
            2,
            v.into(),
            spec.map(|sp| format!("({} v{v})", sp.name)),
        ));
        match spec {
            Some(spec) => {
                self.embed(spec, v, (s + 2, e), out, warnings);
            }
            None => warnings.push(Warning::at(
                WarningKind::UnknownPayload,
                s,
                format_args!("no schema for version {v} of this record"),
            )),
        }
    }

    /// `spec` decoded from `range` into `out`; whether it decoded whole.
    fn embed(
        &self,
        spec: &MessageSpec,
        version: i16,
        range: (usize, usize),
        out: &mut Vec<Node>,
        warnings: &mut Vec<Warning>,
    ) -> bool {
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

/// The record among `record` (a record's children) whose value is taken for
/// a credential as a whole.
pub(super) fn mark_value_secret(record: &mut [Node]) {
    if let Some(v) = record.iter_mut().find(|n| n.kind == Kind::RecordValue) {
        v.set_secret();
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
/// The reading and the tape's replay both call this, so their trees agree.
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
