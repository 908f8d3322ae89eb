//! A message version as a compact grammar, the form engineers scan to compare
//! versions: the message's fields in order on its first line, then each
//! field on its own line with its wire type, structs and arrays of structs
//! opening an indented block of their own fields.
//!
//! ```text
//! Produce Request (Version: 9) => transactional_id acks timeout_ms [topic_data] _tagged_fields
//!   transactional_id => COMPACT_NULLABLE_STRING
//!   …
//! ```
//!
//! `[x]` is an array; in a flexible version each struct ends with
//! `_tagged_fields`, and its tagged fields are listed after its other fields
//! as `name => TYPE (tag N)`; they are not in the struct's token list, since
//! they may be left out. Names are the definitions' in snake case.

use crate::schema::{FieldSpec, FieldType, MessageKind, MessageSpec, Primitive, Versions};
use crate::text::snake_case;

/// The grammar of `spec` at `version`, one line per entry.
pub fn grammar(spec: &MessageSpec, api_name: &str, version: i16) -> String {
    let kind = match spec.kind {
        MessageKind::Request => "Request",
        MessageKind::Response => "Response",
        _ => "Data",
    };
    let flexible = spec.is_flexible(version);
    let mut lines = Vec::new();
    let head = tokens(&spec.fields, version, flexible);
    lines.push(format!("{api_name} {kind} (Version: {version}) => {head}"));
    let ctx = Ctx {
        version,
        flexible,
        flexible_versions: &spec.flexible_versions,
    };
    block(&spec.fields, &ctx, 1, &mut lines);
    lines.join("\n")
}

struct Ctx<'a> {
    version: i16,
    flexible: bool,
    flexible_versions: &'a Versions,
}

fn present(f: &FieldSpec, version: i16) -> bool {
    f.versions.contains(version)
}

fn tagged(f: &FieldSpec, version: i16) -> bool {
    f.tagged.is_some_and(|t| t.contains(version)) && f.tag.is_some()
}

/// The tokens of a struct's line: its fields in order, `[x]` for arrays.
fn tokens(fields: &[FieldSpec], version: i16, flexible: bool) -> String {
    let mut out: Vec<String> = fields
        .iter()
        .filter(|f| present(f, version) && !tagged(f, version))
        .map(|f| match f.ty {
            FieldType::Array(_) => format!("[{}]", snake_case(&f.name)),
            _ => snake_case(&f.name),
        })
        .collect();
    if flexible {
        out.push("_tagged_fields".into());
    }
    out.join(" ")
}

fn block(fields: &[FieldSpec], ctx: &Ctx<'_>, depth: usize, lines: &mut Vec<String>) {
    let present_fields = fields.iter().filter(|f| present(f, ctx.version));
    let (tagged_fields, plain): (Vec<&FieldSpec>, Vec<&FieldSpec>) =
        present_fields.partition(|f| tagged(f, ctx.version));
    for f in plain {
        entry(f, ctx, depth, None, lines);
    }
    for f in tagged_fields {
        entry(f, ctx, depth, f.tag, lines);
    }
}

fn entry(f: &FieldSpec, ctx: &Ctx<'_>, depth: usize, tag: Option<u32>, lines: &mut Vec<String>) {
    let indent = "  ".repeat(depth);
    let name = snake_case(&f.name);
    let in_tag = tag.is_some();
    let tag = tag.map_or(String::new(), |t| format!(" (tag {t})"));
    let inner = match &f.ty {
        FieldType::Array(inner) => inner.as_ref(),
        t => t,
    };
    match inner {
        FieldType::Struct(_) => {
            lines.push(format!(
                "{indent}{name} => {}{tag}",
                tokens(&f.fields, ctx.version, ctx.flexible)
            ));
            block(&f.fields, ctx, depth + 1, lines);
        }
        FieldType::Primitive(p) => {
            lines.push(format!(
                "{indent}{name} => {}{tag}",
                wire_type(*p, f, (ctx.version, in_tag), ctx.flexible_versions)
            ));
        }
        FieldType::Array(_) => lines.push(format!("{indent}{name} => ?{tag}")),
    }
}

/// The wire type of a primitive field at the version (`in_tag`: a tagged
/// field's value): compact lengths as the schema's rule says
/// ([`FieldSpec::is_compact_in`]), nullable when the version allows null.
pub(crate) fn wire_type(
    p: Primitive,
    f: &FieldSpec,
    (v, in_tag): (i16, bool),
    flexible_versions: &Versions,
) -> String {
    let compact = f.is_compact_in(v, flexible_versions.contains(v), in_tag);
    let nullable = f.nullable.contains(v);
    let lengthed = |base: &str| {
        let mut s = String::new();
        if compact {
            s.push_str("COMPACT_");
        }
        if nullable {
            s.push_str("NULLABLE_");
        }
        s.push_str(base);
        s
    };
    match p {
        Primitive::Bool => "BOOLEAN".into(),
        Primitive::Int8 => "INT8".into(),
        Primitive::Int16 => "INT16".into(),
        Primitive::Uint16 => "UINT16".into(),
        Primitive::Int32 => "INT32".into(),
        Primitive::Uint32 => "UINT32".into(),
        Primitive::Int64 => "INT64".into(),
        Primitive::Float64 => "FLOAT64".into(),
        Primitive::Uuid => "UUID".into(),
        Primitive::String => lengthed("STRING"),
        Primitive::Bytes => lengthed("BYTES"),
        // Records are nullable bytes on the wire; the grammar names them apart.
        Primitive::Records => if compact {
            "COMPACT_RECORDS"
        } else {
            "RECORDS"
        }
        .into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::diff::fields_at;
    use crate::schema::Catalogue;

    fn spec(kind: MessageKind, key: i16, v: i16) -> &'static MessageSpec {
        Catalogue::builtin()
            .message(kind, key, v, None)
            .expect("a built-in definition")
    }

    #[test]
    fn produce_v9_reads_as_the_protocol_guide_writes_it() {
        assert_eq!(
            grammar(spec(MessageKind::Request, 0, 9), "Produce", 9),
            "Produce Request (Version: 9) => transactional_id acks timeout_ms [topic_data] _tagged_fields
  transactional_id => COMPACT_NULLABLE_STRING
  acks => INT16
  timeout_ms => INT32
  topic_data => name [partition_data] _tagged_fields
    name => COMPACT_STRING
    partition_data => index records _tagged_fields
      index => INT32
      records => COMPACT_RECORDS"
        );
        // Not flexible: int16 and int32 lengths, no tagged fields.
        assert_eq!(
            grammar(spec(MessageKind::Request, 0, 3), "Produce", 3),
            "Produce Request (Version: 3) => transactional_id acks timeout_ms [topic_data]
  transactional_id => NULLABLE_STRING
  acks => INT16
  timeout_ms => INT32
  topic_data => name [partition_data]
    name => STRING
    partition_data => index records
      index => INT32
      records => RECORDS"
        );
    }

    /// Every field of Fetch v12 (request and response) is a line, in the
    /// catalogue's order, at its depth, with its type; tagged fields say their tag.
    #[test]
    fn fetch_v12_has_every_field_of_the_catalogue() {
        for kind in [MessageKind::Request, MessageKind::Response] {
            let s = spec(kind, 1, 12);
            let text = grammar(s, "Fetch", 12);
            let lines: Vec<&str> = text.lines().skip(1).collect();
            let fields = fields_at(s, 12);
            // Tagged fields come after their siblings, so compare as sets per depth and name.
            assert_eq!(lines.len(), fields.len(), "{text}");
            for (path, f) in &fields {
                let depth = path.matches('.').count() + 1;
                let head = format!("{}{} => ", "  ".repeat(depth), snake_case(&f.name));
                let line = lines
                    .iter()
                    .find(|l| l.starts_with(&head))
                    .unwrap_or_else(|| panic!("{path}: no line `{head}` in\n{text}"));
                match &f.ty {
                    FieldType::Primitive(p) => assert!(
                        line.starts_with(&format!(
                            "{head}{}",
                            wire_type(*p, f, (12, f.is_tagged_in(12)), &s.flexible_versions)
                        )),
                        "{line}"
                    ),
                    _ => assert!(
                        line.ends_with("_tagged_fields") || line.contains("(tag "),
                        "{line}"
                    ),
                }
                assert_eq!(
                    line.ends_with(&format!("(tag {})", f.tag.unwrap_or(0))),
                    f.tagged.is_some_and(|t| t.contains(12)),
                    "{line}"
                );
            }
        }
        let req = grammar(spec(MessageKind::Request, 1, 12), "Fetch", 12);
        assert!(req.starts_with("Fetch Request (Version: 12) => replica_id max_wait_ms min_bytes max_bytes isolation_level session_id session_epoch [topics] [forgotten_topics_data] rack_id _tagged_fields\n"), "{req}");
        assert!(
            req.contains("\n  cluster_id => COMPACT_NULLABLE_STRING (tag 0)"),
            "{req}"
        );
        assert!(req.contains("\n      partition => INT32\n"), "{req}");
    }
}
