//! Pages as self-contained HTML: inline CSS and JS, every byte a grid cell
//! coloured by region, every tree node a line linked to its bytes.

use super::{assets, href, region_class, skipped, PageFormat};
use crate::decode::regions::byte_owners;
use crate::decode::Region;
use crate::docs::search::Entry;
use crate::docs::{
    encoding_page, errors_page, index_page, record_batch_page, search, Block, Figure, Page, Table,
    VersionLink,
};
use crate::render::grid::{layout_title, ROW};
use crate::render::text_tree::{line_in, tree_lines, TreeOptions, DOC_WIDTH};
use crate::text::escape::html as esc;
use std::fmt::Write;

struct Writer<'a> {
    out: String,
    page: &'a Page,
    figures: usize,
}

pub fn page(p: &Page) -> String {
    let mut w = Writer {
        out: String::with_capacity(16 << 10),
        page: p,
        figures: 0,
    };
    let link = |to: &str| href(&p.path, to, PageFormat::Html);
    let _ = writeln!(
        w.out,
        "<!doctype html><html lang=en><head><meta charset=utf-8><meta name=viewport content=\"width=device-width,initial-scale=1\">\
         <title>{} · kwire</title><style>{}</style></head><body>\
         <nav class=top><a href=\"{}\">kwire · Kafka protocol on the wire</a><a href=\"{}\">encoding</a><a href=\"{}\">record batches</a><a href=\"{}\">error codes</a>\
         <form class=find action=\"{}\" role=search><input type=search name=q placeholder=\"search APIs, fields, records\" aria-label=\"search the site\"></form></nav><main><h1>{}</h1>",
        esc(&p.title),
        assets::style(),
        link(index_page::PATH),
        link(encoding_page::PATH),
        link(record_batch_page::PATH),
        link(errors_page::PATH),
        link(search::PATH),
        esc(&p.title)
    );
    for b in &p.blocks {
        w.block(b);
    }
    for s in &p.sections {
        match &s.id {
            Some(id) => {
                let _ = writeln!(
                    w.out,
                    "<section id=\"{}\"><h2>{}</h2>",
                    esc(id),
                    esc(&s.heading)
                );
            }
            None => {
                let _ = writeln!(w.out, "<section><h2>{}</h2>", esc(&s.heading));
            }
        }
        for b in &s.blocks {
            w.block(b);
        }
        w.out.push_str("</section>\n");
    }
    let _ = writeln!(
        w.out,
        "</main><script>{}</script></body></html>",
        assets::SCRIPT
    );
    w.out
}

impl Writer<'_> {
    fn block(&mut self, b: &Block) {
        match b {
            Block::Para(t) => {
                let _ = writeln!(self.out, "<p>{}</p>", esc(t));
            }
            Block::Facts(facts) => {
                self.out.push_str("<dl class=facts>");
                for (k, v) in facts {
                    let _ = write!(self.out, "<dt>{}</dt><dd>{}</dd>", esc(k), esc(v));
                }
                self.out.push_str("</dl>\n");
            }
            Block::Legend(regions) => self.legend(regions),
            Block::Search(entries) => self.search(entries),
            Block::Versions(links) => self.versions(links),
            Block::Figure(f) => self.figure(f),
            Block::Table(t) => self.table(t),
            Block::Grammar(text) => {
                let text: Vec<String> = text.split('\n').map(esc).collect();
                let _ = writeln!(
                    self.out,
                    "<h3>Grammar</h3><pre class=grammar>{}</pre>",
                    text.join("\n")
                );
            }
            Block::Code { title, text } => {
                // Line by line: escaping keeps newlines raw so the text stays readable and small.
                let text: Vec<String> = text.split('\n').map(esc).collect();
                let _ = writeln!(
                    self.out,
                    "<h3>{}</h3><pre class=src>{}</pre>",
                    esc(title),
                    text.join("\n")
                );
            }
            Block::Changes(lists) => {
                self.out.push_str("<dl class=changes>");
                for (label, items) in lists {
                    let _ = write!(self.out, "<dt>{}</dt><dd><ul>", esc(label));
                    for i in items {
                        let _ = write!(self.out, "<li>{}</li>", esc(i));
                    }
                    self.out.push_str("</ul></dd>");
                }
                self.out.push_str("</dl>\n");
            }
        }
    }

    fn legend(&mut self, regions: &[Region]) {
        if regions.is_empty() {
            return;
        }
        self.out.push_str("<ul class=legend>");
        for &r in regions {
            let _ = write!(
                self.out,
                "<li class={}>{}</li>",
                region_class(r),
                esc(r.label())
            );
        }
        self.out.push_str("</ul>\n");
    }

    /// The search box, the index as JSON (`[text, kind, link]`, links
    /// relative to this page) and the script that searches it.
    fn search(&mut self, entries: &[Entry]) {
        let rows: Vec<[String; 3]> = entries
            .iter()
            .map(|e| {
                [
                    e.text.clone(),
                    e.kind.clone(),
                    href(&self.page.path, &e.path, PageFormat::Html),
                ]
            })
            .collect();
        // `<` only occurs inside JSON strings, where \u003c means the same: the
        // text can then never close the script element.
        let json = serde_json::to_string(&rows)
            .unwrap_or_else(|_| "[]".into())
            .replace('<', "\\u003c");
        let _ = writeln!(
            self.out,
            "<input id=q type=search autofocus placeholder=\"Produce records, ErrorCode, PartitionRecord …\" aria-label=search><p id=count></p><ol id=hits></ol>\
             <script type=application/json id=search-index>{json}</script><script>{}</script>",
            assets::SEARCH_SCRIPT
        );
    }

    fn versions(&mut self, links: &[VersionLink]) {
        self.out.push_str("<nav class=versions>versions: ");
        for l in links {
            if let Some(gap) = skipped(l.skipped_before) {
                let _ = write!(self.out, "<span class=gap>{gap}</span> ");
            }
            let note = match (l.default, l.unstable) {
                (true, true) => " class=u title=\"shown by default; unstable\"",
                (true, false) => " title=\"shown by default\"",
                (false, true) => " class=u title=\"unstable\"",
                _ => "",
            };
            if l.current {
                let _ = write!(self.out, "<b{note}>v{}</b>", l.version);
            } else {
                let _ = write!(
                    self.out,
                    "<a href=\"{}\"{note}>v{}</a>",
                    esc(&href(&self.page.path, &l.path, PageFormat::Html)),
                    l.version
                );
            }
        }
        self.out.push_str("</nav>\n");
    }

    fn table(&mut self, t: &Table) {
        self.out.push_str("<table class=data><tr>");
        for h in &t.head {
            let _ = write!(self.out, "<th>{}</th>", esc(h));
        }
        self.out.push_str("</tr>\n");
        for (i, row) in t.rows.iter().enumerate() {
            match t.row_ids.get(i).and_then(Option::as_ref) {
                Some(id) => {
                    let _ = write!(self.out, "<tr id=\"{}\">", esc(id));
                }
                None => self.out.push_str("<tr>"),
            }
            for c in row {
                match &c.link {
                    Some(to) => {
                        let _ = write!(
                            self.out,
                            "<td><a href=\"{}\">{}</a></td>",
                            esc(&href(&self.page.path, to, PageFormat::Html)),
                            esc(&c.text)
                        );
                    }
                    None => {
                        let _ = write!(self.out, "<td>{}</td>", esc(&c.text));
                    }
                }
            }
            self.out.push_str("</tr>\n");
        }
        self.out.push_str("</table>\n");
    }

    /// The grid and the tree side by side (see [`write_figure`]).
    fn figure(&mut self, f: &Figure) {
        let id = format!("f{}", self.figures);
        self.figures += 1;
        let path = &self.page.path;
        write_figure(&mut self.out, f, &id, &|to: &str| {
            href(path, to, PageFormat::Html)
        });
    }
}

/// The grid and the tree side by side. A cell's `data-n` names the deepest
/// node covering its byte (the tree line `id = figure id + n + index`);
/// `link` makes a tree line's link target an href.
fn write_figure(out: &mut String, f: &Figure, id: &str, link: &dyn Fn(&str) -> String) {
    let _ = writeln!(
        out,
        "<figure id={id}><figcaption>{}</figcaption>",
        esc(&f.caption)
    );
    if let Some(e) = &f.error {
        let _ = writeln!(out, "<p class=err>{}</p>", esc(e));
    }
    if f.bytes.is_empty() {
        out.push_str("</figure>\n");
        return;
    }
    let owners = byte_owners(&f.root, f.bytes.len());
    let mut regions = Vec::new();
    f.root.walk(&mut |n, _| regions.push(n.region));
    let _ = write!(
        out,
        "<div class=fig><table class=grid><caption>{}</caption><tr><th></th>",
        esc(&layout_title(f.bytes.len()))
    );
    for c in 0..ROW {
        let _ = write!(out, "<th>{c:X}</th>");
    }
    out.push_str("</tr>\n");
    for (row, chunk) in f.bytes.chunks(ROW).enumerate() {
        let _ = write!(out, "<tr><th>{:04x}</th>", row * ROW);
        for (i, b) in chunk.iter().enumerate() {
            let at = row * ROW + i;
            match owners[at] {
                Some(n) => {
                    let _ = write!(
                        out,
                        "<td class={} data-offset={at} data-n={n}>{b:02x}</td>",
                        region_class(regions[n])
                    );
                }
                None => {
                    let _ = write!(out, "<td data-offset={at}>{b:02x}</td>");
                }
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table><div class=tree><div class=th>object tree</div>\n");
    for (i, l) in tree_lines(&f.root).iter().enumerate() {
        let n = l.node;
        let d = if l.decompressed { " data-d" } else { "" };
        // Cut descriptions keep their full text as a tooltip.
        let full = n
            .doc()
            .filter(|doc| doc.chars().count() > DOC_WIDTH + 3)
            .map_or(String::new(), |doc| format!(" title=\"{}\"", esc(&doc)));
        let text = esc(&line_in(n, TreeOptions::default(), l.decompressed));
        // A field's line links to its row of the field table (or a header's to the encoding page).
        let text = match f.links.get(i).and_then(Option::as_ref) {
            Some(to) => format!("<a href=\"{}\">{text}</a>", esc(&link(to))),
            None => text,
        };
        let _ = writeln!(out, "<div id={id}n{i} class=n data-offset={} data-len={}{d}{full}><span class=p>{}</span>{text}</div>", n.offset, n.len, esc(&l.prefix));
    }
    out.push_str("</div></div></figure>\n");
}

/// The stylesheet of every page, for pages outside the documentation site.
pub(crate) fn page_style() -> &'static str {
    assets::style()
}

/// The script that links grid cells and tree lines, for pages outside the documentation site.
pub(crate) const PAGE_SCRIPT: &str = assets::SCRIPT;
