//! The annotated tree: what every renderer draws. Each node knows its bytes.

use super::note::Note;
use crate::schema::{LengthPrefix, Primitive};
use crate::text::name::Name;
use crate::text::Text;
use bytes::Bytes;
use serde::Serialize;
use std::sync::Arc;

/// Which part of a frame a node belongs to; the hex grid colours bytes by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Region {
    Frame,
    RpcHeader,
    RequestBody,
    ResponseBody,
    RecordBatch,
    Record,
    TaggedFields,
}

impl Region {
    pub const ALL: [Region; 7] = [
        Region::Frame,
        Region::RpcHeader,
        Region::RequestBody,
        Region::RecordBatch,
        Region::Record,
        Region::ResponseBody,
        Region::TaggedFields,
    ];

    /// The legend label, as on the seed pages.
    pub fn label(&self) -> &'static str {
        match self {
            Region::Frame => "frame",
            Region::RpcHeader => "rpc header",
            Region::RequestBody => "request body",
            Region::ResponseBody => "response body",
            Region::RecordBatch => "RecordBatch",
            Region::Record => "Record",
            Region::TaggedFields => "tagged_fields",
        }
    }
}

/// A decoded value, typed so that JSON and text renderers need not re-parse bytes.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A container or framing node with no value of its own.
    None,
    Int(i64),
    Uint(u64),
    Float(f64),
    Bool(bool),
    /// A string; `None` is null. Invalid UTF-8 is kept as bytes.
    Str(Option<Text>),
    InvalidUtf8(Bytes),
    /// Bytes or records; `None` is null.
    Bytes(Option<Bytes>),
    Uuid([u8; 16]),
    /// An array with its element count; `None` is null.
    Array(Option<usize>),
    /// A struct; `false` for a null nullable struct.
    Struct(bool),
}

/// What a node is in the schema, so the JSON contract can be built from the tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Framing, headers' containers, the body container.
    Structure,
    /// A schema field; `decl` is its position in the struct's declaration.
    Field { decl: u16 },
    /// An array element.
    Element,
    /// An encoding detail: a length prefix, a tag, a size, a presence marker.
    Encoding,
    /// A tagged-fields section (its value is the count).
    TaggedSection,
    /// One entry of a tagged-fields section (tag, size and the field).
    TaggedEntry { tag: u32 },
    /// The payload of an unknown tag.
    UnknownTag { tag: u32 },
    /// Decompressed data: this node's value holds the buffer, and its
    /// children's offsets index that buffer, not the frame.
    Decompressed,
}

/// What a node is within the encoding, where its role and type do not say:
/// set where the decoder builds the node (every walk that builds nodes calls
/// the same constructors), so that views and teaching dispatch on it, never on
/// names, types as shown or notes. One byte, in the node's padding.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Nothing more to say than its role, type and value.
    #[default]
    Plain,
    /// A string or byte array after a compact length (uvarint n+1, 0 = null).
    CompactPrefixed,
    /// A string after an int16 length (-1 = null).
    Int16Prefixed,
    /// A byte array after an int32 length (-1 = null).
    Int32Prefixed,
    /// An array's compact length (uvarint n+1, 0 = null): its first child.
    CompactArrayLength,
    /// An array's int32 count (-1 = null): its first child.
    ArrayCount,
    /// A tagged section's count of entries (a plain count, not n+1).
    TagCount,
    /// A tagged entry's tag.
    Tag,
    /// A tagged entry's size.
    TagSize,
    /// A nullable struct's presence marker (int8, or uvarint in a tagged field).
    PresenceMarker,
    /// The length of the bytes after it in a record or legacy message (a
    /// key's, a value's, a header's key's or value's; -1 = null).
    BytesLength,
    /// A batch's or message's stored checksum, equal to the bytes' checksum.
    CrcValid,
    /// A batch's or message's stored checksum that is not the bytes' checksum.
    CrcMismatch,
    /// The bytes of a batch cut short by the end of the data.
    TruncatedBatch,
    /// A record's or legacy message's key.
    RecordKey,
    /// A record's or legacy message's value.
    RecordValue,
    /// The schema id of a key or value in Schema Registry framing.
    SchemaRegistryId,
    /// The serialized data after a Schema Registry framing's schema id.
    SchemaRegistryPayload,
    /// A frame's request or response header (the root's child).
    Header,
    /// A frame's request or response body, or a standalone payload's struct
    /// (the root's child).
    Body,
    /// A part of the record format, which has no definitions whose
    /// declaration index could say which field a node is.
    Record(RecordPart),
}

/// The parts of record batches, records, headers and legacy messages that
/// views look for (a v2 batch's header fields are also known by position).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RecordPart {
    /// `RecordBatch[i]`: a v2 batch.
    Batch,
    /// `Message[i]`: a legacy (v0/v1) message.
    Message,
    /// `Record[i]` of a v2 batch.
    Record,
    BaseOffset,
    /// A batch's, record's or message's attributes.
    Attributes,
    /// A batch's or message's magic byte.
    Magic,
    BaseTimestamp,
    MaxTimestamp,
    TimestampDelta,
    OffsetDelta,
    /// A record's header count.
    Headers,
    HeaderKey,
    HeaderValue,
    /// A legacy message's offset.
    Offset,
    /// A legacy (v1) message's timestamp.
    Timestamp,
}

#[derive(Clone, Debug)]
pub struct Node {
    /// Display name (`GroupId`, `WriteStateData[0]`, `client_id`).
    pub name: Name,
    /// Type as shown: `int32`, `[]WriteStateData`, `uvarint`, `struct`.
    pub ty: Text,
    pub offset: usize,
    pub len: usize,
    pub value: Value,
    /// Short encoding note: `(compact, len+1=1)`, `(NOT_COORDINATOR)`.
    pub note: Option<Note>,
    /// What the node means: upstream prose when loaded, else kwire's own
    /// words. Read through [`Node::doc`], which also has the docs views work
    /// out when they draw a node (an array length's `3 elements follow`).
    pub doc: Option<Text>,
    pub region: Region,
    pub role: Role,
    /// What the node is within the encoding, where role and type do not say.
    pub kind: Kind,
    /// How its bytes hold its value, typed where the node is made.
    pub wire: Wire,
    /// The schema field name when it differs from the display name (header
    /// fields): interned, so that setting it allocates nothing.
    key: Option<&'static str>,
    /// What few nodes carry (an error), behind one pointer: nodes are the
    /// tree's bulk, and their size is memory traffic.
    extra: Option<Box<NodeExtra>>,
    pub children: Vec<Node>,
}

#[derive(Clone, Debug, Default)]
struct NodeExtra {
    /// Set on the node where decoding stopped.
    error: Option<String>,
    /// A credential: shown only with `--show-secrets` (see `crate::decode::secrets`).
    secret: bool,
    /// What is walked when the node is drawn.
    deferred: Option<Deferred>,
}

/// What a node leaves for its view to walk when it draws it, or for the
/// explorer to walk when it is opened.
#[derive(Clone, Debug)]
pub(crate) enum Deferred {
    Records(DeferredRecords),
    Elements(DeferredElements),
}

/// Elements of an array of structs that the tree's decode left unwalked
/// ([`crate::decode::DecodeOptions::defer_elements_over`]): the whole
/// array's, or one element's (an explorer's stub). Their warnings are
/// already the frame's: the decode walked them without nodes.
#[derive(Clone, Debug)]
pub(crate) struct DeferredElements {
    /// Where the first of them starts, and its index in the array.
    pub first: usize,
    pub first_index: usize,
    pub count: usize,
    pub array: Arc<LeftArray>,
}

/// What decoding and walking an array's elements one at a time needs,
/// shared by its stubs.
#[derive(Clone, Debug)]
pub(crate) struct LeftArray {
    /// Where the reader of the struct holding the array ends.
    pub limit: usize,
    /// The array field, whether its elements' lengths are compact, and the
    /// plan of its elements at the frame's version when they are structs.
    pub field: crate::schema::FieldSpec,
    pub compact: bool,
    pub plan: Option<crate::schema::plan::SharedPlan>,
    pub version: i16,
    pub flexible: bool,
    pub region: Region,
    /// Named as header fields are (snake_case).
    pub header_naming: bool,
    /// What the decoder had learned when it reached the array.
    pub topic: Option<String>,
    pub topic_forced: bool,
    pub protocol_type: Option<String>,
    pub topic_ids: super::topic_ids::TopicIds,
    pub budget: crate::budget::Budget,
    /// Arrays within the elements left for drawing too.
    pub elements_over: Option<usize>,
    /// Whether arrays of structs that hold records are left too
    /// ([`crate::decode::DecodeOptions::defer_record_arrays`]).
    pub record_arrays: bool,
    /// The records fields within the elements, each left for drawing, in
    /// the frame's order, with their places among the frame's warnings and
    /// damage as the frame's decode found them (a walk of an element alone
    /// cannot know them): an element's walk takes its own from here.
    pub records: Arc<[DeferredRecords]>,
}

/// A records field left unwalked by the tree's decode
/// ([`crate::decode::DecodeOptions::defer_records_over`]): what walking it a
/// batch at a time when it is drawn needs, and where its warnings and damage
/// go among the frame's (they are the frame's as if it had been walked then).
#[derive(Clone, Debug, PartialEq)]
pub struct DeferredRecords {
    /// The records' bytes in the frame.
    pub range: (usize, usize),
    /// The topic they belong to, as the decoder knew it there.
    pub topic: Option<String>,
    /// A batch cut short is damage (a request's records).
    pub cut_is_damage: bool,
    /// Where the walk's warnings go in [`Frame::warnings`].
    pub warnings_at: usize,
    /// Where its damage goes in [`Frame::record_damage`].
    pub damage_at: usize,
    /// The number of the range's first batch or message among the field's
    /// (0 but for one batch left unwalked on its own: an explorer's stub).
    pub first_item: usize,
    /// For a stub: what the budget had spent when the frame's walk reached
    /// it ([`crate::budget::Budget::spent`]), so that opening it walks it
    /// within the same room, as the frame's walk did.
    pub budget_before: Option<(u64, u64)>,
}

impl Node {
    #[inline]
    pub fn new(
        name: impl Into<Name>,
        ty: impl Into<Text>,
        offset: usize,
        region: Region,
        role: Role,
    ) -> Node {
        Node {
            name: name.into(),
            ty: ty.into(),
            offset,
            len: 0,
            value: Value::None,
            note: None,
            doc: None,
            region,
            role,
            kind: Kind::Plain,
            wire: Wire::Other,
            key: None,
            extra: None,
            children: Vec::new(),
        }
    }

    /// What the node means (the `doc` field), or for an array's
    /// length, how many elements follow, worked out here rather than made
    /// for every array when it was decoded.
    pub fn doc(&self) -> Option<std::borrow::Cow<'_, str>> {
        use std::borrow::Cow;
        if let Some(d) = &self.doc {
            return Some(Cow::Borrowed(d));
        }
        let follow = self.elements_follow()?;
        let mut out = Vec::new();
        push_elements_doc(&mut out, follow);
        // kwire's own words: ASCII.
        Some(Cow::Owned(String::from_utf8(out).unwrap_or_default()))
    }

    /// Whether the node has a [`Node::doc`].
    #[inline(always)]
    pub(crate) fn has_doc(&self) -> bool {
        self.doc.is_some() || self.elements_follow().is_some()
    }

    /// [`Node::doc`] appended to `out`, escaped for a terminal.
    #[inline(always)]
    pub(crate) fn push_doc(&self, out: &mut Vec<u8>) {
        if let Some(d) = &self.doc {
            return crate::text::escape::sanitize_text_into(out, d);
        }
        if let Some(follow) = self.elements_follow() {
            push_elements_doc(out, follow);
        }
    }

    /// An array length's elements as written (`None` for a null array);
    /// `None` for any other node.
    #[inline(always)]
    fn elements_follow(&self) -> Option<Option<usize>> {
        let (written, prefix) = match (self.kind, &self.value) {
            (Kind::CompactArrayLength, Value::Uint(n)) => (*n as i64, LengthPrefix::Compact),
            (Kind::ArrayCount, Value::Int(n)) => (*n, LengthPrefix::Int32),
            _ => return None,
        };
        Some(prefix.length(written).ok().flatten())
    }

    pub(crate) fn set_note(&mut self, note: impl Into<Note>) {
        self.note = Some(note.into());
    }

    /// Where decoding stopped, when it stopped at this node.
    pub fn error(&self) -> Option<&str> {
        self.extra.as_ref()?.error.as_deref()
    }

    pub(crate) fn set_error(&mut self, error: impl Into<String>) {
        self.extra.get_or_insert_with(Default::default).error = Some(error.into());
    }

    /// Whether the node's bytes are a credential.
    pub fn is_secret(&self) -> bool {
        self.extra.as_ref().is_some_and(|e| e.secret)
    }

    pub(crate) fn set_secret(&mut self) {
        self.extra.get_or_insert_with(Default::default).secret = true;
    }

    /// A records field whose batches are walked when it is drawn.
    pub fn deferred_records(&self) -> Option<&DeferredRecords> {
        match self.extra.as_ref()?.deferred.as_ref()? {
            Deferred::Records(d) => Some(d),
            Deferred::Elements(_) => None,
        }
    }

    /// An array whose elements are walked when it is drawn.
    pub(crate) fn deferred_elements(&self) -> Option<&DeferredElements> {
        match self.extra.as_ref()?.deferred.as_ref()? {
            Deferred::Elements(d) => Some(d),
            Deferred::Records(_) => None,
        }
    }

    pub(crate) fn set_deferred_elements(&mut self, d: DeferredElements) {
        self.set_deferred(Deferred::Elements(d));
    }

    /// What the node leaves to walk later, records or elements.
    pub(crate) fn deferred(&self) -> Option<&Deferred> {
        self.extra.as_ref()?.deferred.as_ref()
    }

    pub(crate) fn set_deferred(&mut self, d: Deferred) {
        self.extra.get_or_insert_with(Default::default).deferred = Some(d);
    }

    /// No longer left to walk: its children now hold what it is.
    pub(crate) fn take_deferred(&mut self) -> Option<Deferred> {
        self.extra.as_mut()?.deferred.take()
    }

    /// Whether the node has children still to be walked, which its view
    /// walks as it draws them: deferred records or elements.
    pub fn walked_later(&self) -> bool {
        match self.extra.as_ref().and_then(|e| e.deferred.as_ref()) {
            Some(Deferred::Records(d)) => d.range.0 < d.range.1,
            Some(Deferred::Elements(d)) => d.count > 0,
            None => false,
        }
    }

    /// How many records fields at or under this node are still left for
    /// drawing, those within left arrays' elements included (an element
    /// stub counts its array's).
    pub(crate) fn deferred_count(&self) -> usize {
        let mut n = 0;
        self.walk(&mut |node, _| {
            n += match node.deferred() {
                Some(Deferred::Records(_)) => 1,
                Some(Deferred::Elements(d)) => d.array.records.len(),
                None => 0,
            }
        });
        n
    }

    pub(crate) fn set_deferred_records(&mut self, d: DeferredRecords) {
        self.set_deferred(Deferred::Records(d));
    }

    /// No longer left for drawing: its children now hold what it is.
    pub(crate) fn clear_deferred_records(&mut self) -> Option<DeferredRecords> {
        let extra = self.extra.as_mut()?;
        match extra.deferred.take()? {
            Deferred::Records(d) => Some(d),
            elements => {
                extra.deferred = Some(elements);
                None
            }
        }
    }

    /// The schema field name, when the display name differs (header fields).
    pub fn key(&self) -> Option<&'static str> {
        self.key
    }

    pub(crate) fn set_key(&mut self, key: &'static str) {
        self.key = Some(key);
    }

    pub fn end(&self) -> usize {
        self.offset + self.len
    }

    /// The schema field name (JSON key) of a field's node (an element's
    /// name is its index, no key: empty).
    pub(crate) fn field_key(&self) -> &str {
        self.key
            .or_else(|| self.name.as_text().map(|t| t.as_str()))
            .unwrap_or_default()
    }

    /// Pre-order walk with depth.
    pub fn walk<'a>(&'a self, f: &mut dyn FnMut(&'a Node, usize)) {
        fn go<'a>(n: &'a Node, depth: usize, f: &mut dyn FnMut(&'a Node, usize)) {
            f(n, depth);
            for c in &n.children {
                go(c, depth + 1, f);
            }
        }
        go(self, 0, f)
    }

    /// The deepest node covering byte `offset`, as a path of child indexes
    /// (not into decompressed data, whose offsets are another buffer's).
    pub fn path_at(&self, offset: usize) -> Vec<usize> {
        let mut path = Vec::new();
        let mut node = self;
        while node.role != Role::Decompressed {
            let Some(i) = node.child_at(offset) else {
                break;
            };
            path.push(i);
            node = &node.children[i];
        }
        path
    }

    /// The index of the child covering byte `offset`. A decoder lays children
    /// out in byte order, so a binary search over their ranges finds it: a
    /// cursor in a batch of 400,000 records would otherwise look at every
    /// record before it. A byte the search finds no child for (children out
    /// of order, or a gap between them) is looked for one child at a time.
    /// Siblings that overlap would make the answer one of those covering it,
    /// not always the first; `tests/tui.rs` holds that no frame has any, on
    /// every shipped sample and capture, record batches of every kind and
    /// every truncation of the samples.
    pub fn child_at(&self, offset: usize) -> Option<usize> {
        let covers = |c: &Node| c.offset <= offset && offset < c.end();
        let found = self.children.partition_point(|c| c.end() <= offset);
        match self.children.get(found) {
            Some(c) if covers(c) => Some(found),
            _ => self.children.iter().position(covers),
        }
    }

    pub fn at_path(&self, path: &[usize]) -> Option<&Node> {
        let mut node = self;
        for &i in path {
            node = node.children.get(i)?;
        }
        Some(node)
    }

    pub(crate) fn at_path_mut(&mut self, path: &[usize]) -> Option<&mut Node> {
        let mut node = self;
        for &i in path {
            node = node.children.get_mut(i)?;
        }
        Some(node)
    }
}

/// An encoding detail's node (a length, a tag, a prefix): `len` bytes at `offset` holding `value`.
#[inline(always)]
pub(crate) fn leaf(
    name: impl Into<Name>,
    wire: Wire,
    offset: usize,
    len: usize,
    value: Value,
    region: Region,
) -> Node {
    let mut n = Node::of(
        name.into(),
        Text::own_words(wire.name()),
        (offset, len),
        value,
        region,
        (Role::Encoding, Kind::Plain),
    );
    n.wire = wire;
    n
}

/// How a node's bytes hold its value, set where the decoder makes the node
/// (the display type is text for people; this is what `--explain` and the
/// explorer's details read).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Wire {
    /// A container, or a node its role and kind say how to read.
    #[default]
    Other,
    /// A fixed-width primitive.
    Fixed(Primitive),
    Uvarint,
    /// Zigzag-encoded.
    Varint,
    Varlong,
    /// A string after its length (a field's or an element's).
    String,
    /// Bytes after their length, or after a length an earlier node holds.
    Bytes,
    /// A records field's bytes after their length.
    Records,
}

impl Wire {
    /// A schema primitive's wire form.
    pub fn of(p: Primitive) -> Wire {
        match p {
            Primitive::String => Wire::String,
            Primitive::Bytes => Wire::Bytes,
            Primitive::Records => Wire::Records,
            p => Wire::Fixed(p),
        }
    }

    /// Bytes a value written this way takes, when that is fixed.
    pub(crate) fn fixed_width(self) -> Option<usize> {
        match self {
            Wire::Fixed(p) => p.fixed_width(),
            _ => None,
        }
    }

    /// The type as the tree shows it.
    pub fn name(self) -> &'static str {
        match self {
            Wire::Other => "",
            Wire::Fixed(p) => p.as_str(),
            Wire::Uvarint => "uvarint",
            Wire::Varint => "varint",
            Wire::Varlong => "varlong",
            Wire::String => "string",
            Wire::Bytes => "bytes",
            Wire::Records => "records",
        }
    }
}

impl Node {
    /// A node made in one piece: pushed with [`push_with`], it is written
    /// straight into the vector (a node built and then changed was built
    /// aside and copied in). What else it has is set once it is there.
    #[inline(always)]
    pub(crate) fn of(
        name: impl Into<Name>,
        ty: Text,
        (offset, len): (usize, usize),
        value: Value,
        region: Region,
        (role, kind): (Role, Kind),
    ) -> Node {
        Node {
            name: name.into(),
            ty,
            offset,
            len,
            value,
            note: None,
            doc: None,
            region,
            role,
            kind,
            wire: Wire::Other,
            key: None,
            extra: None,
            children: Vec::new(),
        }
    }
}

/// Room for `n` more nodes in `v` (an empty vector's first room allocated
/// directly: reserving on one took the growth path). For `kwire capture`'s
/// text tree: 0.8% of its instructions on the Produce benchmark capture
/// (BENCHMARKS.md, "Micro-optimisations measured again").
#[inline(always)]
pub(crate) fn reserve_nodes(v: &mut Vec<Node>, n: usize) {
    match v.capacity() {
        0 => *v = Vec::with_capacity(n),
        _ => v.reserve(n),
    }
}

/// Push the node `make` builds and return it. `make` runs once there is room,
/// so the large node is written straight into the vector instead of being
/// built aside and copied in (as `push(make())` compiles to). For `kwire
/// capture`'s text tree: 1.8% of its instructions on the Produce benchmark
/// capture (BENCHMARKS.md, "Micro-optimisations measured again").
#[inline(always)]
pub(crate) fn push_with(out: &mut Vec<Node>, make: impl FnOnce() -> Node) -> &mut Node {
    out.reserve(1);
    let len = out.len();
    let slot = out
        .spare_capacity_mut()
        .first_mut()
        .expect("room was reserved");
    slot.write(make());
    // SAFETY: the element at `len`, within capacity, was just initialised.
    unsafe { out.set_len(len + 1) };
    &mut out[len]
}

pub use super::problem::DecodeError;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Request,
    Response,
}

impl Direction {
    pub fn as_str(&self) -> &'static str {
        match self {
            Direction::Request => "request",
            Direction::Response => "response",
        }
    }

    /// The way it goes as every view draws it, the client on the left.
    pub fn arrow(&self) -> &'static str {
        match self {
            Direction::Request => "→",
            Direction::Response => "←",
        }
    }
}

/// What a frame on the wire carries.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum FrameKind {
    /// A Kafka request or response: a header, then a body.
    #[default]
    Kafka,
    /// A SASL token: after a SaslHandshake v0 that the broker accepted, the
    /// client and the broker exchange the mechanism's tokens as size-prefixed
    /// bytes with no Kafka header (see `capture::flows`).
    SaslToken { mechanism: Arc<SaslMechanism> },
}

/// A SASL token's mechanism, shared by a connection's tokens (one pointer
/// in each frame's kind: a row of the explorer keeps one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SaslMechanism {
    /// What the handshake named, as sent (not checked; escape it to show
    /// it); or, `guessed`, what the token's shape says when no handshake
    /// was seen (a capture that began after it): then its parts are read by
    /// shape.
    pub name: Box<str>,
    pub guessed: bool,
}

impl SaslMechanism {
    /// The mechanism a SaslHandshake named.
    pub fn named(name: &str) -> Arc<SaslMechanism> {
        Arc::new(SaslMechanism {
            name: name.into(),
            guessed: false,
        })
    }
}

impl FrameKind {
    /// The SASL mechanism of a token; `None` for a Kafka frame.
    pub fn sasl_mechanism(&self) -> Option<&str> {
        match self {
            FrameKind::Kafka => None,
            FrameKind::SaslToken { mechanism } => Some(&mechanism.name),
        }
    }
}

/// One decoded frame: the tree plus what identifies the message.
#[derive(Clone, Debug)]
pub struct Frame {
    pub direction: Direction,
    /// A Kafka message, or a SASL token (no header, no api key).
    pub kind: FrameKind,
    pub api_key: Option<i16>,
    pub api_version: Option<i16>,
    pub header_version: Option<i16>,
    /// Where this frame starts in the input.
    pub input_offset: usize,
    /// The frame's bytes (size prefix included); node offsets index into it.
    pub bytes: Bytes,
    pub root: Node,
    /// Decoding onto a tape ([`super::DecodeOptions::values_only`], or
    /// [`super::DecodeOptions::annotated_tape`] for every field's bytes and
    /// encoding details too): the header's and body's slots. `root` is then
    /// only the message's outline: no nodes for the framing, header or body,
    /// and not named after the message.
    pub values: Option<Box<super::tape::Values>>,
    pub error: Option<DecodeError>,
    /// Non-fatal findings (non-canonical encodings, size mismatches).
    pub warnings: Vec<super::problem::Warning>,
    /// Damage in record data (checksums, lengths, codecs, decompression,
    /// budgets): the frame's grammar holds, but its records do not. Offsets
    /// index the frame, or the decompressed data when the text says so.
    pub record_damage: Vec<DecodeError>,
    /// The contract paths (`body.AuthBytes`) of the values whose bytes were
    /// masked as credentials ([`super::secrets::redact`]), for the JSON's
    /// `_redacted` member; `auth_bytes` for a SASL token.
    pub redacted: Vec<String>,
    /// Decompressed data and its nodes that this frame holds against the
    /// input's budget, given back when the frame is dropped.
    pub held: crate::budget::Held,
    /// A findings-only decode's records fields left off its tape
    /// ([`super::DecodeOptions::defer_records_over`]), for the reader that
    /// reads them to walk a batch at a time; their warnings and damage are
    /// the frame's once walked (`super::records::deferred::check_deferred`
    /// for `kwire check`; `kwire records` reads their rows in the same walk).
    pub deferred: Vec<DeferredRecords>,
}

impl Frame {
    /// The request or response header's node, when the tree has one.
    pub fn header(&self) -> Option<&Node> {
        self.root.children.iter().find(|c| c.kind == Kind::Header)
    }

    /// The body's node, when the tree has one.
    pub fn body(&self) -> Option<&Node> {
        self.root.children.iter().find(|c| c.kind == Kind::Body)
    }
}

/// The deferred records fields under `node` placed after `warnings` and
/// `damage` entries that the frame's lists hold before the decoder's own.
pub(super) fn shift_deferred(node: &mut Node, (warnings, damage): (usize, usize)) {
    let shift = |d: &mut DeferredRecords| {
        d.warnings_at += warnings;
        d.damage_at += damage;
    };
    match node.extra.as_mut().and_then(|e| e.deferred.as_mut()) {
        Some(Deferred::Records(d)) => shift(d),
        // Those within a left array's elements too (its stubs share them).
        Some(Deferred::Elements(d)) if !d.array.records.is_empty() => {
            let mut records = d.array.records.to_vec();
            records.iter_mut().for_each(shift);
            d.array = Arc::new(LeftArray {
                records: records.into(),
                ..(*d.array).clone()
            });
        }
        _ => {}
    }
    for c in &mut node.children {
        shift_deferred(c, (warnings, damage));
    }
}

/// A frame's framing node: its size prefix as read, or (`None`) the `len`
/// bytes there are where the prefix's 4 are not.
pub(super) fn framing_node(size: Option<i32>, len: usize) -> Node {
    let mut n = Node::new("Frame", "", 0, Region::Frame, Role::Structure);
    (n.doc, n.len) = (Some("length-delimited framing".into()), len);
    if let Some(size) = size {
        let mut sz = leaf(
            "size",
            Wire::Fixed(Primitive::Int32),
            0,
            4,
            Value::Int(size.into()),
            Region::Frame,
        );
        sz.doc = Some("bytes that follow this field".into());
        n.children.push(sz);
    }
    n
}

/// An array length's doc: how many elements follow (`None`: a null array).
#[inline]
fn push_elements_doc(out: &mut Vec<u8>, follow: Option<usize>) {
    match follow {
        None => out.extend_from_slice(b"null array"),
        Some(1) => out.extend_from_slice(b"1 element follows"),
        Some(n) => {
            crate::text::digits::push_uint(out, n as u64, 0);
            out.extend_from_slice(b" elements follow");
        }
    }
}

/// `(length note; what)`: the encoding note stays first.
pub(super) fn add_to_note(node: &mut Node, what: &str) {
    let note = node.note.as_ref().map(Note::text);
    let inner = note
        .as_deref()
        .and_then(|n| n.strip_prefix('(')?.strip_suffix(')'));
    node.set_note(match inner {
        Some(n) => format!("({n}; {what})"),
        None => format!("({what})"),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_stays_216_bytes() {
        // Nodes are the tree's bulk: the kind sits in padding.
        assert_eq!(std::mem::size_of::<Node>(), 216);
        assert_eq!(std::mem::size_of::<Kind>(), 1);
    }

    #[test]
    fn push_with_returns_the_node_it_pushed() {
        let mut out = vec![Node::new("a", "int8", 0, Region::Frame, Role::Encoding)];
        let n = push_with(&mut out, || {
            Node::new("b", "int16", 1, Region::Frame, Role::Encoding)
        });
        n.len = 2;
        assert_eq!(out.len(), 2);
        assert_eq!(
            (out[1].name.text().as_str(), out[1].offset, out[1].len),
            ("b", 1, 2)
        );
    }

    #[test]
    fn a_header_key_is_kept_without_an_extra_allocation() {
        let mut n = Node::new(
            "client_id",
            "string",
            4,
            Region::RpcHeader,
            Role::Field { decl: 3 },
        );
        n.set_key("ClientId");
        assert_eq!(n.field_key(), "ClientId");
        assert!(n.extra.is_none(), "no boxed extra for a key");
        assert!(n.error().is_none());
    }
}
