//! Where the site's pages live and the anchors inside them, for links from
//! one page to another (a type to its encoding, a tree node to its section).

use crate::schema::{FieldType, Primitive};

/// The encoding page.
pub(crate) const ENCODING: &str = "encoding";
/// The record batch page.
pub(crate) const RECORD_BATCH: &str = "record-batch";

/// Anchors of the encoding page's sections, for links from types and tree nodes.
pub(crate) const UVARINT: &str = "uvarint";
pub(crate) const VARINT: &str = "varint";
pub(crate) const LENGTHS: &str = "lengths";
pub(crate) const STRUCTS: &str = "structs";
pub(crate) const TAGGED: &str = "tagged-fields";
pub(crate) const REQUEST_HEADERS: &str = "request-headers";
pub(crate) const RESPONSE_HEADERS: &str = "response-headers";

/// Where a schema type's encoding is explained: its row of the fixed-width
/// table, the section on lengths (strings, bytes, arrays) or on structs, or
/// for records the record batch page.
pub(crate) fn type_link(ty: &FieldType) -> String {
    match ty {
        FieldType::Primitive(Primitive::Records) => RECORD_BATCH.to_string(),
        FieldType::Primitive(Primitive::String | Primitive::Bytes) | FieldType::Array(_) => {
            format!("{ENCODING}#{LENGTHS}")
        }
        FieldType::Primitive(p) => format!("{ENCODING}#{}", fixed_anchor(p.as_str())),
        FieldType::Struct(_) => format!("{ENCODING}#{STRUCTS}"),
    }
}

/// The anchor of a fixed-width type's row (`type-int32`).
pub(crate) fn fixed_anchor(name: &str) -> String {
    format!("type-{name}")
}
