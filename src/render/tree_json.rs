//! The tree JSON (`--format tree-json`), its one writer: every node with its
//! name, type, offset, length, value, note, description and region, written
//! straight to its output as it goes, never held as a second, larger copy of
//! the tree (a `serde_json::Value` per node costs several times the node).
//! `tests/budgets.rs` holds it to a `serde_json` value built from the tree
//! independently; the snapshots hold its bytes.

use super::digits::{push_hex, push_int, push_uint};
use super::json::{write_json_str, write_scalar, Safe};
use super::notes;
use crate::budget::{Budget, Held};
use crate::decode::fields::for_each_element;
use crate::decode::records::deferred::{
    for_each_piece, join_found, left_records, read_deferred, Found, Hold, Piece,
};
use crate::decode::records::lines::{PartDoc, PartLine, PartValue};
use crate::decode::{DeferredRecords, Frame, Node, Note, Region, Role, Value};
use crate::schema::Catalogue;
use crate::text::copy::push_bytes;
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::ser::CompactFormatter;
use serde_json::Value as Json;
use std::io;

/// JSON gathers in a buffer that goes to the writer when it holds this much
/// (a tree's JSON can be far larger than its frame: it is never held whole).
const SPILL: usize = 1 << 16;

/// One frame's tree JSON (its identification, error, warnings and tree) on one line.
pub fn write_frame_tree_json(out: &mut impl io::Write, frame: &Frame) -> io::Result<()> {
    let mut buf = Vec::with_capacity(SPILL + 4096);
    push_members(&mut buf, frame)?;
    write_node(&mut buf, &mut To(&mut *out), &frame.root, None)?;
    buf.extend_from_slice(b"}\n");
    out.write_all(&buf)
}

/// The frame's members less its tree, left open for the tree: `{…,"tree":`.
fn push_members(buf: &mut Vec<u8>, frame: &Frame) -> io::Result<()> {
    {
        let mut ser = serde_json::Serializer::with_formatter(&mut *buf, Safe(CompactFormatter));
        FrameJson(frame)
            .serialize(&mut ser)
            .map_err(io::Error::other)?;
    }
    buf.pop();
    buf.extend_from_slice(b",\"tree\":");
    Ok(())
}

/// [`write_frame_tree_json`] for a frame whose decode left records fields
/// for drawing ([`crate::decode::DecodeOptions::defer_records_over`]): each
/// is walked a batch at a time as it is written, with `cat` and within
/// `budget`, so a frame of 400,000 records never holds them all as nodes.
/// The frame's members (its warnings and record damage among them) come
/// before its tree, so a first walk that keeps nothing finds what the
/// fields hold ([`find_deferred`]); the second walks from where the budget
/// stood before the first (nothing is spent twice). The same bytes as the
/// whole tree's JSON.
pub fn write_frame_tree_json_drawing(
    out: &mut impl io::Write,
    frame: &mut Frame,
    (cat, budget): (&Catalogue, &Budget),
) -> io::Result<()> {
    let again = find_deferred(frame, (cat, budget), Hold::ByItem);
    write_frame_tree_json_found(out, frame, (cat, &again), Hold::ByItem)
}

/// [`write_frame_tree_json_drawing`] for a small frame: what its records
/// decompress is held for the frame's life, as its whole decode holds it;
/// the tree JSON is written as its records are walked again.
pub(crate) fn write_frame_tree_json_held(
    out: &mut impl io::Write,
    frame: &mut Frame,
    (cat, budget): (&Catalogue, &Budget),
) -> io::Result<()> {
    let again = find_deferred(frame, (cat, budget), Hold::ByFrame);
    write_frame_tree_json_found(out, frame, (cat, &again), Hold::ByFrame)
}

/// What a frame's records fields left for drawing hold (warnings, damage),
/// found by walking them without keeping anything and joined to the
/// frame's lists; gives back the budget as it stood before, for the walk
/// that writes them ([`write_frame_tree_json_found`], with the same
/// `hold`). With [`Hold::ByFrame`], what the walk decompressed is held
/// against `budget` until the frame is dropped, as its whole decode would
/// hold it.
pub fn find_deferred(
    frame: &mut Frame,
    (cat, budget): (&Catalogue, &Budget),
    hold: Hold,
) -> Budget {
    let before = budget.spent();
    let found = left_records(&frame.root)
        .into_iter()
        .map(|d| {
            let f = read_deferred(cat, &frame.bytes, &d, (budget, hold), |_, _| {});
            (d, f)
        })
        .collect();
    join_found(frame, found);
    if hold == Hold::ByFrame {
        frame.held.join(Held::since(budget, before.1));
    }
    budget.as_it_was(before)
}

/// The tree JSON of a frame whose records fields left for drawing were
/// walked by [`find_deferred`] (which gave `budget`), walking them again,
/// holding what they decompress as `hold` says, as they are written.
pub fn write_frame_tree_json_found(
    out: &mut impl io::Write,
    frame: &Frame,
    (cat, budget): (&Catalogue, &Budget),
    hold: Hold,
) -> io::Result<()> {
    let mut drawer = Drawer::new(frame, (cat, budget), hold);
    let mut buf = Vec::with_capacity(SPILL + 4096);
    push_members(&mut buf, frame)?;
    write_node(&mut buf, &mut To(&mut *out), &frame.root, Some(&mut drawer))?;
    buf.extend_from_slice(b"}\n");
    out.write_all(&buf)
}

/// [`write_frame_tree_json_drawing`] appended to a byte buffer, for a
/// frame small enough to hold its tree JSON whole: its records are walked
/// once, as the tree is written, after the frame's members; when the walks
/// find warnings or damage (rare), the members are written again in their
/// place. What its records decompress is held against `budget` until the
/// frame is dropped, as its whole decode would hold it (the same batches
/// decoded, or over budget, as in its other views).
pub fn push_frame_tree_json_drawing(
    out: &mut Vec<u8>,
    frame: &mut Frame,
    (cat, budget): (&Catalogue, &Budget),
) -> io::Result<()> {
    let before = budget.expanded();
    let start = out.len();
    push_members(out, frame)?;
    let members = start..out.len();
    let mut drawer = Drawer::new(frame, (cat, budget), Hold::ByFrame);
    write_node(out, &mut Kept, &frame.root, Some(&mut drawer))?;
    let found_any = drawer
        .found
        .iter()
        .any(|(_, f)| !f.warnings.is_empty() || !f.damage.is_empty());
    join_found(frame, drawer.found);
    frame.held.join(Held::since(budget, before));
    if found_any {
        let mut again = Vec::with_capacity(members.len() + 256);
        push_members(&mut again, frame)?;
        out.splice(members, again);
    }
    out.extend_from_slice(b"}\n");
    Ok(())
}

/// What walks a deferred records field's batches as they are written, and
/// keeps what the walks found for the frame's lists.
struct Drawer<'d> {
    cat: &'d Catalogue,
    budget: &'d Budget,
    hold: Hold,
    frame: bytes::Bytes,
    found: Vec<(DeferredRecords, Found)>,
}

impl<'d> Drawer<'d> {
    fn new(frame: &Frame, (cat, budget): (&'d Catalogue, &'d Budget), hold: Hold) -> Self {
        Drawer {
            cat,
            budget,
            hold,
            frame: frame.bytes.clone(),
            found: Vec::new(),
        }
    }
}

/// One node's tree JSON (no newline).
pub fn write_tree_json(out: &mut impl io::Write, node: &Node) -> io::Result<()> {
    let mut buf = Vec::with_capacity(SPILL + 4096);
    write_node(&mut buf, &mut To(&mut *out), node, None)?;
    out.write_all(&buf)
}

/// Where JSON gathered in a buffer goes as the buffer grows.
trait Spill {
    fn spill(&mut self, buf: &mut Vec<u8>) -> io::Result<()>;
}

/// Passed on to a writer whenever [`SPILL`] bytes gather.
struct To<W>(W);

impl<W: io::Write> Spill for To<W> {
    fn spill(&mut self, buf: &mut Vec<u8>) -> io::Result<()> {
        if buf.len() >= SPILL {
            self.0.write_all(buf)?;
            buf.clear();
        }
        Ok(())
    }
}

/// Kept: the buffer is the output.
struct Kept;

impl Spill for Kept {
    fn spill(&mut self, _: &mut Vec<u8>) -> io::Result<()> {
        Ok(())
    }
}

/// What an object of the tree JSON says, read from a node or from a line
/// of a batch read from its slots ([`PartLine`]), so that both are written
/// by one writer ([`open_object`]).
trait JsonObject {
    fn push_name(&self, buf: &mut Vec<u8>);
    /// The schema field name, when it differs from the name.
    fn key(&self) -> Option<&str>;
    fn ty(&self) -> &str;
    fn range(&self) -> (usize, usize);
    /// `,"value":…` when it has a value; bytes' hex written as it goes.
    fn push_value(&self, buf: &mut Vec<u8>, out: &mut impl Spill) -> io::Result<()>;
    /// Its note as a JSON string; false, with nothing written, for none.
    fn push_note(&self, buf: &mut Vec<u8>) -> bool;
    /// `,"doc":…` when it has a description.
    fn push_doc(&self, buf: &mut Vec<u8>);
    fn region(&self) -> Region;
    /// Its children's offsets index the decompressed buffer it holds.
    fn decompressed(&self) -> bool;
    fn error(&self) -> Option<&str>;
}

impl JsonObject for Node {
    fn push_name(&self, buf: &mut Vec<u8>) {
        self.name.push_json(buf, write_json_str);
    }
    fn key(&self) -> Option<&str> {
        Node::key(self)
    }
    fn ty(&self) -> &str {
        &self.ty
    }
    fn range(&self) -> (usize, usize) {
        (self.offset, self.len)
    }
    fn push_value(&self, buf: &mut Vec<u8>, out: &mut impl Spill) -> io::Result<()> {
        match &self.value {
            Value::Struct(true) | Value::None => {}
            Value::Bytes(Some(b)) => push_hex_value(buf, out, b)?,
            Value::Array(Some(n)) => {
                buf.extend_from_slice(b",\"value\":");
                push_uint(buf, *n as u64, 0);
            }
            // Every other value is written, null or not.
            _ => {
                buf.extend_from_slice(b",\"value\":");
                write_scalar(buf, &self.value);
            }
        }
        Ok(())
    }
    fn push_note(&self, buf: &mut Vec<u8>) -> bool {
        push_note_json(buf, self)
    }
    fn push_doc(&self, buf: &mut Vec<u8>) {
        if let Some(d) = &self.doc {
            buf.extend_from_slice(b",\"doc\":");
            write_json_str(buf, d);
        } else if self.has_doc() {
            // A doc the node works out is kwire's own words: plain ASCII.
            buf.extend_from_slice(b",\"doc\":\"");
            Node::push_doc(self, buf);
            buf.push(b'"');
        }
    }
    fn region(&self) -> Region {
        self.region
    }
    fn decompressed(&self) -> bool {
        self.role == Role::Decompressed
    }
    fn error(&self) -> Option<&str> {
        Node::error(self)
    }
}

impl JsonObject for PartLine<'_> {
    fn push_name(&self, buf: &mut Vec<u8>) {
        self.name.push_json(buf, write_json_str);
    }
    fn key(&self) -> Option<&str> {
        None
    }
    fn ty(&self) -> &str {
        self.ty
    }
    fn range(&self) -> (usize, usize) {
        (self.at, self.len)
    }
    fn push_value(&self, buf: &mut Vec<u8>, out: &mut impl Spill) -> io::Result<()> {
        match self.value {
            PartValue::None => return Ok(()),
            PartValue::Bytes(Some(b)) => return push_hex_value(buf, out, b),
            PartValue::Buffer(b) => return push_hex_value(buf, out, b),
            PartValue::Bytes(None) => buf.extend_from_slice(b",\"value\":null"),
            PartValue::Int(v) => {
                buf.extend_from_slice(b",\"value\":");
                push_int(buf, v);
            }
            PartValue::Uint(v) => {
                buf.extend_from_slice(b",\"value\":");
                push_uint(buf, v, 0);
            }
        }
        Ok(())
    }
    fn push_note(&self, buf: &mut Vec<u8>) -> bool {
        let previewed = match self.value {
            PartValue::Bytes(Some(b)) => Some(b),
            _ => None,
        };
        push_note_json_of(buf, self.note.as_ref(), previewed)
    }
    fn push_doc(&self, buf: &mut Vec<u8>) {
        if let Some(d) = self.doc {
            buf.extend_from_slice(b",\"doc\":");
            match d {
                PartDoc::Words(w) => write_json_str(buf, w),
                d => write_json_str(buf, &d.text()),
            }
        }
    }
    fn region(&self) -> Region {
        self.region
    }
    fn decompressed(&self) -> bool {
        self.role == Role::Decompressed
    }
    fn error(&self) -> Option<&str> {
        None
    }
}

/// `,"value":"…"`: bytes' hex, written as it goes (a decompressed
/// buffer's is megabytes).
fn push_hex_value(buf: &mut Vec<u8>, out: &mut impl Spill, b: &[u8]) -> io::Result<()> {
    buf.extend_from_slice(b",\"value\":\"");
    for chunk in b.chunks(SPILL / 2) {
        push_hex(buf, chunk);
        out.spill(buf)?;
    }
    buf.push(b'"');
    Ok(())
}

/// An object's members but its children, into `buf` (spilling into
/// `out`), left open: name, field, type, offset, length, value, note, doc,
/// region, children_offsets and error, in that order, each only when it
/// has it.
fn open_object(buf: &mut Vec<u8>, out: &mut impl Spill, o: &impl JsonObject) -> io::Result<()> {
    buf.extend_from_slice(b"{\"name\":");
    o.push_name(buf);
    if let Some(k) = o.key() {
        buf.extend_from_slice(b",\"field\":");
        write_json_str(buf, k);
    }
    buf.extend_from_slice(b",\"type\":");
    write_json_str(buf, o.ty());
    let (offset, len) = o.range();
    buf.extend_from_slice(b",\"offset\":");
    push_uint(buf, offset as u64, 0);
    buf.extend_from_slice(b",\"length\":");
    push_uint(buf, len as u64, 0);
    o.push_value(buf, out)?;
    let mark = buf.len();
    buf.extend_from_slice(b",\"note\":");
    if !o.push_note(buf) {
        buf.truncate(mark);
    }
    o.push_doc(buf);
    buf.extend_from_slice(b",\"region\":\"");
    buf.extend_from_slice(region_name(o.region()).as_bytes());
    buf.push(b'"');
    if o.decompressed() {
        buf.extend_from_slice(b",\"children_offsets\":\"decompressed buffer\"");
    }
    if let Some(e) = o.error() {
        buf.extend_from_slice(b",\"error\":");
        write_json_str(buf, e);
    }
    Ok(())
}

/// Before an object's next child: the children's list opened at its first.
fn next_child(buf: &mut Vec<u8>, written: &mut usize) {
    buf.extend_from_slice(if *written == 0 {
        b",\"children\":["
    } else {
        b","
    });
    *written += 1;
}

/// A node's object, with its children, into `buf` (spilling into `out`);
/// a deferred array's elements or records field's batches walked and
/// written as its children.
fn write_node(
    buf: &mut Vec<u8>,
    out: &mut impl Spill,
    node: &Node,
    mut drawer: Option<&mut Drawer>,
) -> io::Result<()> {
    open_object(buf, out, node)?;
    let mut written = 0;
    for c in &node.children {
        next_child(buf, &mut written);
        write_node(buf, out, c, drawer.as_deref_mut())?;
        out.spill(buf)?;
    }
    if let Some((d, walk)) = node.deferred_elements().zip(drawer.as_deref()) {
        let (cat, frame) = (walk.cat, walk.frame.clone());
        for_each_element(cat, &frame, d, |nodes, _| {
            for c in nodes.iter() {
                next_child(buf, &mut written);
                write_node(buf, out, c, drawer.as_deref_mut())?;
                out.spill(buf)?;
            }
            Ok::<(), io::Error>(())
        })?;
    }
    if let Some((d, drawer)) = node.deferred_records().zip(drawer) {
        let found = deferred_children(buf, out, d, drawer, &mut written)?;
        drawer.found.push((d.clone(), found));
    }
    if written > 0 {
        buf.push(b']');
    }
    buf.push(b'}');
    Ok(())
}

/// A deferred records field's batches, walked and written one at a time
/// as its children (`written` of them so far): a plain topic's records
/// straight from their slots, the rest from nodes built for the batch or
/// record ([`for_each_piece`]). A line's object is left open until one at
/// its depth or above comes (or the field ends): its children come between.
fn deferred_children(
    buf: &mut Vec<u8>,
    out: &mut impl Spill,
    d: &DeferredRecords,
    drawer: &mut Drawer,
    written: &mut usize,
) -> io::Result<Found> {
    // The lines open, by depth, each with the children it has so far.
    let mut open: Vec<(u8, usize)> = Vec::new();
    let close_to = |buf: &mut Vec<u8>, open: &mut Vec<(u8, usize)>, depth: u8| {
        while let Some(&(d, children)) = open.last() {
            if d < depth {
                break;
            }
            if children > 0 {
                buf.push(b']');
            }
            buf.push(b'}');
            open.pop();
        }
    };
    // Before a child at `depth`: the open lines at it and under it closed,
    // then a place made among its parent's children.
    let mut place = |buf: &mut Vec<u8>, open: &mut Vec<(u8, usize)>, depth: u8| {
        close_to(buf, open, depth);
        match open.last_mut() {
            Some((_, children)) => next_child(buf, children),
            None => next_child(buf, written),
        }
    };
    let walking = (drawer.budget, drawer.hold);
    let found = for_each_piece(drawer.cat, &drawer.frame, d, walking, |piece| {
        match piece {
            Piece::Line {
                line,
                at: (depth, _),
            } => {
                place(buf, &mut open, depth);
                open_object(buf, out, line)?;
                open.push((depth, 0));
            }
            Piece::Nodes { nodes, .. } | Piece::RecordNodes { nodes, .. } => {
                // A batch's records come after its line; other nodes are the field's.
                let depth = match piece {
                    Piece::RecordNodes { depth, .. } => depth,
                    _ => 0,
                };
                for c in nodes {
                    place(buf, &mut open, depth);
                    write_node(buf, out, c, None)?;
                }
            }
        }
        out.spill(buf)
    })?;
    close_to(buf, &mut open, 0);
    Ok(found)
}

/// A region as serde writes it (snake case).
fn region_name(r: Region) -> &'static str {
    match r {
        Region::Frame => "frame",
        Region::RpcHeader => "rpc_header",
        Region::RequestBody => "request_body",
        Region::ResponseBody => "response_body",
        Region::RecordBatch => "record_batch",
        Region::Record => "record",
        Region::TaggedFields => "tagged_fields",
    }
}

struct FrameJson<'a>(&'a Frame);

impl Serialize for FrameJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let f = self.0;
        let mut m = s.serialize_map(None)?;
        match f.kind.sasl_mechanism() {
            Some(mechanism) => {
                m.serialize_entry("kind", super::json::SASL_TOKEN_KIND)?;
                m.serialize_entry("direction", f.direction.as_str())?;
                m.serialize_entry("mechanism", mechanism)?;
            }
            None => m.serialize_entry("kind", f.direction.as_str())?,
        }
        m.serialize_entry("api_key", &f.api_key)?;
        m.serialize_entry("api_name", &super::json::api_name(f.api_key))?;
        m.serialize_entry("api_version", &f.api_version)?;
        m.serialize_entry("header_version", &f.header_version)?;
        m.serialize_entry("input_offset", &f.input_offset)?;
        let error = f
            .error
            .as_ref()
            .map(|e| serde_json::json!({"offset": e.offset, "expected": e.expected}));
        m.serialize_entry("error", &error)?;
        m.serialize_entry("warnings", &f.warnings)?;
        if !f.record_damage.is_empty() {
            let damage: Vec<Json> = f
                .record_damage
                .iter()
                .map(|e| serde_json::json!({"offset": e.offset, "expected": e.expected}))
                .collect();
            m.serialize_entry("record_errors", &damage)?;
        }
        m.end()
    }
}

/// A node's note as a JSON string appended to `out`; false, with nothing
/// written, when there is none. A plain ASCII preview is written as it is,
/// without a `String` made for it or serde's escaping of the quotes around it.
fn push_note_json(out: &mut Vec<u8>, node: &Node) -> bool {
    push_note_json_of(out, node.note.as_ref(), notes::previewed(node))
}

/// [`push_note_json`] of a note, or of the bytes whose text preview is the
/// note when there is none.
fn push_note_json_of(out: &mut Vec<u8>, note: Option<&Note>, previewed: Option<&[u8]>) -> bool {
    if let Some(n) = note {
        n.push_json(out, write_json_str);
        return true;
    }
    let Some(b) = previewed else {
        return false;
    };
    if let Some((a, more)) = notes::plain_ascii_preview(b) {
        out.extend_from_slice(b"\"(text \\\"");
        push_bytes(out, a);
        out.extend_from_slice(more.as_bytes());
        out.extend_from_slice(b"\\\")\"");
        return true;
    }
    match notes::text_preview(b) {
        Some(t) => {
            write_json_str(out, &t);
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::notes::tests::{value_node, VALUES};

    #[test]
    fn a_note_written_as_json_is_the_note_as_a_json_string() {
        let noted = {
            let mut n = value_node(b"x");
            n.note = Some("(holds \"redacted\" bytes)".into());
            n
        };
        let nodes: Vec<Node> = VALUES
            .into_iter()
            .chain([&b"a/b<c>"[..]])
            .map(value_node)
            .collect();
        for n in nodes.iter().chain([&noted]) {
            let mut pushed = Vec::new();
            let shown = push_note_json(&mut pushed, n);
            let mut want = Vec::new();
            if let Some(t) = notes::note(n) {
                write_json_str(&mut want, &t);
            }
            assert_eq!(
                (shown, String::from_utf8(pushed).unwrap()),
                (!want.is_empty(), String::from_utf8(want).unwrap())
            );
        }
    }
}
