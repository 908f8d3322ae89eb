//! The documentation pages against the seed pages (../shared/seeds): with the
//! 4.0 definitions loaded, the WriteShareGroupState and DeleteShareGroupState
//! v0 pages carry the seeds' figures, legend, captions, byte grids, object
//! trees and schemas. The HTML is read back as a browser would see its text.

mod common;

use common::seed::{as_shown, collapse, parse_collapsed, seed_facts, seed_legend, seed_page, seed_parts, Line};
use kwire::decode::{Node, Region, Role};
use kwire::docs::api_page::ApiDocs;
use kwire::docs::{Block, Figure, Page};
use kwire::render::page::{render, PageFormat};
use kwire::render::text_tree::{render_tree, TreeOptions};
use kwire::schema::{source::load_definitions, Catalogue};

struct Case {
    page_prefix: &'static str,
    api: &'static str,
    key: i16,
    sizes: [usize; 2],
}

const CASES: &[Case] = &[
    Case { page_prefix: "000_", api: "WriteShareGroupState", key: 85, sizes: [78, 37] },
    Case { page_prefix: "001_", api: "DeleteShareGroupState", key: 86, sizes: [41, 37] },
];

/// HTML text as shown: tags dropped, entities decoded.
fn text_of(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&#39;", "'").replace("&amp;", "&")
}

/// The parts of `html` between each `open` and the next `close`.
fn between<'a>(html: &'a str, open: &str, close: &str) -> Vec<&'a str> {
    html.split(open).skip(1).map(|s| s.split(close).next().unwrap_or(s)).collect()
}

fn html_facts(html: &str) -> Vec<(String, String)> {
    let dl = between(html, "<dl class=facts>", "</dl>")[0];
    between(dl, "<dt>", "</dd>").iter().map(|item| {
        let (k, v) = item.split_once("</dt><dd>").unwrap();
        (text_of(k), text_of(v))
    }).collect()
}

fn figures(page: &Page) -> Vec<&Figure> {
    page.sections.iter().flat_map(|s| &s.blocks).filter_map(|b| match b {
        Block::Figure(f) => Some(f.as_ref()),
        _ => None,
    }).collect()
}

fn loaded_catalogue() -> Option<Catalogue> {
    let defs = common::shared_dir("kafka-defs/4.0")?;
    Some(Catalogue::builtin().with_loaded(load_definitions(&defs).unwrap()))
}

#[test]
fn seed_api_pages_have_the_seeds_figures_grids_and_trees() {
    let Some(seeds) = common::shared_dir("seeds") else { return };
    let Some(cat) = loaded_catalogue() else { return };
    for case in CASES {
        let seed = seed_page(&seeds, case.page_prefix);
        assert!(seed.starts_with(case.api), "{} is the {} page", case.page_prefix, case.api);
        // The seeds show release 4.0, where v0 is the only version.
        let docs = ApiDocs::new(&cat, Some("4.0"), case.key).unwrap();
        let page = docs.page(Some(0));
        let html = render(&page, PageFormat::Html);
        let api = case.api;

        // Figures: every fact of the seed's list, in its order and words.
        let facts = html_facts(&html);
        assert_eq!(facts, seed_facts(&seed), "{api}: facts");
        assert_eq!(facts[0], ("API key".into(), case.key.to_string()));
        assert!(facts.contains(&("Flexible versions".into(), "0+".into())));
        assert!(facts.contains(&("Headers".into(), "req v2, resp v1".into())));
        assert!(facts.contains(&("Request size".into(), format!("{} bytes", case.sizes[0]))));
        assert!(facts.contains(&("Response size".into(), format!("{} bytes", case.sizes[1]))));

        // Legend: the region labels, in the seed's order.
        let legend: Vec<String> = between(&html, "<ul class=legend>", "</ul>")[0].split("</li>").filter(|s| !s.is_empty()).map(text_of).collect();
        let labels: Vec<&str> = Region::ALL.iter().map(Region::label).collect();
        assert_eq!(legend, labels, "{api}: legend");
        assert_eq!(legend.concat(), seed_legend(&seed), "{api}: legend as the seed shows it");

        // The version switcher names every version.
        let versions = text_of(between(&html, "<nav class=versions>", "</nav>")[0]);
        assert_eq!(versions, "versions: v0", "{api}");

        let parts = seed_parts(&seed);
        assert_eq!(parts.len(), 2, "{api}: request and response in the seed");
        let html_figures = between(&html, "<figure id=", "</figure>");
        assert_eq!(html_figures.len(), 2, "{api}: request and response figures");
        for (i, (seed_part, fig_html)) in parts.iter().zip(&html_figures).enumerate() {
            let figure = figures(&page)[i];
            let what = format!("{api} figure {i}");
            assert!(figure.error.is_none(), "{what}: {:?}", figure.error);
            assert_eq!(figure.bytes.len(), case.sizes[i], "{what}: size");
            assert_eq!(text_of(between(fig_html, "<figcaption>", "</figcaption>")[0]), seed_part.caption, "{what}: caption");
            check_grid(fig_html, figure, seed_part, &what);
            check_tree(fig_html, figure, &parse_collapsed(&seed_part.tree), &what);
        }

        // Schemas: the upstream definition as the seeds show it (licence comment left out).
        let sources: Vec<String> = between(&html, "<pre class=src>", "</pre>").into_iter().map(|s| collapse(&text_of(s))).collect();
        let seed_schemas: Vec<&str> = parts.iter().map(|p| p.schema.as_str()).collect();
        assert_eq!(sources, seed_schemas, "{api}: schemas");

        // The text form reads like the seed: the same facts, captions and trees.
        let text = render(&page, PageFormat::Text);
        for (k, v) in &facts {
            assert!(text.contains(&format!("- {k}: {v}\n")), "{api} text: {k}");
        }
        for (seed_part, figure) in parts.iter().zip(figures(&page)) {
            assert!(text.contains(&format!("{}\n", seed_part.caption)), "{api} text: caption");
            assert!(text.contains(&format!("{}\n", seed_part.layout_title)), "{api} text: grid title");
            assert!(text.contains(&render_tree(&figure.root, TreeOptions::default())), "{api} text: tree");
        }
    }
}

/// One cell per byte, in order, with its hex and the deepest node covering it;
/// the seed's column headers and row offsets.
fn check_grid(fig_html: &str, figure: &Figure, seed: &common::seed::SeedPart, what: &str) {
    let grid = between(fig_html, "<table class=grid>", "</table>")[0];
    assert_eq!(text_of(between(grid, "<caption>", "</caption>")[0]), seed.layout_title, "{what}: grid title");
    let header_row = between(grid, "<tr>", "</tr>")[0];
    let columns: Vec<String> = between(header_row, "<th>", "</th>").into_iter().filter(|s| !s.is_empty()).map(String::from).collect();
    assert_eq!(columns, seed.columns, "{what}: column headers");
    let rows: Vec<String> = between(grid, "<tr><th>", "</th>").into_iter().filter(|s| !s.is_empty()).map(String::from).collect();
    assert_eq!(rows, seed.rows, "{what}: row offsets");
    let cells = between(grid, "<td ", "</td>");
    assert_eq!(cells.len(), figure.bytes.len(), "{what}: one cell per byte");
    let mut nodes: Vec<&Node> = Vec::new();
    figure.root.walk(&mut |n, _| nodes.push(n));
    for (at, cell) in cells.iter().enumerate() {
        let (attrs, hex) = cell.split_once('>').unwrap();
        assert!(attrs.contains(&format!("data-offset={at} ")), "{what}: cell {at} is byte {at}: {attrs}");
        assert_eq!(hex, format!("{:02x}", figure.bytes[at]), "{what}: cell {at}");
        let n: usize = attrs.split("data-n=").nth(1).unwrap().parse().unwrap();
        let node = nodes[n];
        assert!(node.offset <= at && at < node.end() && node.children.iter().all(|c| !(c.offset <= at && at < c.end())), "{what}: cell {at} links to the deepest node");
    }
}

/// The tree lines equal the seed's: names, types, values, offsets, lengths and
/// nesting; with the definitions loaded, the body fields' descriptions too.
fn check_tree(fig_html: &str, figure: &Figure, seed: &[Line], what: &str) {
    let lines: Vec<String> = between(fig_html, " class=n ", "</div>").iter().map(|l| text_of(l.split_once('>').unwrap().1)).collect();
    let mine = parse_collapsed(&collapse(&lines.join("\n")));
    assert_eq!(mine.len(), seed.len(), "{what}: node count");
    for (m, t) in mine.iter().zip(seed) {
        assert_eq!((m.rails, &m.label, m.offset, m.len), (t.rails, &t.label, t.offset, t.len), "{what}");
    }
    let mut nodes = Vec::new();
    figure.root.walk(&mut |n, _| nodes.push(n));
    let mut described = 0;
    for ((n, m), t) in nodes.iter().zip(&mine).zip(seed) {
        if matches!(n.role, Role::Field { .. }) && n.key().is_none() {
            assert_eq!(as_shown(n.doc.as_deref().unwrap_or("")), t.desc, "{what}: description of {}", n.name);
            assert_eq!(m.desc, t.desc, "{what}: shown description of {}", n.name);
            described += 1;
        }
    }
    assert!(described >= 3, "{what}: only {described} descriptions compared");
}

#[test]
fn every_version_has_a_page_linked_from_its_switcher() {
    let cat = Catalogue::builtin();
    let key = cat.resolve_api("Produce").unwrap();
    let docs = ApiDocs::new(cat, None, key).unwrap();
    let default = docs.default_version.unwrap();
    for &v in &docs.request_versions {
        let page = docs.page(Some(v));
        let Some(Block::Versions(links)) = page.blocks.iter().find(|b| matches!(b, Block::Versions(_))) else { panic!("no switcher") };
        assert_eq!(links.iter().map(|l| l.version).collect::<Vec<_>>(), docs.request_versions);
        assert_eq!(links.iter().filter(|l| l.current).map(|l| l.version).collect::<Vec<_>>(), vec![v]);
        assert!(links.iter().any(|l| l.default && l.version == default && l.path == "api/Produce"));
        assert_eq!(page.path, docs.path(v));
        assert!(figures(&page).iter().all(|f| f.error.is_none() && !f.bytes.is_empty()), "Produce v{v}");
    }
}

#[test]
fn every_page_encodes_and_decodes_its_examples() {
    let cat = Catalogue::builtin();
    let mut pages = 0;
    kwire::docs::site::for_each_page(cat, None, &mut |page| {
        pages += 1;
        let retired = page.sections.is_empty() && page.path.starts_with("api/");
        for f in figures(&page) {
            assert!(f.error.is_none(), "{}: {}: {:?}", page.path, f.caption, f.error);
            assert!(!f.bytes.is_empty() || retired, "{}: {} has no bytes", page.path, f.caption);
            assert_eq!(f.root.len, f.bytes.len(), "{}: {} tree covers every byte", page.path, f.caption);
        }
        Ok(())
    })
    .unwrap();
    assert!(pages > 400, "only {pages} pages");
}

/// The written site: every link resolves to a written page, nothing is loaded
/// from elsewhere, and every grid has one cell per byte.
#[test]
fn the_site_links_only_to_its_own_pages() {
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("docs-site");
    let _ = std::fs::remove_dir_all(&out);
    let stats = kwire::docs::site::write_site(Catalogue::builtin(), None, &out, PageFormat::Html).unwrap();
    let mut files = Vec::new();
    for dir in [out.clone(), out.join("api"), out.join("records")] {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            if e.path().extension().is_some_and(|x| x == "html") {
                files.push(e.path());
            }
        }
    }
    assert_eq!(files.len(), stats.pages);
    for file in &files {
        let html = std::fs::read_to_string(file).unwrap();
        assert!(!html.contains(" src=") && !html.contains("href=\"http") && !html.contains("@import"), "{}: loads something", file.display());
        for link in between(&html, "href=\"", "\"") {
            let target = file.parent().unwrap().join(link);
            assert!(target.exists(), "{}: broken link {link}", file.display());
        }
        for grid in between(&html, "<table class=grid>", "</table>") {
            let declared: usize = text_of(between(grid, "<caption>", "</caption>")[0]).split(['(', ' ']).nth(3).unwrap().parse().unwrap();
            assert_eq!(between(grid, "<td ", "</td>").len(), declared, "{}: cells", file.display());
        }
    }
}

#[test]
fn page_command_prints_one_page() {
    let kwire = |args: &[&str]| std::process::Command::new(env!("CARGO_BIN_EXE_kwire")).args(args).env_remove("KWIRE_DEFS").output().unwrap();
    let out = kwire(&["page", "WriteShareGroupState", "--version", "0"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("WriteShareGroupState\n===="), "{text}");
    for expected in ["- API key: 85\n", "- Headers: req v2, resp v1\n", "- Request size: 78 bytes\n", "WriteShareGroupStateRequest v0, request header v2, 78 bytes on the wire\n", "byte layout (78 bytes, 16 bytes per row)\n", "object tree\n", "+-- tagged_fields uvarint = 0 [0x004d, 1B]"] {
        assert!(text.contains(expected), "missing {expected:?}");
    }
    let html = String::from_utf8(kwire(&["page", "86", "--format", "html"]).stdout).unwrap();
    assert!(html.starts_with("<!doctype html>") && html.contains("<title>DeleteShareGroupState · kwire</title>"));
    let md = String::from_utf8(kwire(&["page", "encoding", "--format", "markdown"]).stdout).unwrap();
    assert!(md.contains("# Encoding\n") && md.contains("| varint | zigzag | bytes |"));
    let unknown = kwire(&["page", "NoSuchThing"]);
    assert_eq!(unknown.status.code(), Some(1));
    let bad_version = kwire(&["page", "Produce", "--version", "99"]);
    assert_eq!(bad_version.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad_version.stderr).contains("valid: "));
}

/// A definitions folder written for one test, under the target's temp dir.
fn defs_folder(name: &str, files: &[(&str, String)]) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("docs-defs-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (file, text) in files {
        std::fs::write(dir.join(file), text).unwrap();
    }
    dir
}

fn api_def(key: i16, name: &str, kind: &str, versions: &str) -> String {
    let name = serde_json::to_string(name).unwrap();
    format!(
        r#"{{ "apiKey": {key}, "type": "{kind}", "name": {name}, "validVersions": "{versions}", "flexibleVersions": "0+",
            "fields": [ {{ "name": "Knob", "type": "int32", "versions": "0+" }}, {{ "name": "Label", "type": "string", "versions": "100+" }} ] }}"#
    )
}

fn data_def(name: &str, versions: &str) -> String {
    let name = serde_json::to_string(name).unwrap();
    format!(r#"{{ "type": "data", "name": {name}, "validVersions": "{versions}", "flexibleVersions": "none", "fields": [ {{ "name": "Knob", "type": "int32", "versions": "0+" }} ] }}"#)
}

/// Every HTML file of a written site, and that each of its links resolves.
fn site_files_with_resolving_links(out: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for dir in [out.to_path_buf(), out.join("api"), out.join("records")] {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            if e.path().extension().is_some_and(|x| x == "html") {
                files.push(e.path());
            }
        }
    }
    for file in &files {
        let html = std::fs::read_to_string(file).unwrap();
        for link in between(&html, "href=\"", "\"") {
            assert!(file.parent().unwrap().join(link).exists(), "{}: broken link {link}", file.display());
        }
    }
    files
}

/// Definitions claiming versions 0-32767 (kwire once wrote 29 GB for them):
/// at most 64 pages each, small pages, switchers with a window of versions,
/// and the index saying which versions have no page.
#[test]
fn many_versions_make_a_bounded_site() {
    use kwire::docs::{MAX_VERSION_PAGES, SWITCHER_NEIGHBOURS};
    let defs = defs_folder(
        "many",
        &[
            ("BigRequest.json", api_def(991, "BigRequest", "request", "0-32767")),
            ("BigResponse.json", api_def(991, "BigResponse", "response", "0-32767")),
            ("BigRecord.json", data_def("BigRecord", "0-32767")),
        ],
    );
    let cat = Catalogue::builtin().with_loaded(load_definitions(&defs).unwrap());
    let docs = ApiDocs::new(&cat, None, 991).unwrap();
    assert_eq!(docs.request_versions.len(), 32768);
    assert_eq!(docs.page_versions.len(), MAX_VERSION_PAGES);
    assert_eq!((docs.page_versions[0], docs.page_versions.last().copied()), (0, Some(32767)));
    for current in [0, 1, 5000, 32704, 32705, 32740, 32767] {
        let page = docs.page(Some(current));
        let Some(Block::Versions(links)) = page.blocks.iter().find(|b| matches!(b, Block::Versions(_))) else { panic!("no switcher") };
        assert!(links.len() <= 2 * SWITCHER_NEIGHBOURS + 4, "v{current}: {} links", links.len());
        assert_eq!(links.iter().filter(|l| l.current).map(|l| l.version).collect::<Vec<_>>(), vec![current]);
        // Links reach pages that exist, and count every version they leave out.
        assert!(links.iter().all(|l| l.current || docs.page_versions.contains(&l.version)), "v{current}");
        assert_eq!(links.iter().map(|l| l.skipped_before + 1).sum::<usize>(), 32768, "v{current}");
        let history = page.sections.iter().find(|s| s.heading == "Request history").unwrap();
        let Block::Changes(changes) = &history.blocks[0] else { panic!("no history") };
        let labels: Vec<&str> = changes.iter().map(|(label, _)| label.as_str()).collect();
        assert_eq!(labels, ["v0", "v1-v99", "v100", "v101-v32767"]);
        for format in [PageFormat::Html, PageFormat::Markdown, PageFormat::Text] {
            let text = render(&page, format);
            assert!(text.len() < 40 << 10, "v{current} {format:?}: {} bytes", text.len());
        }
    }
    let text = render(&docs.page(Some(32740)), PageFormat::Text);
    assert!(text.contains("versions: v0 … 32734 more … v32735 "), "{text}");

    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("docs-site-many-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let stats = kwire::docs::site::write_site(&cat, None, &out, PageFormat::Html).unwrap();
    let files = site_files_with_resolving_links(&out);
    assert_eq!(files.len(), stats.pages);
    let named = |dir: &str, stem: &str| files.iter().filter(|f| f.parent().unwrap().ends_with(dir) && f.file_stem().unwrap().to_str().unwrap().split('-').next() == Some(stem)).count();
    assert_eq!(named("api", "Big"), MAX_VERSION_PAGES);
    assert_eq!(named("records", "BigRecord"), MAX_VERSION_PAGES);
    assert!(stats.bytes < 64 << 20, "{} bytes", stats.bytes);
    let index = text_of(&std::fs::read_to_string(out.join("index.html")).unwrap());
    assert!(index.contains("Versions without pages"), "{index}");
    assert!(index.contains("Big327041-32704") && index.contains("BigRecord327041-32704"), "the index names what was left out");
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_dir_all(&defs);
}

/// Names that differ only in punctuation or case, and names of punctuation
/// only, each get a page file of their own, never an empty name.
#[test]
fn page_file_names_are_unique_and_never_empty() {
    let records = ["Evil1", "Evil<1>", "Evil-1", "<>", "!!!"];
    let apis: [(i16, &str); 5] = [(992, "Dup<1>"), (993, "Dup1"), (994, "Foo"), (995, "foo"), (996, "<>")];
    let mut files: Vec<(String, String)> = records.iter().enumerate().map(|(i, n)| (format!("R{i}.json"), data_def(n, "0-1"))).collect();
    for (key, name) in apis {
        for kind in ["Request", "Response"] {
            files.push((format!("{key}{kind}.json"), api_def(key, &format!("{name}{kind}"), &kind.to_lowercase(), "0-1")));
        }
    }
    let files: Vec<(&str, String)> = files.iter().map(|(f, t)| (f.as_str(), t.clone())).collect();
    let defs = defs_folder("names", &files);
    let cat = Catalogue::builtin().with_loaded(load_definitions(&defs).unwrap());
    let record_paths: Vec<String> = records.iter().map(|n| kwire::docs::record_page::RecordDocs::new(&cat, None, n).unwrap().path(1)).collect();
    // Ranked: a name that is its own stem first, then by name ('-' < '<', '!' < '<').
    assert_eq!(record_paths, ["records/Evil1", "records/Evil1-3", "records/Evil1-2", "records/_-2", "records/_"]);
    let api_paths: Vec<String> = apis.iter().map(|(k, _)| ApiDocs::new(&cat, None, *k).unwrap().path(0)).collect();
    assert_eq!(api_paths, ["api/Dup1-2-v0", "api/Dup1-v0", "api/Foo-v0", "api/foo-2-v0", "api/_-v0"]);

    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("docs-site-names-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let stats = kwire::docs::site::write_site(&cat, None, &out, PageFormat::Html).unwrap();
    let written = site_files_with_resolving_links(&out);
    assert_eq!(written.len(), stats.pages, "no page overwrote another");
    let mut lower: Vec<String> = written.iter().map(|f| f.to_string_lossy().to_lowercase()).collect();
    lower.sort();
    lower.dedup();
    assert_eq!(lower.len(), written.len(), "file names differ in more than case");
    assert!(written.iter().all(|f| !f.file_stem().unwrap().is_empty() && !f.file_name().unwrap().to_string_lossy().starts_with('.')));
    // Each page is the page of its own definition.
    for (name, path) in records.iter().zip(&record_paths) {
        let html = std::fs::read_to_string(out.join(format!("{path}.html"))).unwrap();
        assert!(text_of(&html).contains(&format!("{name} · kwire")), "{path} is {name}'s page");
    }
    for ((_, name), path) in apis.iter().zip(&api_paths) {
        let default = path.trim_end_matches("-v0");
        let html = std::fs::read_to_string(out.join(format!("{default}.html"))).unwrap();
        assert!(text_of(&html).contains(&format!("{name} · kwire")), "{default} is {name}'s page");
    }
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_dir_all(&defs);
}
