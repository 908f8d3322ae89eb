//! JSON renderers: the values-only contract (`--format json`) and the full
//! annotated tree (`--format tree-json`). Both walk the tree; neither reads bytes.

use super::values::uuid_text;
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

/// Every node with its name, type, offset, length, value, note, description and region.
pub fn tree_json(node: &Node) -> Json {
    let mut obj = Map::new();
    obj.insert("name".into(), json!(node.name));
    if let Some(k) = &node.key {
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
    if let Some(e) = &node.error {
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
