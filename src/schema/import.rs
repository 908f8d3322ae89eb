//! Importer: upstream JSON definition text → [`MessageSpec`] (facts, plus prose kept
//! only in memory for `--defs`).

use super::jsonc::strip_comments;
use super::message::MessageSpec;
use super::model::{FieldSpec, FieldType, Fields, MessageKind};
use super::versions::Versions;
use serde_json::{Map, Value};
use std::collections::HashMap;

const MESSAGE_KEYS: &[&str] = &[
    "apiKey",
    "type",
    "name",
    "validVersions",
    "flexibleVersions",
    "deprecatedVersions",
    "latestVersionUnstable",
    "listeners",
    "commonStructs",
    "fields",
    "headerVersions",
];
const FIELD_KEYS: &[&str] = &[
    "name",
    "type",
    "versions",
    "about",
    "fields",
    "default",
    "entityType",
    "nullableVersions",
    "ignorable",
    "mapKey",
    "taggedVersions",
    "tag",
    "zeroCopy",
    "flexibleVersions",
];

/// What one message's definition may expand to. A common struct's fields
/// are read once and shared by every field that uses it, but what reads a
/// message walks each use (a docs page lists every field path), so a small
/// file whose structs each hold two of the one before would expand
/// exponentially: the expansion is counted at each use and refused past
/// these. Kafka's own largest definitions expand to a few hundred fields,
/// nested at most about 6 deep.
pub const MAX_EXPANDED_FIELDS: usize = 20_000;
pub const MAX_DEPTH: usize = 32;
/// Fields one file may be read as in all (its common structs, each tried
/// until the ones it uses are read, and its message): what reading it may cost.
pub(crate) const MAX_FILE_WORK: usize = 200_000;
/// The fields a message has expanded to so far, and how deep.
#[derive(Default)]
struct Expansion {
    fields: usize,
    depth: usize,
}

impl Expansion {
    /// Count `n` more fields at `depth`, or say which limit they pass.
    fn take(&mut self, n: usize, depth: usize, commons: &Commons) -> Result<(), String> {
        let work = commons.work.get() + n;
        commons.work.set(work);
        if work > MAX_FILE_WORK {
            return Err(format!(
                "the file's structs expand to more than {MAX_FILE_WORK} fields in all"
            ));
        }
        if depth > MAX_DEPTH {
            return Err(format!(
                "structs nested more than {MAX_DEPTH} deep (a definition refers to itself, or chains too many structs)"
            ));
        }
        self.fields += n;
        self.depth = self.depth.max(depth);
        if self.fields > MAX_EXPANDED_FIELDS {
            return Err(format!(
                "expands to more than {MAX_EXPANDED_FIELDS} fields (each use of a common struct counts its fields: structs that hold several of another multiply)"
            ));
        }
        Ok(())
    }
}

/// Common structs by name: their fields, what one copy adds (fields,
/// depth), and the fields read for the file so far.
#[derive(Default)]
struct Commons {
    fields: HashMap<String, Fields>,
    cost: HashMap<String, (usize, usize)>,
    work: std::cell::Cell<usize>,
}

/// Parse one definition file. `origin` names it in errors.
pub fn parse_definition(text: &str, origin: &str) -> Result<MessageSpec, String> {
    let stripped = strip_comments(text);
    let value: Value = serde_json::from_str(&stripped).map_err(|e| format!("{origin}: {e}"))?;
    let obj = value
        .as_object()
        .ok_or_else(|| format!("{origin}: top level is not an object"))?;
    let mut spec = message_from_json(obj).map_err(|e| format!("{origin}: {e}"))?;
    spec.source_text = Some(text.to_string());
    Ok(spec)
}

fn message_from_json(obj: &Map<String, Value>) -> Result<MessageSpec, String> {
    check_keys(obj, MESSAGE_KEYS, "message")?;
    let name = str_key(obj, "name")?.ok_or("missing \"name\"")?.to_string();
    let kind_s = str_key(obj, "type")?.ok_or("missing \"type\"")?;
    let kind =
        MessageKind::parse(kind_s).ok_or_else(|| format!("unknown message type {kind_s:?}"))?;
    let api_key = match obj.get("apiKey") {
        None => None,
        Some(v) => Some(
            int_value(v)
                .and_then(|n| i16::try_from(n).ok())
                .ok_or("apiKey is not an int16")?,
        ),
    };
    let valid_versions = versions_key(obj, "validVersions")?.ok_or("missing \"validVersions\"")?;
    let flexible_versions = versions_key(obj, "flexibleVersions")?.unwrap_or(Versions::NONE);
    let deprecated_versions = versions_key(obj, "deprecatedVersions")?.unwrap_or(Versions::NONE);
    let latest_version_unstable = flag(obj, "latestVersionUnstable")?;
    let listeners = obj
        .get("listeners")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let header_versions = match obj.get("headerVersions") {
        None => Vec::new(),
        Some(v) => header_versions(v)?,
    };

    // Common structs are referenced by name: each is read once and shared where used.
    let mut commons = Commons::default();
    let mut common_names = Vec::new();
    if let Some(list) = obj.get("commonStructs").and_then(Value::as_array) {
        // Two passes: a common struct may refer to another one declared later.
        let raw: Vec<&Map<String, Value>> = list.iter().filter_map(Value::as_object).collect();
        for c in &raw {
            common_names.push(
                str_key(c, "name")?
                    .ok_or("common struct without name")?
                    .to_string(),
            );
        }
        for _ in 0..raw.len().max(1) {
            let mut progressed = false;
            for c in &raw {
                let cname = str_key(c, "name")?.unwrap_or_default().to_string();
                if commons.fields.contains_key(&cname) {
                    continue;
                }
                let mut cost = Expansion::default();
                match fields_from_json(c.get("fields"), None, &commons, &mut cost, 1) {
                    Ok(fields) => {
                        commons
                            .cost
                            .insert(cname.clone(), (cost.fields, cost.depth));
                        commons.fields.insert(cname, fields.into());
                        progressed = true;
                    }
                    Err(e) if commons.work.get() > MAX_FILE_WORK => {
                        return Err(format!("common struct {cname}: {e}"));
                    }
                    Err(_) => {} // it may use a struct not read yet
                }
            }
            if !progressed {
                break;
            }
        }
        for c in &raw {
            let cname = str_key(c, "name")?.unwrap_or_default();
            if !commons.fields.contains_key(cname) {
                fields_from_json(
                    c.get("fields"),
                    None,
                    &commons,
                    &mut Expansion::default(),
                    1,
                )
                .map_err(|e| format!("common struct {cname}: {e}"))?;
            }
        }
    }

    let fields = if valid_versions.is_empty() && obj.get("fields").is_none() {
        Vec::new()
    } else {
        fields_from_json(
            obj.get("fields"),
            None,
            &commons,
            &mut Expansion::default(),
            1,
        )?
    };
    Ok(MessageSpec {
        name,
        kind,
        api_key,
        valid_versions,
        flexible_versions,
        deprecated_versions,
        latest_version_unstable,
        listeners,
        common_structs: common_names,
        header_versions,
        fields,
        source_text: None,
        shared_name: Default::default(),
        plans: Default::default(),
    })
}

/// The fields of a struct at nesting `depth` (a message's own fields are at 1).
fn fields_from_json(
    v: Option<&Value>,
    parent_versions: Option<Versions>,
    commons: &Commons,
    expansion: &mut Expansion,
    depth: usize,
) -> Result<Vec<FieldSpec>, String> {
    let Some(v) = v else { return Ok(Vec::new()) };
    let list = v.as_array().ok_or("\"fields\" is not an array")?;
    expansion.take(list.len(), depth, commons)?;
    list.iter()
        .map(|f| {
            let obj = f.as_object().ok_or("a field is not an object")?;
            field_from_json(obj, parent_versions, commons, expansion, depth)
        })
        .collect()
}

fn field_from_json(
    obj: &Map<String, Value>,
    parent_versions: Option<Versions>,
    commons: &Commons,
    expansion: &mut Expansion,
    depth: usize,
) -> Result<FieldSpec, String> {
    let name = str_key(obj, "name")?
        .ok_or("field without name")?
        .to_string();
    let field_name = name.clone();
    let ctx = |e: String| format!("field {field_name}: {e}");
    check_keys(obj, FIELD_KEYS, "field").map_err(ctx)?;
    let ty_s = str_key(obj, "type")
        .map_err(ctx)?
        .ok_or_else(|| ctx("missing type".into()))?;
    let ty = FieldType::parse(ty_s).map_err(ctx)?;
    let tagged = versions_key(obj, "taggedVersions").map_err(ctx)?;
    // `versions` may be absent on tagged fields: it then defaults to taggedVersions.
    let versions = match versions_key(obj, "versions").map_err(ctx)? {
        Some(v) => v,
        None => tagged
            .or(parent_versions)
            .ok_or_else(|| ctx("missing versions".into()))?,
    };
    let tag = match obj.get("tag") {
        None => None,
        // The tag is sometimes written as a JSON string ("tag": "0").
        Some(v) => Some(
            int_value(v)
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| ctx(format!("bad tag {v}")))?,
        ),
    };
    let default = match obj.get("default") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(Value::Bool(b)) => Some(b.to_string()),
        Some(other) => return Err(ctx(format!("unsupported default {other}"))),
    };
    let mut common_struct = None;
    let fields = match ty.struct_name() {
        Some(sname) if obj.get("fields").is_none() => {
            let fields = commons
                .fields
                .get(sname)
                .ok_or_else(|| ctx(format!("unknown struct {sname}")))?;
            // Counted at each use, though shared.
            let (n, deep) = commons.cost.get(sname).copied().unwrap_or_default();
            expansion
                .take(n, depth + deep, commons)
                .map_err(|e| ctx(format!("struct {sname}: {e}")))?;
            common_struct = Some(sname.to_string());
            Fields::clone(fields)
        }
        _ => fields_from_json(
            obj.get("fields"),
            Some(versions),
            commons,
            expansion,
            depth + 1,
        )
        .map_err(ctx)?
        .into(),
    };
    Ok(FieldSpec {
        name,
        ty,
        versions,
        nullable: versions_key(obj, "nullableVersions")
            .map_err(ctx)?
            .unwrap_or(Versions::NONE),
        tagged,
        tag,
        flexible: versions_key(obj, "flexibleVersions").map_err(ctx)?,
        default,
        ignorable: flag(obj, "ignorable").map_err(ctx)?,
        entity_type: str_key(obj, "entityType").map_err(ctx)?.map(str::to_string),
        map_key: flag(obj, "mapKey").map_err(ctx)?,
        zero_copy: flag(obj, "zeroCopy").map_err(ctx)?,
        common_struct,
        fields,
        labels: Default::default(),
        about: str_key(obj, "about").map_err(ctx)?.map(str::to_string),
    })
}

/// A true-or-false key, absent as false. Kafka's generator reads the
/// definitions with Jackson, which takes the strings `"true"` and `"false"`
/// for the booleans: 4.2 writes `"ignorable": "true"` on three fields, and
/// `"ignorable":  "false"` on five.
fn flag(obj: &Map<String, Value>, key: &str) -> Result<bool, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(Value::String(s)) if s.eq_ignore_ascii_case("true") => Ok(true),
        Some(Value::String(s)) if s.eq_ignore_ascii_case("false") => Ok(false),
        Some(other) => Err(format!("{key} is {other}, not true or false")),
    }
}

fn header_versions(v: &Value) -> Result<Vec<(Versions, i16)>, String> {
    let map = v.as_object().ok_or("headerVersions is not an object")?;
    let mut out = Vec::new();
    for (range, hv) in map {
        let r = Versions::parse(range)?.ok_or("empty headerVersions range")?;
        let h = int_value(hv)
            .and_then(|n| i16::try_from(n).ok())
            .ok_or("bad header version")?;
        out.push((r, h));
    }
    out.sort_by_key(|(r, _)| r.lo);
    Ok(out)
}

fn check_keys(obj: &Map<String, Value>, allowed: &[&str], what: &str) -> Result<(), String> {
    match obj.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(format!("unknown {what} key {k:?}")),
        None => Ok(()),
    }
}

fn str_key<'a>(obj: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>, String> {
    match obj.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(format!("{key:?} is not a string: {other}")),
    }
}

fn versions_key(obj: &Map<String, Value>, key: &str) -> Result<Option<Versions>, String> {
    match str_key(obj, key)? {
        None => Ok(None),
        Some(s) => Versions::parse(s).map_err(|e| format!("{key}: {e}")),
    }
}

/// Integers appear as JSON numbers or as strings (decimal or 0x hex).
fn int_value(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => {
            let s = s.trim();
            match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
                Some(h) => i64::from_str_radix(h, 16).ok(),
                None => s.parse().ok(),
            }
        }
        _ => None,
    }
}

/// Drop prose so that two specs compare by facts alone.
pub(crate) fn strip_prose(spec: &mut MessageSpec) {
    fn strip(fields: &mut [FieldSpec]) {
        for f in fields {
            f.about = None;
            strip(std::sync::Arc::make_mut(&mut f.fields));
        }
    }
    spec.source_text = None;
    strip(&mut spec.fields);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A definition whose common struct Pair holds two Leafs, used by two
    /// fields (one an array), each of whose uses refers to one plan.
    #[test]
    fn each_common_struct_is_compiled_once_and_referred_to_where_used() {
        use crate::schema::plan::{Element, Shape, SharedPlan, StructPlan};
        let text = r#"{
          "apiKey": 9999, "type": "request", "name": "SharedRequest",
          "validVersions": "0-1", "flexibleVersions": "1+",
          "fields": [
            { "name": "First", "type": "Pair", "versions": "0+" },
            { "name": "Rest", "type": "[]Pair", "versions": "0+" }
          ],
          "commonStructs": [
            { "name": "Leaf", "versions": "0+", "fields": [
              { "name": "Value", "type": "int32", "versions": "0+" } ] },
            { "name": "Pair", "versions": "0+", "fields": [
              { "name": "Left", "type": "Leaf", "versions": "0+" },
              { "name": "Right", "type": "Leaf", "versions": "0+" } ] }
          ]
        }"#;
        let spec = parse_definition(text, "SharedRequest.json").unwrap();
        // The definition refers to Pair's fields, read once.
        let f = &spec.fields;
        assert!(crate::schema::model::Fields::ptr_eq(
            &f[0].fields,
            &f[1].fields
        ));
        for version in 0..=1 {
            let plan = StructPlan::compile(&spec.fields, version, version >= 1);
            let Shape::Struct(first) = &plan.regular[0].shape else {
                panic!("First is not a struct");
            };
            let Shape::Array(Element::Struct(rest)) = &plan.regular[1].shape else {
                panic!("Rest is not an array of structs");
            };
            assert!(
                SharedPlan::ptr_eq(first, rest),
                "v{version}: Pair compiled twice"
            );
            let leaf = |p: &StructPlan, i: usize| match &p.regular[i].shape {
                Shape::Struct(s) => SharedPlan::clone(s),
                other => panic!("{other:?}"),
            };
            assert!(SharedPlan::ptr_eq(&leaf(first, 0), &leaf(first, 1)));
            // The plan is the same as one compiled without sharing would be.
            assert_eq!(leaf(first, 0).regular[0].name, "Value");
            assert_eq!(first.regular.len(), 2);
        }
    }
    use crate::schema::model::Primitive;

    const SAMPLE: &str = r#"// licence
{
  "apiKey": 99, "type": "request", "name": "FooRequest",
  /* a block comment */
  "validVersions": "0-2", "flexibleVersions": "1+", "latestVersionUnstable": true,
  "listeners": ["broker"],
  "commonStructs": [
    { "name": "Common", "versions": "0+", "fields": [
      { "name": "X", "type": "int32", "versions": "0+", "about": "An x." } ] }
  ],
  "fields": [
    { "name": "Id", "type": "uuid", "versions": "0+", "about": "The id." },
    { "name": "Items", "type": "[]Item", "versions": "0+", "fields": [
      { "name": "Name", "type": "string", "versions": "0+", "nullableVersions": "1+", "entityType": "topicName", "mapKey": true }
    ]},
    { "name": "Shared", "type": "Common", "versions": "2+" },
    { "name": "Extra", "type": "int64", "taggedVersions": "1+", "tag": "0", "default": -1 }
  ]
}"#;

    #[test]
    fn imports_every_key_we_use() {
        let spec = parse_definition(SAMPLE, "sample").unwrap();
        assert_eq!(spec.name, "FooRequest");
        assert_eq!(spec.api_key, Some(99));
        assert_eq!(spec.kind, MessageKind::Request);
        assert_eq!(spec.valid_versions, Versions::new(0, 2));
        assert!(spec.latest_version_unstable);
        assert_eq!(spec.listeners, vec!["broker"]);
        assert_eq!(spec.common_structs, vec!["Common"]);
        let items = &spec.fields[1];
        assert_eq!(
            items.ty,
            FieldType::Array(Box::new(FieldType::Struct("Item".into())))
        );
        assert!(items.fields[0].map_key);
        assert_eq!(items.fields[0].nullable, Versions::new(1, i16::MAX));
        assert_eq!(items.fields[0].entity_type.as_deref(), Some("topicName"));
        let shared = &spec.fields[2];
        assert_eq!(shared.common_struct.as_deref(), Some("Common"));
        assert_eq!(shared.fields[0].ty, FieldType::Primitive(Primitive::Int32));
        let extra = &spec.fields[3];
        assert_eq!(extra.tag, Some(0));
        assert_eq!(
            extra.versions,
            Versions::new(1, i16::MAX),
            "versions default to taggedVersions"
        );
        assert_eq!(extra.default.as_deref(), Some("-1"));
        assert_eq!(spec.fields[0].about.as_deref(), Some("The id."));
    }

    #[test]
    fn true_and_false_written_as_strings_are_the_booleans() {
        let spec = |ignorable: &str| {
            let text = format!(
                r#"{{"apiKey": 1, "type": "request", "name": "XRequest", "validVersions": "0",
                "fields": [{{"name": "A", "type": "int32", "versions": "0+", "ignorable": {ignorable}}}]}}"#
            );
            parse_definition(&text, "x").map(|s| s.fields[0].ignorable)
        };
        assert_eq!(spec(r#""true""#), Ok(true));
        assert_eq!(spec(r#""false""#), Ok(false));
        assert_eq!(spec("true"), Ok(true));
        assert!(spec(r#""yes""#).unwrap_err().contains("ignorable"));
    }

    #[test]
    fn rejects_unknown_keys_and_types() {
        let bad = SAMPLE.replace("\"mapKey\"", "\"mapKeyz\"");
        assert!(parse_definition(&bad, "x").unwrap_err().contains("mapKeyz"));
        let bad = SAMPLE.replace("\"uuid\"", "\"uuidz\"");
        assert!(parse_definition(&bad, "x").is_err());
    }

    #[test]
    fn retired_stub_has_no_fields() {
        let spec = parse_definition(
            r#"{"apiKey": 4, "type": "request", "name": "LeaderAndIsrRequest", "validVersions": "none"}"#,
            "stub",
        )
        .unwrap();
        assert!(spec.is_retired());
        assert!(spec.fields.is_empty());
    }
}
