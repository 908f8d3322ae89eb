//! The tree JSON (`--format tree-json`) written straight to its output: the
//! same text as [`super::json::frame_tree_json`] builds as a value, without
//! holding a second, larger copy of the tree (a `serde_json::Value` per node
//! costs several times the node). Tests hold the two to the same bytes.

use super::json::{value_json, Safe};
use crate::decode::{Frame, Node, Role, Value};
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::Serialize;
use serde_json::ser::CompactFormatter;
use serde_json::Value as Json;
use std::io;

/// One frame's tree JSON on one line, as `frame_tree_json` would print it.
pub fn write_frame_tree_json(out: &mut impl io::Write, frame: &Frame) -> io::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(&mut *out, Safe(CompactFormatter));
    FrameJson(frame).serialize(&mut ser).map_err(io::Error::other)?;
    out.write_all(b"\n")
}

/// One node's tree JSON (no newline), as `tree_json` would print it.
pub fn write_tree_json(out: &mut impl io::Write, node: &Node) -> io::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(out, Safe(CompactFormatter));
    NodeJson(node).serialize(&mut ser).map_err(io::Error::other)
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
        m.serialize_entry("api_version", &f.api_version)?;
        m.serialize_entry("header_version", &f.header_version)?;
        m.serialize_entry("input_offset", &f.input_offset)?;
        let error = f.error.as_ref().map(|e| serde_json::json!({"offset": e.offset, "expected": e.expected}));
        m.serialize_entry("error", &error)?;
        m.serialize_entry("warnings", &f.warnings)?;
        if !f.record_damage.is_empty() {
            let damage: Vec<Json> = f.record_damage.iter().map(|e| serde_json::json!({"offset": e.offset, "expected": e.expected})).collect();
            m.serialize_entry("record_errors", &damage)?;
        }
        m.serialize_entry("tree", &NodeJson(&f.root))?;
        m.end()
    }
}

struct NodeJson<'a>(&'a Node);

impl Serialize for NodeJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let node = self.0;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("name", &node.name)?;
        if let Some(k) = node.key() {
            m.serialize_entry("field", k)?;
        }
        m.serialize_entry("type", &node.ty)?;
        m.serialize_entry("offset", &node.offset)?;
        m.serialize_entry("length", &node.len)?;
        if let Value::Bytes(Some(b)) = &node.value {
            // Written as it goes: a decompressed buffer's hex is megabytes.
            m.serialize_entry("value", &Hex(b))?;
        }
        let value = match &node.value {
            Value::Bytes(Some(_)) => Json::Null,
            Value::Array(Some(n)) => serde_json::json!(n),
            Value::Struct(true) | Value::None => Json::Null,
            _ => value_json(node),
        };
        if !value.is_null() || matches!(node.value, Value::Str(None) | Value::Bytes(None) | Value::Array(None) | Value::Struct(false)) {
            m.serialize_entry("value", &value)?;
        }
        if let Some(n) = &node.note {
            m.serialize_entry("note", n)?;
        }
        if let Some(d) = &node.doc {
            m.serialize_entry("doc", d)?;
        }
        m.serialize_entry("region", &node.region)?;
        if node.role == Role::Decompressed {
            m.serialize_entry("children_offsets", "decompressed buffer")?;
        }
        if let Some(e) = node.error() {
            m.serialize_entry("error", e)?;
        }
        if !node.children.is_empty() {
            m.serialize_entry("children", &Children(&node.children))?;
        }
        m.end()
    }
}

/// Bytes as a lowercase hex JSON string, written a chunk at a time.
struct Hex<'a>(&'a [u8]);

impl Serialize for Hex<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl std::fmt::Display for Hex<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut buf = [0u8; 2048];
        for chunk in self.0.chunks(buf.len() / 2) {
            let n = chunk.len() * 2;
            hex::encode_to_slice(chunk, &mut buf[..n]).map_err(|_| std::fmt::Error)?;
            f.write_str(std::str::from_utf8(&buf[..n]).map_err(|_| std::fmt::Error)?)?;
        }
        Ok(())
    }
}

struct Children<'a>(&'a [Node]);

impl Serialize for Children<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for c in self.0 {
            seq.serialize_element(&NodeJson(c))?;
        }
        seq.end()
    }
}
