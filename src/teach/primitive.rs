//! The protocol's primitive types on their own, for `kwire primitive`: a value
//! (in the JSON contract's types) to bytes and back. Schema primitives and
//! tagged-field sections go through the real field encoder and decoder on a
//! one-field struct, so `kwire primitive` shows exactly what messages do; the
//! varints, which only records use, go through `Writer` and `Reader` directly.

use crate::decode::fields::{Context, FieldDecoder, Naming};
use crate::decode::payload::StructValues;
use crate::decode::reader::Reader;
use crate::decode::{Node, Region, Role, Value, Wire};
use crate::encode::fields::FieldEncoder;
use crate::encode::writer::Writer;
use crate::schema::{Catalogue, FieldSpec, FieldType, Primitive, Versions};
use bytes::Bytes;
use serde_json::{Map, Value as Json};

/// A primitive wire type, named as in the protocol guide's type table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WireType {
    Bool,
    Int8,
    Int16,
    Uint16,
    Int32,
    Uint32,
    Int64,
    Float64,
    Uuid,
    Uvarint,
    Varint,
    Varlong,
    String,
    CompactString,
    NullableString,
    CompactNullableString,
    Bytes,
    CompactBytes,
    NullableBytes,
    CompactNullableBytes,
    TaggedFields,
}

/// The field name of the one-field struct a primitive is coded in.
const VALUE: &str = "value";

/// How a one-field struct codes a schema primitive: the primitive, whether
/// its length is compact, whether it may be null.
type Coded = (Primitive, bool, bool);

/// Every wire type: its name, and for the schema's primitives how a
/// one-field struct codes it (the primitive, whether its length is compact,
/// whether it may be null). The varints, which only records use, and
/// tagged fields have none. Names, parsing and coding all read this table.
#[rustfmt::skip]
const TYPES: [(WireType, &str, Option<Coded>); 21] = [
    (WireType::Bool, "bool", Some((Primitive::Bool, false, false))),
    (WireType::Int8, "int8", Some((Primitive::Int8, false, false))),
    (WireType::Int16, "int16", Some((Primitive::Int16, false, false))),
    (WireType::Uint16, "uint16", Some((Primitive::Uint16, false, false))),
    (WireType::Int32, "int32", Some((Primitive::Int32, false, false))),
    (WireType::Uint32, "uint32", Some((Primitive::Uint32, false, false))),
    (WireType::Int64, "int64", Some((Primitive::Int64, false, false))),
    (WireType::Float64, "float64", Some((Primitive::Float64, false, false))),
    (WireType::Uuid, "uuid", Some((Primitive::Uuid, false, false))),
    (WireType::Uvarint, "uvarint", None),
    (WireType::Varint, "varint", None),
    (WireType::Varlong, "varlong", None),
    (WireType::String, "string", Some((Primitive::String, false, false))),
    (WireType::CompactString, "compact_string", Some((Primitive::String, true, false))),
    (WireType::NullableString, "nullable_string", Some((Primitive::String, false, true))),
    (WireType::CompactNullableString, "compact_nullable_string", Some((Primitive::String, true, true))),
    (WireType::Bytes, "bytes", Some((Primitive::Bytes, false, false))),
    (WireType::CompactBytes, "compact_bytes", Some((Primitive::Bytes, true, false))),
    (WireType::NullableBytes, "nullable_bytes", Some((Primitive::Bytes, false, true))),
    (WireType::CompactNullableBytes, "compact_nullable_bytes", Some((Primitive::Bytes, true, true))),
    (WireType::TaggedFields, "tagged_fields", None),
];

impl WireType {
    /// Every wire type, in the protocol guide's order.
    pub const ALL: [WireType; 21] = {
        let mut all = [WireType::Bool; 21];
        let mut i = 0;
        while i < TYPES.len() {
            all[i] = TYPES[i].0;
            i += 1;
        }
        all
    };

    fn entry(&self) -> &'static (WireType, &'static str, Option<Coded>) {
        TYPES
            .iter()
            .find(|t| t.0 == *self)
            .expect("every wire type is in the table")
    }

    pub fn name(&self) -> &'static str {
        self.entry().1
    }

    /// A name in kwire's spelling or Kafka's (`UNSIGNED_VARINT`, `BOOLEAN`, `COMPACT_STRING`).
    pub fn parse(s: &str) -> Option<WireType> {
        let s = s.trim().to_ascii_lowercase().replace('-', "_");
        let s = match s.as_str() {
            "boolean" => "bool",
            "unsigned_varint" => "uvarint",
            "tag_buffer" => "tagged_fields",
            other => other,
        };
        TYPES.iter().find(|t| t.1 == s).map(|t| t.0)
    }

    /// The schema primitive, whether lengths are compact, and whether null is allowed.
    fn schema(&self) -> Option<Coded> {
        self.entry().2
    }

    pub(crate) fn is_nullable(&self) -> bool {
        self.schema().is_some_and(|(_, _, n)| n)
    }
}

/// A one-field struct holding a primitive; `compact` overrides the struct's encoding.
fn value_field(p: Primitive, compact: bool, nullable: bool) -> FieldSpec {
    FieldSpec {
        name: VALUE.into(),
        ty: FieldType::Primitive(p),
        versions: Versions::ALL,
        nullable: if nullable {
            Versions::ALL
        } else {
            Versions::NONE
        },
        tagged: None,
        tag: None,
        flexible: Some(if compact {
            Versions::ALL
        } else {
            Versions::NONE
        }),
        default: None,
        ignorable: false,
        entity_type: None,
        map_key: false,
        zero_copy: false,
        common_struct: None,
        fields: Default::default(),
        labels: Default::default(),
        about: None,
    }
}

/// Text as typed on the command line → the value in the JSON contract's types.
/// `null` is null for nullable types; bytes are hex; tagged fields are a JSON
/// object of tag → hex (`{"0": "0a"}`).
pub fn parse_value(ty: WireType, text: &str) -> Result<Json, String> {
    let t = text.trim();
    if ty.is_nullable() && t == "null" {
        return Ok(Json::Null);
    }
    match ty {
        WireType::Bool => match t {
            "true" => Ok(Json::Bool(true)),
            "false" => Ok(Json::Bool(false)),
            _ => Err(format!("{t:?} is not true or false")),
        },
        WireType::Float64 => {
            let v: f64 = t.parse().map_err(|_| format!("{t:?} is not a number"))?;
            // Non-finite floats are strings in the JSON contract.
            Ok(serde_json::Number::from_f64(v)
                .map_or_else(|| Json::String(v.to_string()), Json::Number))
        }
        WireType::Uuid
        | WireType::String
        | WireType::CompactString
        | WireType::NullableString
        | WireType::CompactNullableString => Ok(Json::String(text.to_string())),
        WireType::Bytes
        | WireType::CompactBytes
        | WireType::NullableBytes
        | WireType::CompactNullableBytes => Ok(Json::String(hex::encode(parse_hex(t)?))),
        WireType::TaggedFields => {
            let v: Json = serde_json::from_str(t).map_err(|e| {
                format!("tagged fields are a JSON object of tag → hex, like {{\"0\": \"0a\"}}: {e}")
            })?;
            v.is_object().then_some(v).ok_or_else(|| {
                "tagged fields are a JSON object of tag → hex, like {\"0\": \"0a\"}".into()
            })
        }
        _ => parse_int(t).map(|n| {
            if n < 0 {
                Json::from(n as i64)
            } else {
                Json::from(n as u64)
            }
        }),
    }
}

fn parse_int(t: &str) -> Result<i128, String> {
    let (neg, digits) = t.strip_prefix('-').map_or((false, t), |d| (true, d));
    let n = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(h) => i128::from_str_radix(h, 16),
        None => digits.parse::<i128>(),
    }
    .map_err(|_| format!("{t:?} is not an integer"))?;
    let n = if neg { -n } else { n };
    if n < i128::from(i64::MIN) || n > i128::from(u64::MAX) {
        return Err(format!("{t} is out of any integer type's range"));
    }
    Ok(n)
}

/// Hex in any of the shapes `kwire decode` reads; the empty string is no bytes.
pub fn parse_hex(text: &str) -> Result<Vec<u8>, String> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    crate::input::hex_text::parse_hex_text(text).map_err(|e| format!("not hex: {e}"))
}

fn int_in(v: &Json, lo: i128, hi: i128) -> Result<i128, String> {
    let n = v
        .as_i64()
        .map(i128::from)
        .or_else(|| v.as_u64().map(i128::from))
        .ok_or_else(|| format!("expected an integer, found {v}"))?;
    if n < lo || n > hi {
        return Err(format!("{n} is out of range {lo}..={hi}"));
    }
    Ok(n)
}

/// The bytes of a value.
pub fn encode(ty: WireType, value: &Json) -> Result<Vec<u8>, String> {
    let mut w = Writer::default();
    match ty {
        // Kafka's unsigned varints are 32-bit (lengths, counts, tags).
        WireType::Uvarint => w.uvarint(int_in(value, 0, u32::MAX.into())? as u64),
        WireType::Varint => w.varint(int_in(value, i32::MIN.into(), i32::MAX.into())? as i32),
        WireType::Varlong => w.varlong(int_in(value, i64::MIN.into(), i64::MAX.into())? as i64),
        WireType::TaggedFields => {
            let mut obj = Map::new();
            obj.insert("_unknown_tags".into(), value.clone());
            let mut e = FieldEncoder::new(0, true);
            e.write_struct(&[], &obj, "").map_err(|e| e.message)?;
            return Ok(e.w.buf);
        }
        _ => {
            let (p, compact, nullable) = ty.schema().expect("schema primitives are the rest");
            let mut obj = Map::new();
            obj.insert(VALUE.into(), value.clone());
            let mut e = FieldEncoder::new(0, false);
            e.write_struct(&[value_field(p, compact, nullable)], &obj, "")
                .map_err(|e| e.message)?;
            return Ok(e.w.buf);
        }
    }
    Ok(w.buf)
}

/// Decoded bytes: a struct node holding the value's node (or the tagged-field
/// section), as the message decoder builds it, plus its findings; and for
/// the schema's primitives, the struct's values for the JSON contract.
#[derive(Clone, Debug)]
pub struct Decoded {
    pub ty: WireType,
    pub bytes: Bytes,
    pub root: Node,
    pub warnings: Vec<String>,
    /// The one-field struct (or tagged section) on a values tape; `None`
    /// for varints, which no schema field is.
    values: Option<StructValues>,
}

impl Decoded {
    /// The value in the JSON contract's types (what [`encode`] takes).
    pub fn value(&self) -> Json {
        let Some(values) = &self.values else {
            // A varint: one number.
            return match self.root.children.first().map(|n| &n.value) {
                Some(Value::Int(v)) => Json::from(*v),
                Some(Value::Uint(v)) => Json::from(*v),
                _ => Json::Null,
            };
        };
        let mut text = Vec::new();
        crate::render::json::write_struct_values(values, &mut text);
        let obj: Map<String, Json> = serde_json::from_slice(&text).unwrap_or_default();
        match self.ty {
            WireType::TaggedFields => obj
                .get("_unknown_tags")
                .cloned()
                .unwrap_or_else(|| Json::Object(Map::new())),
            _ => obj.get(VALUE).cloned().unwrap_or(Json::Null),
        }
    }
}

/// Read exactly one value of `ty` from `bytes`.
pub fn decode(ty: WireType, bytes: &[u8]) -> Result<Decoded, String> {
    let buf = Bytes::copy_from_slice(bytes);
    let mut root = Node::new(ty.name(), "", 0, Region::RequestBody, Role::Structure);
    let mut warnings = Vec::new();
    let mut values = None;
    let end = match ty {
        WireType::Uvarint | WireType::Varint | WireType::Varlong => {
            let mut r = Reader::new(&buf);
            let (value, len) = match ty {
                WireType::Uvarint => r.uvarint(VALUE).map(|u| (Value::Uint(u.value), u.len)),
                WireType::Varint => r.varint(VALUE).map(|(v, n)| (Value::Int(v.into()), n)),
                _ => r.varlong(VALUE).map(|(v, n)| (Value::Int(v), n)),
            }
            .map_err(|e| e.to_string())?;
            let mut n = Node::new(
                VALUE,
                ty.name(),
                0,
                Region::RequestBody,
                Role::Field { decl: 0 },
            );
            n.len = len;
            n.value = value;
            n.wire = match ty {
                WireType::Uvarint => Wire::Uvarint,
                WireType::Varint => Wire::Varint,
                _ => Wire::Varlong,
            };
            root.children.push(n);
            len
        }
        _ => {
            let cat = Catalogue::default();
            let (fields, flexible) = match ty.schema() {
                Some((p, compact, nullable)) => (vec![value_field(p, compact, nullable)], false),
                None => (Vec::new(), true),
            };
            let mut d = FieldDecoder {
                r: Reader::new(&buf),
                frame: &buf,
                version: 0,
                flexible,
                region: Region::RequestBody,
                naming: Naming::Schema,
                catalogue: &cat,
                warnings: Vec::new(),
                record_damage: Vec::new(),
                deferred: Vec::new(),
                ctx: Context::default(),
            };
            let plan = crate::schema::plan::StructPlan::compile(&fields, 0, flexible);
            d.decode_struct(buf.len(), &plan, &fields, &mut root.children)
                .map_err(|e| e.to_string())?;
            warnings = d.warnings.iter().map(|w| w.text.clone()).collect();
            values = Some(StructValues::read_plan(
                ty.name().into(),
                (&fields, &plan),
                buf.clone(),
            ));
            d.r.pos()
        }
    };
    if end < buf.len() {
        return Err(format!(
            "{} bytes follow the {} value (it ends at byte {end})",
            buf.len() - end,
            ty.name()
        ));
    }
    root.len = end;
    Ok(Decoded {
        ty,
        bytes: buf,
        root,
        warnings,
        values,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex_of(ty: WireType, text: &str) -> String {
        hex::encode(encode(ty, &parse_value(ty, text).unwrap()).unwrap())
    }

    #[test]
    fn encodes_the_guide_examples() {
        assert_eq!(hex_of(WireType::Uvarint, "300"), "ac02");
        assert_eq!(hex_of(WireType::Varint, "-1"), "01");
        assert_eq!(hex_of(WireType::CompactString, "hello"), "0668656c6c6f");
        assert_eq!(hex_of(WireType::String, "hello"), "000568656c6c6f");
        assert_eq!(hex_of(WireType::NullableString, "null"), "ffff");
        assert_eq!(hex_of(WireType::CompactNullableBytes, "null"), "00");
        assert_eq!(hex_of(WireType::NullableBytes, "null"), "ffffffff");
        assert_eq!(hex_of(WireType::TaggedFields, "{}"), "00");
        assert_eq!(
            hex_of(WireType::TaggedFields, r#"{"1": "abcd", "0": "0a"}"#),
            "0200010a0102abcd"
        );
    }

    #[test]
    fn refuses_what_the_type_cannot_hold() {
        for (ty, text) in [
            (WireType::Int8, "128"),
            (WireType::Uint16, "-1"),
            (WireType::Uvarint, "4294967296"),
            (WireType::Varint, "2147483648"),
        ] {
            let v = parse_value(ty, text).unwrap();
            assert!(encode(ty, &v).is_err(), "{} {text}", ty.name());
        }
        assert!(encode(WireType::String, &Json::Null)
            .unwrap_err()
            .contains("not nullable"));
        assert_eq!(
            parse_value(WireType::String, "null").unwrap(),
            Json::String("null".into()),
            "only nullable types read null"
        );
        assert!(decode(WireType::Int16, &[0, 1, 2])
            .unwrap_err()
            .contains("1 bytes follow"));
        assert!(decode(WireType::Uvarint, &[0x80]).is_err());
    }

    #[test]
    fn names_parse_in_both_spellings() {
        assert_eq!(WireType::parse("UNSIGNED_VARINT"), Some(WireType::Uvarint));
        assert_eq!(
            WireType::parse("COMPACT_NULLABLE_STRING"),
            Some(WireType::CompactNullableString)
        );
        assert_eq!(WireType::parse("boolean"), Some(WireType::Bool));
        for t in WireType::ALL {
            assert_eq!(WireType::parse(t.name()), Some(t));
        }
        let distinct: std::collections::HashSet<WireType> = WireType::ALL.into_iter().collect();
        assert_eq!(
            distinct.len(),
            WireType::ALL.len(),
            "a type twice in the table"
        );
    }
}
