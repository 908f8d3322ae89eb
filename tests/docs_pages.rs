//! The documentation pages against the seed pages (../shared/seeds): with the
//! 4.0 definitions loaded, the WriteShareGroupState and DeleteShareGroupState
//! v0 pages carry the seeds' figures, legend, captions, byte grids, object
//! trees and schemas. The HTML is read back as a browser would see its text.

mod common;

use common::seed::{
    as_shown, collapse, parse_collapsed, seed_facts, seed_legend, seed_page, seed_parts, Line,
};
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
    Case {
        page_prefix: "000_",
        api: "WriteShareGroupState",
        key: 85,
        sizes: [78, 37],
    },
    Case {
        page_prefix: "001_",
        api: "DeleteShareGroupState",
        key: 86,
        sizes: [41, 37],
    },
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
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// The parts of `html` between each `open` and the next `close`.
fn between<'a>(html: &'a str, open: &str, close: &str) -> Vec<&'a str> {
    html.split(open)
        .skip(1)
        .map(|s| s.split(close).next().unwrap_or(s))
        .collect()
}

/// The labels of the regions that colour a grid cell of `html`, in legend order.
fn legend_of_cells(html: &str) -> Vec<String> {
    Region::ALL
        .iter()
        .enumerate()
        .filter(|(i, _)| html.contains(&format!("<td class=g{i} ")))
        .map(|(_, r)| r.label().to_string())
        .collect()
}

/// The ids of the elements of `html` (`id=x` or `id="x"`).
fn ids_of(html: &str) -> std::collections::HashSet<String> {
    html.split(" id=")
        .skip(1)
        .map(|rest| match rest.strip_prefix('"') {
            Some(quoted) => quoted.split('"').next().unwrap_or(""),
            None => rest.split([' ', '>']).next().unwrap_or(""),
        })
        .map(|id| id.replace("&amp;", "&"))
        .collect()
}

/// Every link of the HTML files under `out` resolves: to a written file
/// and, with `#anchor`, to an element of that file with that id.
fn check_links(out: &std::path::Path, files: &[std::path::PathBuf]) -> usize {
    let mut ids: std::collections::HashMap<std::path::PathBuf, std::collections::HashSet<String>> =
        std::collections::HashMap::new();
    let mut ids_in = |file: &std::path::Path| -> std::collections::HashSet<String> {
        let file = file
            .canonicalize()
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        ids.entry(file.clone())
            .or_insert_with(|| ids_of(&std::fs::read_to_string(&file).unwrap()))
            .clone()
    };
    let mut checked = 0;
    for file in files {
        let html = std::fs::read_to_string(file).unwrap();
        let mut links: Vec<String> = between(&html, "href=\"", "\"")
            .into_iter()
            .map(|l| l.replace("&amp;", "&"))
            .collect();
        // The search page's index holds links too, as JSON strings.
        if let Some(json) = between(
            &html,
            "<script type=application/json id=search-index>",
            "</script>",
        )
        .first()
        {
            let rows: Vec<[String; 3]> = serde_json::from_str(json).unwrap();
            links.extend(rows.into_iter().map(|[_, _, link]| link));
        }
        for link in links {
            let (path, anchor) = link
                .split_once('#')
                .map_or((link.as_str(), None), |(p, a)| (p, Some(a)));
            let target = if path.is_empty() {
                file.clone()
            } else {
                file.parent().unwrap().join(path)
            };
            assert!(
                target.exists() && target.starts_with(out),
                "{}: broken link {link}",
                file.display()
            );
            if let Some(anchor) = anchor {
                assert!(
                    ids_in(&target).contains(anchor),
                    "{}: {link} has no element with id {anchor}",
                    file.display()
                );
            }
            checked += 1;
        }
    }
    checked
}

fn html_facts(html: &str) -> Vec<(String, String)> {
    let dl = between(html, "<dl class=facts>", "</dl>")[0];
    between(dl, "<dt>", "</dd>")
        .iter()
        .map(|item| {
            let (k, v) = item.split_once("</dt><dd>").unwrap();
            (text_of(k), text_of(v))
        })
        .collect()
}

fn figures(page: &Page) -> Vec<&Figure> {
    page.sections
        .iter()
        .flat_map(|s| &s.blocks)
        .filter_map(|b| match b {
            Block::Figure(f) => Some(f.as_ref()),
            _ => None,
        })
        .collect()
}

fn loaded_catalogue() -> Option<Catalogue> {
    let defs = common::shared_dir("kafka-defs/4.0")?;
    Some(Catalogue::builtin().with_loaded(load_definitions(&defs).unwrap()))
}

#[test]
fn seed_api_pages_have_the_seeds_figures_grids_and_trees() {
    let Some(seeds) = common::shared_dir("seeds") else {
        return;
    };
    let Some(cat) = loaded_catalogue() else {
        return;
    };
    for case in CASES {
        let seed = seed_page(&seeds, case.page_prefix);
        assert!(
            seed.starts_with(case.api),
            "{} is the {} page",
            case.page_prefix,
            case.api
        );
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

        // Legend: the seed's labels in the seed's order, but only the regions
        // the page's grids use (the seeds list RecordBatch and Record on pages without records).
        let legend: Vec<String> = between(&html, "<ul class=legend>", "</ul>")[0]
            .split("</li>")
            .filter(|s| !s.is_empty())
            .map(text_of)
            .collect();
        let labels: Vec<&str> = Region::ALL.iter().map(Region::label).collect();
        assert_eq!(
            labels.concat(),
            seed_legend(&seed),
            "{api}: the seed's legend is every region, in this order"
        );
        assert_eq!(legend, legend_of_cells(&html), "{api}: legend");
        assert!(
            !legend.contains(&"RecordBatch".to_string())
                && legend.contains(&"request body".to_string()),
            "{api}: {legend:?}"
        );

        // The version switcher names every version.
        let versions = text_of(between(&html, "<nav class=versions>", "</nav>")[0]);
        assert_eq!(versions, "versions: v0", "{api}");

        let parts = seed_parts(&seed);
        assert_eq!(parts.len(), 2, "{api}: request and response in the seed");
        // Each part shows the smallest instance (the seeds') and one with realistic values.
        let realistic =
            |caption: &str| caption.contains("; with values a client or broker would send");
        let all = figures(&page);
        assert_eq!(all.len(), 4, "{api}: two instances of request and response");
        for f in all.iter().filter(|f| realistic(&f.caption)) {
            assert!(f.error.is_none(), "{api}: {:?}", f.error);
        }
        let smallest: Vec<&Figure> = all.into_iter().filter(|f| !realistic(&f.caption)).collect();
        let html_figures: Vec<&str> = between(&html, "<figure id=", "</figure>")
            .into_iter()
            .filter(|f| !realistic(f))
            .collect();
        assert_eq!(html_figures.len(), 2, "{api}: request and response figures");
        for (i, (seed_part, fig_html)) in parts.iter().zip(&html_figures).enumerate() {
            let figure = smallest[i];
            let what = format!("{api} figure {i}");
            assert!(figure.error.is_none(), "{what}: {:?}", figure.error);
            assert_eq!(figure.bytes.len(), case.sizes[i], "{what}: size");
            assert_eq!(
                text_of(between(fig_html, "<figcaption>", "</figcaption>")[0]),
                seed_part.caption,
                "{what}: caption"
            );
            check_grid(fig_html, figure, seed_part, &what);
            check_tree(fig_html, figure, &parse_collapsed(&seed_part.tree), &what);
        }

        // Schemas: the upstream definition as the seeds show it (licence comment left out).
        let sources: Vec<String> = between(&html, "<pre class=src>", "</pre>")
            .into_iter()
            .map(|s| collapse(&text_of(s)))
            .collect();
        let seed_schemas: Vec<&str> = parts.iter().map(|p| p.schema.as_str()).collect();
        assert_eq!(sources, seed_schemas, "{api}: schemas");

        // The text form reads like the seed: the same facts, captions and trees.
        let text = render(&page, PageFormat::Text);
        for (k, v) in &facts {
            assert!(text.contains(&format!("- {k}: {v}\n")), "{api} text: {k}");
        }
        for (seed_part, figure) in parts.iter().zip(figures(&page)) {
            assert!(
                text.contains(&format!("{}\n", seed_part.caption)),
                "{api} text: caption"
            );
            assert!(
                text.contains(&format!("{}\n", seed_part.layout_title)),
                "{api} text: grid title"
            );
            assert!(
                text.contains(&render_tree(&figure.root, TreeOptions::default())),
                "{api} text: tree"
            );
        }
    }
}

/// One cell per byte, in order, with its hex and the deepest node covering it;
/// the seed's column headers and row offsets.
fn check_grid(fig_html: &str, figure: &Figure, seed: &common::seed::SeedPart, what: &str) {
    let grid = between(fig_html, "<table class=grid>", "</table>")[0];
    assert_eq!(
        text_of(between(grid, "<caption>", "</caption>")[0]),
        seed.layout_title,
        "{what}: grid title"
    );
    let header_row = between(grid, "<tr>", "</tr>")[0];
    let columns: Vec<String> = between(header_row, "<th>", "</th>")
        .into_iter()
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    assert_eq!(columns, seed.columns, "{what}: column headers");
    let rows: Vec<String> = between(grid, "<tr><th>", "</th>")
        .into_iter()
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    assert_eq!(rows, seed.rows, "{what}: row offsets");
    let cells = between(grid, "<td ", "</td>");
    assert_eq!(cells.len(), figure.bytes.len(), "{what}: one cell per byte");
    let mut nodes: Vec<&Node> = Vec::new();
    figure.root.walk(&mut |n, _| nodes.push(n));
    for (at, cell) in cells.iter().enumerate() {
        let (attrs, hex) = cell.split_once('>').unwrap();
        assert!(
            attrs.contains(&format!("data-offset={at} ")),
            "{what}: cell {at} is byte {at}: {attrs}"
        );
        assert_eq!(
            hex,
            format!("{:02x}", figure.bytes[at]),
            "{what}: cell {at}"
        );
        let n: usize = attrs.split("data-n=").nth(1).unwrap().parse().unwrap();
        let node = nodes[n];
        assert!(
            node.offset <= at
                && at < node.end()
                && node
                    .children
                    .iter()
                    .all(|c| !(c.offset <= at && at < c.end())),
            "{what}: cell {at} links to the deepest node"
        );
    }
}

/// The tree lines equal the seed's: names, types, values, offsets, lengths and
/// nesting; with the definitions loaded, the body fields' descriptions too.
fn check_tree(fig_html: &str, figure: &Figure, seed: &[Line], what: &str) {
    let lines: Vec<String> = between(fig_html, " class=n ", "</div>")
        .iter()
        .map(|l| text_of(l.split_once('>').unwrap().1))
        .collect();
    let mine = parse_collapsed(&collapse(&lines.join("\n")));
    assert_eq!(mine.len(), seed.len(), "{what}: node count");
    for (m, t) in mine.iter().zip(seed) {
        assert_eq!(
            (m.rails, &m.label, m.offset, m.len),
            (t.rails, &t.label, t.offset, t.len),
            "{what}"
        );
    }
    let mut nodes = Vec::new();
    figure.root.walk(&mut |n, _| nodes.push(n));
    let mut described = 0;
    for ((n, m), t) in nodes.iter().zip(&mine).zip(seed) {
        if matches!(n.role, Role::Field { .. }) && n.key().is_none() {
            assert_eq!(
                as_shown(n.doc.as_deref().unwrap_or("")),
                t.desc,
                "{what}: description of {}",
                n.name
            );
            assert_eq!(m.desc, t.desc, "{what}: shown description of {}", n.name);
            described += 1;
        }
    }
    assert!(
        described >= 3,
        "{what}: only {described} descriptions compared"
    );
}

#[test]
fn every_version_has_a_page_linked_from_its_switcher() {
    let cat = Catalogue::builtin();
    let key = cat.resolve_api("Produce").unwrap();
    let docs = ApiDocs::new(cat, None, key).unwrap();
    let default = docs.default_version.unwrap();
    for &v in &docs.request_versions {
        let page = docs.page(Some(v));
        let Some(Block::Versions(links)) =
            page.blocks.iter().find(|b| matches!(b, Block::Versions(_)))
        else {
            panic!("no switcher")
        };
        assert_eq!(
            links.iter().map(|l| l.version).collect::<Vec<_>>(),
            docs.request_versions
        );
        assert_eq!(
            links
                .iter()
                .filter(|l| l.current)
                .map(|l| l.version)
                .collect::<Vec<_>>(),
            vec![v]
        );
        assert!(links
            .iter()
            .any(|l| l.default && l.version == default && l.path == "api/Produce"));
        assert_eq!(page.path, docs.path(v));
        assert!(
            figures(&page)
                .iter()
                .all(|f| f.error.is_none() && !f.bytes.is_empty()),
            "Produce v{v}"
        );
    }
}

#[test]
fn every_page_encodes_and_decodes_its_examples() {
    let cat = Catalogue::builtin();
    let mut pages = 0;
    kwire::render::page::site::for_each_page(cat, None, &mut |page| {
        pages += 1;
        let retired = page.sections.is_empty() && page.path.starts_with("api/");
        for f in figures(&page) {
            assert!(
                f.error.is_none(),
                "{}: {}: {:?}",
                page.path,
                f.caption,
                f.error
            );
            assert!(
                !f.bytes.is_empty() || retired,
                "{}: {} has no bytes",
                page.path,
                f.caption
            );
            assert_eq!(
                f.root.len,
                f.bytes.len(),
                "{}: {} tree covers every byte",
                page.path,
                f.caption
            );
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
    let stats =
        kwire::render::page::site::write_site(Catalogue::builtin(), None, &out, PageFormat::Html)
            .unwrap();
    let mut files = Vec::new();
    for dir in [out.clone(), out.join("api"), out.join("records")] {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            if e.path().extension().is_some_and(|x| x == "html") {
                files.push(e.path());
            }
        }
    }
    assert_eq!(files.len(), stats.pages);
    let links = check_links(&out, &files);
    assert!(links > 20_000, "only {links} links");
    for file in &files {
        let html = std::fs::read_to_string(file).unwrap();
        assert!(
            !html.contains(" src=")
                && !html.contains("href=\"http")
                && !html.contains("@import")
                && !html.contains("fetch("),
            "{}: loads something",
            file.display()
        );
        for grid in between(&html, "<table class=grid>", "</table>") {
            let declared: usize = text_of(between(grid, "<caption>", "</caption>")[0])
                .split(['(', ' '])
                .nth(3)
                .unwrap()
                .parse()
                .unwrap();
            assert_eq!(
                between(grid, "<td ", "</td>").len(),
                declared,
                "{}: cells",
                file.display()
            );
        }
    }
}

#[test]
fn page_command_prints_one_page() {
    let kwire = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_kwire"))
            .args(args)
            .env_remove("KWIRE_DEFS")
            .output()
            .unwrap()
    };
    let out = kwire(&["page", "WriteShareGroupState", "--version", "0"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("WriteShareGroupState\n===="), "{text}");
    for expected in [
        "- API key: 85\n",
        "- Headers: req v2, resp v1\n",
        "- Request size: 78 bytes\n",
        "WriteShareGroupStateRequest v0, request header v2, 78 bytes on the wire\n",
        "byte layout (78 bytes, 16 bytes per row)\n",
        "object tree\n",
        "+-- tagged_fields uvarint = 0 [0x004d, 1B]",
    ] {
        assert!(text.contains(expected), "missing {expected:?}");
    }
    let html = String::from_utf8(kwire(&["page", "86", "--format", "html"]).stdout).unwrap();
    assert!(
        html.starts_with("<!doctype html>")
            && html.contains("<title>DeleteShareGroupState · kwire</title>")
    );
    let md =
        String::from_utf8(kwire(&["page", "encoding", "--format", "markdown"]).stdout).unwrap();
    assert!(md.contains("# Encoding\n") && md.contains("| varint | zigzag | bytes |"));
    let unknown = kwire(&["page", "NoSuchThing"]);
    assert_eq!(unknown.status.code(), Some(1));
    let bad_version = kwire(&["page", "Produce", "--version", "99"]);
    assert_eq!(bad_version.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad_version.stderr).contains("valid: "));
}

/// A definitions folder written for one test, under the target's temp dir.
fn defs_folder(name: &str, files: &[(&str, String)]) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("docs-defs-{name}-{}", std::process::id()));
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
    format!(
        r#"{{ "type": "data", "name": {name}, "validVersions": "{versions}", "flexibleVersions": "none", "fields": [ {{ "name": "Knob", "type": "int32", "versions": "0+" }} ] }}"#
    )
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
    check_links(out, &files);
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
            (
                "BigRequest.json",
                api_def(991, "BigRequest", "request", "0-32767"),
            ),
            (
                "BigResponse.json",
                api_def(991, "BigResponse", "response", "0-32767"),
            ),
            ("BigRecord.json", data_def("BigRecord", "0-32767")),
        ],
    );
    let cat = Catalogue::builtin().with_loaded(load_definitions(&defs).unwrap());
    let docs = ApiDocs::new(&cat, None, 991).unwrap();
    assert_eq!(docs.request_versions.len(), 32768);
    assert_eq!(docs.page_versions.len(), MAX_VERSION_PAGES);
    assert_eq!(
        (docs.page_versions[0], docs.page_versions.last().copied()),
        (0, Some(32767))
    );
    for current in [0, 1, 5000, 32704, 32705, 32740, 32767] {
        let page = docs.page(Some(current));
        let Some(Block::Versions(links)) =
            page.blocks.iter().find(|b| matches!(b, Block::Versions(_)))
        else {
            panic!("no switcher")
        };
        assert!(
            links.len() <= 2 * SWITCHER_NEIGHBOURS + 4,
            "v{current}: {} links",
            links.len()
        );
        assert_eq!(
            links
                .iter()
                .filter(|l| l.current)
                .map(|l| l.version)
                .collect::<Vec<_>>(),
            vec![current]
        );
        // Links reach pages that exist, and count every version they leave out.
        assert!(
            links
                .iter()
                .all(|l| l.current || docs.page_versions.contains(&l.version)),
            "v{current}"
        );
        assert_eq!(
            links.iter().map(|l| l.skipped_before + 1).sum::<usize>(),
            32768,
            "v{current}"
        );
        let history = page
            .sections
            .iter()
            .find(|s| s.heading == "Request history")
            .unwrap();
        let Block::Changes(changes) = &history.blocks[0] else {
            panic!("no history")
        };
        let labels: Vec<&str> = changes.iter().map(|(label, _)| label.as_str()).collect();
        assert_eq!(labels, ["v0", "v1-v99", "v100", "v101-v32767"]);
        for format in [PageFormat::Html, PageFormat::Markdown, PageFormat::Text] {
            let text = render(&page, format);
            assert!(
                text.len() < 40 << 10,
                "v{current} {format:?}: {} bytes",
                text.len()
            );
        }
    }
    let text = render(&docs.page(Some(32740)), PageFormat::Text);
    assert!(
        text.contains("versions: v0 … 32734 more … v32735 "),
        "{text}"
    );

    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("docs-site-many-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let stats = kwire::render::page::site::write_site(&cat, None, &out, PageFormat::Html).unwrap();
    let files = site_files_with_resolving_links(&out);
    assert_eq!(files.len(), stats.pages);
    let named = |dir: &str, stem: &str| {
        files
            .iter()
            .filter(|f| {
                f.parent().unwrap().ends_with(dir)
                    && f.file_stem().unwrap().to_str().unwrap().split('-').next() == Some(stem)
            })
            .count()
    };
    assert_eq!(named("api", "Big"), MAX_VERSION_PAGES);
    assert_eq!(named("records", "BigRecord"), MAX_VERSION_PAGES);
    assert!(stats.bytes < 64 << 20, "{} bytes", stats.bytes);
    let index = text_of(&std::fs::read_to_string(out.join("index.html")).unwrap());
    assert!(index.contains("Versions without pages"), "{index}");
    assert!(
        index.contains("Big327041-32704") && index.contains("BigRecord327041-32704"),
        "the index names what was left out"
    );
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_dir_all(&defs);
}

/// Names that differ only in punctuation or case, and names of punctuation
/// only, each get a page file of their own, never an empty name.
#[test]
fn page_file_names_are_unique_and_never_empty() {
    let records = ["Evil1", "Evil<1>", "Evil-1", "<>", "!!!"];
    let apis: [(i16, &str); 5] = [
        (992, "Dup<1>"),
        (993, "Dup1"),
        (994, "Foo"),
        (995, "foo"),
        (996, "<>"),
    ];
    let mut files: Vec<(String, String)> = records
        .iter()
        .enumerate()
        .map(|(i, n)| (format!("R{i}.json"), data_def(n, "0-1")))
        .collect();
    for (key, name) in apis {
        for kind in ["Request", "Response"] {
            files.push((
                format!("{key}{kind}.json"),
                api_def(key, &format!("{name}{kind}"), &kind.to_lowercase(), "0-1"),
            ));
        }
    }
    let files: Vec<(&str, String)> = files.iter().map(|(f, t)| (f.as_str(), t.clone())).collect();
    let defs = defs_folder("names", &files);
    let cat = Catalogue::builtin().with_loaded(load_definitions(&defs).unwrap());
    let record_paths: Vec<String> = records
        .iter()
        .map(|n| {
            kwire::docs::record_page::RecordDocs::new(&cat, None, n)
                .unwrap()
                .path(1)
        })
        .collect();
    // Ranked: a name that is its own stem first, then by name ('-' < '<', '!' < '<').
    assert_eq!(
        record_paths,
        [
            "records/Evil1",
            "records/Evil1-3",
            "records/Evil1-2",
            "records/_-2",
            "records/_"
        ]
    );
    let api_paths: Vec<String> = apis
        .iter()
        .map(|(k, _)| ApiDocs::new(&cat, None, *k).unwrap().path(0))
        .collect();
    assert_eq!(
        api_paths,
        [
            "api/Dup1-2-v0",
            "api/Dup1-v0",
            "api/Foo-v0",
            "api/foo-2-v0",
            "api/_-v0"
        ]
    );

    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("docs-site-names-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let stats = kwire::render::page::site::write_site(&cat, None, &out, PageFormat::Html).unwrap();
    let written = site_files_with_resolving_links(&out);
    assert_eq!(written.len(), stats.pages, "no page overwrote another");
    let mut lower: Vec<String> = written
        .iter()
        .map(|f| f.to_string_lossy().to_lowercase())
        .collect();
    lower.sort();
    lower.dedup();
    assert_eq!(
        lower.len(),
        written.len(),
        "file names differ in more than case"
    );
    assert!(written.iter().all(|f| !f.file_stem().unwrap().is_empty()
        && !f.file_name().unwrap().to_string_lossy().starts_with('.')));
    // Each page is the page of its own definition.
    for (name, path) in records.iter().zip(&record_paths) {
        let html = std::fs::read_to_string(out.join(format!("{path}.html"))).unwrap();
        assert!(
            text_of(&html).contains(&format!("{name} · kwire")),
            "{path} is {name}'s page"
        );
    }
    for ((_, name), path) in apis.iter().zip(&api_paths) {
        let default = path.trim_end_matches("-v0");
        let html = std::fs::read_to_string(out.join(format!("{default}.html"))).unwrap();
        assert!(
            text_of(&html).contains(&format!("{name} · kwire")),
            "{default} is {name}'s page"
        );
    }
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_dir_all(&defs);
}

/// A Produce API whose definitions say "3-5", with descriptions: loaded
/// with --defs, it is all the site shows.
fn produce_defs(name: &str) -> std::path::PathBuf {
    let request = r#"{ "apiKey": 0, "type": "request", "listeners": ["broker"], "name": "ProduceRequest", "validVersions": "3-5", "flexibleVersions": "none",
      "fields": [
        { "name": "TransactionalId", "type": "string", "versions": "3+", "nullableVersions": "3+", "about": "Test prose: the transactional id." },
        { "name": "Acks", "type": "int16", "versions": "0+", "about": "Test prose: how many acknowledgements." },
        { "name": "TopicData", "type": "[]TopicProduceData", "versions": "0+", "about": "Test prose: each topic.", "fields": [
          { "name": "Name", "type": "string", "versions": "0+", "entityType": "topicName", "about": "Test prose: the topic name." },
          { "name": "PartitionData", "type": "[]PartitionProduceData", "versions": "0+", "about": "Test prose: each partition.", "fields": [
            { "name": "Index", "type": "int32", "versions": "0+", "about": "Test prose: the partition index." },
            { "name": "Records", "type": "records", "versions": "0+", "nullableVersions": "0+", "about": "Test prose: the record data." } ] } ] } ] }"#;
    let response = r#"{ "apiKey": 0, "type": "response", "name": "ProduceResponse", "validVersions": "3-5", "flexibleVersions": "none",
      "fields": [ { "name": "ThrottleTimeMs", "type": "int32", "versions": "1+", "about": "Test prose: the throttle time." } ] }"#;
    defs_folder(
        name,
        &[
            ("ProduceRequest.json", request.to_string()),
            ("ProduceResponse.json", response.to_string()),
        ],
    )
}

fn kwire(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(args)
        .env_remove("KWIRE_DEFS")
        .output()
        .unwrap()
}

fn html_files(out: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for dir in [out.to_path_buf(), out.join("api"), out.join("records")] {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            if e.path().extension().is_some_and(|x| x == "html") {
                files.push(e.path());
            }
        }
    }
    files
}

/// `docs --defs R` shows release R alone: the loaded APIs at the loaded
/// versions, with the loaded descriptions, and nothing from the built-in
/// releases; `--kafka-release` with `--defs` is refused.
#[test]
fn a_defs_site_shows_the_loaded_release_alone() {
    let defs = produce_defs("alone");
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("docs-site-alone-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let run = kwire(&[
        "--defs",
        defs.to_str().unwrap(),
        "docs",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let apis: Vec<String> = std::fs::read_dir(out.join("api"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(
        apis,
        ["Produce-v3.html", "Produce-v4.html", "Produce.html"],
        "only the loaded API at the loaded versions"
    );
    assert!(!out.join("records").exists(), "no built-in record types");
    let produce = std::fs::read_to_string(out.join("api/Produce.html")).unwrap();
    let facts = html_facts(&produce);
    assert!(
        facts.contains(&("Request versions".into(), "3-5".into()))
            && facts.contains(&("Encoded at".into(), "v5".into())),
        "{facts:?}"
    );
    assert_eq!(
        text_of(between(&produce, "<nav class=versions>", "</nav>")[0]),
        "versions: v3v4v5",
        "links to v3, v4 and v5 alone"
    );
    let index = text_of(&std::fs::read_to_string(out.join("index.html")).unwrap());
    assert!(
        index.contains("the definitions loaded with --defs, alone") && !index.contains("Fetch"),
        "{index}"
    );
    // Descriptions in the field table, and no page asks for --defs.
    let table = between(&produce, "<table class=data>", "</table>")
        .into_iter()
        .find(|t| t.contains("<th>description</th>"))
        .expect("a description column");
    assert!(
        text_of(table).contains("Test prose: the record data."),
        "{table}"
    );
    for file in html_files(&out) {
        assert!(
            !std::fs::read_to_string(&file)
                .unwrap()
                .contains("pass --defs"),
            "{} asks for --defs",
            file.display()
        );
    }
    check_links(&out, &html_files(&out));

    let both = kwire(&[
        "--defs",
        defs.to_str().unwrap(),
        "--kafka-release",
        "4.0",
        "docs",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(both.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&both.stderr).contains("give one"),
        "{}",
        String::from_utf8_lossy(&both.stderr)
    );
    let page = kwire(&["--defs", defs.to_str().unwrap(), "page", "Produce"]);
    assert!(String::from_utf8_lossy(&page.stdout).contains("- Request versions: 3-5\n"));
    // Without --defs, a built-in release: its versions only, and pages say how to see descriptions.
    let builtin =
        String::from_utf8(kwire(&["--kafka-release", "4.0", "page", "Produce"]).stdout).unwrap();
    assert!(
        builtin.contains("- Request versions: 3-12\n") && builtin.contains("pass --defs"),
        "{builtin}"
    );
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_dir_all(&defs);
}

/// The same with the real 4.0 definitions, when ../shared has them: Produce
/// is 3-12 and WriteShareGroupState's default is v0, as 4.0 defines them.
#[test]
fn the_4_0_definitions_make_the_4_0_site() {
    let Some(defs) = common::shared_dir("kafka-defs/4.0") else {
        return;
    };
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("docs-site-4.0-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let run = kwire(&[
        "--defs",
        defs.to_str().unwrap(),
        "docs",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let facts = |page: &str| html_facts(&std::fs::read_to_string(out.join(page)).unwrap());
    assert!(facts("api/Produce.html").contains(&("Request versions".into(), "3-12".into())));
    assert!(
        !out.join("api/Produce-v13.html").exists() && !out.join("api/Produce-v0.html").exists()
    );
    assert!(facts("api/WriteShareGroupState.html").contains(&("Encoded at".into(), "v0".into())));
    assert!(!out.join("api/WriteShareGroupState-v1.html").exists());
    let produce = std::fs::read_to_string(out.join("api/Produce.html")).unwrap();
    assert!(produce.contains("<th>description</th>"));
    for file in html_files(&out) {
        assert!(
            !std::fs::read_to_string(&file)
                .unwrap()
                .contains("pass --defs"),
            "{} asks for --defs",
            file.display()
        );
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// Every node of a figure, in pre-order.
fn nodes(root: &Node) -> Vec<&Node> {
    let mut out = Vec::new();
    root.walk(&mut |n, _| out.push(n));
    out
}

fn bytes_text(n: &Node) -> Option<String> {
    match &n.value {
        kwire::decode::Value::Bytes(Some(b)) => Some(String::from_utf8_lossy(b).into_owned()),
        _ => None,
    }
}

/// The records kwire decoded in a figure: (key, value, header keys) of each record.
fn records_in(f: &Figure) -> Vec<(Option<String>, Option<String>, Vec<String>)> {
    nodes(&f.root)
        .into_iter()
        .filter(|n| n.role == Role::Element && n.ty == "Record")
        .map(|r| {
            let child = |name: &str| r.children.iter().find(|c| c.name == name);
            let headers = child("headers").map_or(Vec::new(), |h| {
                h.children
                    .iter()
                    .filter_map(|hd| {
                        hd.children
                            .iter()
                            .find(|c| c.name == "headerKey")
                            .and_then(bytes_text)
                    })
                    .collect()
            });
            (
                child("key").and_then(bytes_text),
                child("value").and_then(bytes_text),
                headers,
            )
        })
        .collect()
}

/// Produce requests and Fetch responses carry two real records (each with a
/// value and a header; a key, then a null key), once uncompressed and once
/// gzip, and kwire decodes them back.
#[test]
fn produce_and_fetch_pages_show_real_records() {
    let cat = Catalogue::builtin();
    let want = vec![
        (
            Some("order-17".to_string()),
            Some("{\"qty\":3}".to_string()),
            vec!["trace".to_string()],
        ),
        (
            None,
            Some("{\"qty\":5}".to_string()),
            vec!["trace".to_string()],
        ),
    ];
    for (api, section) in [("Produce", "Request"), ("Fetch", "Response")] {
        let docs = ApiDocs::new(cat, None, cat.resolve_api(api).unwrap()).unwrap();
        for v in [
            *docs.request_versions.last().unwrap(),
            docs.default_version.unwrap(),
            4,
        ] {
            let page = docs.page(Some(v));
            let part = page.sections.iter().find(|s| s.heading == section).unwrap();
            let mut figs: Vec<&Figure> = part
                .blocks
                .iter()
                .filter_map(|b| {
                    if let Block::Figure(f) = b {
                        Some(f.as_ref())
                    } else {
                        None
                    }
                })
                .collect();
            // The realistic instance comes last, its records uncompressed.
            let realistic = figs.pop().unwrap();
            assert!(realistic
                .caption
                .ends_with("; with values a client or broker would send"));
            assert!(
                realistic.error.is_none(),
                "{api} v{v}: {:?}",
                realistic.error
            );
            assert_eq!(records_in(realistic), want, "{api} v{v} realistic");
            assert_eq!(figs.len(), 2, "{api} v{v}: uncompressed and gzip figures");
            for (f, gzip) in figs.iter().zip([false, true]) {
                assert!(f.error.is_none(), "{api} v{v}: {:?}", f.error);
                assert_eq!(records_in(f), want, "{api} v{v} gzip={gzip}");
                let decompressed = nodes(&f.root).iter().any(|n| n.role == Role::Decompressed);
                assert_eq!(
                    decompressed, gzip,
                    "{api} v{v}: the second figure's records are gzip-compressed"
                );
                let attributes = nodes(&f.root)
                    .into_iter()
                    .find(|n| n.name == "attributes" && n.region == Region::RecordBatch)
                    .unwrap();
                assert_eq!(
                    attributes.value,
                    kwire::decode::Value::Int(i64::from(gzip)),
                    "{api} v{v}"
                );
            }
            assert!(figs[1].caption.contains("gzip"), "{}", figs[1].caption);
            let plain_text = |f: &Figure| f.bytes.windows(8).any(|w| w == b"order-17");
            assert!(
                plain_text(figs[0]) && !plain_text(figs[1]),
                "{api} v{v}: gzip deflates the records rather than storing them"
            );
        }
    }
}

/// The record batch page: RecordBatch v2 uncompressed and gzip, and a legacy
/// message set of magic 0 and 1, each decoded by kwire; a row per field.
#[test]
fn record_batch_page_shows_every_record_format() {
    let cat = Catalogue::builtin();
    let page = kwire::docs::record_batch_page::record_batch_page(cat);
    let figs: Vec<&Figure> = page.figures().collect();
    assert_eq!(figs.len(), 3);
    for f in &figs {
        assert!(
            f.error.is_none() && !f.bytes.is_empty() && f.root.len == f.bytes.len(),
            "{}: {:?}",
            f.caption,
            f.error
        );
    }
    assert_eq!(records_in(figs[0]).len(), 2);
    assert_eq!(records_in(figs[0]), records_in(figs[1]));
    assert!(nodes(&figs[1].root)
        .iter()
        .any(|n| n.role == Role::Decompressed));
    let messages: Vec<(String, String)> = figs[2]
        .root
        .children
        .iter()
        .map(|m| {
            (
                m.name.to_string(),
                m.note
                    .as_ref()
                    .map(|n| n.text())
                    .as_deref()
                    .unwrap_or("")
                    .to_string(),
            )
        })
        .collect();
    assert_eq!(
        messages,
        [
            ("Message[0]".to_string(), "v0".to_string()),
            ("Message[1]".to_string(), "v1".to_string())
        ]
    );
    let html = render(&page, PageFormat::Html);
    let ids = ids_of(&html);
    for (name, _, _) in kwire::decode::records::layout::V2_FIELDS {
        assert!(ids.contains(&format!("batch-{name}")), "no row for {name}");
    }
    for id in [
        "record-key",
        "header-headerKey",
        "message-crc",
        "message-timestamp",
    ] {
        assert!(ids.contains(id), "no row {id}");
    }
    let text = String::from_utf8(kwire(&["page", "record-batch"]).stdout).unwrap();
    assert!(
        text.starts_with("Record batches\n") && text.contains("(text \"order-17\")"),
        "{text}"
    );
}

/// The error code page: a row per code with its name, and an error code on the wire.
#[test]
fn error_code_page_lists_every_code() {
    let cat = Catalogue::builtin();
    let page = kwire::docs::errors_page::errors_page(cat, None);
    let html = render(&page, PageFormat::Html);
    let ids = ids_of(&html);
    for &(code, name) in kwire::protocol::error_codes::ERROR_CODES {
        assert!(ids.contains(&format!("error-{code}")), "no row for {code}");
        assert!(html.contains(&format!("<td>{name}</td>")), "no {name}");
    }
    let fig = page.figures().next().unwrap();
    assert!(fig.error.is_none());
    assert!(nodes(&fig.root).iter().any(|n| n.name == "ErrorCode"
        && n.note.as_ref().map(|n| n.text()).as_deref() == Some("(UNKNOWN_TOPIC_OR_PARTITION)")));
    assert!(String::from_utf8(kwire(&["page", "errors"]).stdout)
        .unwrap()
        .contains("NOT_COORDINATOR"));
}

/// Every type in a field table links to its place on the encoding page (or
/// records to the record batch page), and every field node of a figure to
/// its row of the table; header fields to the encoding page's headers.
#[test]
fn types_link_to_the_encoding_page_and_fields_to_their_rows() {
    let cat = Catalogue::builtin();
    let encoding = ids_of(&render(
        &kwire::docs::encoding_page::encoding_page(cat),
        PageFormat::Html,
    ));
    let record_batch = ids_of(&render(
        &kwire::docs::record_batch_page::record_batch_page(cat),
        PageFormat::Html,
    ));
    let mut pages: Vec<Page> = ["Produce", "Fetch", "WriteShareGroupState", "Metadata"]
        .iter()
        .map(|a| {
            ApiDocs::new(cat, None, cat.resolve_api(a).unwrap())
                .unwrap()
                .page(Some(
                    ApiDocs::new(cat, None, cat.resolve_api(a).unwrap())
                        .unwrap()
                        .default_version
                        .unwrap(),
                ))
        })
        .collect();
    let record = kwire::docs::record_page::RecordDocs::new(cat, None, "PartitionRecord").unwrap();
    pages.push(record.page(record.default_version().unwrap()));
    for page in &pages {
        let html = render(page, PageFormat::Html);
        let ids = ids_of(&html);
        let mut types = 0;
        for table in page
            .sections
            .iter()
            .flat_map(|s| &s.blocks)
            .filter_map(|b| {
                if let Block::Table(t) = b {
                    Some(t)
                } else {
                    None
                }
            })
            .filter(|t| t.head.first().is_some_and(|h| h == "field"))
        {
            assert_eq!(
                table.row_ids.len(),
                table.rows.len(),
                "{}: every row has an anchor",
                page.path
            );
            for (row, id) in table.rows.iter().zip(&table.row_ids) {
                assert!(ids.contains(id.as_ref().unwrap()), "{}: row id", page.path);
                let to = row[1]
                    .link
                    .as_deref()
                    .unwrap_or_else(|| panic!("{}: type {} has no link", page.path, row[1].text));
                let (target, anchor) = to.split_once('#').unwrap_or((to, ""));
                match target {
                    "encoding" => assert!(encoding.contains(anchor), "{}: {to}", page.path),
                    "record-batch" => assert!(
                        anchor.is_empty() || record_batch.contains(anchor),
                        "{}: {to}",
                        page.path
                    ),
                    other => panic!("{}: type links to {other}", page.path),
                }
                types += 1;
            }
        }
        assert!(types >= 3, "{}: {types} types", page.path);
        let mut fields = 0;
        for f in page.figures() {
            for (n, link) in nodes(&f.root).into_iter().zip(&f.links) {
                // Fields of the message; in frames, what is inside record data is not one
                // (record pages are a struct of region Record alone).
                let in_record_data = page.path.starts_with("api/")
                    && matches!(n.region, Region::RecordBatch | Region::Record);
                if !matches!(n.role, Role::Field { .. }) || in_record_data {
                    continue;
                }
                let link = link
                    .as_deref()
                    .unwrap_or_else(|| panic!("{}: field {} has no link", page.path, n.name));
                if n.region == Region::RpcHeader {
                    assert!(
                        link.starts_with("encoding#")
                            && encoding.contains(link.split('#').nth(1).unwrap()),
                        "{}: {link}",
                        page.path
                    );
                } else {
                    assert!(
                        ids.contains(link.trim_start_matches('#')),
                        "{}: {} links to {link}, not a row",
                        page.path,
                        n.name
                    );
                    fields += 1;
                }
            }
        }
        assert!(fields >= 3, "{}: {fields} fields linked", page.path);
        assert!(
            html.contains("<a href=\"#"),
            "{}: tree lines link",
            page.path
        );
    }
}

/// The search page indexes every API, every field of every API at its
/// default version, every record type and the record formats' fields; each
/// entry links to a page and row that exist (checked by `check_links` on the
/// written site in `the_site_links_only_to_its_own_pages`).
#[test]
fn search_indexes_every_api_field_and_record_type() {
    let cat = Catalogue::builtin();
    let mut search = None;
    let mut apis = Vec::new();
    kwire::render::page::site::for_each_page(cat, None, &mut |page| {
        if page.path == kwire::docs::search::PATH {
            search = Some(page);
        }
        Ok(())
    })
    .unwrap();
    let page = search.expect("a search page");
    let Some(Block::Search(entries)) = page.blocks.iter().find(|b| matches!(b, Block::Search(_)))
    else {
        panic!("no index")
    };
    let has = |path: &str| entries.iter().any(|e| e.path == path);
    for key in cat.api_keys() {
        let docs = ApiDocs::new(cat, None, key).unwrap();
        apis.push(docs.name.clone());
        assert!(has(&docs.default_path()), "{}", docs.name);
        let Some(v) = docs.default_version else {
            continue;
        };
        for (kind, prefix) in [
            (kwire::schema::MessageKind::Request, "req-"),
            (kwire::schema::MessageKind::Response, "resp-"),
        ] {
            for (path, _) in
                kwire::schema::diff::fields_at(cat.message(kind, key, v, None).unwrap(), v)
            {
                assert!(
                    has(&format!(
                        "{}#{}",
                        docs.path(v),
                        kwire::docs::anchor(prefix, &path)
                    )),
                    "{} {path}",
                    docs.name
                );
            }
        }
    }
    for name in kwire::docs::record_page::record_names(cat, None) {
        let docs = kwire::docs::record_page::RecordDocs::new(cat, None, &name).unwrap();
        assert!(has(&docs.path(docs.default_version().unwrap())), "{name}");
    }
    assert!(
        has("record-batch#batch-baseOffset")
            && has("record-batch#header-headerKey")
            && has("errors#error-16")
    );
    // The page: the JSON index inline, its script, and nothing that could close the script early.
    let html = render(&page, PageFormat::Html);
    let json = between(
        &html,
        "<script type=application/json id=search-index>",
        "</script>",
    )[0];
    let rows: Vec<[String; 3]> = serde_json::from_str(json).unwrap();
    assert_eq!(rows.len(), entries.len());
    assert!(rows.iter().any(
        |[t, _, l]| t == "Produce request TopicData.PartitionData.Records"
            && l == "api/Produce.html#req-TopicData.PartitionData.Records"
    ));
    assert!(html.contains("<input id=q ") && html.contains("URLSearchParams"));
    // Every page's bar submits to the search page.
    let produce = render(
        &ApiDocs::new(cat, None, 0).unwrap().page(Some(9)),
        PageFormat::Html,
    );
    assert!(produce.contains("<form class=find action=\"../search.html\""));
    assert!(apis.len() > 80);
}

/// A name that would end the script element is escaped in the index.
#[test]
fn search_index_cannot_close_its_script() {
    let page = kwire::docs::search::search_page(vec![kwire::docs::search::Entry::new(
        "</script><b>x",
        "field",
        "api/X#req-a",
    )]);
    let html = render(&page, PageFormat::Html);
    assert!(!html.contains("</script><b>"), "{html}");
    let json = between(
        &html,
        "<script type=application/json id=search-index>",
        "</script>",
    )[0];
    let rows: Vec<[String; 3]> = serde_json::from_str(json).unwrap();
    assert_eq!(rows[0][0], "</script><b>x");
}

/// Legends list the regions the page's grids use, and nothing else; a page without grids has none.
#[test]
fn legends_list_only_regions_present() {
    let cat = Catalogue::builtin();
    let mut checked = 0;
    kwire::render::page::site::for_each_page(cat, None, &mut |page| {
        let html = render(&page, PageFormat::Html);
        let legend: Vec<String> =
            between(&html, "<ul class=legend>", "</ul>")
                .first()
                .map_or(Vec::new(), |l| {
                    l.split("</li>")
                        .filter(|s| !s.is_empty())
                        .map(text_of)
                        .collect()
                });
        assert_eq!(legend, legend_of_cells(&html), "{}", page.path);
        checked += 1;
        Ok(())
    })
    .unwrap();
    assert!(checked > 400);
    let encoding = render(
        &kwire::docs::encoding_page::encoding_page(cat),
        PageFormat::Text,
    );
    let legend = encoding
        .lines()
        .find(|l| l.starts_with("legend: "))
        .unwrap();
    assert!(
        !legend.contains("RecordBatch") && !legend.contains("response body"),
        "{legend}"
    );
    assert!(!render(
        &kwire::docs::search::search_page(Vec::new()),
        PageFormat::Html
    )
    .contains("class=legend"));
}
