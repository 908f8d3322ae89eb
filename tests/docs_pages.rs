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
