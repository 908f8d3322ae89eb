//! The tree JSON (`--format tree-json`) written straight to its output: the
//! same text as [`super::json::frame_tree_json`] builds as a value, without
//! holding a second, larger copy of the tree (a `serde_json::Value` per node
//! costs several times the node). Tests hold the two to the same bytes.

use super::digits::push_hex;
use super::digits::push_uint;
use super::json::{write_json_str, write_value, Safe};
use super::notes;
use crate::decode::{Frame, Node, Region, Role, Value};
use crate::text::copy::push_bytes;
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::ser::CompactFormatter;
use serde_json::Value as Json;
use std::io;

/// JSON gathers in a buffer that goes to the writer when it holds this much
/// (a tree's JSON can be far larger than its frame: it is never held whole).
const SPILL: usize = 1 << 16;

/// One frame's tree JSON on one line, as `frame_tree_json` would print it.
pub fn write_frame_tree_json(out: &mut impl io::Write, frame: &Frame) -> io::Result<()> {
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
    write_node(&mut buf, out, &frame.root)?;
    buf.extend_from_slice(b"}\n");
    out.write_all(&buf)
}

/// One node's tree JSON (no newline), as `tree_json` would print it.
pub fn write_tree_json(out: &mut impl io::Write, node: &Node) -> io::Result<()> {
    let mut buf = Vec::with_capacity(SPILL + 4096);
    write_node(&mut buf, out, node)?;
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

/// A node's object into `buf` (spilling into `out`): the members and their
/// order of [`super::json::tree_json`].
fn write_node(buf: &mut Vec<u8>, out: &mut impl io::Write, node: &Node) -> io::Result<()> {
    buf.extend_from_slice(b"{\"name\":");
    write_json_str(buf, &node.name);
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
            write_value(buf, node);
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
    if !node.children.is_empty() {
        buf.extend_from_slice(b",\"children\":[");
        for (i, c) in node.children.iter().enumerate() {
            if i > 0 {
                buf.push(b',');
            }
            write_node(buf, out, c)?;
            spill(buf, out)?;
        }
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
