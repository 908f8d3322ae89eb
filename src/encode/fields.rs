//! The generic encoder: JSON in the decoder's contract → bytes, driven by the
//! same field specs as the decoder, so every byte kwire shows it can also write.

use super::writer::Writer;
use crate::schema::{FieldSpec, FieldType, LengthPrefix, Primitive};
use serde_json::{Map, Value};
use std::cell::Cell;

/// What went wrong, and where in the JSON (`Topics[0].Partitions[1].Partition`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncodeError {
    pub path: String,
    pub message: String,
}

impl std::fmt::Display for EncodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for EncodeError {}

pub(crate) struct FieldEncoder<'r> {
    pub w: Writer,
    pub version: i16,
    pub flexible: bool,
    /// The contract's `_raw` entries, and what this encoder's paths start with there.
    raw: Option<(&'r RawValues, &'r str)>,
}

/// The contract's `"_raw": {"<path>": "<hex>"}`: the wire bytes of values JSON
/// cannot carry exactly (strings that are not UTF-8, NaNs with a payload),
/// written instead of the value when the value is what the decoder shows for them.
#[derive(Debug, Default)]
pub struct RawValues {
    /// In the input's order, so that the entry reported unused is the first one.
    entries: Vec<(String, Vec<u8>, Cell<bool>)>,
    /// Path → index in `entries`: a field looks its path up once, whatever the number of entries.
    by_path: std::collections::HashMap<String, usize>,
}

impl RawValues {
    /// Read `"_raw"`'s object; its entries' hex is checked here, their paths when used.
    pub fn from_json(v: &Value) -> Result<RawValues, EncodeError> {
        let map = v
            .as_object()
            .ok_or_else(|| err("_raw", "expected an object of field path → hex bytes"))?;
        let entries: Vec<(String, Vec<u8>, Cell<bool>)> = map
            .iter()
            .map(|(path, hex_v)| {
                Ok((
                    path.clone(),
                    hex_value(hex_v, &format!("_raw.{path}"))?,
                    Cell::new(false),
                ))
            })
            .collect::<Result<_, EncodeError>>()?;
        let by_path = entries
            .iter()
            .enumerate()
            .map(|(i, (path, _, _))| (path.clone(), i))
            .collect();
        Ok(RawValues { entries, by_path })
    }

    fn take(&self, path: &str) -> Option<&[u8]> {
        let (_, bytes, used) = &self.entries[*self.by_path.get(path)?];
        used.set(true);
        Some(bytes)
    }

    /// An entry no field used: a path that names nothing, or a field of another type.
    pub(crate) fn check_all_used(&self) -> Result<(), EncodeError> {
        match self.entries.iter().find(|(_, _, used)| !used.get()) {
            Some((path, _, _)) => Err(err(
                &format!("_raw.{path}"),
                "names no string or float64 field that was encoded",
            )),
            None => Ok(()),
        }
    }
}

type Res = Result<(), EncodeError>;

fn err(path: &str, message: impl Into<String>) -> EncodeError {
    EncodeError {
        path: path.to_string(),
        message: message.into(),
    }
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

impl<'r> FieldEncoder<'r> {
    pub fn new(version: i16, flexible: bool) -> Self {
        FieldEncoder {
            w: Writer::default(),
            version,
            flexible,
            raw: None,
        }
    }

    /// An encoder that writes the bytes of `raw`'s entries for the fields they
    /// name; `prefix` is what its paths lack there (`body.` for a body encoded at path "").
    pub fn with_raw(version: i16, flexible: bool, raw: &'r RawValues, prefix: &'r str) -> Self {
        FieldEncoder {
            w: Writer::default(),
            version,
            flexible,
            raw: Some((raw, prefix)),
        }
    }

    /// The bytes `_raw` gives for the field at `path`, if any.
    fn raw_bytes(&self, path: &str) -> Option<&'r [u8]> {
        let (raw, prefix) = self.raw?;
        if raw.entries.is_empty() {
            return None;
        }
        raw.take(&format!("{prefix}{path}"))
    }

    /// Encode a struct: untagged fields in declaration order (absent ones take their
    /// default), then the tagged fields present in the object, sorted by tag.
    pub(crate) fn write_struct(
        &mut self,
        fields: &[FieldSpec],
        obj: &Map<String, Value>,
        path: &str,
    ) -> Res {
        for key in obj.keys() {
            if key == "_unknown_tags" {
                continue;
            }
            match fields.iter().find(|f| &f.name == key) {
                None => {
                    let known: Vec<&str> = fields
                        .iter()
                        .filter(|f| f.versions.contains(self.version))
                        .map(|f| f.name.as_str())
                        .collect();
                    return Err(err(
                        &join(path, key),
                        format!(
                            "unknown field; fields at v{}: {}",
                            self.version,
                            known.join(", ")
                        ),
                    ));
                }
                Some(f) if !f.versions.contains(self.version) => {
                    return Err(err(
                        &join(path, key),
                        format!(
                            "not part of v{} (present in versions {})",
                            self.version, f.versions
                        ),
                    ));
                }
                _ => {}
            }
        }
        let version = self.version;
        for f in fields.iter().filter(|f| f.is_regular_in(version)) {
            let p = join(path, &f.name);
            match obj.get(&f.name) {
                Some(v) => self.write_field(f, v, false, &p)?,
                None => {
                    let d = default_value(f, self.version);
                    self.write_field(f, &d, false, &p)?
                }
            }
        }
        if self.flexible {
            self.write_tagged(fields, obj, path)?;
        }
        Ok(())
    }

    fn write_tagged(&mut self, fields: &[FieldSpec], obj: &Map<String, Value>, path: &str) -> Res {
        let mut entries: Vec<(u32, Vec<u8>)> = Vec::new();
        let version = self.version;
        for f in fields.iter().filter(|f| f.is_tagged_in(version)) {
            if let Some(v) = obj.get(&f.name) {
                let mut sub = FieldEncoder {
                    w: Writer::default(),
                    version: self.version,
                    flexible: self.flexible,
                    raw: self.raw,
                };
                sub.write_field(f, v, true, &join(path, &f.name))?;
                entries.push((f.tag.unwrap_or_default(), sub.w.buf));
            }
        }
        if let Some(unknown) = obj.get("_unknown_tags") {
            let map = unknown.as_object().ok_or_else(|| {
                err(
                    &join(path, "_unknown_tags"),
                    "expected an object of tag → hex",
                )
            })?;
            for (tag, hex_v) in map {
                let p = join(path, &format!("_unknown_tags.{tag}"));
                let t: u32 = tag
                    .parse()
                    .map_err(|_| err(&p, "tag must be a non-negative integer"))?;
                let data = hex_value(hex_v, &p)?;
                if entries.iter().any(|(x, _)| *x == t) {
                    return Err(err(&p, "duplicates a known tagged field"));
                }
                entries.push((t, data));
            }
        }
        entries.sort_by_key(|(t, _)| *t);
        self.w.uvarint(entries.len() as u64);
        for (tag, data) in entries {
            self.w.uvarint(u64::from(tag));
            self.w.uvarint(data.len() as u64);
            self.w.bytes(&data);
        }
        Ok(())
    }

    fn write_field(&mut self, f: &FieldSpec, v: &Value, in_tag: bool, path: &str) -> Res {
        let compact = f.is_compact_in(self.version, self.flexible, in_tag);
        let nullable = f.is_nullable_in(self.version);
        match &f.ty {
            FieldType::Primitive(p) => self.write_primitive(*p, v, compact, nullable, path),
            FieldType::Struct(_) => {
                if nullable {
                    if v.is_null() {
                        if in_tag {
                            self.w.uvarint(0)
                        } else {
                            self.w.i8(-1)
                        }
                        return Ok(());
                    }
                    if in_tag {
                        self.w.uvarint(1)
                    } else {
                        self.w.i8(1)
                    }
                }
                let obj = v.as_object().ok_or_else(|| {
                    err(
                        path,
                        format!(
                            "expected an object{}",
                            if nullable { " or null" } else { "" }
                        ),
                    )
                })?;
                self.write_struct(&f.fields, obj, path)
            }
            FieldType::Array(inner) => {
                if v.is_null() {
                    if !nullable {
                        return Err(err(path, format!("not nullable at v{}", self.version)));
                    }
                    return self.write_prefix(LengthPrefix::of_array(compact), None, path);
                }
                let items = v.as_array().ok_or_else(|| err(path, "expected an array"))?;
                self.write_prefix(LengthPrefix::of_array(compact), Some(items.len()), path)?;
                for (i, item) in items.iter().enumerate() {
                    let p = format!("{path}[{i}]");
                    match inner.as_ref() {
                        FieldType::Struct(_) => {
                            let obj = item
                                .as_object()
                                .ok_or_else(|| err(&p, "expected an object"))?;
                            self.write_struct(&f.fields, obj, &p)?;
                        }
                        FieldType::Primitive(prim) => {
                            self.write_primitive(*prim, item, compact, false, &p)?
                        }
                        FieldType::Array(_) => {
                            return Err(err(
                                &p,
                                "arrays of arrays are not part of the schema language",
                            ))
                        }
                    }
                }
                Ok(())
            }
        }
    }

    fn write_primitive(
        &mut self,
        p: Primitive,
        v: &Value,
        compact: bool,
        nullable: bool,
        path: &str,
    ) -> Res {
        match p {
            Primitive::Bool => self.w.bytes(&[u8::from(
                v.as_bool()
                    .ok_or_else(|| err(path, "expected true or false"))?,
            )]),
            Primitive::Int8 => self
                .w
                .i8(int_in(v, path, i8::MIN.into(), i8::MAX.into())? as i8),
            Primitive::Int16 => self
                .w
                .i16(int_in(v, path, i16::MIN.into(), i16::MAX.into())? as i16),
            Primitive::Uint16 => self.w.u16(int_in(v, path, 0, u16::MAX.into())? as u16),
            Primitive::Int32 => self
                .w
                .i32(int_in(v, path, i32::MIN.into(), i32::MAX.into())? as i32),
            Primitive::Uint32 => self.w.u32(int_in(v, path, 0, u32::MAX.into())? as u32),
            Primitive::Int64 => self.w.i64(
                v.as_i64()
                    .ok_or_else(|| err(path, "expected an integer within int64"))?,
            ),
            Primitive::Float64 => match self.raw_bytes(path) {
                Some(raw) => {
                    let bits: [u8; 8] = raw.try_into().map_err(|_| {
                        err(
                            path,
                            format!("its _raw entry has {} bytes; a float64 has 8", raw.len()),
                        )
                    })?;
                    let shown = crate::text::float_json(f64::from_be_bytes(bits));
                    if float_value(v, path)?.to_bits() != float_value(&shown, path)?.to_bits() {
                        return Err(err(path, format!("the value {v} disagrees with its _raw entry {} (which reads as {shown})", hex::encode(raw))));
                    }
                    self.w.bytes(raw)
                }
                None => self.w.f64(float_value(v, path)?),
            },
            Primitive::Uuid => {
                let s = v
                    .as_str()
                    .ok_or_else(|| err(path, "expected a uuid string"))?;
                let u =
                    uuid::Uuid::try_parse(s).map_err(|e| err(path, format!("not a uuid: {e}")))?;
                self.w.bytes(u.as_bytes());
            }
            Primitive::String => {
                match (v, self.raw_bytes(path)) {
                    (Value::String(s), Some(raw)) => {
                        // The value must be what the decoder shows for these bytes.
                        if String::from_utf8_lossy(raw) != s.as_str() {
                            return Err(err(path, format!("the value disagrees with its _raw entry {} (which reads as {:?})", hex::encode(raw), String::from_utf8_lossy(raw))));
                        }
                        self.write_len(raw.len(), compact, false, path)?;
                        self.w.bytes(raw);
                    }
                    (_, Some(_)) => return Err(err(path, "has a _raw entry but is not a string")),
                    (Value::Null, None) => self.write_null(compact, nullable, false, path)?,
                    (Value::String(s), None) => self
                        .write_len(s.len(), compact, false, path)
                        .map(|_| self.w.bytes(s.as_bytes()))?,
                    _ => return Err(err(path, "expected a string or null")),
                }
            }
            Primitive::Bytes | Primitive::Records => match v {
                Value::Null => self.write_null(compact, nullable, true, path)?,
                _ => {
                    let data = hex_value(v, path)?;
                    self.write_len(data.len(), compact, true, path)?;
                    self.w.bytes(&data);
                }
            },
        }
        Ok(())
    }

    fn write_null(&mut self, compact: bool, nullable: bool, wide: bool, path: &str) -> Res {
        if !nullable {
            return Err(err(path, format!("not nullable at v{}", self.version)));
        }
        self.write_prefix(prefix_of(compact, wide), None, path)
    }

    fn write_len(&mut self, len: usize, compact: bool, wide: bool, path: &str) -> Res {
        self.write_prefix(prefix_of(compact, wide), Some(len), path)
    }

    /// `length` (`None`: null) written as `prefix` writes it.
    fn write_prefix(&mut self, prefix: LengthPrefix, length: Option<usize>, path: &str) -> Res {
        if length.is_some_and(|n| n > prefix.max_length()) {
            return Err(err(
                path,
                match prefix {
                    LengthPrefix::Int16 => "longer than an int16 length allows (32767 bytes)",
                    LengthPrefix::Int32 => "longer than an int32 length allows",
                    LengthPrefix::Compact => "longer than a compact length allows",
                },
            ));
        }
        let written = prefix.written(length);
        match prefix {
            LengthPrefix::Compact => self.w.uvarint(written as u64),
            LengthPrefix::Int16 => self.w.i16(written as i16),
            LengthPrefix::Int32 => self.w.i32(written as i32),
        }
        Ok(())
    }
}

/// A string's (`wide`: bytes') length prefix.
fn prefix_of(compact: bool, wide: bool) -> LengthPrefix {
    LengthPrefix::of(
        if wide {
            Primitive::Bytes
        } else {
            Primitive::String
        },
        compact,
    )
}

fn int_in(v: &Value, path: &str, lo: i64, hi: i64) -> Result<i64, EncodeError> {
    let n = v
        .as_i64()
        .ok_or_else(|| err(path, format!("expected an integer in {lo}..={hi}")))?;
    if n < lo || n > hi {
        return Err(err(path, format!("{n} is out of range {lo}..={hi}")));
    }
    Ok(n)
}

fn float_value(v: &Value, path: &str) -> Result<f64, EncodeError> {
    match v {
        Value::Number(n) => n.as_f64().ok_or_else(|| err(path, "expected a number")),
        // Non-finite floats cannot be JSON numbers; the decoder writes them as strings.
        Value::String(s) => s.parse().map_err(|_| err(path, "expected a number")),
        _ => Err(err(path, "expected a number")),
    }
}

fn hex_value(v: &Value, path: &str) -> Result<Vec<u8>, EncodeError> {
    let s = v
        .as_str()
        .ok_or_else(|| err(path, "expected lowercase hex bytes or null"))?;
    hex::decode(s).map_err(|e| err(path, format!("not hex: {e}")))
}

/// A field's value when the JSON leaves it out: its declared default, else the
/// type's zero (0, false, "", empty bytes, zero uuid, empty array, struct of defaults).
pub fn default_value(f: &FieldSpec, version: i16) -> Value {
    let d = f.default.as_deref();
    if d == Some("null") && f.is_nullable_in(version) {
        return Value::Null;
    }
    match &f.ty {
        FieldType::Array(_) => Value::Array(Vec::new()),
        FieldType::Struct(_) => {
            let mut obj = Map::new();
            for sub in f.fields.iter().filter(|s| s.is_regular_in(version)) {
                obj.insert(sub.name.clone(), default_value(sub, version));
            }
            Value::Object(obj)
        }
        FieldType::Primitive(p) => primitive_default(*p, d),
    }
}

fn primitive_default(p: Primitive, d: Option<&str>) -> Value {
    let d = d.map(str::trim).filter(|s| !s.is_empty());
    let int = |d: Option<&str>| -> i64 {
        d.and_then(
            |s| match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
                Some(h) => i64::from_str_radix(h, 16).ok(),
                None => s.parse().ok(),
            },
        )
        .unwrap_or(0)
    };
    match p {
        Primitive::Bool => Value::Bool(d == Some("true")),
        Primitive::Int8
        | Primitive::Int16
        | Primitive::Int32
        | Primitive::Int64
        | Primitive::Uint16
        | Primitive::Uint32 => Value::from(int(d)),
        Primitive::Float64 => Value::from(d.and_then(|s| s.parse::<f64>().ok()).unwrap_or(0.0)),
        Primitive::String => Value::String(d.unwrap_or("").to_string()),
        Primitive::Uuid => Value::String(uuid::Uuid::nil().hyphenated().to_string()),
        Primitive::Bytes | Primitive::Records => Value::String(String::new()),
    }
}
