//! Standalone schema-defined payloads outside a request or response: coordinator
//! keys and values, KRaft metadata records and data types, with the version
//! prefixes the log format gives them.

use super::fields::decode_embedded;
use super::problem::ErrorKind;
use super::reader::Reader;
use super::tree::{leaf, DecodeError, Kind, Node, Region, Role, Value, Wire};
use crate::schema::{Catalogue, MessageKind, Primitive};
use bytes::Bytes;

/// A standalone payload decoded: the tree (root spans all bytes), the error
/// where decoding stopped, the warnings, and the version of the struct read
/// (`None` when no struct was read). The struct is the root's child of
/// [`Kind::Body`].
pub struct DecodedPayload {
    pub root: Node,
    pub error: Option<DecodeError>,
    pub warnings: Vec<super::problem::Warning>,
    pub version: Option<i16>,
    /// The bytes as views show them: credentials masked when
    /// `secrets::hiding` (the tree's secret nodes say `<redacted, N bytes>`).
    pub bytes: Bytes,
}

/// Decode `bytes` as the record type `name` with its log prefix: the tree
/// (root spans all bytes), the error where decoding stopped, if any, and the
/// version of the struct it read. Credentials (a UserScramCredentialRecord's
/// salt and keys) are redacted as in frames, unless `--show-secrets`.
pub fn read_payload(
    cat: &Catalogue,
    name: &str,
    bytes: &Bytes,
    version: Option<i16>,
) -> DecodedPayload {
    let mut decoded = read_payload_unredacted(cat, name, bytes, version);
    decoded.bytes = bytes.clone();
    if super::secrets::hiding() {
        super::secrets::redact_tree(std::slice::from_mut(&mut decoded.root), &mut decoded.bytes);
    }
    decoded
}

fn read_payload_unredacted(
    cat: &Catalogue,
    name: &str,
    bytes: &Bytes,
    version: Option<i16>,
) -> DecodedPayload {
    let stopped = |root, error| DecodedPayload {
        root,
        error: Some(error),
        warnings: Vec::new(),
        version: None,
        bytes: Bytes::new(),
    };
    let mut root = Node::new(
        name.to_string(),
        "record",
        0,
        Region::RequestBody,
        Role::Structure,
    );
    root.len = bytes.len();
    let Some(kind) = cat.entries_named(name).next().map(|e| e.spec().kind) else {
        return stopped(
            root,
            DecodeError {
                kind: ErrorKind::Invalid,
                offset: 0,
                expected: format!("a known record type, not {name:?}"),
            },
        );
    };
    let mut r = Reader::new(bytes);
    let start_version = match kind {
        MessageKind::CoordinatorKey | MessageKind::CoordinatorValue => {
            let at = r.pos();
            match r.i16("version prefix") {
                Ok(v) => {
                    let label = if kind == MessageKind::CoordinatorKey {
                        "type"
                    } else {
                        "version"
                    };
                    root.children.push(leaf(
                        label,
                        Wire::Fixed(Primitive::Int16),
                        at,
                        2,
                        Value::Int(v.into()),
                        Region::RequestBody,
                    ));
                    if kind == MessageKind::CoordinatorKey {
                        0
                    } else {
                        v
                    }
                }
                Err(e) => return stopped(root, e),
            }
        }
        MessageKind::Metadata => {
            let mut vals = Vec::new();
            for label in ["frameVersion", "apiKey", "version"] {
                let at = r.pos();
                match r.uvarint(label) {
                    Ok(u) => {
                        root.children.push(leaf(
                            label,
                            Wire::Uvarint,
                            at,
                            u.len,
                            Value::Uint(u.value),
                            Region::RequestBody,
                        ));
                        vals.push(u.value as i16);
                    }
                    Err(e) => return stopped(root, e),
                }
            }
            vals[2]
        }
        _ => version.unwrap_or_else(|| {
            cat.entries_named(name)
                .next()
                .map_or(0, |e| e.spec().valid_versions.hi)
        }),
    };
    let v = version.unwrap_or(start_version);
    let Some(spec) = cat.by_name(name, v, None) else {
        return stopped(
            root,
            DecodeError {
                kind: ErrorKind::UnknownMessage,
                offset: r.pos(),
                expected: format!("a version of {name} the catalogue has, not {v}"),
            },
        );
    };
    match decode_embedded(
        cat,
        bytes,
        spec,
        v,
        (r.pos(), bytes.len()),
        Region::RequestBody,
    ) {
        Ok((mut node, warnings)) => {
            let end = node.end();
            node.kind = Kind::Body;
            root.children.push(node);
            let error = (end < bytes.len()).then(|| DecodeError {
                kind: ErrorKind::TrailingBytes,
                offset: end,
                expected: format!(
                    "the end of the {name} record: {} bytes follow",
                    bytes.len() - end
                ),
            });
            DecodedPayload {
                root,
                error,
                warnings,
                version: Some(v),
                bytes: Bytes::new(),
            }
        }
        Err(failed) => {
            let (mut node, e) = *failed;
            node.kind = Kind::Body;
            root.children.push(node);
            DecodedPayload {
                root,
                error: Some(e),
                warnings: Vec::new(),
                version: Some(v),
                bytes: Bytes::new(),
            }
        }
    }
}
