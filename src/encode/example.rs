//! The smallest legal instance of a message, by the seed pages' rules: numbers
//! zero, strings and byte arrays empty (not null), uuids zero, every array one
//! sample element, tagged fields absent, records one empty 61-byte RecordBatch v2.

use crate::protocol::record_batch::empty_batch;
use crate::schema::{FieldSpec, FieldType, Primitive};
use serde_json::{Map, Value};

/// The smallest instance of a struct's untagged fields at `version`.
pub fn smallest_struct(fields: &[FieldSpec], version: i16) -> Map<String, Value> {
    let mut obj = Map::new();
    for f in fields.iter().filter(|f| f.is_regular_in(version)) {
        obj.insert(f.name.clone(), smallest_field(f, version));
    }
    obj
}

fn smallest_field(f: &FieldSpec, version: i16) -> Value {
    match &f.ty {
        FieldType::Primitive(p) => smallest_primitive(*p),
        FieldType::Struct(_) => Value::Object(smallest_struct(&f.fields, version)),
        FieldType::Array(inner) => Value::Array(vec![match inner.as_ref() {
            FieldType::Struct(_) => Value::Object(smallest_struct(&f.fields, version)),
            FieldType::Primitive(p) => smallest_primitive(*p),
            FieldType::Array(_) => Value::Null,
        }]),
    }
}

fn smallest_primitive(p: Primitive) -> Value {
    match p {
        Primitive::Bool => Value::Bool(false),
        Primitive::Float64 => Value::from(0.0),
        Primitive::String | Primitive::Bytes => Value::String(String::new()),
        Primitive::Uuid => Value::String(uuid::Uuid::nil().hyphenated().to_string()),
        Primitive::Records => Value::String(hex::encode(empty_batch())),
        _ => Value::from(0),
    }
}
