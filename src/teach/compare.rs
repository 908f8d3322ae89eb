//! The same values encoded at two versions (`kwire diff API vA vB --compare`):
//! which bytes of one correspond to which of the other (by field path), and
//! where the size difference comes from: length prefixes and tagged sections
//! when an API switches to flexible encodings, or fields that come and go.

use super::align::{Aligned, FramePair, Side};
use crate::decode::{Kind, Role, Value};
use crate::encode::example::smallest_struct;
use crate::encode::{encode_frame, example_header, FrameSpec};
use crate::schema::{Catalogue, FieldSpec, MessageSpec};
use serde::Serialize;
use serde_json::{Map, Value as Json};

#[derive(Clone, Debug, Serialize)]
pub struct SameValues {
    /// The body encoded at both versions: the smallest instance of the first.
    pub body: Json,
    /// Fields of that body the second version does not have (left out there).
    pub dropped: Vec<String>,
    pub pair: FramePair,
    /// Where the size difference comes from; the bytes add up to it.
    pub causes: Vec<Cause>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Cause {
    pub what: String,
    pub bytes: i64,
}

/// Encode the smallest instance of `a` at both versions and align the frames.
/// Fields new in `b` take their defaults there.
pub fn same_values(
    cat: &Catalogue,
    (fa, sa): (&FrameSpec, &MessageSpec),
    (fb, sb): (&FrameSpec, &MessageSpec),
) -> Result<SameValues, String> {
    let body = smallest_struct(&sa.fields, fa.version);
    let mut dropped = Vec::new();
    let at_b = carry(&sb.fields, &body, fb.version, "", &mut dropped);
    let header = example_header(fa.direction);
    let a = encode_frame(cat, fa, &header, &body).map_err(|e| e.to_string())?;
    let b = encode_frame(cat, fb, &header, &at_b).map_err(|e| e.to_string())?;
    let pair = FramePair::decode(cat, (fa, a), (fb, b));
    let causes = causes(&pair, fa.version, fb.version);
    Ok(SameValues {
        body: Json::Object(body),
        dropped,
        pair,
        causes,
    })
}

/// `obj` restricted to the fields that exist at `version`, recursively.
fn carry(
    fields: &[FieldSpec],
    obj: &Map<String, Json>,
    version: i16,
    path: &str,
    dropped: &mut Vec<String>,
) -> Map<String, Json> {
    let mut out = Map::new();
    for (k, v) in obj {
        let p = if path.is_empty() {
            k.clone()
        } else {
            format!("{path}.{k}")
        };
        let Some(f) = fields
            .iter()
            .find(|f| &f.name == k && f.versions.contains(version))
        else {
            dropped.push(p);
            continue;
        };
        let v = match v {
            Json::Object(o) => Json::Object(carry(&f.fields, o, version, &p, dropped)),
            Json::Array(items) => Json::Array(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| match item.as_object() {
                        Some(o) => Json::Object(carry(
                            &f.fields,
                            o,
                            version,
                            &format!("{p}[{i}]"),
                            dropped,
                        )),
                        None => item.clone(),
                    })
                    .collect(),
            ),
            other => other.clone(),
        };
        out.insert(k.clone(), v);
    }
    out
}

/// The size difference by cause, summed over the leaves whose size changed.
fn causes(pair: &FramePair, from: i16, to: i16) -> Vec<Cause> {
    let mut out: Vec<Cause> = Vec::new();
    for x in pair.alignment.iter().filter(|x| x.leaf && x.delta() != 0) {
        let what = cause_of(pair, x, from, to);
        match out.iter_mut().find(|c| c.what == what) {
            Some(c) => c.bytes += x.delta(),
            None => out.push(Cause {
                what,
                bytes: x.delta(),
            }),
        }
    }
    // Bytes of containers that are not in any child (a records field's length).
    let rest =
        pair.to_size as i64 - pair.from_size as i64 - out.iter().map(|c| c.bytes).sum::<i64>();
    if rest != 0 {
        out.push(Cause {
            what: "other".into(),
            bytes: rest,
        });
    }
    out
}

fn cause_of(pair: &FramePair, x: &Aligned, from: i16, to: i16) -> String {
    if x.path.split('.').any(|p| p == "tagged_fields") {
        return "tagged-field sections".into();
    }
    let (side, place) = match (&x.a, &x.b) {
        (None, Some(_)) => return format!("fields only in v{to}"),
        (Some(_), None) => return format!("fields only in v{from}"),
        (Some(_), Some(b)) => (Side::B, b),
        (None, None) => return "other".into(),
    };
    let Some((node, parent)) = pair.node(side, place) else {
        return "other".into();
    };
    let count = matches!(node.kind, Kind::CompactArrayLength | Kind::ArrayCount)
        && parent.is_some_and(|p| matches!(p.value, Value::Array(_)));
    let prefixed = matches!(node.role, Role::Field { .. } | Role::Element)
        && matches!(
            node.kind,
            Kind::CompactPrefixed | Kind::Int16Prefixed | Kind::Int32Prefixed
        );
    if count || prefixed {
        "length and count prefixes".into()
    } else {
        "other".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::Direction;
    use crate::schema::MessageKind;

    #[test]
    fn metadata_goes_flexible_at_v9() {
        let cat = Catalogue::builtin();
        let spec = |v| cat.message(MessageKind::Request, 3, v, None).unwrap();
        let fs = |version| FrameSpec {
            direction: Direction::Request,
            api_key: 3,
            version,
            release: None,
        };
        let s = same_values(cat, (&fs(8), spec(8)), (&fs(9), spec(9))).unwrap();
        let total: i64 = s.causes.iter().map(|c| c.bytes).sum();
        assert_eq!(total, s.pair.to_size as i64 - s.pair.from_size as i64);
        assert!(s.dropped.is_empty());
    }
}
