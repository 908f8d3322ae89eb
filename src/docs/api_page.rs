//! One page per API and version: facts, the smallest request and response as
//! grids and trees, their schemas, and what each version changed.

use super::figure::frame_figure;
use super::schema_view::schema_blocks;
use super::{change_lists, page_versions, unique_stem, version_links, version_path, Block, Figure, Page, Section};
use crate::decode::frame::compress_versions;
use crate::decode::Direction;
use crate::encode::example::default_version;
use crate::schema::diff::history;
use crate::schema::{Catalogue, MessageKind};

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
            .filter(|&v| cat.message(MessageKind::Request, key, v, release).is_some_and(|s| s.latest_version_unstable && s.valid_versions.hi == v))
            .collect();
        let changes = |kind, versions: &[i16]| change_lists(history(|v| cat.message(kind, key, v, release).cloned(), versions));
        let default_version = default_version(cat, key, release);
        let stem = unique_stem((name.as_str(), key), cat.api_keys().into_iter().filter_map(|k| Some((cat.api_name(k)?, k))));
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

    /// Where the default version's page (or a retired API's page) lives.
    pub fn default_path(&self) -> String {
        format!("{DIR}/{}", self.stem)
    }

    /// The path of the page of `version`.
    pub fn path(&self, version: i16) -> String {
        version_path(DIR, &self.stem, version, self.default_version)
    }

    /// The smallest request and response at `version`.
    pub fn figures(&self, version: i16) -> (Figure, Figure) {
        let f = |d| frame_figure(self.cat, d, self.key, version, self.release);
        (f(Direction::Request), f(Direction::Response))
    }

    /// The page of one version, or of the retired API when `version` is `None`.
    pub fn page(&self, version: Option<i16>) -> Page {
        let Some(v) = version else { return self.retired_page() };
        let (req, resp) = self.figures(v);
        let spec_at = |kind| self.cat.message(kind, self.key, v, self.release);
        let flexible = spec_at(MessageKind::Request).is_some_and(|s| s.is_flexible(v));
        let header = |f: &Figure, dir: &str| f.header_version.map_or(format!("{dir} -"), |h| format!("{dir} v{h}"));
        let size = |f: &Figure| if f.bytes.is_empty() { "-".to_string() } else { format!("{} bytes", f.bytes.len()) };
        let facts = vec![
            ("API key".to_string(), self.key.to_string()),
            ("Encoded at".into(), format!("v{v}")),
            ("Flexible versions".into(), spec_at(MessageKind::Request).map_or("none".into(), |s| s.flexible_versions.to_string())),
            ("Headers".into(), format!("{}, {}", header(&req, "req"), header(&resp, "resp"))),
            ("Request versions".into(), compress_versions(&self.request_versions)),
            ("Response versions".into(), compress_versions(&self.response_versions)),
            ("Request size".into(), size(&req)),
            ("Response size".into(), size(&resp)),
        ];
        let mut blocks = vec![Block::Para(intro(v, flexible, self.unstable.contains(&v))), Block::Facts(facts), Block::Legend];
        blocks.push(Block::Versions(version_links(DIR, &self.stem, &self.request_versions, &self.page_versions, v, self.default_version, &self.unstable)));
        let part = |heading: &str, kind: MessageKind, figure: Figure| {
            let mut blocks = vec![Block::Figure(Box::new(figure))];
            blocks.extend(spec_at(kind).map(|s| schema_blocks(s, v)).unwrap_or_default());
            Section { heading: heading.into(), blocks }
        };
        Page {
            path: self.path(v),
            title: self.name.clone(),
            blocks,
            sections: vec![
                part("Request", MessageKind::Request, req),
                part("Response", MessageKind::Response, resp),
                Section { heading: "Request history".into(), blocks: vec![Block::Changes(self.request_history.clone())] },
                Section { heading: "Response history".into(), blocks: vec![Block::Changes(self.response_history.clone())] },
            ],
        }
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

fn intro(v: i16, flexible: bool, unstable: bool) -> String {
    let mut s = String::from(
        "Below are the smallest legal request and response, encoded by kwire and decoded back: numbers are zero, \
         strings and byte arrays are empty rather than null, uuids are zero, each array holds one element, tagged \
         fields are left out, and a records field holds one empty 61-byte RecordBatch v2. ",
    );
    s.push_str(&if flexible {
        format!("v{v} is flexible: string, bytes and array lengths are unsigned varints of length + 1, and every struct ends with a count of tagged fields. ")
    } else {
        format!("v{v} is not flexible: strings carry int16 lengths, bytes and arrays int32 lengths, and there are no tagged fields. ")
    });
    if unstable {
        s.push_str("This version is marked unstable upstream: brokers only accept it when unstable versions are enabled. ");
    }
    s.push_str("Sizes count the int32 size prefix.");
    s
}
