//! One page per API and version: facts, the smallest request and response as
//! grids and trees, their schemas, and what each version changed.

use super::example_records::{record_batch, Compression};
use super::figure::{frame_figure, instance_figure, link_fields, Instance};
use super::links::{REQUEST_HEADERS, RESPONSE_HEADERS};
use super::schema_view::{row_paths, schema_blocks};
use super::search::Entry;
use super::{
    anchor, change_lists_with, defs_loaded, page_versions, unique_stem, version_links,
    version_path, Block, Figure, Page, Section,
};
use crate::decode::frame::compress_versions;
use crate::decode::Direction;
use crate::encode::example::default_version;
use crate::schema::diff::{fields_at, history};
use crate::schema::{Catalogue, MessageKind};
use std::collections::HashSet;

/// The anchor prefixes of the request's and the response's field rows.
pub(crate) const REQUEST_ROWS: &str = "req-";
pub(crate) const RESPONSE_ROWS: &str = "resp-";

pub const DIR: &str = "api";

/// What an API's pages share across its versions, computed once.
pub struct ApiDocs<'c> {
    cat: &'c Catalogue,
    release: Option<&'c str>,
    pub key: i16,
    pub name: String,
    pub request_versions: Vec<i16>,
    pub response_versions: Vec<i16>,
    /// The request versions that get a page in the site ([`page_versions`]).
    pub page_versions: Vec<i16>,
    /// The file name of its pages, unique among the APIs' ([`unique_stem`]).
    pub stem: String,
    /// The latest stable version; `None` for a retired API.
    pub default_version: Option<i16>,
    pub unstable: Vec<i16>,
    request_history: Vec<(String, Vec<String>)>,
    response_history: Vec<(String, Vec<String>)>,
}

impl<'c> ApiDocs<'c> {
    pub fn new(cat: &'c Catalogue, release: Option<&'c str>, key: i16) -> Option<ApiDocs<'c>> {
        let name = cat.api_name(key)?.to_string();
        let request_versions = cat.versions(MessageKind::Request, key, release);
        let response_versions = cat.versions(MessageKind::Response, key, release);
        let unstable = request_versions
            .iter()
            .copied()
            .filter(|&v| {
                cat.message(MessageKind::Request, key, v, release)
                    .is_some_and(|s| s.latest_version_unstable && s.valid_versions.hi == v)
            })
            .collect();
        let changes = |kind, versions: &[i16]| {
            let notes = |v: i16| {
                cat.message(kind, key, v, release)
                    .and_then(|s| s.source_text.as_deref())
                    .map(|text| super::version_notes(text, v))
                    .unwrap_or_default()
            };
            change_lists_with(
                history(|v| cat.message(kind, key, v, release).cloned(), versions),
                &notes,
            )
        };
        let default_version = default_version(cat, key, release);
        let stem = unique_stem(
            (name.as_str(), key),
            cat.api_keys()
                .into_iter()
                .filter_map(|k| Some((cat.api_name(k)?, k))),
        );
        Some(ApiDocs {
            cat,
            release,
            key,
            page_versions: page_versions(&request_versions, default_version),
            stem,
            default_version,
            request_history: changes(MessageKind::Request, &request_versions),
            response_history: changes(MessageKind::Response, &response_versions),
            name,
            request_versions,
            response_versions,
            unstable,
        })
    }

    /// The request versions each release removed: for each pair of
    /// consecutive known releases, the versions the older defines and the
    /// newer does not (Kafka 4.0 removed Produce v0-2).
    pub(crate) fn removed_by_release(&self) -> Vec<(String, Vec<i16>)> {
        let releases: Vec<&String> = self
            .cat
            .releases
            .iter()
            .filter(|r| r.as_str() != crate::schema::catalogue::LOADED_RELEASE)
            .collect();
        releases
            .windows(2)
            .filter_map(|w| {
                let older = self
                    .cat
                    .versions(MessageKind::Request, self.key, Some(w[0]));
                let newer = self
                    .cat
                    .versions(MessageKind::Request, self.key, Some(w[1]));
                let gone: Vec<i16> = older.into_iter().filter(|v| !newer.contains(v)).collect();
                (!gone.is_empty()).then(|| (w[1].clone(), gone))
            })
            .collect()
    }

    /// Where the default version's page (or a retired API's page) lives.
    pub fn default_path(&self) -> String {
        format!("{DIR}/{}", self.stem)
    }

    /// The path of the page of `version`.
    pub fn path(&self, version: i16) -> String {
        version_path(DIR, &self.stem, version, self.default_version)
    }

    /// The smallest request and response at `version`, records fields
    /// holding the example records uncompressed.
    pub fn figures(&self, version: i16) -> (Figure, Figure) {
        let batch = record_batch(Compression::None);
        let f = |d| frame_figure(self.cat, d, self.key, version, self.release, &batch);
        (f(Direction::Request), f(Direction::Response))
    }

    /// What differs between the request's part and the response's: which
    /// definitions, the anchor prefix of the field rows, the encoding page's
    /// section on the header.
    fn direction_parts(direction: Direction) -> (MessageKind, &'static str, &'static str) {
        match direction {
            Direction::Request => (MessageKind::Request, REQUEST_ROWS, REQUEST_HEADERS),
            Direction::Response => (MessageKind::Response, RESPONSE_ROWS, RESPONSE_HEADERS),
        }
    }

    /// One direction's section: its grammar, its figure, the same with the
    /// records gzip-compressed when it has a records field, an instance with
    /// realistic values, and its schema. Tree nodes link to the rows of the
    /// field table.
    fn part(&self, heading: &str, direction: Direction, mut figure: Figure, v: i16) -> Section {
        let (kind, prefix, headers) = Self::direction_parts(direction);
        let spec = self.cat.message(kind, self.key, v, self.release);
        let rows = spec.map(|s| row_paths(s, v)).unwrap_or_default();
        link_fields(&mut figure, prefix, &rows, Some(headers));
        let mut blocks = Vec::new();
        if let Some(s) = spec {
            blocks.push(Block::Grammar(super::grammar::grammar(s, &self.name, v)));
        }
        blocks.push(Block::Figure(Box::new(figure)));
        // Another instance of the same part, linked as the first one is.
        let variant = |records: Compression, instance: Instance, note: &str| {
            let mut f = instance_figure(
                self.cat,
                direction,
                self.key,
                v,
                self.release,
                &record_batch(records),
                instance,
            );
            f.caption.push_str(note);
            link_fields(&mut f, prefix, &rows, Some(headers));
            Block::Figure(Box::new(f))
        };
        if spec.is_some_and(|s| s.plan(v).holds_records) {
            blocks.push(variant(
                Compression::Gzip,
                Instance::Smallest,
                "; the same records, gzip-compressed",
            ));
        }
        blocks.push(variant(
            Compression::None,
            Instance::Realistic,
            "; with values a client or broker would send",
        ));
        blocks.extend(
            spec.map(|s| schema_blocks(s, v, prefix, defs_loaded(self.cat)))
                .unwrap_or_default(),
        );
        Section::new(heading, blocks).with_id(direction.as_str())
    }

    /// The page of one version, or of the retired API when `version` is `None`.
    pub fn page(&self, version: Option<i16>) -> Page {
        let Some(v) = version else {
            return self.retired_page();
        };
        let (req, resp) = self.figures(v);
        let spec_at = |kind| self.cat.message(kind, self.key, v, self.release);
        let flexible = spec_at(MessageKind::Request).is_some_and(|s| s.is_flexible(v));
        let records = [MessageKind::Request, MessageKind::Response]
            .into_iter()
            .any(|k| spec_at(k).is_some_and(|s| s.plan(v).holds_records));
        let header = |f: &Figure, dir: &str| {
            f.header_version
                .map_or(format!("{dir} -"), |h| format!("{dir} v{h}"))
        };
        let size = |f: &Figure| {
            if f.bytes.is_empty() {
                "-".to_string()
            } else {
                format!("{} bytes", f.bytes.len())
            }
        };
        let facts = vec![
            ("API key".to_string(), self.key.to_string()),
            ("Encoded at".into(), format!("v{v}")),
            (
                "Flexible versions".into(),
                spec_at(MessageKind::Request)
                    .map_or("none".into(), |s| s.flexible_versions.to_string()),
            ),
            (
                "Headers".into(),
                format!("{}, {}", header(&req, "req"), header(&resp, "resp")),
            ),
            (
                "Request versions".into(),
                compress_versions(&self.request_versions),
            ),
            (
                "Response versions".into(),
                compress_versions(&self.response_versions),
            ),
            ("Request size".into(), size(&req)),
            ("Response size".into(), size(&resp)),
        ];
        let mut blocks = vec![
            Block::Para(intro(v, flexible, self.unstable.contains(&v), records)),
            Block::Facts(facts),
            Block::Legend(Vec::new()),
        ];
        blocks.push(Block::Versions(version_links(
            DIR,
            &self.stem,
            &self.request_versions,
            &self.page_versions,
            v,
            self.default_version,
            &self.unstable,
        )));
        Page {
            path: self.path(v),
            title: self.name.clone(),
            blocks,
            sections: vec![
                self.part("Request", Direction::Request, req, v),
                self.part("Response", Direction::Response, resp, v),
                Section::new(
                    "Request history",
                    vec![Block::Changes(self.request_history.clone())],
                ),
                Section::new(
                    "Response history",
                    vec![Block::Changes(self.response_history.clone())],
                ),
            ],
        }
        .fill_legend()
    }

    /// The API and every field of its requests and responses for the search
    /// page: a field links to its row on the default version's page when it
    /// is there, else on the newest page that has it.
    pub(crate) fn search_entries(&self) -> Vec<Entry> {
        let mut out = vec![Entry::new(
            &self.name,
            format!("API {}", self.key),
            self.default_path(),
        )];
        let order: Vec<i16> = self
            .default_version
            .into_iter()
            .chain(self.page_versions.iter().rev().copied())
            .collect();
        for direction in [Direction::Request, Direction::Response] {
            let (kind, prefix, _) = Self::direction_parts(direction);
            let mut seen = HashSet::new();
            for &v in &order {
                let Some(spec) = self.cat.message(kind, self.key, v, self.release) else {
                    continue;
                };
                for (path, _) in fields_at(spec, v) {
                    if seen.insert(path.clone()) {
                        let text = format!("{} {} {path}", self.name, direction.as_str());
                        out.push(Entry::new(
                            text,
                            format!("{} field", direction.as_str()),
                            format!("{}#{}", self.path(v), anchor(prefix, &path)),
                        ));
                    }
                }
            }
        }
        out
    }

    fn retired_page(&self) -> Page {
        Page {
            path: self.default_path(),
            title: self.name.clone(),
            blocks: vec![
                Block::Para("This API is retired: its definitions keep the key and the name, and no version is defined any more.".into()),
                Block::Facts(vec![("API key".into(), self.key.to_string()), ("Request versions".into(), "none".into())]),
            ],
            sections: Vec::new(),
        }
    }
}

fn intro(v: i16, flexible: bool, unstable: bool, records: bool) -> String {
    let mut s = String::from(
        "Below are the smallest legal request and response, encoded by kwire and decoded back: numbers are zero, \
         strings and byte arrays are empty rather than null, uuids are zero, each array holds one element, and tagged \
         fields are left out. ",
    );
    if records {
        s.push_str(
            "The records field holds a RecordBatch v2 of two example records, each with a value and a header, the first with a key \
             and the second with a null key, shown once uncompressed and once gzip-compressed; the record batch page explains their layout. ",
        );
    }
    s.push_str(&if flexible {
        format!("v{v} is flexible: string, bytes and array lengths are unsigned varints of length + 1, and every struct ends with a count of tagged fields. ")
    } else {
        format!("v{v} is not flexible: strings carry int16 lengths, bytes and arrays int32 lengths, and there are no tagged fields. ")
    });
    if unstable {
        s.push_str("This version is marked unstable upstream: brokers only accept it when unstable versions are enabled. ");
    }
    s.push_str("After them, each with values a client or broker would send (topic orders, acks -1, a 30 s timeout, offsets and epochs past zero, timestamps of 2026-12-01). ");
    s.push_str("Sizes count the int32 size prefix.");
    s
}
