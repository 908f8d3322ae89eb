//! Documentation pages: what they say, gathered from the catalogue, the encoder
//! and the decoder. The pages are a small document model ([`Page`]); turning
//! them into HTML, markdown or text is `render::page`'s job.

pub mod api_page;
pub mod encoding_page;
pub mod figure;
pub mod index_page;
pub mod record_page;
pub mod schema_view;
pub mod site;

use crate::decode::Node;
use crate::schema::diff::Change;
use bytes::Bytes;

/// One page: a title, blocks under it, then headed sections.
#[derive(Clone, Debug)]
pub struct Page {
    /// Where the page lives in the site, without extension: `api/Produce`.
    pub path: String,
    pub title: String,
    pub blocks: Vec<Block>,
    pub sections: Vec<Section>,
}

#[derive(Clone, Debug)]
pub struct Section {
    pub heading: String,
    pub blocks: Vec<Block>,
}

#[derive(Clone, Debug)]
pub enum Block {
    Para(String),
    /// Label → value facts (API key, versions, sizes).
    Facts(Vec<(String, String)>),
    /// The region colours, in `Region::ALL` order.
    Legend,
    /// Every version of the page's message, linking to its page.
    Versions(Vec<VersionLink>),
    Figure(Box<Figure>),
    Table(Table),
    /// Verbatim text (a definition file) under a title.
    Code { title: String, text: String },
    /// Labelled lists: a version and what it changed.
    Changes(Vec<(String, Vec<String>)>),
}

/// Bytes kwire encoded and the tree it decoded from them: one grid and one
/// object tree. Renderers draw both from these; they never parse the bytes.
#[derive(Clone, Debug)]
pub struct Figure {
    pub caption: String,
    pub bytes: Bytes,
    pub root: Node,
    /// The frame's request or response header version (frames only).
    pub header_version: Option<i16>,
    /// Why the bytes could not be made or did not decode completely.
    pub error: Option<String>,
}

#[derive(Clone, Debug, Default)]
pub struct Table {
    pub head: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

#[derive(Clone, Debug)]
pub struct Cell {
    pub text: String,
    /// A page path (`api/Produce`) this cell links to.
    pub link: Option<String>,
}

impl Cell {
    pub fn text(s: impl Into<String>) -> Cell {
        Cell { text: s.into(), link: None }
    }
    pub fn link(s: impl Into<String>, path: impl Into<String>) -> Cell {
        Cell { text: s.into(), link: Some(path.into()) }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VersionLink {
    pub version: i16,
    pub path: String,
    /// The version this page shows.
    pub current: bool,
    /// The version shown by default (the latest stable one).
    pub default: bool,
    pub unstable: bool,
}

/// File name part of a page path: the message name with anything but
/// `[A-Za-z0-9_-]` dropped, so names can never escape the output folder.
pub fn file_stem(name: &str) -> String {
    name.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-').collect()
}

/// Paths of a message's pages: the default version at `dir/Name`, others at `dir/Name-vN`.
pub fn version_path(dir: &str, name: &str, version: i16, default: Option<i16>) -> String {
    if Some(version) == default {
        format!("{dir}/{}", file_stem(name))
    } else {
        format!("{dir}/{}-v{version}", file_stem(name))
    }
}

/// A version history as labelled lists for [`Block::Changes`].
pub fn change_lists(history: Vec<(i16, Vec<Change>)>) -> Vec<(String, Vec<String>)> {
    history
        .into_iter()
        .map(|(v, changes)| {
            let lines: Vec<String> = changes.iter().map(Change::describe).collect();
            (format!("v{v}"), if lines.is_empty() { vec!["no change in the layout".to_string()] } else { lines })
        })
        .collect()
}

/// Links to every version of a message.
pub fn version_links(dir: &str, name: &str, versions: &[i16], current: i16, default: Option<i16>, unstable: &[i16]) -> Vec<VersionLink> {
    versions
        .iter()
        .map(|&v| VersionLink {
            version: v,
            path: version_path(dir, name, v, default),
            current: v == current,
            default: Some(v) == default,
            unstable: unstable.contains(&v),
        })
        .collect()
}
