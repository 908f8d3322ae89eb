//! Documentation pages: what they say, gathered from the catalogue, the encoder
//! and the decoder. The pages are a small document model ([`Page`]); turning
//! them into HTML, markdown or text is `render::page`'s job.

pub mod api_page;
pub mod apis;
pub mod encoding_page;
pub mod errors_page;
pub mod example_records;
pub mod export_page;
pub mod figure;
pub mod filters_page;
pub mod grammar;
pub mod index_page;
pub mod links;
pub mod record_batch_page;
pub mod record_page;
pub mod roles;
pub mod schema_view;
pub mod search;

use crate::decode::regions::byte_owners;
use crate::decode::{Node, Region, Role};
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
    /// The section's anchor, for links into it (`encoding#structs`).
    pub id: Option<String>,
    pub blocks: Vec<Block>,
}

impl Section {
    pub fn new(heading: impl Into<String>, blocks: Vec<Block>) -> Section {
        Section {
            heading: heading.into(),
            id: None,
            blocks,
        }
    }

    pub(crate) fn with_id(mut self, id: impl Into<String>) -> Section {
        self.id = Some(id.into());
        self
    }
}

#[derive(Clone, Debug)]
pub enum Block {
    Para(String),
    /// Label → value facts (API key, versions, sizes).
    Facts(Vec<(String, String)>),
    /// The colours of the regions the page's grids use, in `Region::ALL`
    /// order; pages start with it empty and [`Page::fill_legend`] fills it.
    Legend(Vec<Region>),
    /// Versions of the page's message, each linking to its page (a window
    /// of them when there are many, see [`version_links`]).
    Versions(Vec<VersionLink>),
    Figure(Box<Figure>),
    Table(Table),
    /// Verbatim text (a definition file) under a title.
    Code {
        title: String,
        text: String,
    },
    /// A message version as a compact grammar ([`grammar::grammar`]).
    Grammar(String),
    /// Labelled lists: a version and what it changed.
    Changes(Vec<(String, Vec<String>)>),
    /// The search box and the index it searches (the search page only).
    Search(Vec<search::Entry>),
}

impl Page {
    /// Every figure of the page, in order.
    pub fn figures(&self) -> impl Iterator<Item = &Figure> {
        self.blocks
            .iter()
            .chain(self.sections.iter().flat_map(|s| &s.blocks))
            .filter_map(|b| match b {
                Block::Figure(f) => Some(f.as_ref()),
                _ => None,
            })
    }

    /// Fill the legend with the regions that colour a byte of the page's
    /// figures, or drop it when the page has no grid.
    pub fn fill_legend(mut self) -> Page {
        let shown = regions_shown(self.figures());
        self.blocks
            .retain(|b| !matches!(b, Block::Legend(_)) || !shown.is_empty());
        for b in &mut self.blocks {
            if let Block::Legend(regions) = b {
                regions.clone_from(&shown);
            }
        }
        self
    }
}

/// The regions of the nodes that own at least one byte of `figures` (a
/// grid cell takes the colour of the deepest node covering it), in
/// `Region::ALL` order.
pub(crate) fn regions_shown<'a>(figures: impl IntoIterator<Item = &'a Figure>) -> Vec<Region> {
    let mut used = [false; Region::ALL.len()];
    for f in figures {
        let mut regions = Vec::new();
        f.root.walk(&mut |n, _| regions.push(n.region));
        for owner in byte_owners(&f.root, f.bytes.len()).into_iter().flatten() {
            if let Some(i) = Region::ALL.iter().position(|r| *r == regions[owner]) {
                used[i] = true;
            }
        }
    }
    Region::ALL
        .iter()
        .zip(used)
        .filter(|(_, u)| *u)
        .map(|(r, _)| *r)
        .collect()
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
    /// For each node of the tree in pre-order, where its explanation is:
    /// a field's row in the page's field table (`#req-Topics.Name`), a
    /// header's section of the encoding page. Empty when nothing links.
    pub links: Vec<Option<String>>,
}

#[derive(Clone, Debug, Default)]
pub struct Table {
    pub head: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
    /// Each row's anchor, for links to it; empty when rows have none.
    pub row_ids: Vec<Option<String>>,
}

#[derive(Clone, Debug)]
pub struct Cell {
    pub text: String,
    /// A page path (`api/Produce`) this cell links to, with an anchor after
    /// `#` (`encoding#type-int32`); `#anchor` alone is a place on the same page.
    pub link: Option<String>,
}

impl Cell {
    pub fn text(s: impl Into<String>) -> Cell {
        Cell {
            text: s.into(),
            link: None,
        }
    }
    pub fn link(s: impl Into<String>, path: impl Into<String>) -> Cell {
        Cell {
            text: s.into(),
            link: Some(path.into()),
        }
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

/// Whether the user loaded definitions (`--defs`): their descriptions are
/// then on the pages, and pages stop telling how to get them.
pub(crate) fn defs_loaded(cat: &crate::schema::Catalogue) -> bool {
    cat.releases
        .iter()
        .any(|r| r == crate::schema::catalogue::LOADED_RELEASE)
}

/// An anchor for `name` (a field path, a type) under `prefix`: characters
/// other than `[A-Za-z0-9_.-]` become `_`, so the id needs no escaping in a
/// link, whatever the definitions call their fields.
pub fn anchor(prefix: &str, name: &str) -> String {
    let mut id = String::with_capacity(prefix.len() + name.len());
    id.push_str(prefix);
    id.extend(name.chars().map(|c| {
        if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
            c
        } else {
            '_'
        }
    }));
    id
}

/// For each node of `root` in pre-order, the schema field path it is an
/// instance of (`Topics.Partitions.Index`): the names of the fields above it
/// and its own, skipping array elements and tagged entries, as the field
/// tables list them. `None` for nodes that are not fields of the message:
/// framing, header fields, and everything inside record data (which starts
/// with a batch or message node).
pub fn field_paths(root: &Node) -> Vec<Option<String>> {
    fn go(n: &Node, above: &str, out: &mut Vec<Option<String>>) {
        if n.region == Region::RecordBatch {
            n.walk(&mut |_, _| out.push(None));
            return;
        }
        let is_field = matches!(n.role, Role::Field { .. }) && n.region != Region::RpcHeader;
        let path = is_field.then(|| {
            if above.is_empty() {
                n.field_key().to_string()
            } else {
                format!("{above}.{}", n.field_key())
            }
        });
        let inner = path.clone().unwrap_or_else(|| above.to_string());
        out.push(path);
        for c in &n.children {
            go(c, &inner, out);
        }
    }
    let mut out = Vec::new();
    go(root, "", &mut out);
    out
}

/// Longest file stem kept from a name: file systems refuse names over 255 bytes.
const MAX_STEM: usize = 96;

/// File name part of a page path before collisions are resolved: the name
/// with anything but `[A-Za-z0-9_]` dropped (so names can never escape the
/// output folder, and `-` is left to mark versions and collisions), at most
/// [`MAX_STEM`] characters, and `_` when nothing is left.
pub(crate) fn base_stem(name: &str) -> String {
    let stem: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        .take(MAX_STEM)
        .collect();
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
pub fn unique_stem<'a, I: Ord + Copy>(
    this: (&str, I),
    names: impl IntoIterator<Item = (&'a str, I)>,
) -> String {
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
pub(crate) fn version_path(dir: &str, stem: &str, version: i16, default: Option<i16>) -> String {
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
    let mut kept: Vec<i16> = versions
        .first()
        .copied()
        .into_iter()
        .chain(default)
        .collect();
    kept.sort_unstable();
    kept.dedup();
    let newest = MAX_VERSION_PAGES - kept.len();
    kept.extend(
        versions
            .iter()
            .rev()
            .filter(|v| !kept.contains(v))
            .take(newest)
            .collect::<Vec<_>>(),
    );
    kept.sort_unstable();
    kept.dedup();
    kept
}

/// Versions not in `pages`, as text for the index (`1-32703`), if any.
pub(crate) fn left_out(versions: &[i16], pages: &[i16]) -> Option<(usize, String)> {
    let missing: Vec<i16> = versions
        .iter()
        .copied()
        .filter(|v| pages.binary_search(v).is_err())
        .collect();
    (!missing.is_empty()).then(|| {
        (
            missing.len(),
            crate::decode::frame::compress_versions(&missing),
        )
    })
}

/// A switcher links every page when there are at most this many.
pub(crate) const SWITCHER_ALL_UP_TO: usize = 24;
/// Otherwise it links the first and the last, the default, and this many
/// pages either side of the current one, with counts of the versions between.
pub const SWITCHER_NEIGHBOURS: usize = 5;

/// A version history as labelled lists for [`Block::Changes`].
/// Consecutive versions that change nothing share one entry (`v4-v8`), so
/// the list grows with the changes, not with the number of versions.
pub fn change_lists(history: Vec<(i16, Vec<Change>)>) -> Vec<(String, Vec<String>)> {
    change_lists_with(history, &|_| Vec::new())
}

/// [`change_lists`], a run of versions without a layout change followed by
/// what `notes` says of each of them (the definitions' own notes on a
/// version, when they were loaded with `--defs`).
pub(crate) fn change_lists_with(
    history: Vec<(i16, Vec<Change>)>,
    notes: &dyn Fn(i16) -> Vec<String>,
) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    let mut unchanged: Option<(i16, i16)> = None;
    let flush = |out: &mut Vec<(String, Vec<String>)>, run: Option<(i16, i16)>| {
        if let Some((from, to)) = run {
            let label = if from == to {
                format!("v{from}")
            } else {
                format!("v{from}-v{to}")
            };
            let before = from
                .checked_sub(1)
                .map_or(String::new(), |b| format!(" as v{b}"));
            let mut lines = vec![format!("the same layout{before}: the bump marks a change in behaviour (what the broker or the client does, or may send), not in the bytes")];
            for v in from..=to {
                for n in notes(v) {
                    if !lines.contains(&n) {
                        lines.push(n);
                    }
                }
            }
            out.push((label, lines));
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
            out.push((
                format!("v{v}"),
                changes.iter().map(Change::describe).collect(),
            ));
        }
    }
    flush(&mut out, unchanged);
    out
}

/// The version switcher of the page of `current`: links to pages (`pages`,
/// sorted), all of them when few, else a window around `current` (see
/// [`SWITCHER_NEIGHBOURS`]); each link counts the versions of `versions`
/// (every version, sorted) between it and the link before.
pub fn version_links(
    dir: &str,
    stem: &str,
    versions: &[i16],
    pages: &[i16],
    current: i16,
    default: Option<i16>,
    unstable: &[i16],
) -> Vec<VersionLink> {
    let mut shown: Vec<i16> = if pages.len() <= SWITCHER_ALL_UP_TO {
        pages.to_vec()
    } else {
        let at = pages.partition_point(|&v| v < current);
        let window = &pages[at.saturating_sub(SWITCHER_NEIGHBOURS)
            ..(at + SWITCHER_NEIGHBOURS + 1).min(pages.len())];
        let ends = [pages.first(), pages.last()].into_iter().flatten().copied();
        window
            .iter()
            .copied()
            .chain(ends)
            .chain(default.filter(|d| pages.binary_search(d).is_ok()))
            .collect()
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

/// Where an API's default page lives, without reading its versions.
pub(crate) fn api_path(cat: &crate::schema::Catalogue, key: i16) -> Option<String> {
    let name = cat.api_name(key)?;
    let stem = unique_stem(
        (name, key),
        cat.api_keys()
            .into_iter()
            .filter_map(|k| Some((cat.api_name(k)?, k))),
    );
    Some(format!("{}/{stem}", api_page::DIR))
}

/// The paragraphs of a definition file's comments that speak of `version`
/// (`// Version 3 adds …`, `// Versions 4 and 5 are the same as 3.`): a
/// paragraph whose first words are "Version" or "Versions" followed by a
/// list of versions that includes `version` ([`versions_named`]).
pub(crate) fn version_notes(source: &str, version: i16) -> Vec<String> {
    let mut paragraphs: Vec<String> = Vec::new();
    let mut current = String::new();
    for line in source.lines() {
        let Some(text) = line.trim().strip_prefix("//") else {
            if !current.is_empty() {
                paragraphs.push(std::mem::take(&mut current));
            }
            continue;
        };
        let text = text.trim();
        if text.is_empty() {
            if !current.is_empty() {
                paragraphs.push(std::mem::take(&mut current));
            }
        } else {
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(text);
        }
    }
    if !current.is_empty() {
        paragraphs.push(current);
    }
    paragraphs
        .into_iter()
        .filter(|p| {
            if !p.starts_with("Version") {
                return false;
            }
            versions_named(p).contains(&version)
        })
        .map(|p| format!("upstream: {p}"))
        .collect()
}

/// The versions a note's opening words name: `Version 5 and 6 are …` is 5
/// and 6, `Versions 0-2 were …` 0 to 2; the list ends at the first other word.
fn versions_named(paragraph: &str) -> Vec<i16> {
    let mut out = Vec::new();
    for word in paragraph.split_whitespace().skip(1) {
        let word = word.trim_end_matches([',', ':', ';']);
        let lower = word.to_ascii_lowercase();
        if matches!(
            lower.as_str(),
            "and" | "to" | "through" | "version" | "versions" | ""
        ) {
            continue;
        }
        let range = word
            .split_once('-')
            .and_then(|(a, b)| Some((a.parse::<i16>().ok()?, b.parse::<i16>().ok()?)));
        match (range, word.parse::<i16>()) {
            (Some((a, b)), _) if a <= b && b - a < 100 => out.extend(a..=b),
            (_, Ok(v)) => out.push(v),
            _ => break,
        }
    }
    out
}

#[cfg(test)]
mod notes_tests {
    use super::*;

    #[test]
    fn a_note_names_the_versions_it_opens_with() {
        assert_eq!(
            versions_named("Version 4 is the same as version 3"),
            vec![4]
        );
        assert_eq!(
            versions_named("Version 5 and 6 are the same as version 3."),
            vec![5, 6]
        );
        assert_eq!(
            versions_named("Versions 0-2 were removed in Apache Kafka 4.0, version 3 is"),
            vec![0, 1, 2]
        );
        assert_eq!(
            versions_named("Version 1 and version 2 are the same"),
            vec![1, 2]
        );
        let src = "{\n  // Version 1 is the same as version 0.\n  //\n  // Version 2 adds\n  // a field.\n  \"name\": 1 }";
        assert_eq!(
            version_notes(src, 2),
            vec!["upstream: Version 2 adds a field.".to_string()]
        );
        assert_eq!(
            version_notes(src, 1),
            vec!["upstream: Version 1 is the same as version 0.".to_string()]
        );
        assert!(version_notes(src, 3).is_empty());
    }
}
