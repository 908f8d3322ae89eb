//! The nodes of the annotated tree, made from the catalogue's field specs for
//! every API, version, header and record type: a field's node named from the
//! definitions, length and marker nodes, tagged entries, the notes on values,
//! and what a value tells about what follows (the topic of the records, the
//! group's protocol, records and consumer-protocol bytes). The walk that
//! makes them is `walk`'s, over an annotated tape ([`super::values`]); it
//! runs the same checks when no nodes are wanted (`sink`).

pub use super::context::{Context, PartialStruct, TopicIds};
use super::note::{LengthForm, Note};
use super::problem::{Warning, WarningKind};
use super::reader::Reader;
use super::tree::{leaf, reserve_nodes, DecodeError, Kind, Node, Region, Role, Value, Wire};
use crate::budget::Budget;
use crate::protocol::meanings::value_note;
use crate::schema::model::{FieldLabels, FieldMeaning};
use crate::schema::{Catalogue, FieldSpec, FieldType, LengthPrefix, Primitive};
use crate::text::digits::int_str;
use crate::text::{snake_case, Text};
use bytes::Bytes;

mod deferred;
pub(crate) use deferred::for_each_element;
pub use deferred::{open_element_stub, stub_elements};
mod sink;
use sink::{Built, Nodes};
mod walk;

/// How field nodes are named: body fields keep their schema names; header
/// fields are shown in the protocol guide's snake_case with kwire's own notes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Naming {
    Schema,
    Header,
}

pub(crate) struct FieldDecoder<'a, 'c> {
    /// Where the struct starts and may end; after it is decoded, where it ended.
    pub r: Reader<'a>,
    /// The frame's bytes, shared with byte values without copying.
    pub frame: &'a Bytes,
    pub version: i16,
    /// Whether the message is flexible at `version` (compact forms, tagged sections).
    pub flexible: bool,
    pub region: Region,
    pub naming: Naming,
    pub catalogue: &'c Catalogue,
    pub warnings: Vec<Warning>,
    /// Damage in record data: the frame decodes, but these bytes are wrong.
    pub record_damage: Vec<DecodeError>,
    /// Records fields a walk without nodes left off the tape, for their
    /// reader ([`super::tree::Frame::deferred`]).
    pub deferred: Vec<super::tree::DeferredRecords>,
    pub ctx: Context,
}

type Res = Result<(), DecodeError>;

impl<'a, 'c> FieldDecoder<'a, 'c> {
    /// A decoder for `spec` at `version` over `frame[start..end]` within
    /// `ctx` (the topic, how records are decoded), whose nodes are in
    /// `region` and named as the definitions name them ([`Self::named`] to
    /// change it).
    pub fn over(
        cat: &'c Catalogue,
        frame: &'a Bytes,
        (start, end): (usize, usize),
        spec: &crate::schema::MessageSpec,
        version: i16,
        region: Region,
        ctx: Context,
    ) -> Self {
        FieldDecoder {
            r: Reader::over(frame, (start, end)),
            frame,
            version,
            flexible: spec.is_flexible(version),
            region,
            naming: Naming::Schema,
            catalogue: cat,
            warnings: Vec::new(),
            record_damage: Vec::new(),
            deferred: Vec::new(),
            ctx,
        }
    }

    /// The decoder with its field nodes named by `naming`.
    pub(crate) fn named(mut self, naming: Naming) -> Self {
        self.naming = naming;
        self
    }

    /// A field node's display name and type, shared with the spec's labels.
    #[inline(always)]
    fn field_node(&self, f: &FieldSpec, decl: u16, at: usize) -> Node {
        let (name, ty): (Text, Text) = match (f.labels(), &f.ty) {
            (Some(l), FieldType::Primitive(p)) => (self.label_name(l), Text::own_words(p.as_str())),
            (Some(l), _) => (self.label_name(l), l.text(l.ty)),
            (None, _) => {
                let name = match self.naming {
                    Naming::Schema => f.name.clone(),
                    Naming::Header => snake_case(&f.name),
                };
                (name.into(), f.ty.to_string().into())
            }
        };
        let mut n = Node::new(name, ty, at, self.region, Role::Field { decl });
        if let FieldType::Primitive(p) = &f.ty {
            n.wire = Wire::of(*p);
        }
        n
    }

    /// A field's node at `at`, in place at the end of `out`, named and documented.
    #[inline(always)]
    fn open_field<'o, O: Nodes>(
        &self,
        f: &FieldSpec,
        decl: u16,
        at: usize,
        out: &'o mut O,
    ) -> &'o mut O::Node {
        // The node goes in place first and is filled there: a node is large, and moving it costs.
        let built = out.push(|| self.field_node(f, decl, at));
        let Some(node) = built.node() else {
            return built;
        };
        if self.naming == Naming::Header {
            node.set_key(match f.labels() {
                Some(l) => l.name,
                None => crate::schema::intern::intern(&f.name),
            });
            node.doc = header_doc(&f.name).map(Text::own_words);
        } else {
            // Shared with the field's labels: a description is often longer than a Text keeps inline.
            node.doc = match f.labels() {
                Some(l) => l.about.clone(),
                None => f.about.clone().map(Text::from),
            };
        }
        built
    }

    /// Whether field `f` is nullable and compact (uvarint lengths) here.
    fn forms(&self, f: &FieldSpec, in_tag: bool) -> (bool, bool) {
        (
            f.is_nullable_in(self.version),
            f.is_compact_in(self.version, self.flexible, in_tag),
        )
    }

    fn label_name(&self, l: &FieldLabels) -> Text {
        l.text(match self.naming {
            Naming::Schema => l.name,
            Naming::Header => l.snake,
        })
    }

    /// A string that names the topic of the records that follow, or the group's protocol type.
    fn learn_string(&mut self, f: &FieldSpec, s: &str) {
        match f.meaning() {
            FieldMeaning::TopicName if !self.ctx.topic_forced => {
                self.ctx.topic = Some(s.to_string())
            }
            FieldMeaning::ProtocolType => self.ctx.protocol_type = Some(s.to_string()),
            _ => {}
        }
    }

    /// A topic named by id: its records are the named topic's when the
    /// capture tied the id to a name (the zero uuid is Kafka's "no id").
    fn learn_topic_id(&mut self, f: &FieldSpec, u: &[u8; 16]) {
        if *u != [0; 16] && !self.ctx.topic_forced && f.meaning() == FieldMeaning::TopicId {
            self.ctx.topic = self.ctx.topic_ids.name(u).map(str::to_string);
        }
    }

    /// Whether the bytes `b` of records field `f` at `at` are not record
    /// batches (warned so); an empty field and `UnalignedRecords` are not asked.
    fn not_batches(&mut self, f: &FieldSpec, at: usize, b: &[u8]) -> bool {
        let not = !b.is_empty()
            && crate::protocol::record_batch::holds_whole_batches(&f.name)
            && !crate::decode::records::layout::plausible(b);
        if not {
            self.warnings.push(Warning::at(
                WarningKind::NotBatches,
                at,
                format_args!(
                    "{}: {} bytes that do not start with a record batch",
                    f.name,
                    b.len()
                ),
            ));
        }
        not
    }

    /// The consumer-protocol schema that the bytes of field `f` hold, in a
    /// group whose protocol type is `consumer`.
    fn consumer_protocol(&self, f: &FieldSpec) -> Option<&'static str> {
        if self.ctx.protocol_type.as_deref() != Some("consumer") {
            return None;
        }
        match f.name.as_str() {
            "Metadata" | "MemberMetadata" | "subscription" => Some("ConsumerProtocolSubscription"),
            "Assignment" | "MemberAssignment" | "assignment" => Some("ConsumerProtocolAssignment"),
            _ => None,
        }
    }

    /// Consumer protocol bytes: int16 version, then that version's struct. A newer
    /// version than known is read as the newest known, trailing bytes ignored.
    fn embedded_consumer_protocol(
        &mut self,
        schema: &str,
        start: usize,
        end: usize,
        node: &mut impl Built,
    ) {
        let mut r = Reader::over(self.frame, (start, end));
        let Ok(v) = r.i16("version") else { return };
        let newest = self
            .catalogue
            .entries_named(schema)
            .map(|e| e.spec().valid_versions.hi)
            .max();
        let Some(newest) = newest else { return };
        let use_v = v.min(newest).max(0);
        let Some(spec) = self.catalogue.by_name(schema, use_v, None) else {
            return;
        };
        match decode_embedded(
            self.catalogue,
            self.frame,
            spec,
            use_v,
            (start + 2, end),
            self.region,
        ) {
            Ok((body, mut w)) => {
                self.warnings.append(&mut w);
                if let Some(node) = node.node() {
                    let mut ver = leaf(
                        "version",
                        Wire::Fixed(Primitive::Int16),
                        start,
                        2,
                        Value::Int(v.into()),
                        self.region,
                    );
                    ver.set_note(if use_v == v {
                        format!("({schema} v{v})")
                    } else {
                        format!("({schema} v{v}, read as v{use_v})")
                    });
                    node.children.push(ver);
                    node.children.push(body);
                }
            }
            Err(failed) => {
                let e = failed.1;
                // The group said "consumer": these bytes should have been its protocol's.
                self.warnings.push(Warning::at(
                    WarningKind::EmbeddedInvalid,
                    e.offset,
                    format_args!("not a {schema} v{use_v}: expected {}", e.expected),
                ));
                if let Some(node) = node.node() {
                    node.set_note(format!("(not a {schema}: {e})"));
                }
            }
        }
    }

    /// The note of a uuid: for a topic id the capture tied to a name, `(topic "orders")`.
    fn uuid_note(&self, f: &FieldSpec, u: &[u8; 16]) -> Option<Text> {
        (!self.ctx.topic_ids.is_empty() && f.meaning() == FieldMeaning::TopicId)
            .then(|| self.ctx.topic_ids.note(u))
            .flatten()
    }

    fn null_check(&mut self, nullable: bool, name: &str, at: usize) {
        if !nullable {
            self.warnings.push(Warning::at(
                WarningKind::NullNotNullable,
                at,
                format_args!(
                    "{name}: null in a field that is not nullable at v{}",
                    self.version
                ),
            ));
        }
    }

    /// A nullable struct's presence marker, `value` as read.
    fn marker_node(&self, at: usize, len: usize, in_tag: bool, value: Value) -> Node {
        let present = matches!(value, Value::Uint(1..) | Value::Int(0..));
        let mut m = leaf(
            Text::own_words("present"),
            if in_tag {
                Wire::Uvarint
            } else {
                Wire::Fixed(Primitive::Int8)
            },
            at,
            len,
            value,
            self.region,
        );
        m.kind = Kind::PresenceMarker;
        m.set_note(Text::own_words(if present {
            "(present)"
        } else {
            "(null)"
        }));
        m
    }

    /// An array's `length` node: `raw` as written (n+1 when compact, n
    /// otherwise; null as 0 or -1); its doc says how many elements follow.
    fn length_node(&self, at: usize, len: usize, compact: bool, raw: i64) -> Node {
        let value = if compact {
            Value::Uint(raw as u64)
        } else {
            Value::Int(raw)
        };
        let mut n = leaf(
            Text::own_words("length"),
            if compact {
                Wire::Uvarint
            } else {
                Wire::Fixed(Primitive::Int32)
            },
            at,
            len,
            value,
            self.region,
        );
        n.kind = if compact {
            Kind::CompactArrayLength
        } else {
            Kind::ArrayCount
        };
        if compact {
            n.set_note(Text::own_words(if raw == 0 {
                "(compact, 0=null)"
            } else {
                "(compact, n+1)"
            }));
        }
        n
    }

    /// Element `i` of array field `f` (of `inner`), at `at`. A struct element's value is set.
    #[inline(always)]
    fn element_node(
        &self,
        f: &FieldSpec,
        labels: Option<&FieldLabels>,
        inner: &FieldType,
        i: usize,
        at: usize,
    ) -> Node {
        // Without labels, a struct element is named after its struct, a primitive one after its field.
        let name = |base: &str| match labels {
            Some(l) => l.element_name(i),
            None => Text::format(format_args!("{base}[{i}]")).into(),
        };
        match inner {
            FieldType::Struct(sname) => {
                let mut el = Node::new(
                    name(sname),
                    struct_type(labels, sname),
                    at,
                    self.region,
                    Role::Element,
                );
                el.value = Value::Struct(true);
                el
            }
            FieldType::Primitive(p) => {
                let ty = Text::own_words(p.as_str());
                let mut el = Node::new(name(&f.name), ty, at, self.region, Role::Element);
                el.wire = Wire::of(*p);
                el
            }
            FieldType::Array(_) => Node::new(
                format!("{}[{i}]", f.name),
                "array",
                at,
                self.region,
                Role::Element,
            ),
        }
    }
    fn tagged_section_node(&self, at: usize) -> Node {
        let doc = match self.naming {
            Naming::Header => "number of tagged fields in the header",
            Naming::Schema => "number of tagged fields in this struct",
        };
        let mut n = Node::new(
            Text::own_words("tagged_fields"),
            Text::own_words("uvarint"),
            at,
            Region::TaggedFields,
            Role::TaggedSection,
        );
        n.doc = Some(Text::own_words(doc));
        n
    }

    /// The field that tag `tag_no` holds at this version, with its declaration index.
    fn known_tag<'f>(
        &self,
        fields: &'f [FieldSpec],
        tag_no: u32,
    ) -> Option<(usize, &'f FieldSpec)> {
        fields
            .iter()
            .enumerate()
            .find(|(_, f)| f.tag == Some(tag_no) && f.is_tagged_in(self.version))
    }

    /// The warning for the varint of `slot`'s prefix when the tape marked it
    /// over-long (`which`, an `OVERLONG_*` flag of [`crate::decode::tape`]).
    fn overlong_varint(&mut self, slot: &crate::decode::tape::Slot, which: u8, what: &str) {
        if slot.marks & which != 0 {
            self.overlong_warning(slot.at as usize, usize::from(slot.prefix), what);
        }
    }

    /// The warning for a varint of `len` bytes at `at` that is longer than
    /// its value needs: legal, but no writer needs it.
    fn overlong_warning(&mut self, at: usize, len: usize, what: &str) {
        self.warnings.push(Warning::at(
            WarningKind::OverlongVarint,
            at,
            format_args!("{what} is an over-long varint ({len} bytes)"),
        ));
    }

    fn check_tag_order(&mut self, start: usize, tag: u64, last_tag: &mut Option<u64>) {
        if last_tag.is_some_and(|t| tag <= t) {
            let what = if last_tag == &Some(tag) {
                "repeats the tag before it"
            } else {
                "is not in ascending order"
            };
            self.warnings.push(Warning::at(
                WarningKind::TagOrder,
                start,
                format_args!("tag {tag} {what} (tags are written once each, in ascending order)"),
            ));
        }
        *last_tag = Some(tag);
    }

    /// A tagged field (slot `k`, decoded whole) whose entry declared `size` bytes.
    fn check_tag_size(
        &mut self,
        tape: &crate::decode::tape::Values,
        (k, payload): (u32, &crate::decode::tape::Slot),
        f: &FieldSpec,
        tag_no: u32,
        size: u64,
    ) {
        let used = payload.len as usize;
        if walk::stops_within(tape, k) || used as u64 == size {
            return;
        }
        self.warnings.push(Warning::at(
            WarningKind::TagSize,
            payload.at as usize,
            format_args!(
                "tag {tag_no} ({}) declares {size} bytes but its value used {used}",
                f.name
            ),
        ));
    }

    /// An unknown tag's payload (`frame[at..at + size]`), kept raw under its entry.
    fn unknown_tag(
        &mut self,
        fields: &[FieldSpec],
        entry: &mut impl Built,
        start: usize,
        tag_no: u32,
        (at, size): (usize, usize),
    ) {
        self.tag_version(fields, start, tag_no);
        let Some(entry) = entry.node() else {
            return;
        };
        entry.set_note(format!("(unknown tag, size {size})"));
        let mut d = Node::new(
            "data",
            "bytes",
            at,
            Region::TaggedFields,
            Role::UnknownTag { tag: tag_no },
        );
        d.value = Value::Bytes(Some(self.frame.slice(at..at + size)));
        (d.len, d.wire) = (size, Wire::Bytes);
        d.doc = Some("unknown tag, kept raw".into());
        entry.children.push(d);
    }

    /// A tag at `start` that the definitions give a field which is not
    /// tagged at this version.
    fn tag_version(&mut self, fields: &[FieldSpec], start: usize, tag_no: u32) {
        if let Some(f) = fields.iter().find(|f| f.tag == Some(tag_no)) {
            let tagged = f
                .tagged
                .map_or_else(String::new, |t| format!(", tagged in v{t}"));
            self.warnings.push(Warning::at(
                WarningKind::TagVersion,
                start,
                format_args!(
                    "tag {tag_no} ({}{tagged}) is not valid at v{} (Java would reject it)",
                    f.name, self.version
                ),
            ));
        }
    }
}

/// The `count` node of a non-empty tagged section.
fn tag_count_node(at: usize, count: u64, len: usize) -> Node {
    let mut c = leaf(
        "count",
        Wire::Uvarint,
        at,
        len,
        Value::Uint(count),
        Region::TaggedFields,
    );
    c.kind = Kind::TagCount;
    c.doc = Some("tagged fields follow (a plain count, not n+1)".into());
    c
}

/// A tagged entry at `start` with its `tag` and `size` nodes (each a value and its width).
fn tag_entry_node(
    start: usize,
    (tag, tag_len): (u64, usize),
    (size, size_len): (u64, usize),
) -> Node {
    let tag_no = tag as u32;
    let mut entry = Node::new(
        format!("tag {tag_no}"),
        "tagged_field",
        start,
        Region::TaggedFields,
        Role::TaggedEntry { tag: tag_no },
    );
    entry.set_note(format!("(size {size})"));
    let mut t = leaf(
        "tag",
        Wire::Uvarint,
        start,
        tag_len,
        Value::Uint(tag),
        Region::TaggedFields,
    );
    t.kind = Kind::Tag;
    let mut s = leaf(
        "size",
        Wire::Uvarint,
        start + tag_len,
        size_len,
        Value::Uint(size),
        Region::TaggedFields,
    );
    s.kind = Kind::TagSize;
    s.doc = Some("bytes in the value that follows".into());
    entry.children.push(t);
    entry.children.push(s);
    entry
}

/// The string at `frame[at..at + n]`; invalid UTF-8 is kept as bytes.
fn string_value(frame: &Bytes, at: usize, n: usize) -> Value {
    match frame.get(at..at + n).and_then(Text::from_utf8) {
        Some(s) => Value::Str(Some(s)),
        None => Value::InvalidUtf8(frame.slice(at..(at + n).min(frame.len()))),
    }
}

/// A struct field's or element's type as shown.
fn struct_type(labels: Option<&FieldLabels>, sname: &str) -> Text {
    match labels.and_then(|l| Some(l.text(l.struct_name?))) {
        Some(s) => s,
        None => sname.to_string().into(),
    }
}

/// How a string's or bytes' length was written: its node's note and kind.
pub(super) fn mark_length(form: LengthForm, node: &mut Node) {
    node.set_note(Note::length(form));
    node.kind = match form.prefix {
        LengthPrefix::Compact => Kind::CompactPrefixed,
        LengthPrefix::Int16 => Kind::Int16Prefixed,
        LengthPrefix::Int32 => Kind::Int32Prefixed,
    };
}

/// Notes for integer fields whose numbers mean more: error codes and API
/// keys by name, timestamps, durations and enums (`protocol::meanings::value_note`).
pub(super) fn int_note(meaning: FieldMeaning, v: i64, cat: &Catalogue) -> Option<Note> {
    match meaning {
        FieldMeaning::Plain => None,
        FieldMeaning::ErrorCode => Some(Note::error_code(i16::try_from(v).ok()?)),
        // `(Produce)`.
        FieldMeaning::ApiKey => {
            let api = cat.api_name(i16::try_from(v).ok()?)?;
            Some(Text::concat(&["(", api, ")"]).into())
        }
        _ => value_note(meaning, v).map(Note::from),
    }
}

/// Capacity reserved ahead for an array's elements or a struct's fields at most.
const MAX_RESERVE: usize = 1024;

/// The doc of a message body node.
pub(crate) fn body_doc(version: i16) -> Text {
    let mut digits = [0u8; 20];
    Text::concat(&[
        "message body, version ",
        int_str(version.into(), &mut digits),
    ])
}

/// kwire's own words for the header fields.
fn header_doc(name: &str) -> Option<&'static str> {
    Some(match name {
        "RequestApiKey" => "numeric id of the API being called",
        "RequestApiVersion" => "version of the request body that follows",
        "CorrelationId" => "chosen by the client; the response carries the same id",
        "ClientId" => "never compact, even in flexible headers",
        _ => return None,
    })
}

/// A context for a frame or record data: nothing learned yet, the budget
/// unlimited, and this module's [`decode_embedded`] for the structs inside
/// record bytes.
impl Default for Context {
    fn default() -> Self {
        Context {
            topic: None,
            topic_forced: false,
            protocol_type: None,
            budget: Budget::default(),
            topic_ids: TopicIds::default(),
            embedded: decode_embedded,
            defer_records_over: None,
            defer_elements_over: None,
            defer_record_arrays: false,
            placed_records: std::sync::Arc::new([]),
            fits_only: false,
        }
    }
}

/// Decode a schema-defined struct that sits inside other bytes (record keys and
/// values, consumer protocol metadata), with offsets in the same buffer.
/// Trailing bytes are reported as a warning. On error, returns the partial node (boxed: it is large).
pub fn decode_embedded(
    cat: &Catalogue,
    buf: &Bytes,
    spec: &crate::schema::MessageSpec,
    version: i16,
    (start, end): (usize, usize),
    region: Region,
) -> Result<(Node, Vec<Warning>), Box<PartialStruct>> {
    let mut d = FieldDecoder::over(
        cat,
        buf,
        (start, end),
        spec,
        version,
        region,
        Context::default(),
    );
    let mut node = Node::new(
        spec.shared_name.get(&spec.name),
        "struct",
        start,
        region,
        Role::Structure,
    );
    node.set_note(Note::version(version));
    let res = d.decode_struct(
        end - start,
        &spec.plan(version),
        &spec.fields,
        &mut node.children,
    );
    node.len =
        d.r.pos()
            .max(node.children.last().map_or(start, |c| c.end()))
            - start;
    match res {
        Ok(()) => {
            if d.r.pos() < end {
                d.warnings.push(Warning::at(
                    WarningKind::EmbeddedTrailing,
                    d.r.pos(),
                    format_args!(
                        "{} bytes after the {} v{version} struct",
                        end - d.r.pos(),
                        spec.name
                    ),
                ));
            }
            Ok((node, d.warnings))
        }
        Err(e) => {
            node.set_error(e.expected.clone());
            Err(Box::new((node, e)))
        }
    }
}
