//! One page per record type and version: coordinator keys and values, KRaft
//! metadata records and data types, each encoded alone at its smallest.

use super::figure::{link_fields, struct_figure};
use super::schema_view::{row_paths, schema_blocks};
use super::search::Entry;
use super::{
    anchor, change_lists, defs_loaded, page_versions, unique_stem, version_links, version_path,
    Block, Figure, Page, Section,
};
use crate::decode::frame::compress_versions;
use crate::decode::Region;
use crate::schema::catalogue::LOADED_RELEASE;
use crate::schema::diff::{fields_at, history};
use crate::schema::{Catalogue, MessageKind};
use serde_json::Map;
use std::collections::HashSet;

/// The anchor prefix of a record page's field rows.
pub(crate) const FIELD_ROWS: &str = "field-";

pub const DIR: &str = "records";

/// The kinds of definitions that get a record page, in index order.
pub const KINDS: [MessageKind; 4] = [
    MessageKind::CoordinatorKey,
    MessageKind::CoordinatorValue,
    MessageKind::Metadata,
    MessageKind::Data,
];

pub(crate) fn kind_label(kind: MessageKind) -> &'static str {
    match kind {
        MessageKind::CoordinatorKey => "coordinator key",
        MessageKind::CoordinatorValue => "coordinator value",
        MessageKind::Metadata => "metadata record",
        _ => "data type",
    }
}

/// Every record type's name, sorted, within the pinned release if any.
pub fn record_names(cat: &Catalogue, release: Option<&str>) -> Vec<String> {
    let mut names: Vec<String> = cat
        .entries
        .iter()
        .filter(|e| KINDS.contains(&e.spec().kind) && !e.spec().is_retired())
        .filter(|e| {
            release.is_none_or(|r| e.releases.iter().any(|x| x == r || x == LOADED_RELEASE))
        })
        .map(|e| e.spec().name.clone())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// What a record type's pages share, computed once.
pub struct RecordDocs<'c> {
    cat: &'c Catalogue,
    release: Option<&'c str>,
    pub name: String,
    /// The newest definition's kind (a type may move, e.g. from data to coordinator key).
    pub kind: MessageKind,
    /// The record type number, for coordinator and metadata records.
    pub record_type: Option<i16>,
    pub versions: Vec<i16>,
    /// The versions that get a page in the site ([`page_versions`]).
    pub page_versions: Vec<i16>,
    /// The file name of its pages, unique among the record types' ([`unique_stem`]).
    pub stem: String,
    history: Vec<(String, Vec<String>)>,
}

impl<'c> RecordDocs<'c> {
    pub fn new(cat: &'c Catalogue, release: Option<&'c str>, name: &str) -> Option<RecordDocs<'c>> {
        let newest = cat.entries_named(name).next()?.spec();
        let mut versions: Vec<i16> = cat
            .entries_named(name)
            .filter(|e| {
                release.is_none_or(|r| e.releases.iter().any(|x| x == r || x == LOADED_RELEASE))
            })
            .flat_map(|e| e.spec().valid_versions.iter_capped(i16::MAX))
            .collect();
        versions.sort_unstable();
        versions.dedup();
        let history = change_lists(history(
            |v| cat.by_name(name, v, release).cloned(),
            &versions,
        ));
        // Every release's names, so that a page's file name does not depend on the release shown.
        let stem = unique_stem(
            (newest.name.as_str(), ()),
            record_names(cat, None).iter().map(|n| (n.as_str(), ())),
        );
        let page_versions = page_versions(&versions, versions.last().copied());
        Some(RecordDocs {
            cat,
            release,
            name: newest.name.clone(),
            kind: newest.kind,
            record_type: newest.api_key,
            versions,
            page_versions,
            stem,
            history,
        })
    }

    /// The version shown by default: the newest.
    pub fn default_version(&self) -> Option<i16> {
        self.versions.last().copied()
    }

    pub fn path(&self, version: i16) -> String {
        version_path(DIR, &self.stem, version, self.default_version())
    }

    /// The smallest instance at `version`, its field nodes linked to their rows.
    pub fn figure(&self, version: i16) -> Option<Figure> {
        let spec = self.cat.by_name(&self.name, version, self.release)?;
        let mut figure = struct_figure(self.cat, spec, version, &Map::new(), Region::Record);
        link_fields(&mut figure, FIELD_ROWS, &row_paths(spec, version), None);
        Some(figure)
    }

    /// The record type and its fields for the search page, each field
    /// linked to its row on the newest page that has it.
    pub(crate) fn search_entries(&self) -> Vec<Entry> {
        let Some(newest) = self.default_version() else {
            return Vec::new();
        };
        let kind = kind_label(self.kind);
        let mut out = vec![Entry::new(&self.name, kind, self.path(newest))];
        let mut seen = HashSet::new();
        for &v in self.page_versions.iter().rev() {
            let Some(spec) = self.cat.by_name(&self.name, v, self.release) else {
                continue;
            };
            for (path, _) in fields_at(spec, v) {
                if seen.insert(path.clone()) {
                    out.push(Entry::new(
                        format!("{} {path}", self.name),
                        format!("{kind} field"),
                        format!("{}#{}", self.path(v), anchor(FIELD_ROWS, &path)),
                    ));
                }
            }
        }
        out
    }

    pub fn page(&self, v: i16) -> Page {
        let spec = self.cat.by_name(&self.name, v, self.release);
        let figure = self.figure(v);
        let mut facts = vec![("Kind".to_string(), kind_label(self.kind).to_string())];
        if let Some(t) = self.record_type {
            facts.push(("Record type".into(), t.to_string()));
        }
        facts.extend([
            ("Encoded at".into(), format!("v{v}")),
            ("Versions".into(), compress_versions(&self.versions)),
            (
                "Flexible versions".into(),
                spec.map_or("none".into(), |s| s.flexible_versions.to_string()),
            ),
            (
                "Size".into(),
                figure
                    .as_ref()
                    .map_or("-".into(), |f| format!("{} bytes", f.bytes.len())),
            ),
        ]);
        let mut layout = Vec::new();
        layout.extend(figure.map(|f| Block::Figure(Box::new(f))));
        layout.extend(
            spec.map(|s| schema_blocks(s, v, FIELD_ROWS, defs_loaded(self.cat)))
                .unwrap_or_default(),
        );
        Page {
            path: self.path(v),
            title: self.name.clone(),
            blocks: vec![
                Block::Para(intro(self.kind, self.record_type)),
                Block::Facts(facts),
                Block::Legend(Vec::new()),
                Block::Versions(version_links(
                    DIR,
                    &self.stem,
                    &self.versions,
                    &self.page_versions,
                    v,
                    self.default_version(),
                    &[],
                )),
            ],
            sections: vec![
                Section::new("Layout", layout).with_id("layout"),
                Section::new("History", vec![Block::Changes(self.history.clone())]),
            ],
        }
        .fill_legend()
    }
}

fn intro(kind: MessageKind, record_type: Option<i16>) -> String {
    let t = record_type.map_or(String::new(), |t| format!(" ({t})"));
    let framing = match kind {
        MessageKind::CoordinatorKey => format!(
            "A key of a coordinator's internal topic (__consumer_offsets, __share_group_state or __transaction_state). \
             In the topic, a record key is an int16 record type{t} followed by this struct."
        ),
        MessageKind::CoordinatorValue => "A value of a coordinator's internal topic. In the topic, a record value is an int16 version \
             followed by this struct; a null value deletes the key (a tombstone)."
            .to_string(),
        MessageKind::Metadata => format!(
            "A KRaft metadata record (__cluster_metadata and its snapshots). In the log, a record value is an unsigned varint \
             frame version (1), an unsigned varint record type{t} and an unsigned varint version, followed by this struct."
        ),
        _ => "A data type: a struct carried inside other bytes (control records, snapshots, consumer protocol metadata), \
              encoded like a message body with no header."
            .to_string(),
    };
    format!("{framing} Below is its smallest legal instance, encoded by kwire and decoded back (numbers zero, strings empty, one element per array, no tagged fields).")
}
