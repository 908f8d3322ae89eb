//! The JSON contract built from a frame's tree with `serde_json`: the
//! independent implementation that `render::json::write_contract`, which
//! writes it from a values-only tape, is held to (the same keys, order,
//! values, `_raw` entries, redactions and errors). Its struct and value
//! builders ([`struct_object`], [`value_json`]) are the tests' own: kwire
//! writes every JSON value from a tape.

use kwire::decode::{Frame, Node, Role, Value};
use serde_json::{json, Map, Value as Json};

/// The contract of `frame` (decoded into its tree), built from its nodes.
pub fn tree_contract(frame: &Frame) -> Json {
    assert!(
        frame.values.is_none(),
        "the oracle reads a tree: decode without values_only"
    );
    if frame.kind.sasl_mechanism().is_some() {
        // A token's contract is its bytes: one writer, no tape.
        return kwire::render::json::frame_contract(frame);
    }
    let mut obj = Map::new();
    obj.insert("kind".into(), json!(frame.direction.as_str()));
    obj.insert("api_key".into(), json!(frame.api_key));
    let name = frame
        .api_key
        .and_then(|k| kwire::schema::Catalogue::builtin().api_name(k));
    obj.insert("api_name".into(), json!(name));
    obj.insert("api_version".into(), json!(frame.api_version));
    let struct_json = |n: Option<&Node>| n.map_or(Json::Null, |n| Json::Object(struct_object(n)));
    obj.insert("header".into(), struct_json(frame.header()));
    obj.insert("body".into(), struct_json(frame.body()));
    let raw = raw_entries(frame);
    if !raw.is_empty() {
        let raw: Map<String, Json> = raw
            .into_iter()
            .map(|(path, bytes)| (path, json!(hex::encode(bytes))))
            .collect();
        obj.insert("_raw".into(), Json::Object(raw));
    }
    if !frame.redacted.is_empty() {
        obj.insert("_redacted".into(), json!(frame.redacted));
    }
    if !frame.record_damage.is_empty() {
        let errors: Vec<Json> = frame
            .record_damage
            .iter()
            .map(|e| json!({"offset": e.offset, "expected": e.expected}))
            .collect();
        obj.insert("record_errors".into(), Json::Array(errors));
    }
    if let Some(e) = &frame.error {
        obj.insert(
            "error".into(),
            json!({"offset": e.offset, "expected": e.expected}),
        );
    }
    Json::Object(obj)
}

/// What JSON cannot carry exactly (a string that is not UTF-8, a NaN with a
/// payload), by the path `kwire encode` names it by, in the order written.
fn raw_entries(frame: &Frame) -> Vec<(String, Vec<u8>)> {
    let mut found = Vec::new();
    for (root, node) in [("header", frame.header()), ("body", frame.body())] {
        if let Some(n) = node {
            raw_in_struct(n, root, &mut found);
        }
    }
    found
}

/// The fields as the contract keeps them: by declaration, tagged ones
/// included, a repeated key once (at its first place, with its last value).
fn raw_in_struct(node: &Node, path: &str, found: &mut Vec<(String, Vec<u8>)>) {
    let mut fields: Vec<(u16, &Node)> = Vec::new();
    for c in &node.children {
        match c.role {
            Role::Field { decl } => fields.push((decl, c)),
            Role::TaggedSection => {
                for f in c.children.iter().flat_map(|entry| &entry.children) {
                    if let Role::Field { decl } = f.role {
                        fields.push((decl, f));
                    }
                }
            }
            _ => {}
        }
    }
    fields.sort_by_key(|(d, _)| *d);
    let mut kept: Vec<(String, &Node)> = Vec::new();
    for (_, f) in fields {
        match kept.iter_mut().find(|(k, _)| *k == field_key(f)) {
            Some(slot) => slot.1 = f,
            None => kept.push((field_key(f), f)),
        }
    }
    for (key, f) in kept {
        raw_in_value(f, &format!("{path}.{key}"), found);
    }
}

fn raw_in_value(node: &Node, path: &str, found: &mut Vec<(String, Vec<u8>)>) {
    match &node.value {
        Value::InvalidUtf8(b) => found.push((path.to_string(), b.to_vec())),
        Value::Float(v) if v.is_nan() && v.to_bits() != f64::NAN.to_bits() => {
            found.push((path.to_string(), v.to_be_bytes().to_vec()))
        }
        Value::Array(Some(_)) => {
            let elements = node.children.iter().filter(|c| c.role == Role::Element);
            for (n, el) in elements.enumerate() {
                raw_in_value(el, &format!("{path}[{n}]"), found);
            }
        }
        Value::Struct(true) => raw_in_struct(node, path, found),
        _ => {}
    }
}

/// A field's key in the contract: its schema name.
fn field_key(n: &Node) -> String {
    n.key().map_or_else(|| n.name.to_string(), str::to_string)
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
        obj.insert(field_key(f), value_json(f));
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
        // JSON has no numbers for NaN and the infinities: they are strings.
        Value::Float(v) => {
            serde_json::Number::from_f64(*v).map_or_else(|| json!(v.to_string()), Json::Number)
        }
        Value::Bool(b) => json!(b),
        Value::Str(s) => json!(s),
        // JSON strings must be Unicode: invalid sequences become U+FFFD.
        Value::InvalidUtf8(b) => json!(String::from_utf8_lossy(b)),
        Value::Bytes(b) => json!(b.as_ref().map(hex::encode)),
        Value::Uuid(u) => {
            // Hyphenated lowercase hex, 8-4-4-4-12.
            let h = hex::encode(u);
            json!(format!(
                "{}-{}-{}-{}-{}",
                &h[..8],
                &h[8..12],
                &h[12..16],
                &h[16..20],
                &h[20..]
            ))
        }
        Value::Array(None) | Value::Struct(false) => Json::Null,
        Value::Array(Some(_)) => Json::Array(
            node.children
                .iter()
                .filter(|c| c.role == Role::Element)
                .map(value_json)
                .collect(),
        ),
        Value::Struct(true) => Json::Object(struct_object(node)),
    }
}
