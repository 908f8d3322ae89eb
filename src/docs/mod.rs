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
    /// Versions of the page's message, each linking to its page (a window
    /// of them when there are many, see [`version_links`]).
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
    /// How many versions between the link before and this one are not linked.
    pub skipped_before: usize,
}

/// Longest file stem kept from a name: file systems refuse names over 255 bytes.
const MAX_STEM: usize = 96;

/// File name part of a page path before collisions are resolved: the name
/// with anything but `[A-Za-z0-9_]` dropped (so names can never escape the
/// output folder, and `-` is left to mark versions and collisions), at most
/// [`MAX_STEM`] characters, and `_` when nothing is left.
pub fn base_stem(name: &str) -> String {
    let stem: String = name.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '_').take(MAX_STEM).collect();
    if stem.is_empty() {
        "_".into()
    } else {
        stem
    }
}

/// The file stem of `this` among every name of its folder (`names`, each with
/// an id that tells apart equal names), unique in the folder, ignoring case
/// (as some file systems do). Names sharing a base stem are ranked: a name
/// that is its own stem first, then by name, then by id; the first gets the
/// stem, the n-th `stem-n` (which no base stem can equal, as stems hold no `-`).
pub fn unique_stem<'a, I: Ord + Copy>(this: (&str, I), names: impl IntoIterator<Item = (&'a str, I)>) -> String {
    let stem = base_stem(this.0);
    let rank = |(name, id): (&'a str, I)| (name != base_stem(name), name, id);
    let this_rank = (this.0 != stem, this.0, this.1);
    let ahead = names
        .into_iter()
        .filter(|(name, _)| base_stem(name).eq_ignore_ascii_case(&stem))
        .filter(|&named| rank(named) < this_rank)
        .count();
    if ahead == 0 {
        stem
    } else {
        format!("{stem}-{}", ahead + 1)
    }
}

/// Paths of a message's pages: the default version at `dir/stem`, others at `dir/stem-vN`.
pub fn version_path(dir: &str, stem: &str, version: i16, default: Option<i16>) -> String {
    if Some(version) == default {
        format!("{dir}/{stem}")
    } else {
        format!("{dir}/{stem}-v{version}")
    }
}

/// Most versions of one API or record type that get a page of their own.
/// Real definitions have about twenty; one claiming `0-32767` would otherwise
/// write 32,768 pages. The others are listed on the index page, and
/// `kwire page NAME --version N` prints any of them.
pub const MAX_VERSION_PAGES: usize = 64;

/// The versions that get pages: all of them up to [`MAX_VERSION_PAGES`], else
/// the first, the default and the newest, [`MAX_VERSION_PAGES`] in all.
pub fn page_versions(versions: &[i16], default: Option<i16>) -> Vec<i16> {
    if versions.len() <= MAX_VERSION_PAGES {
        return versions.to_vec();
    }
    let mut kept: Vec<i16> = versions.first().copied().into_iter().chain(default).collect();
    kept.sort_unstable();
    kept.dedup();
    let newest = MAX_VERSION_PAGES - kept.len();
    kept.extend(versions.iter().rev().filter(|v| !kept.contains(v)).take(newest).collect::<Vec<_>>());
    kept.sort_unstable();
    kept.dedup();
    kept
}

/// Versions not in `pages`, as text for the index (`1-32703`), if any.
pub fn left_out(versions: &[i16], pages: &[i16]) -> Option<(usize, String)> {
    let missing: Vec<i16> = versions.iter().copied().filter(|v| pages.binary_search(v).is_err()).collect();
    (!missing.is_empty()).then(|| (missing.len(), crate::decode::frame::compress_versions(&missing)))
}

/// A switcher links every page when there are at most this many.
pub const SWITCHER_ALL_UP_TO: usize = 24;
/// Otherwise it links the first and the last, the default, and this many
/// pages either side of the current one, with counts of the versions between.
pub const SWITCHER_NEIGHBOURS: usize = 5;

/// A version history as labelled lists for [`Block::Changes`].
/// Consecutive versions that change nothing share one entry (`v4-v8`), so
/// the list grows with the changes, not with the number of versions.
pub fn change_lists(history: Vec<(i16, Vec<Change>)>) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    let mut unchanged: Option<(i16, i16)> = None;
    let flush = |out: &mut Vec<(String, Vec<String>)>, run: Option<(i16, i16)>| {
        if let Some((from, to)) = run {
            let label = if from == to { format!("v{from}") } else { format!("v{from}-v{to}") };
            out.push((label, vec!["no change in the layout".to_string()]));
        }
    };
    for (v, changes) in history {
        if changes.is_empty() {
            unchanged = Some(match unchanged {
                Some((from, to)) if to.checked_add(1) == Some(v) => (from, v),
                run => {
                    flush(&mut out, run);
                    (v, v)
                }
            });
        } else {
            flush(&mut out, unchanged.take());
            out.push((format!("v{v}"), changes.iter().map(Change::describe).collect()));
        }
    }
    flush(&mut out, unchanged);
    out
}

/// The version switcher of the page of `current`: links to pages (`pages`,
/// sorted), all of them when few, else a window around `current` (see
/// [`SWITCHER_NEIGHBOURS`]); each link counts the versions of `versions`
/// (every version, sorted) between it and the link before.
pub fn version_links(dir: &str, stem: &str, versions: &[i16], pages: &[i16], current: i16, default: Option<i16>, unstable: &[i16]) -> Vec<VersionLink> {
    let mut shown: Vec<i16> = if pages.len() <= SWITCHER_ALL_UP_TO {
        pages.to_vec()
    } else {
        let at = pages.partition_point(|&v| v < current);
        let window = &pages[at.saturating_sub(SWITCHER_NEIGHBOURS)..(at + SWITCHER_NEIGHBOURS + 1).min(pages.len())];
        let ends = [pages.first(), pages.last()].into_iter().flatten().copied();
        window.iter().copied().chain(ends).chain(default.filter(|d| pages.binary_search(d).is_ok())).collect()
    };
    // The page shown is marked even when it is one without a page in the site.
    shown.push(current);
    shown.sort_unstable();
    shown.dedup();
    let mut previous: Option<i16> = None;
    shown
        .into_iter()
        .map(|v| {
            let below = versions.partition_point(|&x| x < v);
            let above_previous = previous.map_or(0, |p| versions.partition_point(|&x| x <= p));
            previous = Some(v);
            VersionLink {
                version: v,
                path: version_path(dir, stem, v, default),
                current: v == current,
                default: Some(v) == default,
                unstable: unstable.contains(&v),
                skipped_before: below.saturating_sub(above_previous),
            }
        })
        .collect()
}
