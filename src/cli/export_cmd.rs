//! `kwire export CAPTURE… --out DIR`: captures as tables (exchanges,
//! partitions, connections, records, findings) in Parquet or JSON lines, one file per
//! capture in each table's folder, the captures read in parallel.

use super::exit;
use super::filter_args::FilterArgs;
use clap::{Args, ValueEnum};
use kwire::analysis::tables::schema;
use kwire::pipeline::export;
use kwire::render::tables::Format;
use kwire::schema::Catalogue;
use kwire::text::escape::sanitize;
use std::io::Write;
use std::path::PathBuf;

#[derive(Args, Debug, Clone)]
#[command(
    after_help = "Examples:\n  kwire export samples/captures/*.pcap --out tables\n  kwire export captures/ --out tables --filter 'api == Produce'\n  kwire export samples/captures/kafka-python.pcap --out tables --format ndjson\n  kwire export --schema\n\nThen: duckdb -c \"SELECT api_name, count(*), quantile_cont(latency_us, 0.99) FROM 'tables/exchanges/*.parquet' GROUP BY 1\""
)]
pub struct ExportArgs {
    /// Captures (pcap or pcapng), folders holding them (searched whole), or
    /// `-` for standard input (read to a temporary file first: a capture is
    /// read four times).
    #[arg(required_unless_present = "schema")]
    pub inputs: Vec<String>,
    /// The folder to write into: DIR/exchanges/, DIR/partitions/,
    /// DIR/connections/, DIR/records/, DIR/findings/, a file per capture in
    /// each, named after it.
    #[arg(long, value_name = "DIR", required_unless_present = "schema")]
    pub out: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = ExportFormat::Parquet)]
    pub format: ExportFormat,
    /// Print the tables' columns, their types and meaning, and exit.
    #[arg(long)]
    pub schema: bool,
    /// The broker's port: the side sending to it carries requests (default: found by plausibility).
    #[arg(long)]
    pub port: Option<u16>,
    /// Only the exchanges these select, and the records, findings and
    /// connections of their frames.
    #[command(flatten)]
    pub filter: FilterArgs,
    #[command(flatten)]
    pub tls: super::tls_args::TlsArgs,
    /// Captures read at once (default: the machine's cores).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// Parquet files (Snappy): typed columns for DuckDB, Spark, pandas, Polars.
    Parquet,
    /// JSON lines: an object per row, for log pipelines and jq.
    Ndjson,
}

pub fn run(cat: &Catalogue, release: Option<&str>, args: &ExportArgs) -> i32 {
    if args.schema {
        let _ = std::io::stdout().write_all(schema::describe(super::width::stdout()).as_bytes());
        return exit::OK;
    }
    let Some(out) = &args.out else {
        kwire::stderr_line!("kwire: export needs --out DIR");
        return exit::USAGE;
    };
    let filter = match args.filter.resolve(cat) {
        Ok(f) => f,
        Err(status) => return status,
    };
    let capture = match args.tls.capture_options(args.port) {
        Ok(o) => o,
        Err(status) => return status,
    };
    let (inputs, mut status) = inputs(&args.inputs);
    if inputs.is_empty() {
        kwire::stderr_line!("kwire: export: no capture among the inputs");
        return exit::FAILURE;
    }
    let format = match args.format {
        ExportFormat::Parquet => Format::Parquet,
        ExportFormat::Ndjson => Format::JsonLines,
    };
    let jobs = args
        .jobs
        .map(|j| j as usize)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let options = export::Options {
        cat,
        release,
        capture,
        filter,
        format,
        out,
        jobs,
    };
    let captures: Vec<export::Input> = inputs.iter().map(|i| i.input.clone()).collect();
    let exported = export::export_all(&captures, &options, &|name, why| {
        kwire::stderr_line!("kwire: {}: {}", sanitize(name), sanitize(why));
    });
    let (counts, done) = (exported.counts, exported.done);
    if counts.partitions_unread > 0 {
        kwire::stderr_line!(
            "kwire: {} of frames naming more than {} are not in the partitions table",
            kwire::text::count(counts.partitions_unread as usize, "partition", "partitions"),
            kwire::analysis::diagnosis::facts::MAX_PARTITIONS
        );
    }
    if exported.failed > 0 {
        status = exit::FAILURE;
    }
    kwire::stderr_line!(
        "kwire: exported {} to {} ({}): {}, {}, {}, {}, {}",
        kwire::text::count(done, "capture", "captures"),
        sanitize(&out.display().to_string()),
        format.extension(),
        kwire::text::count(counts.exchanges as usize, "exchange", "exchanges"),
        kwire::text::count(
            counts.partitions as usize,
            "partition row",
            "partition rows"
        ),
        kwire::text::count(counts.connections as usize, "connection", "connections"),
        kwire::text::count(counts.records as usize, "record", "records"),
        kwire::text::count(counts.findings as usize, "finding", "findings"),
    );
    status
}

/// A capture to read, and whether it is a spooled copy of standard input,
/// removed when done.
struct Input {
    input: export::Input,
    temporary: bool,
}

impl Drop for Input {
    fn drop(&mut self) {
        if self.temporary {
            let _ = std::fs::remove_file(&self.input.path);
        }
    }
}

/// The captures named: files as given, folders searched for `.pcap`,
/// `.pcapng` and `.cap` files (in name order), `-` spooled to a file.
fn inputs(given: &[String]) -> (Vec<Input>, i32) {
    let (mut out, mut status) = (Vec::new(), exit::OK);
    for g in given {
        if g == "-" {
            if out.iter().any(|i: &Input| i.temporary) {
                kwire::stderr_line!("kwire: export: standard input (-) can be read only once");
                status = exit::USAGE;
                continue;
            }
            match spool_stdin() {
                Ok(path) => out.push(Input {
                    input: export::Input {
                        path,
                        shown: "-".into(),
                    },
                    temporary: true,
                }),
                Err(e) => {
                    kwire::stderr_line!("kwire: standard input: {e}");
                    status = exit::FAILURE;
                }
            }
            continue;
        }
        let path = PathBuf::from(g);
        if path.is_dir() {
            out.extend(export::captures_in(&path).into_iter().map(|p| Input {
                input: export::Input {
                    shown: p.display().to_string(),
                    path: p,
                },
                temporary: false,
            }));
        } else if path.is_file() {
            out.push(Input {
                input: export::Input {
                    path,
                    shown: g.clone(),
                },
                temporary: false,
            });
        } else {
            kwire::stderr_line!("kwire: {}: no such file or folder", sanitize(g));
            status = exit::FAILURE;
        }
    }
    (out, status)
}

fn spool_stdin() -> std::io::Result<PathBuf> {
    let path = std::env::temp_dir().join(format!("kwire-export-stdin-{}.pcap", std::process::id()));
    // A new file: never one already there (or a link planted in its place).
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)?;
    std::io::copy(&mut std::io::stdin().lock(), &mut file)?;
    Ok(path)
}
