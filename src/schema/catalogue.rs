//! The catalogue: every message definition of every known release, as facts.
//!
//! The built-in catalogue (`src/catalogue/kafka.json`) is produced by
//! `kwire import-defs` from the upstream definitions of several releases; a
//! definition identical across releases is stored once with the list of releases.
//! Definitions loaded at run time (`--defs`) take priority and bring their prose.

use super::import::{parse_definition, strip_prose};
use super::message::MessageSpec;
use super::model::{FieldSpec, MessageKind};
use super::versions::Versions;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;
use std::sync::OnceLock;

/// The release name given to definitions loaded with `--defs`.
pub(crate) const LOADED_RELEASE: &str = "defs";

const BUILTIN_JSON: &str = include_str!("../catalogue/kafka.json");
const FORMAT: u32 = 1;

/// One definition and the releases that define it identically.
///
/// A built-in entry keeps its line of the catalogue file and parses it on first
/// use: a command touches a handful of the ~500 definitions, and parsing them
/// all took longer than many commands' whole work (a `capture --list` of
/// 40,000 frames). What the lookups need (name, kind, api key, versions) is
/// read for every entry up front.
#[derive(Clone, Debug)]
pub struct Entry {
    /// Releases defining this exact spec, oldest first.
    pub releases: Vec<String>,
    head: Head,
    spec: OnceLock<MessageSpec>,
    /// The entry's line in the built-in catalogue, until it is parsed.
    line: Option<&'static str>,
}

/// What the catalogue's indexes and lookups read of a definition.
#[derive(Clone, Debug, PartialEq, Deserialize)]
struct Head {
    name: String,
    kind: MessageKind,
    #[serde(default)]
    api_key: Option<i16>,
    valid_versions: Versions,
}

/// An entry's line, read for its head only (the fields are skipped unparsed).
#[derive(Deserialize)]
struct HeadLine {
    releases: Vec<String>,
    spec: Head,
}

/// The head of a line as `to_json` writes it (`{"releases":["3.9",…],"spec":{"name":…,
/// "kind":…,"api_key":…,"valid_versions":…,` and the rest), found without
/// parsing the rest: a JSON parser walks the whole line, fields and all, and
/// that was most of a command's start. `None` for any other shape (the JSON
/// parser reads it then).
fn scan_head(line: &str) -> Option<HeadLine> {
    /// The plain string (no escapes) after `key` at the start of `rest`, and what follows it.
    fn string<'a>(rest: &'a str, key: &str) -> Option<(&'a str, &'a str)> {
        let body = rest.strip_prefix(key)?.strip_prefix('"')?;
        let end = body.find('"')?;
        let value = &body[..end];
        (!value.contains('\\')).then_some((value, &body[end + 1..]))
    }
    let rest = line.strip_prefix("{\"releases\":[")?;
    let (list, rest) = rest.split_once(']')?;
    let mut releases = Vec::new();
    for quoted in list.split(',') {
        releases.push(quoted.strip_prefix('"')?.strip_suffix('"')?.to_string());
    }
    let (name, rest) = string(rest.strip_prefix(",\"spec\":{")?, "\"name\":")?;
    let (kind, rest) = string(rest.strip_prefix(',')?, "\"kind\":")?;
    let mut rest = rest.strip_prefix(',')?;
    let mut api_key = None;
    if let Some(after) = rest.strip_prefix("\"api_key\":") {
        let (number, after) = after.split_once(',')?;
        api_key = Some(number.parse().ok()?);
        rest = after;
    }
    let (versions, _) = string(rest, "\"valid_versions\":")?;
    let spec = Head {
        name: name.to_string(),
        kind: MessageKind::parse(kind)?,
        api_key,
        valid_versions: Versions::parse(versions).ok()??,
    };
    Some(HeadLine { releases, spec })
}

/// An entry's line, read whole.
#[derive(Deserialize)]
struct SpecLine {
    spec: MessageSpec,
}

/// An entry as the catalogue file writes it.
#[derive(Serialize, Deserialize)]
struct EntryFile<'a> {
    releases: std::borrow::Cow<'a, [String]>,
    spec: std::borrow::Cow<'a, MessageSpec>,
}

impl Entry {
    pub fn new(releases: Vec<String>, spec: MessageSpec) -> Entry {
        let head = Head {
            name: spec.name.clone(),
            kind: spec.kind,
            api_key: spec.api_key,
            valid_versions: spec.valid_versions,
        };
        Entry {
            releases,
            head,
            spec: OnceLock::from(spec),
            line: None,
        }
    }

    /// An entry of the built-in file, its spec parsed when first asked for.
    fn lazy(line: &'static str) -> Result<Entry, String> {
        let h = match scan_head(line) {
            Some(h) => h,
            None => serde_json::from_str(line).map_err(|e| e.to_string())?,
        };
        Ok(Entry {
            releases: h.releases,
            head: h.spec,
            spec: OnceLock::new(),
            line: Some(line),
        })
    }

    /// The definition.
    #[inline]
    pub fn spec(&self) -> &MessageSpec {
        self.spec.get_or_init(|| {
            // The line's head parsed when the catalogue was made, and the tests parse every line whole.
            let line = self.line.unwrap_or_default();
            serde_json::from_str::<SpecLine>(line)
                .map(|l| l.spec)
                .unwrap_or_else(|e| panic!("built-in catalogue entry {}: {e}", self.head.name))
        })
    }

    fn spec_mut(&mut self) -> &mut MessageSpec {
        self.spec();
        self.spec.get_mut().expect("parsed just now")
    }

    pub fn name(&self) -> &str {
        &self.head.name
    }

    /// Whether the definition may have a field named `field`: false only when
    /// its text, not parsed yet, does not hold the quoted name (a search that
    /// spares parsing every definition to find one name).
    pub(crate) fn may_name(&self, field: &str) -> bool {
        match (self.line, self.spec.get()) {
            (Some(line), None) => {
                memchr::memmem::find(line.as_bytes(), format!("\"{field}\"").as_bytes()).is_some()
            }
            _ => true,
        }
    }

    pub fn kind(&self) -> MessageKind {
        self.head.kind
    }

    pub fn valid_versions(&self) -> Versions {
        self.head.valid_versions
    }
}

#[derive(Deserialize)]
struct CatalogueFile {
    format: u32,
    releases: Vec<String>,
    messages: Vec<EntryFile<'static>>,
}

#[derive(Clone, Debug, Default)]
pub struct Catalogue {
    /// Known releases, oldest first; `defs` last when loaded.
    pub releases: Vec<String>,
    pub entries: Vec<Entry>,
    by_api: HashMap<(MessageKind, i16), Vec<usize>>,
    /// `by_api` for requests and responses as vectors indexed by api key: the
    /// lookups made for every frame, without hashing.
    api_dense: [Vec<Vec<usize>>; 2],
    by_name: HashMap<String, Vec<usize>>,
    /// `by_name` of the request and response headers, which every frame needs.
    headers: [Vec<usize>; 2],
}

/// Api keys below this are looked up in `api_dense`.
const MAX_DENSE_KEY: usize = 1024;

fn dense_slot(kind: MessageKind) -> Option<usize> {
    match kind {
        MessageKind::Request => Some(0),
        MessageKind::Response => Some(1),
        _ => None,
    }
}

/// Whether `e` is in release `pin` (loaded definitions are in every one).
fn in_release(e: &Entry, pin: &str) -> bool {
    e.releases.iter().any(|r| r == pin || r == LOADED_RELEASE)
}

/// Order release names numerically ("4.10" after "4.9"); `defs` sorts last.
pub(crate) fn release_order(r: &str) -> Vec<u32> {
    if r == LOADED_RELEASE {
        return vec![u32::MAX];
    }
    r.split('.').map(|p| p.parse().unwrap_or(0)).collect()
}

impl Catalogue {
    /// The catalogue compiled into kwire.
    pub fn builtin() -> &'static Catalogue {
        static CAT: OnceLock<Catalogue> = OnceLock::new();
        CAT.get_or_init(|| {
            Catalogue::from_lines(BUILTIN_JSON).expect("built-in catalogue is valid")
        })
    }

    /// A catalogue file's definitions, each parsed on first use: the file is
    /// the one `to_json` writes (a head line, then one entry a line).
    fn from_lines(text: &'static str) -> Result<Catalogue, String> {
        let mut lines = text.lines();
        let head = lines.next().unwrap_or_default();
        let releases_json = head
            .strip_prefix(&format!("{{\"format\":{FORMAT},\"releases\":"))
            .and_then(|r| r.strip_suffix(",\"messages\":["))
            .ok_or("not a catalogue file of format 1")?;
        let releases: Vec<String> =
            serde_json::from_str(releases_json).map_err(|e| e.to_string())?;
        let mut entries = Vec::new();
        for (n, line) in lines.enumerate() {
            if line == "]}" {
                return Ok(Catalogue::from_entries(releases, entries));
            }
            let line = line.strip_suffix(',').unwrap_or(line);
            entries.push(Entry::lazy(line).map_err(|e| format!("entry {}: {e}", n + 1))?);
        }
        Err("catalogue file cut short".into())
    }

    pub fn from_json(text: &str) -> Result<Catalogue, String> {
        let file: CatalogueFile = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if file.format != FORMAT {
            return Err(format!("catalogue format {} is not {FORMAT}", file.format));
        }
        let entries = file
            .messages
            .into_iter()
            .map(|e| Entry::new(e.releases.into_owned(), e.spec.into_owned()))
            .collect();
        Ok(Catalogue::from_entries(file.releases, entries))
    }

    fn from_entries(releases: Vec<String>, entries: Vec<Entry>) -> Catalogue {
        let mut cat = Catalogue {
            releases,
            entries,
            ..Default::default()
        };
        cat.reindex();
        cat
    }

    fn reindex(&mut self) {
        self.by_api.clear();
        self.by_name.clear();
        for (i, e) in self.entries.iter().enumerate() {
            if let Some(k) = e.head.api_key {
                self.by_api.entry((e.head.kind, k)).or_default().push(i);
            }
            self.by_name
                .entry(e.head.name.to_ascii_lowercase())
                .or_default()
                .push(i);
        }
        // Newest release first, so lookups take the most recent definition.
        let entries = &self.entries;
        let newest = |i: &usize| {
            std::cmp::Reverse(entries[*i].releases.iter().map(|r| release_order(r)).max())
        };
        for v in self.by_api.values_mut().chain(self.by_name.values_mut()) {
            v.sort_by_key(newest);
        }
        self.api_dense = [Vec::new(), Vec::new()];
        for ((kind, key), v) in &self.by_api {
            if let (Some(slot), Ok(k)) = (dense_slot(*kind), usize::try_from(*key)) {
                if k < MAX_DENSE_KEY {
                    let table = &mut self.api_dense[slot];
                    if table.len() <= k {
                        table.resize(k + 1, Vec::new());
                    }
                    table[k] = v.clone();
                }
            }
        }
        for (slot, name) in ["requestheader", "responseheader"].into_iter().enumerate() {
            self.headers[slot] = self.by_name.get(name).cloned().unwrap_or_default();
        }
    }

    /// The request (`kind` = Request) or response header at version `hv`.
    #[inline]
    pub fn header(&self, kind: MessageKind, hv: i16) -> Option<&MessageSpec> {
        self.entry_spec(self.header_index(kind, hv)?)
    }

    /// [`Self::header`] as the index of its entry ([`Self::entry_spec`]).
    #[inline]
    pub fn header_index(&self, kind: MessageKind, hv: i16) -> Option<usize> {
        self.newest_at(dense_slot(kind).map(|slot| &self.headers[slot]), hv)
    }

    /// The entries of an API's requests or responses, newest first.
    #[inline]
    fn api_entries(&self, kind: MessageKind, api_key: i16) -> Option<&Vec<usize>> {
        let dense = dense_slot(kind)
            .zip(usize::try_from(api_key).ok())
            .and_then(|(slot, k)| self.api_dense[slot].get(k));
        match dense {
            Some(v) if !v.is_empty() => Some(v),
            _ => self.by_api.get(&(kind, api_key)),
        }
    }

    /// Serialise as the committed catalogue file: one message per line, for readable diffs.
    pub fn to_json(&self) -> String {
        let mut out = format!(
            "{{\"format\":{FORMAT},\"releases\":{},\"messages\":[\n",
            serde_json::to_string(&self.releases).unwrap_or_default()
        );
        let lines: Vec<String> = self
            .entries
            .iter()
            .map(|e| {
                serde_json::to_string(&EntryFile {
                    releases: (&e.releases[..]).into(),
                    spec: std::borrow::Cow::Borrowed(e.spec()),
                })
                .unwrap_or_default()
            })
            .collect();
        out.push_str(&lines.join(",\n"));
        out.push_str("\n]}\n");
        out
    }

    /// Import upstream definitions: `root/<release>/**/*.json` for each release folder.
    pub fn import_releases(root: &Path) -> Result<Catalogue, String> {
        let mut releases: Vec<String> = std::fs::read_dir(root)
            .map_err(|e| format!("{}: {e}", root.display()))?
            .filter_map(|e| e.ok())
            .filter(|e| e.path().is_dir())
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .filter(|n| n.chars().next().is_some_and(|c| c.is_ascii_digit()))
            .collect();
        releases.sort_by_key(|r| release_order(r));
        let mut entries: Vec<Entry> = Vec::new();
        for rel in &releases {
            let mut specs = super::source::load_definitions(&root.join(rel))?;
            propagate_unstable(&mut specs);
            for mut spec in specs {
                strip_prose(&mut spec);
                match entries.iter_mut().find(|e| *e.spec() == spec) {
                    Some(e) => e.releases.push(rel.clone()),
                    None => entries.push(Entry::new(vec![rel.clone()], spec)),
                }
            }
        }
        entries.sort_by(|a, b| {
            (
                a.head.kind,
                a.head.api_key,
                &a.head.name,
                release_order(&a.releases[0]),
            )
                .cmp(&(
                    b.head.kind,
                    b.head.api_key,
                    &b.head.name,
                    release_order(&b.releases[0]),
                ))
        });
        Ok(Catalogue::from_entries(releases, entries))
    }

    /// A copy of this catalogue with definitions loaded from the user's files added:
    /// they take priority, and their prose is laid over the built-in facts.
    pub fn with_loaded(&self, mut specs: Vec<MessageSpec>) -> Catalogue {
        propagate_unstable(&mut specs);
        let mut cat = self.clone();
        let abouts: HashMap<&str, &MessageSpec> =
            specs.iter().map(|s| (s.name.as_str(), s)).collect();
        for e in &mut cat.entries {
            if let Some(src) = abouts.get(e.head.name.as_str()) {
                overlay_about(&mut e.spec_mut().fields, &src.fields);
            }
        }
        for spec in specs {
            cat.entries
                .push(Entry::new(vec![LOADED_RELEASE.to_string()], spec));
        }
        cat.releases.push(LOADED_RELEASE.to_string());
        cat.reindex();
        cat
    }

    fn candidates<'a>(
        &'a self,
        idx: Option<&'a Vec<usize>>,
        pin: Option<&str>,
    ) -> impl Iterator<Item = &'a Entry> + 'a {
        let pin = pin.map(str::to_string);
        idx.into_iter()
            .flatten()
            .map(|&i| &self.entries[i])
            .filter(move |e| pin.as_deref().is_none_or(|p| in_release(e, p)))
    }

    /// The definition of an API's request or response at `version`: loaded
    /// definitions first, then the newest release that defines the version.
    #[inline]
    pub fn message(
        &self,
        kind: MessageKind,
        api_key: i16,
        version: i16,
        pin: Option<&str>,
    ) -> Option<&MessageSpec> {
        self.entry_spec(self.message_index(kind, api_key, version, pin)?)
    }

    /// [`Self::message`] as the index of its entry ([`Self::entry_spec`]), for
    /// callers that remember lookups (a stream of alike frames).
    pub fn message_index(
        &self,
        kind: MessageKind,
        api_key: i16,
        version: i16,
        pin: Option<&str>,
    ) -> Option<usize> {
        match pin {
            None => self.newest_at(self.api_entries(kind, api_key), version),
            Some(p) => self.api_entries(kind, api_key)?.iter().copied().find(|&i| {
                self.entries
                    .get(i)
                    .is_some_and(|e| in_release(e, p) && e.head.valid_versions.contains(version))
            }),
        }
    }

    /// The spec of entry `i`, as [`Self::message_index`] and [`Self::header_index`] give it.
    #[inline]
    pub fn entry_spec(&self, i: usize) -> Option<&MessageSpec> {
        self.entries.get(i).map(Entry::spec)
    }

    /// The newest of `idx`'s entries that defines `version`: the lookup made
    /// for every frame, as a plain loop.
    #[inline]
    fn newest_at(&self, idx: Option<&Vec<usize>>, version: i16) -> Option<usize> {
        idx?.iter().copied().find(|&i| {
            self.entries
                .get(i)
                .is_some_and(|e| e.head.valid_versions.contains(version))
        })
    }

    /// Any definition by name (case-insensitive) at `version`.
    pub fn by_name(&self, name: &str, version: i16, pin: Option<&str>) -> Option<&MessageSpec> {
        // Lowercased on the stack: the decoder asks for the header's spec once per frame.
        let mut buf = [0u8; 64];
        let key = match buf.get_mut(..name.len()) {
            Some(b) => {
                b.copy_from_slice(name.as_bytes());
                b.make_ascii_lowercase();
                std::str::from_utf8(b).ok()
            }
            None => None,
        };
        let idx = match key {
            Some(k) => self.by_name.get(k),
            None => self.by_name.get(&name.to_ascii_lowercase()),
        };
        self.candidates(idx, pin)
            .find(|e| e.head.valid_versions.contains(version))
            .map(Entry::spec)
    }

    /// Every entry of a name, newest first.
    pub fn entries_named<'a>(&'a self, name: &str) -> impl Iterator<Item = &'a Entry> + 'a {
        self.candidates(self.by_name.get(&name.to_ascii_lowercase()), None)
    }

    /// Every entry of an API request or response, newest first.
    pub(crate) fn entries_for<'a>(
        &'a self,
        kind: MessageKind,
        api_key: i16,
        pin: Option<&str>,
    ) -> impl Iterator<Item = &'a Entry> + 'a {
        self.candidates(self.api_entries(kind, api_key), pin)
    }

    /// Versions of an API's request or response that decode (union over releases).
    pub fn versions(&self, kind: MessageKind, api_key: i16, pin: Option<&str>) -> Vec<i16> {
        let mut v: Vec<i16> = self
            .entries_for(kind, api_key, pin)
            .flat_map(|e| e.head.valid_versions.iter_capped(i16::MAX))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The API name for a key ("Produce"), also for retired APIs.
    pub fn api_name(&self, api_key: i16) -> Option<&str> {
        self.api_entries(MessageKind::Request, api_key)?
            .first()
            .map(|&i| api_name_of(&self.entries[i].head.name))
    }

    /// Every API key known, sorted.
    pub fn api_keys(&self) -> Vec<i16> {
        let mut keys: Vec<i16> = self
            .by_api
            .keys()
            .filter(|(k, _)| *k == MessageKind::Request)
            .map(|(_, a)| *a)
            .collect();
        keys.sort_unstable();
        keys
    }

    /// Resolve a user-typed API: a key ("85") or a name in any case, with or
    /// without the Request/Response suffix.
    pub fn resolve_api(&self, text: &str) -> Option<i16> {
        let t = text.trim();
        if let Ok(k) = t.parse::<i16>() {
            return self.api_name(k).map(|_| k);
        }
        let lower = t.to_ascii_lowercase();
        let base = lower
            .strip_suffix("request")
            .or_else(|| lower.strip_suffix("response"))
            .unwrap_or(&lower);
        let base: String = base.chars().filter(|c| *c != '_' && *c != '-').collect();
        self.api_keys().into_iter().find(|&k| {
            self.api_name(k)
                .is_some_and(|n| n.to_ascii_lowercase() == base)
        })
    }

    /// API names closest to a misspelt one, for error messages.
    pub fn suggest_api(&self, text: &str) -> Vec<&str> {
        let lower = text.to_ascii_lowercase();
        let mut scored: Vec<(usize, &str)> = self
            .api_keys()
            .into_iter()
            .filter_map(|k| self.api_name(k))
            .map(|n| (edit_distance(&lower, &n.to_ascii_lowercase()), n))
            .collect();
        scored.sort();
        scored
            .into_iter()
            .take(3)
            .filter(|(d, _)| *d <= 4.max(lower.len() / 2))
            .map(|(_, n)| n)
            .collect()
    }
}

/// "Produce" of "ProduceRequest" (as [`MessageSpec::api_name`]), without parsing the definition.
fn api_name_of(name: &str) -> &str {
    name.strip_suffix("Request")
        .or_else(|| name.strip_suffix("Response"))
        .unwrap_or(name)
}

/// Responses do not carry `latestVersionUnstable`: take it from the request.
fn propagate_unstable(specs: &mut [MessageSpec]) {
    let unstable: Vec<i16> = specs
        .iter()
        .filter(|s| s.kind == MessageKind::Request && s.latest_version_unstable)
        .filter_map(|s| s.api_key)
        .collect();
    for s in specs.iter_mut() {
        if s.kind == MessageKind::Response && s.api_key.is_some_and(|k| unstable.contains(&k)) {
            s.latest_version_unstable = true;
        }
    }
}

fn overlay_about(target: &mut [FieldSpec], source: &[FieldSpec]) {
    for f in target {
        if let Some(s) = source.iter().find(|s| s.name == f.name) {
            f.about = s.about.clone();
            overlay_about(std::sync::Arc::make_mut(&mut f.fields), &s.fields);
        }
    }
}

pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Parse one definition file's text; re-exported for tools and tests.
pub(crate) fn parse_one(text: &str, origin: &str) -> Result<MessageSpec, String> {
    parse_definition(text, origin)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every built-in line: its head found by the scan is the parser's, and
    /// its whole definition parses (it is parsed on first use, later).
    #[test]
    fn every_built_in_entry_scans_and_parses() {
        let cat = Catalogue::builtin();
        assert!(cat.entries.len() > 400, "{} entries", cat.entries.len());
        for e in &cat.entries {
            let line = e.line.expect("a built-in entry keeps its line");
            let scanned =
                scan_head(line).unwrap_or_else(|| panic!("no head scanned in {}", &line[..80]));
            let parsed: HeadLine = serde_json::from_str(line).unwrap();
            assert_eq!(
                (&scanned.releases, &scanned.spec),
                (&parsed.releases, &parsed.spec)
            );
            let whole: SpecLine = serde_json::from_str(line).unwrap();
            assert_eq!(whole.spec.name, e.name());
            assert_eq!(
                (
                    whole.spec.kind,
                    whole.spec.api_key,
                    whole.spec.valid_versions
                ),
                (e.kind(), e.head.api_key, e.valid_versions())
            );
        }
    }

    #[test]
    fn other_shapes_are_left_to_the_parser() {
        assert!(scan_head(
            r#"{"spec":{"name":"A","kind":"request","valid_versions":"0"},"releases":["4.0"]}"#
        )
        .is_none());
        assert!(scan_head(r#"{"releases":["4.0"],"spec":{"name":"A\u0042","kind":"request","valid_versions":"0"}}"#).is_none());
        let h = scan_head(r#"{"releases":["3.9","4.0"],"spec":{"name":"RequestHeader","kind":"header","valid_versions":"0-2","fields":[]}}"#).unwrap();
        assert_eq!(h.releases, ["3.9", "4.0"]);
        assert_eq!(
            h.spec,
            Head {
                name: "RequestHeader".into(),
                kind: MessageKind::Header,
                api_key: None,
                valid_versions: Versions::new(0, 2)
            }
        );
    }

    /// `to_json` writes what `from_lines` reads back, entry for entry.
    #[test]
    fn the_file_round_trips() {
        let cat = Catalogue::builtin();
        let again = Catalogue::from_json(&cat.to_json()).unwrap();
        assert_eq!(cat.entries.len(), again.entries.len());
        assert!(cat
            .entries
            .iter()
            .zip(&again.entries)
            .all(|(a, b)| a.releases == b.releases && a.spec() == b.spec()));
    }
}
