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
    /// The struct's values, for the JSON contract's writer (`None` when no
    /// struct was read).
    pub values: Option<StructValues>,
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
        values: None,
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
    let values = Some(StructValues::read(spec, v, bytes.slice(r.pos()..)));
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
                values,
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
                values,
            }
        }
    }
}

/// A struct that sits inside other bytes (a record's key or value) decoded
/// onto a values tape of its own, which the JSON contract's writer writes
/// (`crate::render::json::write_struct_values`). Credentials in it are
/// masked in its bytes and marked on its tape when `secrets::hiding`.
#[derive(Clone, Debug)]
pub struct StructValues {
    /// The struct's schema and the version read: `OffsetCommitKey v0`.
    pub schema: String,
    pub tape: super::tape::Values,
    /// The struct's slot on the tape.
    pub slot: u32,
    /// The struct's bytes, which the tape's spans index.
    pub bytes: Bytes,
    /// Whether it was read to its end.
    pub whole: bool,
    /// The ranges of `bytes` masked as credentials.
    pub masked: Vec<(usize, usize)>,
}

impl StructValues {
    /// `bytes` decoded as `spec` at `version`.
    pub fn read(spec: &crate::schema::MessageSpec, version: i16, bytes: Bytes) -> StructValues {
        let plan = spec.plan(version);
        let schema = format!("{} v{version}", spec.name);
        StructValues::read_plan(schema, (&spec.fields, &plan), bytes)
    }

    /// `bytes` decoded as the struct `fields` laid out by `plan`, named `schema`.
    pub(crate) fn read_plan(
        schema: String,
        (fields, plan): (
            &[crate::schema::model::FieldSpec],
            &crate::schema::plan::StructPlan,
        ),
        bytes: Bytes,
    ) -> StructValues {
        let mut tape = super::tape::Values::default();
        let (slot, _, res) = super::values::decode_message(&bytes, 0, plan, &mut tape);
        let mut read = StructValues {
            schema,
            tape,
            slot,
            bytes,
            whole: res.is_ok(),
            masked: Vec::new(),
        };
        if super::secrets::hiding() && plan.holds_secrets {
            read.masked = super::secrets::mark_secret_fields(&mut read.tape, slot, fields);
            read.bytes = super::secrets::masked(&read.bytes, &read.masked);
        }
        read
    }
}
