//! The whole site: the index, the encoding, record batch, error code and search
//! pages, every API at every version and every record type at every version,
//! written in one format.

use super::{render, PageFormat};
use crate::docs::api_page::ApiDocs;
use crate::docs::encoding_page::encoding_page;
use crate::docs::errors_page::errors_page;
use crate::docs::index_page::{index_page, ApiRow, RecordRow};
use crate::docs::record_batch_page::record_batch_page;
use crate::docs::record_page::{record_names, RecordDocs};
use crate::docs::search::{fixed_entries, search_page};
use crate::docs::{defs_loaded, Page};
use crate::schema::catalogue::LOADED_RELEASE;
use crate::schema::{Catalogue, MessageKind};
use std::path::Path;

/// What was written.
#[derive(Clone, Debug, Default)]
pub struct SiteStats {
    pub pages: usize,
    pub bytes: u64,
    pub largest: Option<(String, usize)>,
}

/// The release a site or page shows, from the command line: with `--defs`,
/// the loaded definitions alone (their APIs and versions, as one release, so
/// `--defs kafka-defs/4.0` shows exactly 4.0); else the built-in release of
/// `--kafka-release`, or every built-in release. Both at once would mix two
/// sets of definitions, so that is refused.
pub fn site_release<'a>(
    cat: &Catalogue,
    kafka_release: Option<&'a str>,
) -> Result<Option<&'a str>, String> {
    match (defs_loaded(cat), kafka_release) {
        (true, Some(r)) => Err(format!(
            "--kafka-release {r} and --defs (or KWIRE_DEFS) both choose the definitions the pages show; give one (--defs shows the loaded definitions alone)"
        )),
        (true, None) => Ok(Some(LOADED_RELEASE)),
        (false, r) => Ok(r),
    }
}

/// Which definitions a site shows, in words for its index.
pub fn definitions_shown(cat: &Catalogue, release: Option<&str>) -> String {
    let builtin: Vec<&str> = cat
        .releases
        .iter()
        .map(String::as_str)
        .filter(|r| *r != LOADED_RELEASE)
        .collect();
    match release {
        Some(LOADED_RELEASE) => "the definitions loaded with --defs, alone".into(),
        Some(r) => format!("Apache Kafka {r} (built in)"),
        None if defs_loaded(cat) => format!(
            "the definitions loaded with --defs, with every built-in release ({})",
            builtin.join(", ")
        ),
        None => format!(
            "every built-in release ({}): each version as the newest release defining it",
            builtin.join(", ")
        ),
    }
}

/// Every page of the site, built one at a time and handed to `emit`.
pub fn for_each_page(
    cat: &Catalogue,
    release: Option<&str>,
    emit: &mut dyn FnMut(Page) -> Result<(), String>,
) -> Result<(), String> {
    let mut api_rows = Vec::new();
    let mut entries = Vec::new();
    for key in cat.api_keys() {
        let Some(docs) = ApiDocs::new(cat, release, key) else {
            continue;
        };
        if release.is_some() && docs.request_versions.is_empty() {
            continue;
        }
        let flexible = cat
            .entries_for(MessageKind::Request, key, release)
            .next()
            .map_or("none".into(), |e| e.spec().flexible_versions.to_string());
        api_rows.push(ApiRow::new(&docs, flexible));
        entries.extend(docs.search_entries());
        if docs.request_versions.is_empty() {
            emit(docs.page(None))?;
        }
        for &v in &docs.page_versions {
            emit(docs.page(Some(v)))?;
        }
    }
    let mut record_rows = Vec::new();
    for name in record_names(cat, release) {
        let Some(docs) = RecordDocs::new(cat, release, &name) else {
            continue;
        };
        record_rows.extend(RecordRow::new(&docs));
        entries.extend(docs.search_entries());
        for &v in &docs.page_versions {
            emit(docs.page(v))?;
        }
    }
    entries.extend(fixed_entries());
    emit(encoding_page(cat))?;
    emit(record_batch_page(cat))?;
    emit(errors_page(cat, release))?;
    emit(crate::docs::filters_page::filters_page())?;
    emit(crate::docs::export_page::export_page())?;
    emit(search_page(entries))?;
    emit(index_page(
        &api_rows,
        &record_rows,
        &definitions_shown(cat, release),
    ))
}

/// Write the site under `out` in `format`.
pub fn write_site(
    cat: &Catalogue,
    release: Option<&str>,
    out: &Path,
    format: PageFormat,
) -> Result<SiteStats, String> {
    let mut stats = SiteStats::default();
    let mut made_dirs = std::collections::HashSet::new();
    for_each_page(cat, release, &mut |page| {
        let file = out.join(format!("{}.{}", page.path, format.extension()));
        if let Some(dir) = file.parent() {
            if made_dirs.insert(dir.to_path_buf()) {
                std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            }
        }
        let text = render(&page, format);
        std::fs::write(&file, &text).map_err(|e| format!("{}: {e}", file.display()))?;
        stats.pages += 1;
        stats.bytes += text.len() as u64;
        if stats.largest.as_ref().is_none_or(|(_, n)| text.len() > *n) {
            stats.largest = Some((page.path.clone(), text.len()));
        }
        Ok(())
    })?;
    Ok(stats)
}
