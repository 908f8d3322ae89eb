//! `kwire records FILE`: a log segment (`*.log`), a snapshot (`*.checkpoint`) or a
//! raw record-batch blob, read batch by batch so large segments stream; or a
//! pcap/pcapng capture, whose records are listed one per line
//! (`kwire::analysis::records_table`, drawn by `kwire::render::records_table`).

use super::exit;
use clap::{Args, ValueEnum};
use kwire::analysis::records_table::{Options, Selection};
use kwire::decode::fields::Context;
use kwire::decode::records::segment::{read_up_to, MAX_BATCH};
use kwire::pipeline::frames::Style;
use kwire::pipeline::records::{write_batches, write_capture_records, BatchView, RecordsLayout};
use kwire::schema::Catalogue;
use std::io::{BufReader, IsTerminal, Read, Write};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RecordsFormat {
    /// The annotated tree of every batch (the default for a segment).
    Tree,
    /// One JSON object per batch (the tree with offsets); for a capture, one per record.
    Json,
    /// One line per batch and record, like kafka-dump-log --deep-iteration --print-data-log.
    Dump,
    /// A capture's records, one line each (the default for a capture).
    Table,
}

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  kwire records samples/00000000000000000000.log\n  kwire records samples/00000000000000000000.log --format dump\n  kwire records --hex FILE.hex\n  kwire records samples/captures/confluent-kafka.pcap\n  kwire records samples/captures/confluent-kafka.pcap --topic orders --grep user-1 --format json"
)]
pub struct RecordsArgs {
    /// Log segment or record-batch file (binary), or a pcap/pcapng capture; `-` for standard input.
    pub file: String,
    /// The file is hex text instead of binary.
    #[arg(long)]
    pub hex: bool,
    /// Topic the records belong to, for internal topics' keys and values; for
    /// a capture, only the records of this topic (a name, or an id the capture never named).
    #[arg(long)]
    pub topic: Option<String>,
    /// A capture: only the records of this partition.
    #[arg(long)]
    pub partition: Option<i32>,
    /// A capture: only records whose key, value, or a header's key or value holds this text.
    #[arg(long, value_name = "TEXT")]
    pub grep: Option<String>,
    /// A capture: only records the display filter selects: record parts
    /// (record.key, record.value, record.headers.key, record.headers.value,
    /// record.offset, record.timestamp) and api, direction, conn, frame, topic
    /// (`kwire page filters`), e.g. 'record.key contains "order-7" and api == Fetch'.
    /// record.offset is the offset in the frame (a produced record's place as sent).
    #[arg(long, short = 'Y', value_name = "EXPR")]
    pub filter: Option<String>,
    /// A capture: the broker's port (default: found by plausibility).
    #[arg(long)]
    pub port: Option<u16>,
    /// tree (default), json or dump for a segment; table (default) or json for a capture.
    #[arg(long, value_enum)]
    pub format: Option<RecordsFormat>,
    #[command(flatten)]
    pub budget: super::frame_args::BudgetArgs,
    /// A capture: decrypt TLS connections with this key log.
    #[command(flatten)]
    pub tls: super::tls_args::TlsArgs,
}

pub fn run(cat: &Catalogue, release: Option<&str>, args: &RecordsArgs) -> i32 {
    let source: Box<dyn Read> = if args.hex {
        match kwire::input::read_source(&args.file)
            .and_then(|raw| kwire::input::to_bytes(raw, kwire::input::InputKind::Hex))
        {
            Ok(b) => Box::new(std::io::Cursor::new(b.to_vec())),
            Err(e) => {
                kwire::stderr_line!("kwire: {e}");
                return exit::FAILURE;
            }
        }
    } else {
        let mut input = match super::open_input(&args.file) {
            Ok(input) => input,
            Err(status) => return status,
        };
        // A capture is told by its magic bytes, which are then read again.
        let mut head = [0u8; 4];
        let got = match read_up_to(&mut input, &mut head) {
            Ok(n) => n,
            Err(e) => {
                kwire::stderr_line!("kwire: {}: {e}", kwire::text::escape::sanitize(&args.file));
                return exit::FAILURE;
            }
        };
        let input: Box<dyn Read> =
            Box::new(std::io::Cursor::new(head[..got].to_vec()).chain(input));
        if kwire::capture::pcap::sniff(&head[..got]).is_some() {
            return capture(cat, release, args, input);
        }
        input
    };
    run_segment(cat, args, source)
}

/// `kwire records` on a log segment or file of batches, read from `source`
/// (also what `kwire decode` hands such a file to).
pub fn run_segment(cat: &Catalogue, args: &RecordsArgs, source: Box<dyn Read>) -> i32 {
    let format = match args.format {
        Some(RecordsFormat::Table) => {
            kwire::stderr_line!("kwire: --format table lists a capture's records; for a segment, --format dump has a line per record");
            return exit::USAGE;
        }
        Some(f) => f,
        None => RecordsFormat::Tree,
    };
    if let Some(option) = [
        (args.partition.is_some(), "--partition"),
        (args.grep.is_some(), "--grep"),
        (args.filter.is_some(), "--filter"),
        (args.port.is_some(), "--port"),
    ]
    .iter()
    .find(|(given, _)| *given)
    .map(|(_, o)| o)
    {
        kwire::stderr_line!("kwire: {option} selects the records of a capture; this input is not a pcap or pcapng file");
        return exit::USAGE;
    }
    // A log segment sits in its partition's directory, `<topic>-<partition>`:
    // the topic is known without --topic (and with it, the metadata log's
    // credentials are found and redacted).
    let topic = args
        .topic
        .clone()
        .or_else(|| kwire::decode::records::segment::topic_of_log_dir(&args.file));
    let ctx = Context {
        topic_forced: topic.is_some(),
        topic,
        protocol_type: None,
        budget: args.budget.budget(),
        ..Context::default()
    };
    let mut out = std::io::stdout().lock();
    match stream(cat, &ctx, BufReader::new(source), format, &mut out) {
        Ok(status) => status,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => exit::OK,
        Err(e) => {
            kwire::stderr_line!("kwire: {e}");
            exit::FAILURE
        }
    }
}

/// Each batch of a segment, snapshot or raw batches written as `format` says.
fn stream(
    cat: &Catalogue,
    ctx: &Context,
    input: impl Read,
    format: RecordsFormat,
    out: &mut impl Write,
) -> std::io::Result<i32> {
    let view = match format {
        RecordsFormat::Tree => BatchView::Tree(Style {
            color: super::color::stdout(),
            columns: super::width::stdout(),
        }),
        RecordsFormat::Json => BatchView::TreeJson,
        RecordsFormat::Dump | RecordsFormat::Table => BatchView::Dump,
    };
    let mut say = |line: &str| kwire::stderr_line!("{line}");
    let written = write_batches(cat, ctx, input, view, (out, &mut say))?;
    if let Some((position, declared, hex)) = written.too_large {
        kwire::stderr_line!("kwire: batch at position {position} declares {declared} bytes, more than the {MAX_BATCH} read whole; stopping");
        if hex {
            kwire::stderr_line!("kwire: the file starts like hex text, not binary: add --hex");
        }
        return Ok(exit::MALFORMED);
    }
    Ok(if written.malformed {
        exit::MALFORMED
    } else {
        exit::OK
    })
}

/// A capture's records: every Produce request's and Fetch or ShareFetch
/// response's, as a table or JSON lines; damaged record data as lines of its
/// own (and exit status 2).
fn capture(
    cat: &Catalogue,
    release: Option<&str>,
    args: &RecordsArgs,
    input: Box<dyn Read>,
) -> i32 {
    let json = match args.format {
        None | Some(RecordsFormat::Table) => false,
        Some(RecordsFormat::Json) => true,
        Some(_) => {
            kwire::stderr_line!("kwire: a capture's records are listed as --format table (the default) or json; `kwire capture --api Produce` shows their trees");
            return exit::USAGE;
        }
    };
    let filter = match &args.filter {
        None => None,
        Some(text) => {
            let f = match kwire::analysis::filter::Filter::parse(cat, text) {
                Ok(f) => f,
                Err(e) => {
                    super::filter_args::report_expression_error(text, &e);
                    return exit::MALFORMED;
                }
            };
            if let Err(why) = f.records_only() {
                kwire::stderr_line!("kwire: --filter: {}", kwire::text::escape::sanitize(&why));
                return exit::MALFORMED;
            }
            Some(f)
        }
    };
    let selection = Selection {
        topic: args.topic.clone(),
        partition: args.partition,
        grep: args.grep.as_ref().map(|g| g.as_bytes().to_vec()),
        filter,
    };
    let capture = match args.tls.capture_options(args.port) {
        Ok(o) => o,
        Err(status) => return status,
    };
    let opts = Options {
        capture,
        release: release.map(str::to_string),
        budget: args.budget.budget(),
        selection: selection.clone(),
    };
    let stdout = std::io::stdout();
    let terminal = stdout.is_terminal();
    let columns = if json { None } else { super::width::stdout() };
    let mut out = std::io::BufWriter::with_capacity(
        1 << 16,
        kwire::text::width::FitLines::new(stdout.lock(), columns),
    );
    let layout = match json {
        true => RecordsLayout::Json,
        false => RecordsLayout::Table(kwire::render::records_table::Widths::fit(columns)),
    };
    let read = match write_capture_records(cat, input, &opts, (layout, terminal), &mut out) {
        Ok(read) => read,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return exit::OK,
        Err(e) => {
            kwire::stderr_line!("kwire: {e}");
            return exit::FAILURE;
        }
    };
    let summary = match read {
        Ok(s) => s,
        Err(e) => {
            kwire::stderr_line!(
                "kwire: {}: {}",
                kwire::text::escape::sanitize(&args.file),
                kwire::text::escape::sanitize(&e)
            );
            return exit::FAILURE;
        }
    };
    if super::filter_args::no_kafka_traffic(&summary.reading) {
        return exit::FAILURE;
    }
    let mut status = super::filter_args::Reported {
        reading: &summary.reading,
        read_for: "topic names",
        nothing_matched: None,
    }
    .report();
    if summary.unmatched_responses > 0 {
        let n = summary.unmatched_responses;
        let (responses, their) = if n == 1 {
            ("response", "its")
        } else {
            ("responses", "their")
        };
        kwire::stderr_line!("kwire: {n} {responses} without {their} request in the capture not read for records (`kwire capture --guess --list` names {their} API)");
    }
    if summary.damage > 0 {
        let hidden = summary.damage - summary.damage_shown;
        let places = if summary.damage == 1 {
            "place"
        } else {
            "places"
        };
        let outside = if hidden > 0 {
            format!(" ({hidden} outside the topic and partition selected, not listed)")
        } else {
            String::new()
        };
        kwire::stderr_line!(
            "kwire: record data damaged in {} {places}{outside}",
            summary.damage
        );
        status = exit::MALFORMED;
    }
    if summary.malformed > 0 {
        let frames = if summary.malformed == 1 {
            "frame"
        } else {
            "frames"
        };
        kwire::stderr_line!("kwire: {} {frames} carrying records did not decode completely (their `!!` lines say where); the records before the error are listed", summary.malformed);
        status = exit::MALFORMED;
    }
    if summary.records_shown == 0 {
        if !selection.is_empty() {
            kwire::stderr_line!(
                "kwire: no record matches {} among the capture's {} records",
                describe(args),
                summary.records
            );
            if status == exit::OK {
                status = exit::FAILURE;
            }
        } else if summary.frames == 0 {
            kwire::stderr_line!("kwire: no records: the capture has no Produce request and no Fetch or ShareFetch response");
        }
    }
    status
}

/// The selection as given on the command line, for messages.
fn describe(args: &RecordsArgs) -> String {
    let mut parts = Vec::new();
    if let Some(t) = &args.topic {
        parts.push(format!("--topic {}", kwire::text::escape::quote(t)));
    }
    if let Some(p) = args.partition {
        parts.push(format!("--partition {p}"));
    }
    if let Some(g) = &args.grep {
        parts.push(format!("--grep {}", kwire::text::escape::quote(g)));
    }
    if let Some(f) = &args.filter {
        parts.push(format!("--filter {}", kwire::text::escape::quote(f)));
    }
    parts.join(" ")
}
