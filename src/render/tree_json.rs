//! The tree JSON (`--format tree-json`), its one writer: every node with its
//! name, type, offset, length, value, note, description and region, written
//! straight to its output as it goes, never held as a second, larger copy of
//! the tree (a `serde_json::Value` per node costs several times the node).
//! `tests/budgets.rs` holds it to a `serde_json` value built from the tree
//! independently; the snapshots hold its bytes.

use super::digits::push_hex;
use super::digits::push_uint;
use super::json::{write_json_str, write_scalar, Safe};
use super::notes;
use crate::budget::Budget;
use crate::decode::records::deferred::{for_each_item, join_found};
use crate::decode::{Frame, Node, Region, Role, Value};
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
    write_frame_with(out, frame, None)
}

fn write_frame_with(
    out: &mut impl io::Write,
    frame: &Frame,
    drawer: Option<&Drawer>,
) -> io::Result<()> {
    let mut buf = Vec::with_capacity(SPILL + 4096);
    {
        let mut ser = serde_json::Serializer::with_formatter(&mut buf, Safe(CompactFormatter));
        FrameJson(frame)
            .serialize(&mut ser)
            .map_err(io::Error::other)?;
    }
    // The frame's members less the tree, reopened to add it last.
    buf.pop();
    buf.extend_from_slice(b",\"tree\":");
    write_node(&mut buf, out, &frame.root, drawer)?;
    buf.extend_from_slice(b"}\n");
    out.write_all(&buf)
}

/// [`write_frame_tree_json`] for a frame whose decode left records fields
/// for drawing ([`crate::decode::DecodeOptions::defer_records_over`]): each
/// is walked a batch at a time as it is written, with `cat` and within
/// `budget`, so a frame of 400,000 records never holds them all as nodes.
/// The frame's members (its warnings and record damage among them) come
/// before its tree, so a first walk that keeps nothing finds what the
/// fields hold; the second walks from where the budget stood before the
/// first (nothing is spent twice). The same bytes as the whole tree's JSON.
pub fn write_frame_tree_json_drawing(
    out: &mut impl io::Write,
    frame: &mut Frame,
    (cat, budget): (&Catalogue, &Budget),
) -> io::Result<()> {
    let before = budget.spent();
    let mut deferred = Vec::new();
    frame.root.walk(&mut |n, _| {
        if let Some(d) = n.deferred_records() {
            deferred.push(d.clone());
        }
    });
    let mut found = Vec::new();
    for d in deferred {
        let Ok(f) = for_each_item(cat, &frame.bytes, &d, budget, |_, _| {
            Ok::<(), std::convert::Infallible>(())
        });
        found.push((d, f));
    }
    join_found(frame, found);
    let again = budget.as_it_was(before);
    let drawer = Drawer {
        cat,
        budget: &again,
        frame: frame.bytes.clone(),
    };
    write_frame_with(out, frame, Some(&drawer))
}

/// What walks a deferred records field's batches as they are written.
struct Drawer<'d> {
    cat: &'d Catalogue,
    budget: &'d Budget,
    frame: bytes::Bytes,
}

/// One node's tree JSON (no newline).
pub fn write_tree_json(out: &mut impl io::Write, node: &Node) -> io::Result<()> {
    let mut buf = Vec::with_capacity(SPILL + 4096);
    write_node(&mut buf, out, node, None)?;
    out.write_all(&buf)
}

/// `buf` passed on to `out` once it holds [`SPILL`] bytes.
fn spill(buf: &mut Vec<u8>, out: &mut impl io::Write) -> io::Result<()> {
    if buf.len() >= SPILL {
        out.write_all(buf)?;
        buf.clear();
    }
    Ok(())
}

/// A node's object into `buf` (spilling into `out`): name, field, type,
/// offset, length, value, note, doc, region, children_offsets, error and
/// children, in that order, each only when the node has it.
fn write_node(
    buf: &mut Vec<u8>,
    out: &mut impl io::Write,
    node: &Node,
    drawer: Option<&Drawer>,
) -> io::Result<()> {
    buf.extend_from_slice(b"{\"name\":");
    node.name.push_json(buf, write_json_str);
    if let Some(k) = node.key() {
        buf.extend_from_slice(b",\"field\":");
        write_json_str(buf, k);
    }
    buf.extend_from_slice(b",\"type\":");
    write_json_str(buf, &node.ty);
    buf.extend_from_slice(b",\"offset\":");
    push_uint(buf, node.offset as u64, 0);
    buf.extend_from_slice(b",\"length\":");
    push_uint(buf, node.len as u64, 0);
    match &node.value {
        Value::Struct(true) | Value::None => {}
        Value::Bytes(Some(b)) => {
            // Written as it goes: a decompressed buffer's hex is megabytes.
            buf.extend_from_slice(b",\"value\":\"");
            for chunk in b.chunks(SPILL / 2) {
                push_hex(buf, chunk);
                spill(buf, out)?;
            }
            buf.push(b'"');
        }
        Value::Array(Some(n)) => {
            buf.extend_from_slice(b",\"value\":");
            push_uint(buf, *n as u64, 0);
        }
        // Every other value is written, null or not.
        _ => {
            buf.extend_from_slice(b",\"value\":");
            write_scalar(buf, &node.value);
        }
    }
    let mark = buf.len();
    buf.extend_from_slice(b",\"note\":");
    if !push_note_json(buf, node) {
        buf.truncate(mark);
    }
    if let Some(d) = &node.doc {
        buf.extend_from_slice(b",\"doc\":");
        write_json_str(buf, d);
    } else if node.has_doc() {
        // A doc the node works out is kwire's own words: plain ASCII.
        buf.extend_from_slice(b",\"doc\":\"");
        node.push_doc(buf);
        buf.push(b'"');
    }
    buf.extend_from_slice(b",\"region\":\"");
    buf.extend_from_slice(region_name(node.region).as_bytes());
    buf.push(b'"');
    if node.role == Role::Decompressed {
        buf.extend_from_slice(b",\"children_offsets\":\"decompressed buffer\"");
    }
    if let Some(e) = node.error() {
        buf.extend_from_slice(b",\"error\":");
        write_json_str(buf, e);
    }
    let mut written = 0;
    let mut child = |buf: &mut Vec<u8>, out: &mut _, c: &Node| {
        buf.extend_from_slice(if written == 0 {
            b",\"children\":["
        } else {
            b","
        });
        written += 1;
        write_node(buf, out, c, drawer)?;
        spill(buf, out)
    };
    for c in &node.children {
        child(buf, out, c)?;
    }
    if let Some((d, drawer)) = node.deferred_records().zip(drawer) {
        for_each_item(drawer.cat, &drawer.frame, d, drawer.budget, |nodes, _| {
            nodes.iter().try_for_each(|c| child(buf, out, c))
        })?;
    }
    if written > 0 {
        buf.push(b']');
    }
    buf.push(b'}');
    Ok(())
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
    if let Some(n) = &node.note {
        n.push_json(out, write_json_str);
        return true;
    }
    if let Some((a, more)) = notes::plain_ascii_preview(node) {
        out.extend_from_slice(b"\"(text \\\"");
        push_bytes(out, a);
        out.extend_from_slice(more.as_bytes());
        out.extend_from_slice(b"\\\")\"");
        return true;
    }
    match notes::note(node) {
        Some(n) => {
            write_json_str(out, &n);
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
