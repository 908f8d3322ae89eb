//! Pages (`docs::Page`) as HTML, markdown or text. Figures reuse the grid,
//! region and tree renderers; every string from outside kwire is escaped.

mod assets;
pub mod html;
pub mod plain;
pub mod site;

use crate::decode::Region;
use crate::docs::Page;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageFormat {
    Html,
    Markdown,
    Text,
}

impl PageFormat {
    pub fn extension(&self) -> &'static str {
        match self {
            PageFormat::Html => "html",
            PageFormat::Markdown => "md",
            PageFormat::Text => "txt",
        }
    }
}

pub fn render(page: &Page, format: PageFormat) -> String {
    match format {
        PageFormat::Html => html::page(page),
        PageFormat::Markdown => plain::page(page, plain::Flavor::Markdown),
        PageFormat::Text => plain::page(page, plain::Flavor::Text),
    }
}

/// A link from the page at `from` to the page at `to` (site paths without
/// extension, with an optional `#anchor`; `#anchor` alone stays on the page).
pub fn href(from: &str, to: &str, format: PageFormat) -> String {
    let (path, fragment) = match to.split_once('#') {
        Some((path, fragment)) => (path, Some(fragment)),
        None => (to, None),
    };
    let mut out = if path.is_empty() {
        String::new()
    } else {
        format!(
            "{}{path}.{}",
            "../".repeat(from.matches('/').count()),
            format.extension()
        )
    };
    if let Some(f) = fragment {
        out.push('#');
        out.push_str(f);
    }
    out
}

/// What a version switcher shows where it leaves versions out: `… 12 more …`.
pub fn skipped(count: usize) -> Option<String> {
    (count > 0).then(|| format!("… {count} more …"))
}

/// Short CSS class of a region (`g0`…), its index in `Region::ALL`.
pub(crate) fn region_class(r: Region) -> String {
    format!("g{}", Region::ALL.iter().position(|x| *x == r).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_climb_out_of_folders() {
        assert_eq!(
            href("api/Produce", "index", PageFormat::Html),
            "../index.html"
        );
        assert_eq!(
            href("index", "api/Produce", PageFormat::Markdown),
            "api/Produce.md"
        );
        assert_eq!(
            href("api/Produce", "api/Produce-v3", PageFormat::Text),
            "../api/Produce-v3.txt"
        );
        assert_eq!(
            href("api/Produce", "encoding#type-int32", PageFormat::Html),
            "../encoding.html#type-int32"
        );
        assert_eq!(
            href("api/Produce", "#req-Acks", PageFormat::Html),
            "#req-Acks"
        );
    }
}
