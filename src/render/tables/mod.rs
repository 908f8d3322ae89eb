//! The export's tables written to files: `DIR/<table>/<name>.parquet` (or
//! `.jsonl`), one file per capture in each table's folder, so DuckDB reads
//! `DIR/exchanges/*.parquet` and Spark `DIR/exchanges` as one table. Each file
//! is written as `.<name>.partial` and renamed when complete: an engine
//! never reads half a file (both skip names starting with a dot).

pub mod ndjson;
pub mod parquet;

use crate::analysis::tables::{Cell, Sink, Table};
use std::fs::File;
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Parquet,
    JsonLines,
}

impl Format {
    pub fn extension(self) -> &'static str {
        match self {
            Format::Parquet => "parquet",
            Format::JsonLines => "jsonl",
        }
    }
}

enum Writer {
    // Boxed: four of them per capture, and the Parquet writer is large.
    Parquet(Box<parquet::ParquetTable<BufWriter<File>>>),
    JsonLines(ndjson::JsonLinesTable<BufWriter<File>>),
}

/// One capture's files, a table each.
pub(crate) struct TableFiles {
    files: Vec<(Table, Writer, PathBuf, PathBuf)>,
}

impl TableFiles {
    /// Create `dir/<table>/.<name>.<ext>.partial` for every table.
    pub fn create(dir: &Path, name: &str, format: Format) -> io::Result<TableFiles> {
        let mut made = TableFiles { files: Vec::new() };
        match made.create_each(dir, name, format) {
            Ok(()) => Ok(made),
            Err(e) => {
                made.abandon();
                Err(e)
            }
        }
    }

    fn create_each(&mut self, dir: &Path, name: &str, format: Format) -> io::Result<()> {
        let files = &mut self.files;
        for table in Table::ALL {
            let folder = dir.join(table.name());
            std::fs::create_dir_all(&folder)?;
            let done = folder.join(format!("{name}.{}", format.extension()));
            let partial = folder.join(format!(".{name}.{}.partial", format.extension()));
            let out = BufWriter::with_capacity(1 << 20, File::create(&partial)?);
            let writer = match format {
                Format::Parquet => {
                    Writer::Parquet(Box::new(parquet::ParquetTable::new(out, table)?))
                }
                Format::JsonLines => Writer::JsonLines(ndjson::JsonLinesTable::new(out, table)),
            };
            files.push((table, writer, partial, done));
        }
        Ok(())
    }

    /// Every file completed, then each given its name: a capture's tables
    /// appear together or (on an error, the partial files removed) not at all.
    pub fn finish(self) -> io::Result<Vec<PathBuf>> {
        let mut names = Vec::new();
        let mut failed = None;
        for (_, writer, partial, path) in self.files {
            if failed.is_none() {
                let complete = match writer {
                    Writer::Parquet(w) => w.finish(),
                    Writer::JsonLines(w) => w.finish(),
                }
                .and_then(|out| out.into_inner().map_err(|e| e.into_error()))
                .and_then(|file| file.sync_all());
                if let Err(e) = complete {
                    failed = Some(e);
                }
            }
            names.push((partial, path));
        }
        if let Some(e) = failed {
            names
                .iter()
                .for_each(|(partial, _)| drop(std::fs::remove_file(partial)));
            return Err(e);
        }
        let mut done = Vec::new();
        for (partial, path) in names {
            std::fs::rename(&partial, &path)?;
            done.push(path);
        }
        Ok(done)
    }

    /// The partial files removed (the capture could not be read).
    pub(crate) fn abandon(self) {
        for (_, writer, partial, _) in self.files {
            drop(writer);
            let _ = std::fs::remove_file(partial);
        }
    }
}

impl Sink for TableFiles {
    fn row(&mut self, table: Table, cells: Vec<Cell>) -> io::Result<()> {
        let Some((_, writer, ..)) = self.files.iter_mut().find(|(t, ..)| *t == table) else {
            return Ok(());
        };
        match writer {
            Writer::Parquet(w) => w.row(cells),
            Writer::JsonLines(w) => w.row(cells),
        }
    }
}
