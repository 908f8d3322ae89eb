//! The whole site: the index, the encoding page, every API at every version and
//! every record type at every version, written in one format.

use super::api_page::ApiDocs;
use super::encoding_page::encoding_page;
use super::index_page::{index_page, ApiRow, RecordRow};
use super::record_page::{record_names, RecordDocs};
use super::Page;
use crate::render::page::{render, PageFormat};
use crate::schema::{Catalogue, MessageKind};
use std::path::Path;

/// What was written.
#[derive(Clone, Debug, Default)]
pub struct SiteStats {
    pub pages: usize,
    pub bytes: u64,
    pub largest: Option<(String, usize)>,
}

/// Every page of the site, built one at a time and handed to `emit`.
pub fn for_each_page(cat: &Catalogue, release: Option<&str>, emit: &mut dyn FnMut(Page) -> Result<(), String>) -> Result<(), String> {
    let mut api_rows = Vec::new();
    for key in cat.api_keys() {
        let Some(docs) = ApiDocs::new(cat, release, key) else { continue };
        if release.is_some() && docs.request_versions.is_empty() {
            continue;
        }
        let flexible = cat.entries_for(MessageKind::Request, key, release).next().map_or("none".into(), |e| e.spec.flexible_versions.to_string());
        api_rows.push(ApiRow::new(&docs, flexible));
        if docs.request_versions.is_empty() {
            emit(docs.page(None))?;
        }
        for &v in &docs.page_versions {
            emit(docs.page(Some(v)))?;
        }
    }
    let mut record_rows = Vec::new();
    for name in record_names(cat, release) {
        let Some(docs) = RecordDocs::new(cat, release, &name) else { continue };
        record_rows.extend(RecordRow::new(&docs));
        for &v in &docs.page_versions {
            emit(docs.page(v))?;
        }
    }
    emit(encoding_page(cat))?;
    emit(index_page(&api_rows, &record_rows))
}

/// Write the site under `out` in `format`.
pub fn write_site(cat: &Catalogue, release: Option<&str>, out: &Path, format: PageFormat) -> Result<SiteStats, String> {
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
