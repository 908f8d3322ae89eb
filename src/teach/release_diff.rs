//! `kwire diff [NAME] --releases A B`: how definitions changed between two
//! Kafka releases, from the catalogue entries pinned to each: versions added
//! and removed, versions that became stable, and the field changes of every
//! version both releases define or that is new.

use crate::encode::encode_body;
use crate::encode::example::smallest_struct;
use crate::schema::diff::{diff, history, Change};
use crate::schema::{Catalogue, MessageKind, MessageSpec};
use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct ReleaseDiff {
    pub from: String,
    pub to: String,
    /// Only the definitions that differ.
    pub definitions: Vec<DefinitionDiff>,
}

#[derive(Clone, Debug, Serialize)]
pub struct DefinitionDiff {
    /// The definition's name: `ProduceRequest`, `ShareSnapshotValue`.
    pub name: String,
    pub kind_from: Option<MessageKind>,
    pub kind_to: Option<MessageKind>,
    /// The API key, or a coordinator record's type.
    pub api_key: Option<i16>,
    pub versions_from: Vec<i16>,
    pub versions_to: Vec<i16>,
    pub added_versions: Vec<i16>,
    pub removed_versions: Vec<i16>,
    /// Marked unstable (`latestVersionUnstable`) in `from`, stable in `to`.
    pub now_stable: Vec<i16>,
    pub now_unstable: Vec<i16>,
    /// Versions with field changes, and every new version.
    pub versions: Vec<VersionChanges>,
}

#[derive(Clone, Debug, Serialize)]
pub struct VersionChanges {
    pub version: i16,
    /// New in `to`: its changes are against the version before it in `to`
    /// (`against`), or for a new definition, its top-level fields.
    pub new: bool,
    pub against: Option<i16>,
    pub changes: Vec<Change>,
    /// Bytes of the smallest body at this version in each release.
    pub body_size_from: Option<usize>,
    pub body_size_to: Option<usize>,
}

impl DefinitionDiff {
    fn is_empty(&self) -> bool {
        self.kind_from == self.kind_to
            && self.added_versions.is_empty()
            && self.removed_versions.is_empty()
            && self.now_stable.is_empty()
            && self.now_unstable.is_empty()
            && self.versions.is_empty()
    }
}

/// Definition names to compare: an API's request and response, a record type,
/// or (`None`) every definition either release has.
pub fn names_for(cat: &Catalogue, text: Option<&str>) -> Result<Vec<String>, String> {
    let Some(text) = text else {
        let mut names: Vec<String> = Vec::new();
        for e in &cat.entries {
            if !names.contains(&e.spec().name) {
                names.push(e.spec().name.clone());
            }
        }
        return Ok(names);
    };
    if let Some(key) = cat.resolve_api(text) {
        return Ok([MessageKind::Request, MessageKind::Response]
            .iter()
            .filter_map(|k| {
                cat.entries_for(*k, key, None)
                    .next()
                    .map(|e| e.spec().name.clone())
            })
            .collect());
    }
    cat.entries_named(text)
        .next()
        .map(|e| vec![e.spec().name.clone()])
        .ok_or_else(|| format!("{text:?} is neither an API nor a definition in the catalogue"))
}

/// Compare the named definitions as `from` and `to` define them.
pub fn release_diff(
    cat: &Catalogue,
    names: &[String],
    from: &str,
    to: &str,
) -> Result<ReleaseDiff, String> {
    for r in [from, to] {
        if !cat.releases.iter().any(|x| x == r) {
            return Err(format!(
                "unknown release {r:?}; known: {}",
                cat.releases.join(", ")
            ));
        }
    }
    let definitions = names
        .iter()
        .map(|n| definition_diff(cat, n, from, to))
        .filter(|d| !d.is_empty())
        .collect();
    Ok(ReleaseDiff {
        from: from.to_string(),
        to: to.to_string(),
        definitions,
    })
}

/// What one release defines under a name.
struct InRelease<'c> {
    cat: &'c Catalogue,
    name: &'c str,
    release: &'c str,
}

impl<'c> InRelease<'c> {
    fn specs(&self) -> impl Iterator<Item = &'c MessageSpec> + '_ {
        self.cat
            .entries_named(self.name)
            .filter(|e| e.releases.iter().any(|r| r == self.release))
            .map(|e| e.spec())
    }

    fn spec(&self, v: i16) -> Option<&'c MessageSpec> {
        self.cat.by_name(self.name, v, Some(self.release))
    }

    fn versions(&self) -> Vec<i16> {
        let mut v: Vec<i16> = self
            .specs()
            .flat_map(|s| s.valid_versions.iter_capped(i16::MAX))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    fn unstable(&self, v: i16) -> bool {
        self.spec(v)
            .is_some_and(|s| s.latest_version_unstable && s.valid_versions.hi == v)
    }

    fn body_size(&self, v: i16) -> Option<usize> {
        let s = self.spec(v)?;
        encode_body(s, v, &smallest_struct(&s.fields, v))
            .ok()
            .map(|b| b.len())
    }
}

fn definition_diff(cat: &Catalogue, name: &str, from: &str, to: &str) -> DefinitionDiff {
    let (a, b) = (
        InRelease {
            cat,
            name,
            release: from,
        },
        InRelease {
            cat,
            name,
            release: to,
        },
    );
    let (va, vb) = (a.versions(), b.versions());
    let mut versions = Vec::new();
    for &v in &vb {
        let new = !va.contains(&v);
        let against = if new {
            vb.iter().copied().rev().find(|&x| x < v)
        } else {
            None
        };
        let changes = if new {
            let window: Vec<i16> = against.into_iter().chain([v]).collect();
            history(|x| b.spec(x).cloned(), &window)
                .pop()
                .map(|(_, c)| c)
                .unwrap_or_default()
        } else {
            let (Some(sa), Some(sb)) = (a.spec(v), b.spec(v)) else {
                continue;
            };
            diff(sa, v, sb, v)
        };
        if new || !changes.is_empty() {
            versions.push(VersionChanges {
                version: v,
                new,
                against,
                changes,
                body_size_from: a.body_size(v),
                body_size_to: b.body_size(v),
            });
        }
    }
    let both: Vec<i16> = va.iter().copied().filter(|v| vb.contains(v)).collect();
    let first = |r: &InRelease| r.specs().next().map(|s| (s.kind, s.api_key));
    let (ka, kb) = (first(&a), first(&b));
    DefinitionDiff {
        name: name.to_string(),
        kind_from: ka.map(|k| k.0),
        kind_to: kb.map(|k| k.0),
        api_key: kb.or(ka).and_then(|k| k.1),
        added_versions: vb.iter().copied().filter(|v| !va.contains(v)).collect(),
        removed_versions: va.iter().copied().filter(|v| !vb.contains(v)).collect(),
        now_stable: both
            .iter()
            .copied()
            .filter(|&v| a.unstable(v) && !b.unstable(v))
            .collect(),
        now_unstable: both
            .iter()
            .copied()
            .filter(|&v| !a.unstable(v) && b.unstable(v))
            .collect(),
        versions_from: va,
        versions_to: vb,
        versions,
    }
}
