//! JSON renderers: the values-only contract (`--format json`) and the full
//! annotated tree (`--format tree-json`). Both walk the tree; neither reads bytes.

use super::digits::{push_int, push_uint};
use super::values::uuid_text;
use crate::decode::values::{Slot, SlotKind, Span, Val, Values};
use crate::decode::{Frame, Node, Region, Role, Value};
use serde_json::{json, Map, Value as Json};

/// The JSON contract: `{kind, api_key, api_version, header, body}` keyed by schema names.
pub fn frame_contract(frame: &Frame) -> Json {
    let mut obj = Map::new();
    obj.insert("kind".into(), json!(frame.direction.as_str()));
    obj.insert("api_key".into(), json!(frame.api_key));
    obj.insert("api_version".into(), json!(frame.api_version));
    let header = frame.root.children.iter().find(|c| c.region == Region::RpcHeader);
    obj.insert("header".into(), header.map_or(Json::Null, |h| Json::Object(struct_object(h))));
    let body = frame.root.children.iter().find(|c| matches!(c.region, Region::RequestBody | Region::ResponseBody));
    obj.insert("body".into(), body.map_or(Json::Null, |b| Json::Object(struct_object(b))));
    if let Some(e) = &frame.error {
        obj.insert("error".into(), json!({"offset": e.offset, "expected": e.expected}));
    }
    Json::Object(obj)
}

/// The schema fields of a struct node, in declaration order, tagged ones included
/// when present on the wire; unknown tags under `_unknown_tags` as hex.
pub fn struct_object(node: &Node) -> Map<String, Json> {
    let mut fields: Vec<(u16, &Node)> = Vec::new();
    let mut unknown = Map::new();
    for c in &node.children {
        match c.role {
            Role::Field { decl } => fields.push((decl, c)),
            Role::TaggedSection => {
                for entry in &c.children {
                    for f in &entry.children {
                        match f.role {
                            Role::Field { decl } => fields.push((decl, f)),
                            Role::UnknownTag { tag } => {
                                unknown.insert(tag.to_string(), value_json(f));
                            }
                            _ => {}
                        }
                    }
                }
            }
            _ => {}
        }
    }
    fields.sort_by_key(|(d, _)| *d);
    let mut obj = Map::new();
    for (_, f) in fields {
        obj.insert(f.field_key().to_string(), value_json(f));
    }
    if !unknown.is_empty() {
        obj.insert("_unknown_tags".into(), Json::Object(unknown));
    }
    obj
}

/// A node's value in the contract's types.
pub fn value_json(node: &Node) -> Json {
    match &node.value {
        Value::None => Json::Null,
        Value::Int(v) => json!(v),
        Value::Uint(v) => json!(v),
        Value::Float(v) => serde_json::Number::from_f64(*v).map_or_else(|| json!(v.to_string()), Json::Number),
        Value::Bool(b) => json!(b),
        Value::Str(s) => json!(s),
        // JSON strings must be Unicode: invalid sequences become U+FFFD.
        Value::InvalidUtf8(b) => json!(String::from_utf8_lossy(b)),
        Value::Bytes(b) => json!(b.as_ref().map(hex::encode)),
        Value::Uuid(u) => json!(uuid_text(u)),
        Value::Array(None) | Value::Struct(false) => Json::Null,
        Value::Array(Some(_)) => Json::Array(
            node.children.iter().filter(|c| c.role == Role::Element).map(value_json).collect(),
        ),
        Value::Struct(true) => Json::Object(struct_object(node)),
    }
}

/// [`frame_contract`] written straight out as compact JSON: the same text as
/// `frame_contract(frame).to_string()` without building a `serde_json::Value`
/// (what `--format json` prints; several times faster on large frames).
pub fn write_contract(frame: &Frame, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"kind\":");
    write_json_str(out, frame.direction.as_str());
    out.extend_from_slice(b",\"api_key\":");
    write_opt_int(out, frame.api_key);
    out.extend_from_slice(b",\"api_version\":");
    write_opt_int(out, frame.api_version);
    if let Some(values) = &frame.values {
        let tape = Tape { values, frame: &frame.bytes };
        for (label, slot) in [(&b",\"header\":"[..], values.header), (&b",\"body\":"[..], values.body)] {
            out.extend_from_slice(label);
            match slot {
                Some(i) => tape.write_struct(out, i),
                None => out.extend_from_slice(b"null"),
            }
        }
    } else {
        out.extend_from_slice(b",\"header\":");
        match frame.root.children.iter().find(|c| c.region == Region::RpcHeader) {
            Some(h) => write_struct(out, h),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"body\":");
        match frame.root.children.iter().find(|c| matches!(c.region, Region::RequestBody | Region::ResponseBody)) {
            Some(b) => write_struct(out, b),
            None => out.extend_from_slice(b"null"),
        }
    }
    if let Some(e) = &frame.error {
        out.extend_from_slice(b",\"error\":{\"offset\":");
        push_uint(out, e.offset as u64, 0);
        out.extend_from_slice(b",\"expected\":");
        write_json_str(out, &e.expected);
        out.push(b'}');
    }
    out.push(b'}');
}

/// A struct's fields as [`struct_object`] orders them: by declaration, a key
/// seen twice (a tag repeated by a hostile writer) at its first place with its last value.
fn write_struct(out: &mut Vec<u8>, node: &Node) {
    if write_plain_struct(out, node) {
        return;
    }
    let mut fields: Vec<(u16, &Node)> = Vec::with_capacity(node.children.len());
    let mut unknown: Vec<(u32, &Node)> = Vec::new();
    for c in &node.children {
        match c.role {
            Role::Field { decl } => fields.push((decl, c)),
            Role::TaggedSection => {
                for f in c.children.iter().flat_map(|entry| &entry.children) {
                    match f.role {
                        Role::Field { decl } => fields.push((decl, f)),
                        Role::UnknownTag { tag } => unknown.push((tag, f)),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    if !fields.is_sorted_by_key(|(d, _)| *d) {
        fields.sort_by_key(|(d, _)| *d);
    }
    out.push(b'{');
    let mut first = true;
    let keyed = dedup_last(fields.iter().map(|(_, f)| (f.field_key(), *f)));
    for (key, f) in keyed {
        if !std::mem::take(&mut first) {
            out.push(b',');
        }
        write_json_str(out, key);
        out.push(b':');
        write_value(out, f);
    }
    if !unknown.is_empty() {
        if !first {
            out.push(b',');
        }
        out.extend_from_slice(b"\"_unknown_tags\":{");
        let tags: Vec<(String, &Node)> = unknown.iter().map(|(t, n)| (t.to_string(), *n)).collect();
        for (i, (tag, n)) in dedup_last(tags.iter().map(|(t, n)| (t.as_str(), *n))).into_iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_json_str(out, tag);
            out.push(b':');
            write_value(out, n);
        }
        out.push(b'}');
    }
    out.push(b'}');
}

/// The usual struct, written without collecting its fields: fields in
/// declaration order and no tagged field present. Returns false (having
/// written nothing) for any other struct.
fn write_plain_struct(out: &mut Vec<u8>, node: &Node) -> bool {
    let mut last: Option<u16> = None;
    for c in &node.children {
        match c.role {
            Role::Field { decl } if last.is_none_or(|l| decl > l) => last = Some(decl),
            Role::Field { .. } => return false,
            Role::TaggedSection if !c.children.is_empty() => return false,
            _ => {}
        }
    }
    out.push(b'{');
    let mut first = true;
    for c in node.children.iter().filter(|c| matches!(c.role, Role::Field { .. })) {
        if !std::mem::take(&mut first) {
            out.push(b',');
        }
        write_json_str(out, c.field_key());
        out.push(b':');
        write_value(out, c);
    }
    out.push(b'}');
    true
}

/// A values-only frame's tape ([`crate::decode::values`]), written as
/// [`write_struct`] writes a tree: the same keys, order and values.
struct Tape<'a> {
    values: &'a Values,
    frame: &'a [u8],
}

impl Tape<'_> {
    fn write_struct(&self, out: &mut Vec<u8>, i: u32) {
        // Written as it comes, which is right for the usual struct: fields in
        // declaration order, no unknown tags. Anything else is written again.
        let start = out.len();
        out.push(b'{');
        let mut last: Option<u32> = None;
        for (at, s) in self.values.children(i) {
            if s.kind != SlotKind::Field || last.is_some_and(|l| s.decl <= l) {
                out.truncate(start);
                return self.write_struct_sorted(out, i);
            }
            if last.is_some() {
                out.push(b',');
            }
            last = Some(s.decl);
            out.extend_from_slice(s.key.as_bytes());
            self.write_value(out, at, s);
        }
        out.push(b'}');
    }

    /// A struct with tagged fields out of declaration order, repeated keys or unknown tags.
    fn write_struct_sorted(&self, out: &mut Vec<u8>, i: u32) {
        out.push(b'{');
        let mut fields: Vec<(u32, &Slot)> = Vec::new();
        let mut unknown: Vec<(String, (u32, &Slot))> = Vec::new();
        for (at, s) in self.values.children(i) {
            match s.kind {
                SlotKind::Field => fields.push((at, s)),
                SlotKind::UnknownTag => unknown.push((s.decl.to_string(), (at, s))),
                _ => {}
            }
        }
        fields.sort_by_key(|(_, s)| s.decl);
        for (n, (key, (at, s))) in dedup_last(fields.iter().map(|f| (*f.1.key, f))).into_iter().enumerate() {
            if n > 0 {
                out.push(b',');
            }
            out.extend_from_slice(key.as_bytes());
            self.write_value(out, *at, s);
        }
        if !unknown.is_empty() {
            if !fields.is_empty() {
                out.push(b',');
            }
            out.extend_from_slice(b"\"_unknown_tags\":{");
            for (n, (tag, (at, s))) in dedup_last(unknown.iter().map(|(t, s)| (t.as_str(), s))).into_iter().enumerate() {
                if n > 0 {
                    out.push(b',');
                }
                write_json_str(out, tag);
                out.push(b':');
                self.write_value(out, *at, s);
            }
            out.push(b'}');
        }
        out.push(b'}');
    }

    /// Slot `i`'s value (`s` is that slot).
    fn write_value(&self, out: &mut Vec<u8>, i: u32, s: &Slot) {
        match s.value {
            Val::Null => out.extend_from_slice(b"null"),
            Val::Int(v) => push_int(out, v),
            Val::Uint(v) => push_uint(out, v, 0),
            Val::Float(v) => write_float(out, v),
            Val::Bool(b) => out.extend_from_slice(if b { b"true" } else { b"false" }),
            Val::Str(span) => match std::str::from_utf8(span.of(self.frame)) {
                Ok(text) => write_json_str(out, text),
                Err(_) => write_json_str(out, &String::from_utf8_lossy(span.of(self.frame))),
            },
            Val::Bytes(span) => {
                out.push(b'"');
                write_hex(out, span.of(self.frame));
                out.push(b'"');
            }
            Val::Uuid(at) => {
                let mut bytes = [0u8; 16];
                bytes.copy_from_slice(Span { at, len: 16 }.of(self.frame));
                write_uuid(out, &bytes);
            }
            Val::Array => {
                out.push(b'[');
                for (n, (at, el)) in self.values.children(i).enumerate() {
                    if n > 0 {
                        out.push(b',');
                    }
                    self.write_value(out, at, el);
                }
                out.push(b']');
            }
            Val::Struct => self.write_struct(out, i),
        }
    }
}

/// Map-insert semantics over a list: each key once, at its first place, with its last value.
fn dedup_last<'a, 'n, N>(items: impl Iterator<Item = (&'a str, &'n N)>) -> Vec<(&'a str, &'n N)> {
    let mut kept: Vec<(&str, &N)> = Vec::new();
    let mut index: Option<std::collections::HashMap<&str, usize>> = None;
    for (k, n) in items {
        // A linear search is fastest for the usual handful of fields; large structs get an index.
        if index.is_none() && kept.len() >= 16 {
            index = Some(kept.iter().enumerate().map(|(i, (k, _))| (*k, i)).collect());
        }
        let found = match &index {
            Some(ix) => ix.get(k).copied(),
            None => kept.iter().position(|(kk, _)| *kk == k),
        };
        match found {
            Some(i) => kept[i].1 = n,
            None => {
                if let Some(ix) = &mut index {
                    ix.insert(k, kept.len());
                }
                kept.push((k, n));
            }
        }
    }
    kept
}

fn write_value(out: &mut Vec<u8>, node: &Node) {
    match &node.value {
        Value::None | Value::Array(None) | Value::Struct(false) | Value::Str(None) | Value::Bytes(None) => out.extend_from_slice(b"null"),
        Value::Int(v) => push_int(out, *v),
        Value::Uint(v) => push_uint(out, *v, 0),
        Value::Float(v) => write_float(out, *v),
        Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Str(Some(s)) => write_json_str(out, s),
        Value::InvalidUtf8(b) => write_json_str(out, &String::from_utf8_lossy(b)),
        Value::Bytes(Some(b)) => {
            out.push(b'"');
            write_hex(out, b);
            out.push(b'"');
        }
        Value::Uuid(u) => write_uuid(out, u),
        Value::Array(Some(_)) => {
            out.push(b'[');
            for (i, c) in node.children.iter().filter(|c| c.role == Role::Element).enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(out, c);
            }
            out.push(b']');
        }
        Value::Struct(true) => write_struct(out, node),
    }
}

fn write_float(out: &mut Vec<u8>, v: f64) {
    if v.is_finite() {
        // serde_json's own float formatting, so the text matches `frame_contract`.
        let _ = serde_json::to_writer(&mut *out, &v);
    } else {
        write_json_str(out, &v.to_string());
    }
}

fn write_uuid(out: &mut Vec<u8>, u: &[u8; 16]) {
    let mut buf = [0u8; uuid::fmt::Hyphenated::LENGTH];
    write_json_str(out, uuid::Uuid::from_bytes(*u).hyphenated().encode_lower(&mut buf));
}

/// Lowercase hex, two digits per byte from one table lookup (record data
/// makes up most of a large Fetch response's JSON).
/// Bytes as lowercase hex: record data is most of a Fetch response's JSON.
fn write_hex(out: &mut Vec<u8>, b: &[u8]) {
    out.reserve(2 * b.len());
    #[cfg(target_arch = "x86_64")]
    let b = {
        let whole = b.len() - b.len() % 16;
        write_hex_sse2(out, &b[..whole]);
        &b[whole..]
    };
    out.extend(b.iter().flat_map(|&x| HEX_PAIRS[usize::from(x)]));
}

/// Two lowercase hex digits per byte.
const HEX_PAIRS: [[u8; 2]; 256] = {
    let digits = b"0123456789abcdef";
    let mut t = [[0u8; 2]; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = [digits[i >> 4], digits[i & 15]];
        i += 1;
    }
    t
};

/// [`write_hex`] sixteen bytes at a time with SSE2 (every x86-64 has it):
/// nibbles split, made digits by adding `'0'` and, where 10 or more, 39 more
/// (to reach `'a'`), then interleaved high, low. `b.len()` is a multiple of 16.
#[cfg(target_arch = "x86_64")]
fn write_hex_sse2(out: &mut Vec<u8>, b: &[u8]) {
    use std::arch::x86_64::*;
    out.reserve(2 * b.len());
    let start = out.len();
    // SAFETY: SSE2 is part of every x86-64 CPU (the target's baseline). Room
    // for 2 × b.len() bytes after `start` was reserved above; each iteration
    // reads 16 bytes inside `b` and writes 32 inside that room, and the length
    // is set only over the bytes written.
    unsafe {
        let digits = |n: __m128i| {
            let tens = _mm_and_si128(_mm_cmpgt_epi8(n, _mm_set1_epi8(9)), _mm_set1_epi8(39));
            _mm_add_epi8(_mm_add_epi8(n, _mm_set1_epi8(b'0' as i8)), tens)
        };
        let mask = _mm_set1_epi8(0x0f);
        let dst = out.as_mut_ptr().add(start);
        for (i, chunk) in b.chunks_exact(16).enumerate() {
            let x = _mm_loadu_si128(chunk.as_ptr().cast());
            let hi = digits(_mm_and_si128(_mm_srli_epi16::<4>(x), mask));
            let lo = digits(_mm_and_si128(x, mask));
            _mm_storeu_si128(dst.add(32 * i).cast(), _mm_unpacklo_epi8(hi, lo));
            _mm_storeu_si128(dst.add(32 * i + 16).cast(), _mm_unpackhi_epi8(hi, lo));
        }
        out.set_len(start + 2 * (b.len() / 16 * 16));
    }
}

fn write_json_str(out: &mut Vec<u8>, s: &str) {
    // Plain ASCII needs no escapes: copy it; anything else goes through serde_json.
    // A branch-free fold, so that the check runs vectorised on long strings.
    if !s.bytes().fold(false, |bad, b| bad | (b < 0x20) | (b == b'"') | (b == b'\\')) {
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    } else {
        let _ = serde_json::to_writer(&mut *out, s);
    }
}

fn write_opt_int(out: &mut Vec<u8>, v: Option<i16>) {
    match v {
        Some(v) => push_int(out, v.into()),
        None => out.extend_from_slice(b"null"),
    }
}

/// Every node with its name, type, offset, length, value, note, description and region.
pub fn tree_json(node: &Node) -> Json {
    let mut obj = Map::new();
    obj.insert("name".into(), json!(node.name));
    if let Some(k) = node.key() {
        obj.insert("field".into(), json!(k));
    }
    obj.insert("type".into(), json!(node.ty));
    obj.insert("offset".into(), json!(node.offset));
    obj.insert("length".into(), json!(node.len));
    let value = match &node.value {
        Value::Array(Some(n)) => json!(n),
        Value::Struct(true) | Value::None => Json::Null,
        _ => value_json(node),
    };
    if !value.is_null() || matches!(node.value, Value::Str(None) | Value::Bytes(None) | Value::Array(None) | Value::Struct(false)) {
        obj.insert("value".into(), value);
    }
    if let Some(n) = &node.note {
        obj.insert("note".into(), json!(n));
    }
    if let Some(d) = &node.doc {
        obj.insert("doc".into(), json!(d));
    }
    obj.insert("region".into(), json!(node.region));
    if node.role == Role::Decompressed {
        obj.insert("children_offsets".into(), json!("decompressed buffer"));
    }
    if let Some(e) = node.error() {
        obj.insert("error".into(), json!(e));
    }
    if !node.children.is_empty() {
        obj.insert("children".into(), Json::Array(node.children.iter().map(tree_json).collect()));
    }
    Json::Object(obj)
}

/// A frame as tree JSON, with its identification, error and warnings.
pub fn frame_tree_json(frame: &Frame) -> Json {
    json!({
        "kind": frame.direction.as_str(),
        "api_key": frame.api_key,
        "api_version": frame.api_version,
        "header_version": frame.header_version,
        "input_offset": frame.input_offset,
        "error": frame.error.as_ref().map(|e| json!({"offset": e.offset, "expected": e.expected})),
        "warnings": frame.warnings,
        "tree": tree_json(&frame.root),
    })
}

#[cfg(test)]
mod tests {
    use super::write_hex;

    #[test]
    fn hex_is_hex_encode_at_every_length_and_byte() {
        let all: Vec<u8> = (0..=255u8).chain((0..=255u8).rev()).collect();
        for len in 0..all.len() {
            for start in [0, 3, 7] {
                let b = &all[start.min(len)..len];
                let mut out = b"x".to_vec();
                write_hex(&mut out, b);
                assert_eq!(&out[1..], hex::encode(b).as_bytes(), "{len} bytes from {start}");
            }
        }
    }
}
