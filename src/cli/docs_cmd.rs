//! `kwire docs` (the static site) and `kwire page` (one page to stdout).

use super::{exit, resolve_api_or_report};
use clap::{Args, ValueEnum};
use kwire::decode::frame::compress_versions;
use kwire::docs::api_page::ApiDocs;
use kwire::docs::encoding_page::{self, encoding_page};
use kwire::docs::errors_page::{self, errors_page};
use kwire::docs::record_batch_page::{self, record_batch_page};
use kwire::docs::record_page::RecordDocs;
use kwire::docs::Page;
use kwire::render::page::site::{site_release, write_site};
use kwire::render::page::{render, PageFormat};
use kwire::schema::Catalogue;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Html,
    Markdown,
    Text,
}

impl From<Format> for PageFormat {
    fn from(f: Format) -> PageFormat {
        match f {
            Format::Html => PageFormat::Html,
            Format::Markdown => PageFormat::Markdown,
            Format::Text => PageFormat::Text,
        }
    }
}

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  kwire docs --out site\n  kwire docs --out site --defs ../shared/kafka-defs/4.0\n  kwire docs --out site-md --format markdown"
)]
pub struct DocsArgs {
    /// Folder to write the site into (created if missing).
    #[arg(long)]
    pub out: PathBuf,
    #[arg(long, value_enum, default_value_t = Format::Html)]
    pub format: Format,
}

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  kwire page WriteShareGroupState --version 0\n  kwire page encoding\n  kwire page record-batch --format markdown"
)]
pub struct PageArgs {
    /// API name or key, a record type name, `encoding`, `record-batch`, `errors` or `filters`.
    pub name: String,
    /// Version (default: the latest stable one).
    #[arg(long)]
    pub version: Option<i16>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// The release the pages show ([`site_release`]), or the reason given on stderr.
fn release_shown<'a>(cat: &Catalogue, release: Option<&'a str>) -> Result<Option<&'a str>, i32> {
    site_release(cat, release).map_err(|e| {
        kwire::stderr_line!("kwire: {}", kwire::text::escape::sanitize(&e));
        exit::USAGE
    })
}

pub fn run_docs(cat: &Catalogue, release: Option<&str>, args: &DocsArgs) -> i32 {
    let started = Instant::now();
    let release = match release_shown(cat, release) {
        Ok(r) => r,
        Err(status) => return status,
    };
    match write_site(cat, release, &args.out, args.format.into()) {
        Ok(stats) => {
            let largest = stats.largest.map_or(String::new(), |(p, n)| {
                format!("; largest page {p} ({} KiB)", n / 1024)
            });
            kwire::stderr_line!(
                "kwire: wrote {} pages ({:.1} MiB) to {} in {:.2} s{largest}",
                stats.pages,
                stats.bytes as f64 / (1 << 20) as f64,
                args.out.display(),
                started.elapsed().as_secs_f64()
            );
            exit::OK
        }
        Err(e) => {
            kwire::stderr_line!("kwire: {}", kwire::text::escape::sanitize(&e.to_string()));
            exit::FAILURE
        }
    }
}

pub fn run_page(cat: &Catalogue, release: Option<&str>, args: &PageArgs) -> i32 {
    let release = match release_shown(cat, release) {
        Ok(r) => r,
        Err(status) => return status,
    };
    let page = match find_page(cat, release, &args.name, args.version) {
        Ok(p) => p,
        Err(Some(e)) => {
            kwire::stderr_line!("kwire: {}", kwire::text::escape::sanitize(&e.to_string()));
            return exit::FAILURE;
        }
        Err(None) => return exit::FAILURE,
    };
    let _ = std::io::stdout()
        .lock()
        .write_all(render(&page, args.format.into()).as_bytes());
    exit::OK
}

/// The page a name stands for; `Err(None)` when the reason was already reported.
fn find_page(
    cat: &Catalogue,
    release: Option<&str>,
    name: &str,
    version: Option<i16>,
) -> Result<Page, Option<String>> {
    if name.eq_ignore_ascii_case(encoding_page::PATH) {
        return Ok(encoding_page(cat));
    }
    if name.eq_ignore_ascii_case(record_batch_page::PATH) {
        return Ok(record_batch_page(cat));
    }
    if name.eq_ignore_ascii_case(errors_page::PATH) {
        return Ok(errors_page(cat, release));
    }
    if name.eq_ignore_ascii_case(kwire::docs::export_page::PATH) {
        return Ok(kwire::docs::export_page::export_page());
    }
    if name.eq_ignore_ascii_case(kwire::docs::filters_page::PATH) {
        return Ok(kwire::docs::filters_page::filters_page());
    }
    if let Some(docs) = RecordDocs::new(cat, release, name) {
        let v = version
            .or(docs.default_version())
            .ok_or_else(|| Some(format!("{name} has no versions")))?;
        if !docs.versions.contains(&v) {
            return Err(Some(format!(
                "{} has no version {v}; valid: {}",
                docs.name,
                compress_versions(&docs.versions)
            )));
        }
        return Ok(docs.page(v));
    }
    let key = resolve_api_or_report(cat, name).ok_or(None)?;
    let docs = ApiDocs::new(cat, release, key).ok_or(None)?;
    match version.or(docs.default_version) {
        Some(v) if !docs.request_versions.contains(&v) => Err(Some(format!(
            "{} has no version {v}; valid: {}",
            docs.name,
            compress_versions(&docs.request_versions)
        ))),
        v => Ok(docs.page(v)),
    }
}
