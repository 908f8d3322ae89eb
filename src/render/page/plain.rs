//! Pages as text (read like the seed pages: title, facts, legend, captions,
//! grid, object tree, schema) or as markdown (the same, with headings, code
//! fences and tables). Text is made safe for terminals, markdown for HTML.

use super::{href, skipped, PageFormat};
use crate::decode::Region;
use crate::docs::{encoding_page, index_page, Block, Cell, Figure, Page, Table, VersionLink};
use crate::render::grid::render_layout;
use crate::render::text_tree::{render_tree, TreeOptions};
use crate::text::escape::{html, sanitize};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    Text,
    Markdown,
}

struct Writer<'a> {
    out: String,
    page: &'a Page,
    md: bool,
}

pub fn page(p: &Page, flavor: Flavor) -> String {
    let md = flavor == Flavor::Markdown;
    let mut w = Writer {
        out: String::with_capacity(8 << 10),
        page: p,
        md,
    };
    if md {
        let link = |to| href(&p.path, to, PageFormat::Markdown);
        w.out.push_str(&format!(
            "[index]({}) · [encoding]({})\n\n# {}\n\n",
            link(index_page::PATH),
            link(encoding_page::PATH),
            w.inline(&p.title)
        ));
    } else {
        let title = sanitize(&p.title);
        w.out.push_str(&format!(
            "{title}\n{}\n\n",
            "=".repeat(title.chars().count())
        ));
    }
    for b in &p.blocks {
        w.block(b);
    }
    for s in &p.sections {
        if md {
            w.out.push_str(&format!("## {}\n\n", w.inline(&s.heading)));
        } else {
            let h = sanitize(&s.heading);
            w.out
                .push_str(&format!("{h}\n{}\n\n", "-".repeat(h.chars().count())));
        }
        for b in &s.blocks {
            w.block(b);
        }
    }
    w.out
}

impl Writer<'_> {
    /// Running text: terminal-safe, and for markdown also HTML-escaped.
    fn inline(&self, s: &str) -> String {
        let s = sanitize(s);
        if self.md {
            html(&s).replace('|', "\\|")
        } else {
            s
        }
    }

    fn block(&mut self, b: &Block) {
        match b {
            Block::Para(t) => {
                let t = self.inline(t);
                self.out.push_str(&format!("{t}\n\n"));
            }
            Block::Facts(facts) => {
                for (k, v) in facts {
                    let line = if self.md {
                        format!("- **{}**: {}\n", self.inline(k), self.inline(v))
                    } else {
                        format!("- {}: {}\n", sanitize(k), sanitize(v))
                    };
                    self.out.push_str(&line);
                }
                self.out.push('\n');
            }
            Block::Legend(regions) => {
                if !regions.is_empty() {
                    let labels: Vec<&str> = regions.iter().map(Region::label).collect();
                    self.out
                        .push_str(&format!("legend: {}\n\n", labels.join(" | ")));
                }
            }
            Block::Search(entries) => {
                // No script here: the index itself, one name a line, for reading or grep.
                for e in entries {
                    let line = if self.md {
                        format!(
                            "- [{}]({}) ({})\n",
                            self.inline(&e.text),
                            self.page_link(&e.path),
                            self.inline(&e.kind)
                        )
                    } else {
                        format!(
                            "- {} ({}): {}\n",
                            sanitize(&e.text),
                            sanitize(&e.kind),
                            sanitize(&href(&self.page.path, &e.path, PageFormat::Text))
                        )
                    };
                    self.out.push_str(&line);
                }
                self.out.push('\n');
            }
            Block::Versions(links) => self.versions(links),
            Block::Figure(f) => self.figure(f),
            Block::Table(t) => self.table(t),
            Block::Grammar(text) => {
                let text: String = text.lines().map(|l| sanitize(l) + "\n").collect();
                self.titled("Grammar");
                self.code(&text, "text");
            }
            Block::Code { title, text } => {
                let text: String = text.lines().map(|l| sanitize(l) + "\n").collect();
                self.titled(title);
                self.code(&text, "json");
            }
            Block::Changes(lists) => {
                for (label, items) in lists {
                    self.out.push_str(&format!(
                        "{}\n",
                        if self.md {
                            format!("**{}**", self.inline(label))
                        } else {
                            sanitize(label)
                        }
                    ));
                    for i in items {
                        let item = if self.md {
                            format!("`{}`", sanitize(i).replace('`', "'"))
                        } else {
                            sanitize(i)
                        };
                        self.out.push_str(&format!("  - {item}\n"));
                    }
                }
                self.out.push('\n');
            }
        }
    }

    fn titled(&mut self, title: &str) {
        let t = if self.md {
            format!("**{}**", self.inline(title))
        } else {
            sanitize(title)
        };
        self.out.push_str(&format!("{t}\n\n"));
    }

    /// A fenced block for markdown (fence longer than any backtick run inside),
    /// the text as is otherwise.
    fn code(&mut self, text: &str, lang: &str) {
        if self.md {
            let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
            let fence = "`".repeat(longest.max(2) + 1);
            self.out
                .push_str(&format!("{fence}{lang}\n{text}{fence}\n\n"));
        } else {
            self.out.push_str(text);
            self.out.push('\n');
        }
    }

    fn versions(&mut self, links: &[VersionLink]) {
        let items: Vec<String> = links
            .iter()
            .map(|l| {
                let mark = match (l.default, l.unstable) {
                    (true, true) => " (default, unstable)",
                    (true, false) => " (default)",
                    (false, true) => " (unstable)",
                    _ => "",
                };
                let gap = skipped(l.skipped_before).map_or(String::new(), |g| format!("{g} "));
                match (self.md, l.current) {
                    (true, true) => format!("{gap}**v{}**{mark}", l.version),
                    (true, false) => format!(
                        "{gap}[v{}]({}){mark}",
                        l.version,
                        href(&self.page.path, &l.path, PageFormat::Markdown)
                    ),
                    (false, true) => format!("{gap}[v{}]{mark}", l.version),
                    (false, false) => format!("{gap}v{}{mark}", l.version),
                }
            })
            .collect();
        self.out
            .push_str(&format!("versions: {}\n\n", items.join(" ")));
    }

    fn figure(&mut self, f: &Figure) {
        self.titled(&f.caption);
        if let Some(e) = &f.error {
            let e = self.inline(e);
            self.out.push_str(&format!("error: {e}\n\n"));
        }
        if f.bytes.is_empty() {
            return;
        }
        self.code(&render_layout(&f.bytes, &f.root, false), "text");
        self.titled("object tree");
        self.code(&render_tree(&f.root, TreeOptions::default()), "text");
    }

    /// A markdown link to the page of `to`, without its anchor: markdown
    /// tables and trees carry no anchors of their own to land on.
    fn page_link(&self, to: &str) -> String {
        href(
            &self.page.path,
            to.split('#').next().unwrap_or(to),
            PageFormat::Markdown,
        )
    }

    fn cell(&self, c: &Cell) -> String {
        match (&c.link, self.md) {
            // A place on this page: nothing to link to in markdown.
            (Some(to), true) if !to.starts_with('#') => {
                format!("[{}]({})", self.inline(&c.text), self.page_link(to))
            }
            _ => self.inline(&c.text),
        }
    }

    fn table(&mut self, t: &Table) {
        let rows: Vec<Vec<String>> = t
            .rows
            .iter()
            .map(|r| r.iter().map(|c| self.cell(c)).collect())
            .collect();
        let head: Vec<String> = t.head.iter().map(|h| self.inline(h)).collect();
        if self.md {
            self.out.push_str(&format!(
                "| {} |\n|{}\n",
                head.join(" | "),
                " --- |".repeat(head.len())
            ));
            for r in rows {
                self.out.push_str(&format!("| {} |\n", r.join(" | ")));
            }
        } else {
            let mut widths: Vec<usize> = head.iter().map(|h| h.chars().count()).collect();
            for r in &rows {
                for (i, c) in r.iter().enumerate() {
                    if i < widths.len() {
                        widths[i] = widths[i].max(c.chars().count());
                    }
                }
            }
            for r in std::iter::once(&head).chain(&rows) {
                let cells: Vec<String> = r
                    .iter()
                    .enumerate()
                    .map(|(i, c)| format!("{c:<w$}", w = widths.get(i).copied().unwrap_or(0)))
                    .collect();
                self.out.push_str(cells.join("  ").trim_end());
                self.out.push('\n');
            }
        }
        self.out.push('\n');
    }
}
