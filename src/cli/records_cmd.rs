//! `kwire records FILE`: a log segment (`*.log`), a snapshot (`*.checkpoint`) or a
//! raw record-batch blob, read batch by batch so large segments stream.

use super::exit;
use clap::{Args, ValueEnum};
use kwire::decode::fields::Context;
use kwire::decode::{Node, Value};
use kwire::records::BatchDecoder;
use kwire::render::text_tree::{render_tree, TreeOptions};
use kwire::render::values::value_text;
use kwire::schema::Catalogue;
use std::io::{BufReader, Read, Write};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RecordsFormat {
    /// The annotated tree of every batch.
    Tree,
    /// One JSON object per batch (the tree with offsets).
    Json,
    /// One line per batch and record, like kafka-dump-log --deep-iteration --print-data-log.
    Dump,
}

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  kwire records samples/00000000000000000000.log\n  kwire records samples/00000000000000000000.log --format dump\n  kwire records --hex FILE.hex")]
pub struct RecordsArgs {
    /// Log segment or record-batch file (binary); `-` for standard input.
    pub file: String,
    /// The file is hex text instead of binary.
    #[arg(long)]
    pub hex: bool,
    /// Topic the records belong to, for internal topics' keys and values.
    #[arg(long)]
    pub topic: Option<String>,
    #[arg(long, value_enum, default_value_t = RecordsFormat::Tree)]
    pub format: RecordsFormat,
    #[command(flatten)]
    pub budget: super::decode_cmd::BudgetArgs,
}

/// Largest batch read whole; a longer declared length is reported, not allocated.
const MAX_BATCH: usize = 256 << 20;

pub fn run(cat: &Catalogue, args: &RecordsArgs) -> i32 {
    let source: Box<dyn Read> = if args.hex {
        match kwire::input::read_source(&args.file).and_then(|raw| kwire::input::to_bytes(raw, kwire::input::InputKind::Hex)) {
            Ok(b) => Box::new(std::io::Cursor::new(b.to_vec())),
            Err(e) => {
                eprintln!("kwire: {e}");
                return exit::FAILURE;
            }
        }
    } else {
        match super::open_input(&args.file) {
            Ok(input) => input,
            Err(status) => return status,
        }
    };
    let ctx = Context { topic: args.topic.clone(), topic_forced: args.topic.is_some(), protocol_type: None, budget: args.budget.budget(), topic_ids: Default::default() };
    let mut out = std::io::stdout().lock();
    match stream(cat, &ctx, BufReader::new(source), args.format, &mut out) {
        Ok(status) => status,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => exit::OK,
        Err(e) => {
            eprintln!("kwire: {e}");
            exit::FAILURE
        }
    }
}

fn stream(cat: &Catalogue, ctx: &Context, mut input: impl Read, format: RecordsFormat, out: &mut impl Write) -> std::io::Result<i32> {
    let mut position: usize = 0;
    let mut status = exit::OK;
    loop {
        let mut head = [0u8; 12];
        let got = read_up_to(&mut input, &mut head)?;
        if got == 0 {
            break;
        }
        let declared = i32::from_be_bytes([head[8], head[9], head[10], head[11]]);
        let mut buf = head[..got].to_vec();
        if got == 12 && declared > 0 && (declared as usize) <= MAX_BATCH {
            let mut rest = Vec::new();
            (&mut input).take(declared as u64).read_to_end(&mut rest)?;
            buf.extend_from_slice(&rest);
        } else if got == 12 && declared as usize > MAX_BATCH {
            eprintln!("kwire: batch at position {position} declares {declared} bytes, more than the {MAX_BATCH} read whole; stopping");
            if position == 0 && looks_like_hex_text(&head) {
                eprintln!("kwire: the file starts like hex text, not binary: add --hex");
            }
            return Ok(exit::MALFORMED);
        }
        let bytes = bytes::Bytes::from(buf);
        let mut nodes = Vec::new();
        // Each batch's tree is dropped once written: what it held goes back to the budget.
        let held_before = ctx.budget.expanded();
        let mut bd = BatchDecoder::new(&bytes, cat, ctx);
        bd.decode_stream(0, bytes.len(), 0, &mut nodes);
        for mut node in nodes {
            shift(&mut node, position);
            if node.error().is_some() || node.name == "truncated batch" {
                status = exit::MALFORMED;
            }
            match format {
                RecordsFormat::Tree => write!(out, "{}", render_tree(&node, TreeOptions { color: super::color::stdout(), ..TreeOptions::default() }))?,
                RecordsFormat::Json => {
                    kwire::render::tree_json::write_tree_json(out, &node)?;
                    writeln!(out)?
                }
                RecordsFormat::Dump => write_dump(&node, position, &bd.damage, out)?,
            }
        }
        ctx.budget.release(ctx.budget.expanded().saturating_sub(held_before));
        for w in &bd.warnings {
            eprintln!("kwire: warning: {w} (batch at position {position})");
        }
        for e in &bd.damage {
            let e = kwire::decode::DecodeError { offset: e.offset + position, expected: e.expected.clone() };
            eprintln!("kwire: record data {}", kwire::render::escape::sanitize(&e.to_string()));
            status = exit::MALFORMED;
        }
        position += bytes.len();
        if got < 12 || status == exit::MALFORMED && bytes.len() < 12 {
            break;
        }
    }
    Ok(status)
}

/// Whether bytes read as binary look like hex text instead (digits, spaces,
/// offsets, separators): the likely mistake behind a nonsense first batch.
fn looks_like_hex_text(head: &[u8]) -> bool {
    head.iter().all(|b| b.is_ascii_hexdigit() || b" \t\r\n:,x".contains(b)) && head.iter().filter(|b| b.is_ascii_hexdigit()).count() >= 8
}

fn read_up_to(input: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match input.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// Offsets within the batch buffer become file positions (decompressed subtrees keep theirs).
fn shift(node: &mut Node, by: usize) {
    node.offset += by;
    if node.role == kwire::decode::Role::Decompressed {
        return;
    }
    for c in &mut node.children {
        shift(c, by);
    }
}

fn field<'a>(n: &'a Node, name: &str) -> Option<&'a Node> {
    n.children.iter().find(|c| c.name == name)
}

fn int(n: &Node, name: &str) -> i64 {
    match field(n, name).map(|c| &c.value) {
        Some(Value::Int(v)) => *v,
        Some(Value::Uint(v)) => *v as i64,
        _ => -1,
    }
}

/// The damaged parts of a batch's tree, outermost first: the nodes that carry
/// an error themselves (their children say no more than they do).
/// Each with whether its offset indexes decompressed data.
fn damaged_nodes<'a>(n: &'a Node, in_decompressed: bool, out: &mut Vec<(&'a Node, bool)>) {
    match n.error() {
        Some(_) => out.push((n, in_decompressed)),
        None => {
            let inside = in_decompressed || n.role == kwire::decode::Role::Decompressed;
            n.children.iter().for_each(|c| damaged_nodes(c, inside, out))
        }
    }
}

/// A damage line of the dump: where, and what was expected (never values read past it).
fn write_damage((n, in_decompressed): (&Node, bool), out: &mut impl Write) -> std::io::Result<()> {
    let at = if in_decompressed { format!("d:{}", n.offset) } else { n.offset.to_string() };
    writeln!(out, "| damaged {} at position {at}: {}", kwire::render::escape::sanitize(&n.name), kwire::render::escape::sanitize(n.error().unwrap_or_default()))
}

/// kafka-dump-log style lines: one per batch, `| ` one per record; a batch
/// that is not a RecordBatch v2, and every damaged part, gets a damage line
/// instead of values it does not hold.
fn write_dump(batch: &Node, position: usize, damage: &[kwire::decode::DecodeError], out: &mut impl Write) -> std::io::Result<()> {
    if batch.ty != "RecordBatch" || field(batch, "baseOffset").is_none() {
        let mut damaged = Vec::new();
        damaged_nodes(batch, false, &mut damaged);
        if damaged.is_empty() {
            writeln!(out, "| {} at position {} ({} bytes): not a RecordBatch v2; `--format tree` shows it", kwire::render::escape::sanitize(&batch.name), batch.offset, batch.len)?;
        }
        for n in damaged {
            write_damage(n, out)?;
        }
        return Ok(());
    }
    let base = int(batch, "baseOffset");
    let attrs = int(batch, "attributes");
    // The checksum is valid unless the decoder found damage at the crc field.
    let crc_ok = field(batch, "crc").is_some_and(|c| !damage.iter().any(|d| d.offset + position == c.offset));
    let count = int(batch, "recordsCount");
    let codec = ["none", "gzip", "snappy", "lz4", "zstd"].get((attrs & 7) as usize).copied().unwrap_or("unknown");
    let ts_type = if attrs & 0x08 != 0 { "LogAppendTime" } else { "CreateTime" };
    let base_seq = int(batch, "baseSequence");
    let last_delta = int(batch, "lastOffsetDelta");
    writeln!(
        out,
        "baseOffset: {base} lastOffset: {} count: {count} baseSequence: {base_seq} lastSequence: {} producerId: {} producerEpoch: {} partitionLeaderEpoch: {} isTransactional: {} isControl: {} position: {position} {ts_type}: {} size: {} magic: {} compresscodec: {codec} crcValid: {crc_ok}",
        base + last_delta,
        if base_seq < 0 { -1 } else { base_seq + last_delta },
        int(batch, "producerId"),
        int(batch, "producerEpoch"),
        int(batch, "partitionLeaderEpoch"),
        attrs & 0x10 != 0,
        attrs & 0x20 != 0,
        int(batch, "maxTimestamp"),
        batch.len,
        int(batch, "magic"),
    )?;
    let mut records: Vec<&Node> = Vec::new();
    batch.walk(&mut |n, _| {
        if n.ty == "Record" && n.error().is_none() {
            records.push(n);
        }
    });
    let base_ts = int(batch, "baseTimestamp");
    for r in records {
        let od = int(r, "offsetDelta");
        let size = |name: &str| match field(r, name).map(|n| &n.value) {
            Some(Value::Bytes(Some(b))) => b.len() as i64,
            _ => -1,
        };
        let headers: Vec<String> = field(r, "headers")
            .map(|h| h.children.iter().filter_map(|hn| field(hn, "headerKey")).map(|k| payload(Some(k))).collect())
            .unwrap_or_default();
        writeln!(
            out,
            "| offset: {} {ts_type}: {} keySize: {} valueSize: {} sequence: {} headerKeys: [{}] key: {} payload: {}",
            base + od,
            base_ts + int(r, "timestampDelta"),
            size("key"),
            size("value"),
            if base_seq < 0 { -1 } else { base_seq + od },
            headers.join(","),
            payload(field(r, "key")),
            payload(field(r, "value")),
        )?;
    }
    let mut damaged = Vec::new();
    damaged_nodes(batch, false, &mut damaged);
    for n in damaged {
        write_damage(n, out)?;
    }
    Ok(())
}

/// Keys and values as kafka-dump-log prints them: UTF-8 text (escaped), else hex.
fn payload(n: Option<&Node>) -> String {
    match n.map(|n| &n.value) {
        Some(Value::Bytes(Some(b))) => match std::str::from_utf8(b) {
            Ok(s) => kwire::render::escape::sanitize(s),
            Err(_) => format!("0x{}", hex::encode(b)),
        },
        Some(Value::Bytes(None)) | None => "null".into(),
        Some(_) => n.and_then(value_text).unwrap_or_default(),
    }
}
