//! The index: every API with its key, versions, flexible versions and the sizes
//! of its smallest request and response; every record type; the encoding page.

use super::api_page::ApiDocs;
use super::record_page::{kind_label, RecordDocs, KINDS};
use super::{
    encoding_page, errors_page, left_out, record_batch_page, search, Block, Cell, Page, Section,
    Table, MAX_VERSION_PAGES,
};
use crate::decode::frame::compress_versions;
use crate::schema::MessageKind;

pub const PATH: &str = "index";

/// One row of the API table.
pub(crate) struct ApiRow {
    pub key: i16,
    pub name: String,
    pub path: String,
    pub versions: String,
    pub flexible: String,
    pub default_version: Option<i16>,
    /// Request and response bytes of the smallest instance at the default version.
    pub sizes: Option<(usize, usize)>,
    /// How many versions, and which, have no page ([`super::page_versions`]).
    pub left_out: Option<(usize, String)>,
    /// The versions each release removed: `4.0: v0-2`, `-` for none.
    pub removed: String,
}

impl ApiRow {
    pub fn new(docs: &ApiDocs, flexible: String) -> ApiRow {
        let sizes = docs.default_version.map(|v| {
            let (req, resp) = docs.figures(v);
            (req.bytes.len(), resp.bytes.len())
        });
        ApiRow {
            key: docs.key,
            name: docs.name.clone(),
            path: docs.default_path(),
            versions: if docs.request_versions.is_empty() {
                "retired".into()
            } else {
                compress_versions(&docs.request_versions)
            },
            flexible,
            default_version: docs.default_version,
            sizes,
            left_out: left_out(&docs.request_versions, &docs.page_versions),
            removed: removed_text(&docs.removed_by_release()),
        }
    }
}

/// `4.0: v0-2; 4.1: v3`, or `-`.
fn removed_text(removed: &[(String, Vec<i16>)]) -> String {
    if removed.is_empty() {
        return "-".into();
    }
    removed
        .iter()
        .map(|(release, v)| format!("{release}: v{}", compress_versions(v)))
        .collect::<Vec<_>>()
        .join("; ")
}

/// One row of a record-type table.
pub struct RecordRow {
    pub name: String,
    pub path: String,
    pub kind: MessageKind,
    pub record_type: Option<i16>,
    pub versions: String,
    pub size: Option<usize>,
    /// How many versions, and which, have no page.
    pub left_out: Option<(usize, String)>,
}

impl RecordRow {
    pub fn new(docs: &RecordDocs) -> Option<RecordRow> {
        let v = docs.default_version()?;
        Some(RecordRow {
            name: docs.name.clone(),
            path: docs.path(v),
            kind: docs.kind,
            record_type: docs.record_type,
            versions: compress_versions(&docs.versions),
            size: docs.figure(v).map(|f| f.bytes.len()),
            left_out: left_out(&docs.versions, &docs.page_versions),
        })
    }
}

/// `definitions` says which definitions the site shows ([`crate::render::page::site::definitions_shown`]).
pub(crate) fn index_page(apis: &[ApiRow], records: &[RecordRow], definitions: &str) -> Page {
    let opt = |v: Option<String>| Cell::text(v.unwrap_or_else(|| "-".into()));
    let head: Vec<String> = [
        "key",
        "API",
        "versions",
        "removed by release",
        "flexible",
        "default",
        "request bytes",
        "response bytes",
    ]
    .map(String::from)
    .to_vec();
    let row = |a: &ApiRow| {
        vec![
            Cell::text(a.key.to_string()),
            Cell::link(&a.name, &a.path),
            Cell::text(&a.versions),
            Cell::text(&a.removed),
            Cell::text(&a.flexible),
            opt(a.default_version.map(|v| format!("v{v}"))),
            opt(a.sizes.map(|s| s.0.to_string())),
            opt(a.sizes.map(|s| s.1.to_string())),
        ]
    };
    // A section per role, in the roles' order; APIs by key within each.
    let mut api_sections = Vec::new();
    let names = super::roles::ROLES
        .iter()
        .map(|(name, _)| *name)
        .chain([super::roles::OTHER]);
    for (i, role) in names.enumerate() {
        let rows: Vec<Vec<Cell>> = apis
            .iter()
            .filter(|a| super::roles::role_of(a.key) == role)
            .map(row)
            .collect();
        if rows.is_empty() {
            continue;
        }
        let mut blocks = Vec::new();
        if api_sections.is_empty() {
            blocks.push(Block::Para("The APIs by what they are for. Versions are every version some known release defines; \"removed by release\" names the versions a release no longer defines (its brokers answer them UNSUPPORTED_VERSION).".into()));
        }
        blocks.push(Block::Table(Table {
            head: head.clone(),
            rows,
            ..Default::default()
        }));
        let section = Section::new(format!("APIs: {role}"), blocks);
        api_sections.push(if i == 0 {
            section.with_id("apis")
        } else {
            section
        });
    }
    let guides = Table {
        head: ["page", "what it shows"].map(String::from).to_vec(),
        rows: vec![
            vec![Cell::link("Encoding", encoding_page::PATH), Cell::text("every primitive type in bytes: numbers, varints, strings, arrays, structs, tagged fields, headers")],
            vec![Cell::link("Record batches", record_batch_page::PATH), Cell::text("RecordBatch v2, records and headers, compression, legacy message sets")],
            vec![Cell::link("Error codes", errors_page::PATH), Cell::text("every error code: its name, whether a client may retry it, the versions before which an API cannot return it, and where each response carries one")],
            vec![Cell::link("Display filters", super::filters_page::PATH), Cell::text("the --filter language: facts, fields, operators, examples")],
            vec![Cell::link("Export tables", super::export_page::PATH), Cell::text("kwire export's tables for DuckDB and Spark: every column, its type and meaning")],
            vec![Cell::link("Search", search::PATH), Cell::text("every API, field, record type and error code by name")],
        ],
        ..Default::default()
    };
    let mut sections = vec![Section::new("Guides", vec![Block::Table(guides)]).with_id("guides")];
    sections.extend(api_sections);
    for kind in KINDS {
        let rows: Vec<Vec<Cell>> = records
            .iter()
            .filter(|r| r.kind == kind)
            .map(|r| {
                vec![
                    Cell::link(&r.name, &r.path),
                    opt(r.record_type.map(|t| t.to_string())),
                    Cell::text(&r.versions),
                    opt(r.size.map(|s| s.to_string())),
                ]
            })
            .collect();
        if !rows.is_empty() {
            let head = ["name", "record type", "versions", "bytes (newest)"]
                .map(String::from)
                .to_vec();
            sections.push(Section::new(
                format!("{}s", capitalise(kind_label(kind))),
                vec![Block::Table(Table {
                    head,
                    rows,
                    ..Default::default()
                })],
            ));
        }
    }
    let left: Vec<Vec<Cell>> = apis
        .iter()
        .map(|a| (&a.name, &a.path, &a.left_out))
        .chain(records.iter().map(|r| (&r.name, &r.path, &r.left_out)))
        .filter_map(|(name, path, left)| {
            left.as_ref().map(|(n, versions)| {
                vec![
                    Cell::link(name, path),
                    Cell::text(n.to_string()),
                    Cell::text(versions),
                ]
            })
        })
        .collect();
    if !left.is_empty() {
        sections.push(Section::new(
            "Versions without pages",
            vec![
                Block::Para(format!(
                    "These definitions have more versions than the site gives pages to: at most {MAX_VERSION_PAGES} each (the first, the default and the newest). `kwire page NAME --version N` prints the page of any version."
                )),
                Block::Table(Table { head: ["name", "versions without a page", "which"].map(String::from).to_vec(), rows: left, ..Default::default() }),
            ],
        ));
    }
    Page {
        path: PATH.into(),
        title: "Kafka protocol on the wire".into(),
        blocks: vec![
            Block::Para("Every API and record type of the Kafka protocol, each shown as the smallest legal instance that kwire encodes and decodes: a byte grid coloured by region, the object tree, the schema and the version history. Default versions are the latest stable ones; sizes are those of the instances shown, with the int32 size prefix (a records field holds two example records). The encoding page explains each primitive.".into()),
            Block::Facts(vec![("Definitions".into(), definitions.to_string())]),
        ],
        sections,
    }
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next().map_or(String::new(), |f| {
        f.to_uppercase().collect::<String>() + c.as_str()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Catalogue;

    #[test]
    fn releases_that_removed_versions_are_named() {
        let cat = Catalogue::builtin();
        let removed = |key| {
            let docs = ApiDocs::new(cat, None, key).expect("an API");
            removed_text(&docs.removed_by_release())
        };
        // Kafka 4.0 dropped the oldest versions of many APIs (KIP-896).
        assert_eq!(removed(0), "4.0: v0-2", "Produce");
        assert_eq!(removed(1), "4.0: v0-3", "Fetch");
        assert_eq!(removed(18), "-", "ApiVersions keeps every version");
        assert_eq!(removed_text(&[]), "-");
    }
}
