//! The smallest legal instance of a message, by the seed pages' rules: numbers
//! zero, strings and byte arrays empty (not null), uuids zero, every array one
//! sample element, tagged fields absent, records one empty 61-byte RecordBatch v2.

use super::frame::{encode_frame, example_header, message_spec, FrameSpec};
use crate::protocol::record_batch::empty_batch;
use crate::schema::{Catalogue, FieldSpec, FieldType, MessageKind, Primitive};
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

/// The latest version that is not marked unstable (or the latest, when all are).
pub fn default_version(cat: &Catalogue, api_key: i16, release: Option<&str>) -> Option<i16> {
    let versions = cat.versions(MessageKind::Request, api_key, release);
    let newest = cat
        .entries_for(MessageKind::Request, api_key, release)
        .next()?;
    let top = *versions.last()?;
    if newest.spec().latest_version_unstable
        && top == newest.spec().valid_versions.hi
        && versions.len() > 1
    {
        Some(versions[versions.len() - 2])
    } else {
        Some(top)
    }
}

/// The smallest instance of one direction of an API, as a whole frame.
pub fn example_frame(cat: &Catalogue, fs: &FrameSpec) -> Result<Vec<u8>, String> {
    let spec = message_spec(cat, fs).map_err(|e| e.to_string())?;
    let body = smallest_struct(&spec.fields, fs.version);
    encode_frame(cat, fs, &example_header(fs.direction), &body).map_err(|e| e.to_string())
}

/// The prefix a record type carries in the log: coordinator keys their record
/// type, coordinator values their version, metadata records frame version 1,
/// apiKey and version as uvarints; data types none.
pub(crate) fn payload_prefix(spec: &crate::schema::MessageSpec, version: i16) -> Vec<u8> {
    let mut w = super::writer::Writer::default();
    match spec.kind {
        MessageKind::CoordinatorKey => w.i16(spec.api_key.unwrap_or_default()),
        MessageKind::CoordinatorValue => w.i16(version),
        MessageKind::Metadata => {
            w.uvarint(1);
            w.uvarint(spec.api_key.unwrap_or_default() as u64);
            w.uvarint(version as u64);
        }
        _ => {}
    }
    w.buf
}

/// The smallest instance of a record type (coordinator key or value, metadata
/// record, data type) with its log prefix.
pub fn example_payload(
    cat: &Catalogue,
    name: &str,
    version: Option<i16>,
) -> Result<(Vec<u8>, i16), String> {
    let newest = cat
        .entries_named(name)
        .next()
        .ok_or_else(|| format!("unknown record type {name:?}"))?;
    let v = version.unwrap_or(newest.spec().valid_versions.hi);
    let spec = cat.by_name(name, v, None).ok_or_else(|| {
        format!(
            "{name} has no version {v}; valid: {}",
            newest.spec().valid_versions
        )
    })?;
    let mut out = payload_prefix(spec, v);
    out.extend(
        super::encode_body(spec, v, &smallest_struct(&spec.fields, v))
            .map_err(|e| e.to_string())?,
    );
    Ok((out, v))
}
