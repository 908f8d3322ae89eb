//! Random message bodies as contract JSON, for property and differential tests.
//! Covers nulls where nullable, empty and multi-element arrays, integer extremes,
//! non-ASCII and control characters, long strings (multi-byte lengths), present
//! tagged fields and unknown tags.

use kwire::schema::{FieldSpec, FieldType, MessageSpec, Primitive};
use serde_json::{Map, Value};

pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    pub fn chance(&mut self, one_in: u64) -> bool {
        self.below(one_in) == 0
    }
}

const PIECES: &[&str] = &[
    "a",
    "kw-",
    "Ω",
    "日本",
    "🚀",
    " ",
    "\u{1b}[31m",
    "\"",
    "\\",
    "z",
    "0",
    "\n",
    "ß",
];

fn int_in(rng: &mut Rng, lo: i64, hi: i64) -> i64 {
    match rng.below(6) {
        0 => lo,
        1 => hi,
        2 => 0,
        3 => (-1i64).clamp(lo, hi),
        _ => {
            (i128::from(lo)
                + (u128::from(rng.next()) % (i128::from(hi) - i128::from(lo) + 1) as u128) as i128)
                as i64
        }
    }
}

fn random_string(rng: &mut Rng) -> String {
    let n = match rng.below(10) {
        0 => 0,
        1 => 70 + rng.below(100) as usize, // past one varint byte
        _ => rng.below(8) as usize,
    };
    (0..n)
        .map(|_| PIECES[rng.below(PIECES.len() as u64) as usize])
        .collect()
}

fn random_hex(rng: &mut Rng) -> String {
    let n = if rng.chance(8) {
        130 + rng.below(40)
    } else {
        rng.below(12)
    };
    (0..n)
        .map(|_| format!("{:02x}", rng.next() as u8))
        .collect()
}

fn primitive(rng: &mut Rng, p: Primitive) -> Value {
    match p {
        Primitive::Bool => Value::Bool(rng.chance(2)),
        Primitive::Int8 => int_in(rng, i8::MIN.into(), i8::MAX.into()).into(),
        Primitive::Int16 => int_in(rng, i16::MIN.into(), i16::MAX.into()).into(),
        Primitive::Uint16 => int_in(rng, 0, u16::MAX.into()).into(),
        Primitive::Int32 => int_in(rng, i32::MIN.into(), i32::MAX.into()).into(),
        Primitive::Uint32 => int_in(rng, 0, u32::MAX.into()).into(),
        Primitive::Int64 => int_in(rng, i64::MIN, i64::MAX).into(),
        Primitive::Float64 => {
            let f = f64::from_bits(rng.next());
            Value::from(if f.is_finite() { f } else { -3.25 })
        }
        Primitive::String => Value::String(random_string(rng)),
        Primitive::Uuid => Value::String(
            uuid::Uuid::from_u128(u128::from(rng.next()) << 64 | u128::from(rng.next()))
                .hyphenated()
                .to_string(),
        ),
        Primitive::Bytes | Primitive::Records => Value::String(random_hex(rng)),
    }
}

fn field(rng: &mut Rng, f: &FieldSpec, version: i16, depth: usize) -> Value {
    if f.is_nullable_in(version) && rng.chance(4) {
        return Value::Null;
    }
    match &f.ty {
        FieldType::Primitive(p) => primitive(rng, *p),
        FieldType::Struct(_) => Value::Object(random_struct(rng, &f.fields, version, depth + 1)),
        FieldType::Array(inner) => {
            let n = if depth > 3 { 0 } else { rng.below(4) };
            Value::Array(
                (0..n)
                    .map(|_| match inner.as_ref() {
                        FieldType::Struct(_) => {
                            Value::Object(random_struct(rng, &f.fields, version, depth + 1))
                        }
                        FieldType::Primitive(p) => primitive(rng, *p),
                        FieldType::Array(_) => Value::Null,
                    })
                    .collect(),
            )
        }
    }
}

/// A random struct at `version`: every untagged field, some tagged ones.
pub fn random_struct(
    rng: &mut Rng,
    fields: &[FieldSpec],
    version: i16,
    depth: usize,
) -> Map<String, Value> {
    let mut obj = Map::new();
    for f in fields {
        if f.is_regular_in(version) || (f.is_tagged_in(version) && rng.chance(2)) {
            obj.insert(f.name.clone(), field(rng, f, version, depth));
        }
    }
    obj
}

pub fn random_body(spec: &MessageSpec, version: i16, seed: u64) -> Map<String, Value> {
    let mut rng = Rng::new(seed);
    random_struct(&mut rng, &spec.fields, version, 0)
}
