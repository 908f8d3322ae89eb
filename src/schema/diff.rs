//! How a message changes between two versions, or between two releases: the
//! field-level facts behind `kwire diff` and the docs pages' version history.

use super::message::MessageSpec;
use super::model::FieldSpec;
use serde::Serialize;

/// A field as it is laid out at one version.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FieldAt {
    /// Dotted path from the message: `Topics.Partitions.Index`.
    pub path: String,
    #[serde(rename = "type")]
    pub ty: String,
    pub nullable: bool,
    /// The tag, when the field is a tagged field at this version.
    pub tag: Option<u32>,
    pub default: Option<String>,
    /// Whether strings/bytes/arrays use compact encodings here.
    pub compact: bool,
    /// Writers may drop a non-default value in versions without the field.
    pub ignorable: bool,
}

/// One difference between two layouts.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum Change {
    Added {
        field: FieldAt,
    },
    Removed {
        field: FieldAt,
    },
    TypeChanged {
        path: String,
        from: String,
        to: String,
    },
    NullableChanged {
        path: String,
        from: bool,
        to: bool,
    },
    TaggedChanged {
        path: String,
        from: Option<u32>,
        to: Option<u32>,
    },
    DefaultChanged {
        path: String,
        from: Option<String>,
        to: Option<String>,
    },
    IgnorableChanged {
        path: String,
        from: bool,
        to: bool,
    },
    /// The message switched between flexible (KIP-482) and classic encodings.
    FlexibleChanged {
        from: bool,
        to: bool,
    },
}

impl Change {
    /// One line for people: `+ Topics.TopicId uuid`.
    pub fn describe(&self) -> String {
        let tag = |t: &Option<u32>| t.map_or("untagged".to_string(), |t| format!("tag {t}"));
        match self {
            Change::Added { field } => format!(
                "+ {} {}{}{}{}",
                field.path,
                field.ty,
                if field.nullable { " (nullable)" } else { "" },
                field
                    .tag
                    .map_or(String::new(), |t| format!(" (tagged, tag {t})")),
                field
                    .default
                    .as_ref()
                    .map_or(String::new(), |d| format!(" (default {d})"))
            ),
            Change::Removed { field } => format!("- {} {}", field.path, field.ty),
            Change::TypeChanged { path, from, to } => format!("~ {path}: type {from} → {to}"),
            Change::NullableChanged { path, from, to } => format!(
                "~ {path}: {} → {}",
                nullable_word(*from),
                nullable_word(*to)
            ),
            Change::TaggedChanged { path, from, to } => {
                format!("~ {path}: {} → {}", tag(from), tag(to))
            }
            Change::DefaultChanged { path, from, to } => format!(
                "~ {path}: default {} → {}",
                from.as_deref().unwrap_or("(none)"),
                to.as_deref().unwrap_or("(none)")
            ),
            Change::IgnorableChanged { path, from, to } => format!(
                "~ {path}: {} → {}",
                ignorable_word(*from),
                ignorable_word(*to)
            ),
            Change::FlexibleChanged { from, to } => format!(
                "~ encoding: {} → {}",
                flexible_word(*from),
                flexible_word(*to)
            ),
        }
    }
}

fn nullable_word(b: bool) -> &'static str {
    if b {
        "nullable"
    } else {
        "not nullable"
    }
}

fn ignorable_word(b: bool) -> &'static str {
    if b {
        "ignorable"
    } else {
        "not ignorable"
    }
}

fn flexible_word(b: bool) -> &'static str {
    if b {
        "flexible (compact lengths, tagged fields)"
    } else {
        "classic (int16/int32 lengths)"
    }
}

/// Every field present at `version`, in wire order of declaration, depth first.
pub fn layout(spec: &MessageSpec, version: i16) -> Vec<FieldAt> {
    let flexible = spec.is_flexible(version);
    fields_at(spec, version)
        .into_iter()
        .map(|(path, f)| {
            let tagged = f.is_tagged_in(version);
            FieldAt {
                path,
                ty: f.ty.to_string(),
                nullable: f.is_nullable_in(version),
                tag: if tagged { f.tag } else { None },
                default: f.default.clone(),
                compact: f.is_compact_in(version, flexible, tagged),
                ignorable: f.ignorable,
            }
        })
        .collect()
}

/// The fields present at `version` with their dotted paths, depth first.
pub fn fields_at(spec: &MessageSpec, version: i16) -> Vec<(String, &FieldSpec)> {
    fn collect<'a>(
        fields: &'a [FieldSpec],
        prefix: &str,
        version: i16,
        out: &mut Vec<(String, &'a FieldSpec)>,
    ) {
        for f in fields.iter().filter(|f| f.versions.contains(version)) {
            let path = if prefix.is_empty() {
                f.name.clone()
            } else {
                format!("{prefix}.{}", f.name)
            };
            out.push((path.clone(), f));
            collect(&f.fields, &path, version, out);
        }
    }
    let mut out = Vec::new();
    collect(&spec.fields, "", version, &mut out);
    out
}

/// Changes from (`a` at `va`) to (`b` at `vb`): the same spec at two versions,
/// or two releases' specs at one version.
pub fn diff(a: &MessageSpec, va: i16, b: &MessageSpec, vb: i16) -> Vec<Change> {
    let (la, lb) = (layout(a, va), layout(b, vb));
    let mut changes = Vec::new();
    let (fa, fb) = (a.is_flexible(va), b.is_flexible(vb));
    if fa != fb {
        changes.push(Change::FlexibleChanged { from: fa, to: fb });
    }
    for x in &la {
        match lb.iter().find(|y| y.path == x.path) {
            None => changes.push(Change::Removed { field: x.clone() }),
            Some(y) => {
                if x.ty != y.ty {
                    changes.push(Change::TypeChanged {
                        path: x.path.clone(),
                        from: x.ty.clone(),
                        to: y.ty.clone(),
                    });
                }
                if x.nullable != y.nullable {
                    changes.push(Change::NullableChanged {
                        path: x.path.clone(),
                        from: x.nullable,
                        to: y.nullable,
                    });
                }
                if x.tag != y.tag {
                    changes.push(Change::TaggedChanged {
                        path: x.path.clone(),
                        from: x.tag,
                        to: y.tag,
                    });
                }
                if x.default != y.default {
                    changes.push(Change::DefaultChanged {
                        path: x.path.clone(),
                        from: x.default.clone(),
                        to: y.default.clone(),
                    });
                }
                if x.ignorable != y.ignorable {
                    changes.push(Change::IgnorableChanged {
                        path: x.path.clone(),
                        from: x.ignorable,
                        to: y.ignorable,
                    });
                }
            }
        }
    }
    for y in &lb {
        if !la.iter().any(|x| x.path == y.path) {
            changes.push(Change::Added { field: y.clone() });
        }
    }
    changes
}

/// What each version changed relative to the one before it (the first version
/// lists its fields as added).
pub fn history(
    spec_at: impl Fn(i16) -> Option<MessageSpec>,
    versions: &[i16],
) -> Vec<(i16, Vec<Change>)> {
    let mut out = Vec::new();
    let mut prev: Option<(MessageSpec, i16)> = None;
    for &v in versions {
        let Some(spec) = spec_at(v) else { continue };
        let changes = match &prev {
            Some((p, pv)) => diff(p, *pv, &spec, v),
            None => layout(&spec, v)
                .into_iter()
                .filter(|f| !f.path.contains('.'))
                .map(|field| Change::Added { field })
                .collect(),
        };
        out.push((v, changes));
        prev = Some((spec, v));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::import::parse_definition;

    const SPEC: &str = r#"{ "apiKey": 99, "type": "request", "name": "FooRequest", "validVersions": "0-3", "flexibleVersions": "2+",
      "fields": [
        { "name": "Name", "type": "string", "versions": "0+", "nullableVersions": "1+" },
        { "name": "Items", "type": "[]Item", "versions": "0+", "fields": [
          { "name": "Id", "type": "int32", "versions": "0+" },
          { "name": "Extra", "type": "int64", "versions": "1-2" } ]},
        { "name": "Count", "type": "int32", "versions": "3+", "taggedVersions": "3+", "tag": 0, "default": "-1" } ] }"#;

    #[test]
    fn version_changes() {
        let s = parse_definition(SPEC, "t").unwrap();
        let d01 = diff(&s, 0, &s, 1);
        assert!(d01.contains(&Change::NullableChanged {
            path: "Name".into(),
            from: false,
            to: true
        }));
        assert!(d01.iter().any(|c| matches!(c, Change::Added { field } if field.path == "Items.Extra" && field.ty == "int64")));
        let d12 = diff(&s, 1, &s, 2);
        assert_eq!(
            d12,
            vec![Change::FlexibleChanged {
                from: false,
                to: true
            }]
        );
        let d23 = diff(&s, 2, &s, 3);
        assert!(d23
            .iter()
            .any(|c| matches!(c, Change::Removed { field } if field.path == "Items.Extra")));
        assert!(d23.iter().any(|c| matches!(c, Change::Added { field } if field.path == "Count" && field.tag == Some(0))));
        let h = history(|_| Some(s.clone()), &[0, 1, 2, 3]);
        assert_eq!(h.len(), 4);
        assert_eq!(h[0].1.len(), 2, "v0 adds its top-level fields");
    }
}
