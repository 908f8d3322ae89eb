//! Two answers to the same request compared field by field (`kwire
//! replay`): the captured response and the new broker's, as the contract's
//! JSON, walked beside the message's definition so that records data is
//! compared record by record (offset, key, value, headers, timestamp)
//! rather than as bytes. Fields that legitimately differ are left out by
//! [`Ignore`]: [`crate::protocol::varying::VARIES`] and the user's own.

use crate::budget::Budget;
use crate::decode::records::each::for_each_record;
use crate::protocol::varying::VARIES;
use crate::schema::{FieldSpec, FieldType, Primitive};
use serde_json::{json, Map, Value};

/// One place where the answers differ.
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    /// `Responses[Name="t"].PartitionResponses[0].BaseOffset` (arrays keyed by the definitions are labelled by key); inside records data,
    /// `…Records.record[3].value`.
    pub path: String,
    pub captured: Value,
    pub replayed: Value,
}

/// What is not compared: patterns of field names, each a name anywhere
/// (`HighWatermark`), a dotted path's end without indexes
/// (`Partitions.HighWatermark`), optionally for one API (`Fetch:HighWatermark`).
#[derive(Clone, Debug, Default)]
pub struct Ignore {
    patterns: Vec<(Option<String>, Vec<String>)>,
}

impl Ignore {
    /// The default list plus `extra`.
    pub fn with_defaults(extra: &[String]) -> Ignore {
        let mut i = Ignore::default();
        for (p, _) in VARIES {
            i.add(p);
        }
        for p in extra {
            i.add(p);
        }
        i
    }

    pub fn add(&mut self, pattern: &str) {
        let (api, path) = match pattern.split_once(':') {
            Some((a, p)) => (Some(a.to_string()), p),
            None => (None, pattern),
        };
        self.patterns
            .push((api, path.split('.').map(str::to_string).collect()));
    }

    /// Whether the field at `names` (the path's names, indexes left out) is not compared.
    fn skips(&self, api: &str, names: &[&str]) -> bool {
        self.patterns.iter().any(|(a, p)| {
            a.as_deref().is_none_or(|a| a.eq_ignore_ascii_case(api))
                && names.len() >= p.len()
                && names[names.len() - p.len()..]
                    .iter()
                    .zip(p)
                    .all(|(n, q)| *n == q)
        })
    }
}

/// The differences between two response bodies of `api` (its name, for
/// API-scoped patterns) whose fields are `fields` at `version`.
pub fn differences(
    api: &str,
    (fields, version): (&[FieldSpec], i16),
    captured: &Map<String, Value>,
    replayed: &Map<String, Value>,
    ignore: &Ignore,
) -> Vec<Difference> {
    let mut walk = Walk {
        api,
        version,
        ignore,
        names: Vec::new(),
        out: Vec::new(),
    };
    walk.structure(fields, captured, replayed, "");
    walk.out
}

struct Walk<'a> {
    api: &'a str,
    version: i16,
    ignore: &'a Ignore,
    names: Vec<String>,
    out: Vec<Difference>,
}

impl Walk<'_> {
    fn skipped(&self, name: &str) -> bool {
        let mut names: Vec<&str> = self.names.iter().map(String::as_str).collect();
        names.push(name);
        self.ignore.skips(self.api, &names)
    }

    fn differ(&mut self, path: String, captured: &Value, replayed: &Value) {
        self.out.push(Difference {
            path,
            captured: captured.clone(),
            replayed: replayed.clone(),
        });
    }

    fn structure(
        &mut self,
        fields: &[FieldSpec],
        a: &Map<String, Value>,
        b: &Map<String, Value>,
        at: &str,
    ) {
        let version = self.version;
        for f in fields.iter().filter(|f| f.versions.contains(version)) {
            if self.skipped(&f.name) {
                continue;
            }
            let path = if at.is_empty() {
                f.name.clone()
            } else {
                format!("{at}.{}", f.name)
            };
            let (x, y) = (
                a.get(&f.name).unwrap_or(&Value::Null),
                b.get(&f.name).unwrap_or(&Value::Null),
            );
            self.names.push(f.name.clone());
            self.field(f, x, y, &path);
            self.names.pop();
        }
    }

    fn field(&mut self, f: &FieldSpec, x: &Value, y: &Value, path: &str) {
        match (&f.ty, x, y) {
            (FieldType::Struct(_), Value::Object(p), Value::Object(q)) => {
                self.structure(&f.fields, p, q, path)
            }
            (FieldType::Array(_), Value::Array(p), Value::Array(q))
                if f.fields.iter().any(|g| g.map_key) =>
            {
                self.keyed(f, p, q, path)
            }
            (FieldType::Array(inner), Value::Array(p), Value::Array(q)) => {
                if p.len() != q.len() {
                    self.differ(format!("{path}.length"), &json!(p.len()), &json!(q.len()));
                }
                for (i, (u, v)) in p.iter().zip(q).enumerate() {
                    let at = format!("{path}[{i}]");
                    match (&**inner, u, v) {
                        (FieldType::Struct(_), Value::Object(s), Value::Object(t)) => {
                            self.structure(&f.fields, s, t, &at)
                        }
                        _ if u != v => self.differ(at, u, v),
                        _ => {}
                    }
                }
            }
            (FieldType::Primitive(Primitive::Records), Value::String(p), Value::String(q))
                if p != q =>
            {
                self.records(path, p, q)
            }
            _ if x != y => self.differ(path.to_string(), x, y),
            _ => {}
        }
    }

    /// An array the definitions key by a field (`ApiKeys` by `ApiKey`): its
    /// elements matched by key, whatever their order.
    fn keyed(&mut self, f: &FieldSpec, p: &[Value], q: &[Value], path: &str) {
        let keys: Vec<&str> = f
            .fields
            .iter()
            .filter(|g| g.map_key)
            .map(|g| g.name.as_str())
            .collect();
        let key_of = |v: &Value| -> String {
            // A key field the version does not carry is left out of the label.
            keys.iter()
                .filter_map(|k| v.get(*k).map(|x| format!("{k}={x}")))
                .collect::<Vec<_>>()
                .join(",")
        };
        // Each side's keys made once: a response of 50,000 topics is compared
        // in linear time, not pair by pair.
        let mut replayed: std::collections::HashMap<String, &Value> =
            std::collections::HashMap::new();
        for v in q {
            replayed.entry(key_of(v)).or_insert(v);
        }
        let mut captured = std::collections::HashSet::new();
        for u in p {
            let k = key_of(u);
            let at = format!("{path}[{k}]");
            match replayed.get(&k) {
                Some(&v) => match (u, v) {
                    (Value::Object(s), Value::Object(t)) => self.structure(&f.fields, s, t, &at),
                    _ if u != v => self.differ(at, u, v),
                    _ => {}
                },
                None => self.differ(at, u, &Value::Null),
            }
            captured.insert(k);
        }
        for v in q {
            let k = key_of(v);
            if !captured.contains(&k) {
                self.differ(format!("{path}[{k}]"), &Value::Null, v);
            }
        }
    }

    /// Records data, record by record.
    fn records(&mut self, path: &str, p: &str, q: &str) {
        let (x, y) = (records_of(p), records_of(q));
        if x.len() != y.len() {
            self.differ(format!("{path}.records"), &json!(x.len()), &json!(y.len()));
        }
        for (i, (r, s)) in x.iter().zip(&y).enumerate() {
            for part in ["offset", "timestamp", "key", "value", "headers"] {
                if self.skipped(&format!("record.{part}"))
                    || self.ignore.skips(self.api, &["record", part])
                {
                    continue;
                }
                if r[part] != s[part] {
                    self.differ(format!("{path}.record[{i}].{part}"), &r[part], &s[part]);
                }
            }
        }
    }
}

/// Each record of records data (hex, as in the contract) as JSON.
fn records_of(hex_text: &str) -> Vec<Value> {
    let Ok(bytes) = hex::decode(hex_text) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let hexed = |b: Option<&[u8]>| b.map_or(Value::Null, |b| json!(hex::encode(b)));
    for_each_record(&bytes, &Budget::default(), &mut |r| {
        out.push(json!({
            "offset": r.offset,
            "timestamp": r.timestamp,
            "key": hexed(r.key),
            "value": hexed(r.value),
            "headers": r.headers.iter().map(|(k, v)| json!([hexed(*k), hexed(*v)])).collect::<Vec<_>>(),
        }));
        true
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{Catalogue, MessageKind};

    fn produce_response(offset: i64, append: i64, message: Option<&str>) -> Map<String, Value> {
        json!({"Responses": [{"Name": "t", "PartitionResponses": [
            {"Index": 0, "ErrorCode": 0, "BaseOffset": offset, "LogAppendTimeMs": append,
             "LogStartOffset": 0, "RecordErrors": [], "ErrorMessage": message}]}],
            "ThrottleTimeMs": append})
        .as_object()
        .unwrap()
        .clone()
    }

    #[test]
    fn what_differs_is_named_by_its_path_and_what_varies_is_not() {
        let cat = Catalogue::builtin();
        let spec = cat.message(MessageKind::Response, 0, 9, None).unwrap();
        let ignore = Ignore::with_defaults(&[]);
        let a = produce_response(10, 1, None);
        let b = produce_response(12, 99, Some("x"));
        let d = differences("Produce", (&spec.fields, 9), &a, &b, &ignore);
        assert_eq!(
            d,
            [Difference {
                path: "Responses[Name=\"t\"].PartitionResponses[0].BaseOffset".into(),
                captured: json!(10),
                replayed: json!(12)
            }]
        );
        // A path's end ignores it; so does the same pattern for this API only.
        for extra in ["PartitionResponses.BaseOffset", "Produce:BaseOffset"] {
            let ignore = Ignore::with_defaults(&[extra.to_string()]);
            assert!(differences("Produce", (&spec.fields, 9), &a, &b, &ignore).is_empty());
        }
        let other = Ignore::with_defaults(&["Fetch:BaseOffset".to_string()]);
        assert_eq!(
            differences("Produce", (&spec.fields, 9), &a, &b, &other).len(),
            1
        );
        // Arrays of different lengths say so.
        let mut c = a.clone();
        c["Responses"][0]["PartitionResponses"]
            .as_array_mut()
            .unwrap()
            .push(a["Responses"][0]["PartitionResponses"][0].clone());
        let d = differences("Produce", (&spec.fields, 9), &a, &c, &ignore);
        assert_eq!(d[0].path, "Responses[Name=\"t\"].PartitionResponses.length");
    }
}
